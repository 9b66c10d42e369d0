"""Seed corpora for the fuzz targets, taken from the repository's test inputs.

Usage: make-corpus.py SRC_ROOT OUT_DIR. Writes OUT_DIR/<target>/<n> files:
safetensors (the bundled model's header, small valid files of each dtype),
gguf (tiny models in f32 and in each block format tfm reads),
npy (numpy's own files of each dtype the reader takes), config (every
config.json under test/ and models/), ir (examples/ and the dialect tests,
split at `// -----`), generation-config and tokenizer (small files written
here), and fuzz/regressions/<target>/: inputs that once crashed a target.
"""
import glob
import io
import json
import os
import struct
import sys

import numpy as np

src, out = sys.argv[1], sys.argv[2]


def put(target, name, data):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data)


def safetensors(tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


# The bundled model's header alone, and small valid files.
with open(os.path.join(src, "models/tiny-kjv/model.safetensors"), "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    put("safetensors", "tiny-kjv-header", struct.pack("<Q", n) + f.read(n))
put("safetensors", "f32", safetensors(
    {"w": ("F32", [2, 3], np.arange(6, dtype=np.float32).tobytes())},
    {"format": "pt"}))
put("safetensors", "mixed", safetensors({
    "a": ("F16", [4], np.ones(4, np.float16).tobytes()),
    "b": ("BF16", [2], b"\x80\x3f\x00\x40"),
    "c": ("I64", [1, 1], np.array([[7]], np.int64).tobytes()),
    "d": ("F32", [0], b"")}))

for i, arr in enumerate([np.zeros((2, 3), np.float32), np.arange(5, dtype=np.int64),
                         np.ones((1, 2, 2), np.float16), np.array(3.5),
                         np.array([[1, 2]], np.int32), np.array([True, False]),
                         np.zeros((0, 4), np.uint8)]):
    buf = io.BytesIO()
    np.save(buf, arr)
    put("npy", f"{i}", buf.getvalue())

configs = sorted(glob.glob(os.path.join(src, "test/**/*.json"), recursive=True)
                 + [os.path.join(src, "models/tiny-kjv/config.json")])
for i, path in enumerate(configs):
    with open(path, "rb") as f:
        put("config", f"{i}", f.read())

count = 0
for path in sorted(glob.glob(os.path.join(src, "examples/*.mlir"))
                   + glob.glob(os.path.join(src, "test/Dialect/Tfm/*.mlir"))):
    with open(path) as f:
        for chunk in f.read().split("// -----"):
            put("ir", f"{count}", chunk.encode())
            count += 1

# generation_config.json: the test's, and each field in its forms.
for i, path in enumerate(sorted(glob.glob(
        os.path.join(src, "test/**/generation_config.json"), recursive=True))):
    with open(path, "rb") as f:
        put("generation-config", f"{i}", f.read())
for i, config in enumerate([
        {"do_sample": True, "temperature": 0.7, "top_k": 40, "top_p": 0.9,
         "repetition_penalty": 1.1, "eos_token_id": [2, 32000],
         "max_new_tokens": 64, "stop_strings": ["\n\n", "END"]},
        {"do_sample": False, "temperature": 0.0, "top_p": 0.0,
         "eos_token_id": 2, "max_length": 128, "stop_strings": "stop"},
        {"bos_token_id": 1, "pad_token_id": None, "num_beams": 4,
         "transformers_version": "4.46.3"}]):
    put("generation-config", f"made-{i}", json.dumps(config).encode())

# tokenizer.json: a byte-level BPE (GPT-2 style) and a SentencePiece-style
# BPE with byte fallback, normalizers and a template, each followed by a NUL
# and a text to encode.
def bytes_to_unicode():
    """GPT-2's byte -> printable character map (ByteLevel)."""
    printable = (list(range(ord("!"), ord("~") + 1)) +
                 list(range(ord("¡"), ord("¬") + 1)) +
                 list(range(ord("®"), ord("ÿ") + 1)))
    chars, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            chars[byte] = chr(byte)
        else:
            chars[byte] = chr(256 + extra)
            extra += 1
    return chars


byte_vocab = {char: byte for byte, char in bytes_to_unicode().items()}
byte_vocab.update({"Ġt": 256, "he": 257, "Ġthe": 258})
tokenizers = [
    {"version": "1.0", "added_tokens": [
        {"id": 259, "content": "<|endoftext|>", "special": True,
         "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False}],
     "normalizer": None,
     "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                       "trim_offsets": True, "use_regex": True},
     "post_processor": {"type": "ByteLevel", "trim_offsets": False},
     "decoder": {"type": "ByteLevel"},
     "model": {"type": "BPE", "vocab": byte_vocab,
               "merges": ["Ġ t", "h e", "Ġt he"]}},
    {"version": "1.0", "added_tokens": [
        {"id": 0, "content": "<unk>", "special": True, "single_word": False,
         "lstrip": False, "rstrip": False, "normalized": False},
        {"id": 1, "content": "<s>", "special": True, "single_word": False,
         "lstrip": False, "rstrip": False, "normalized": False}],
     "normalizer": {"type": "Sequence", "normalizers": [
         {"type": "Prepend", "prepend": "▁"},
         {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
     "pre_tokenizer": None,
     "post_processor": {"type": "TemplateProcessing",
                        "single": [{"SpecialToken": {"id": "<s>",
                                                     "type_id": 0}},
                                   {"Sequence": {"id": "A", "type_id": 0}}],
                        "pair": [], "special_tokens": {
                            "<s>": {"id": "<s>", "ids": [1],
                                    "tokens": ["<s>"]}}},
     "decoder": {"type": "Sequence", "decoders": [
         {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
         {"type": "ByteFallback"}, {"type": "Fuse"},
         {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
     "model": {"type": "BPE", "byte_fallback": True, "fuse_unk": True,
               "unk_token": "<unk>",
               "vocab": dict({"<unk>": 0, "<s>": 1},
                             **{f"<0x{b:02X}>": 2 + b for b in range(256)},
                             **{"▁": 258, "t": 259, "h": 260, "e": 261,
                                "▁t": 262, "he": 263, "▁the": 264,
                                "\U00020000": 265}),
               "merges": ["▁ t", "h e", "▁t he"]}}]
for i, spec in enumerate(tokenizers):
    for ascii_only in (False, True):
        text = json.dumps(spec, ensure_ascii=ascii_only).encode()
        put("tokenizer", f"made-{i}-{int(ascii_only)}",
            text + b"\0" + "the theme 天地 \U00020000 <s>".encode())

# GGUF: a tiny Llama (its Q/K rows permuted back on load) in f32, one with a
# tensor of each block format tfm reads, a Qwen2 with a token list.
def gguf_string(x):
    b = x.encode() if isinstance(x, str) else x
    return struct.pack("<Q", len(b)) + b


def gguf(arch, tensors, extra=()):
    """tensors: (name, ne, ggml type, raw bytes); extra: raw key/values."""
    hp = [("general.architecture", 8, gguf_string(arch))] + [
        (f"{arch}.{k}", 4, struct.pack("<I", v)) for k, v in [
            ("context_length", 16), ("embedding_length", 32),
            ("block_count", 1), ("feed_forward_length", 64),
            ("attention.head_count", 2), ("attention.head_count_kv", 1)]] + [
        (f"{arch}.attention.layer_norm_rms_epsilon", 6,
         struct.pack("<f", 1e-5))] + list(extra)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(hp))
    for key, typ, raw in hp:
        head += gguf_string(key) + struct.pack("<I", typ) + raw
    data = b""
    infos = b""
    for name, ne, typ, raw in tensors:
        data += b"\0" * (-len(data) % 32)
        infos += gguf_string(name) + struct.pack("<I", len(ne))
        infos += b"".join(struct.pack("<Q", e) for e in ne)
        infos += struct.pack("<IQ", typ, len(data))
        data += raw
    head += infos
    return head + b"\0" * (-len(head) % 32) + data


rng = np.random.default_rng(0)
def f32(*shape):
    return (list(reversed(shape)), 0,
            rng.standard_normal(shape).astype(np.float32).tobytes())
llama = [("token_embd.weight", *f32(8, 32)), ("output_norm.weight", *f32(32)),
         ("blk.0.attn_norm.weight", *f32(32)),
         ("blk.0.attn_q.weight", *f32(32, 32)),
         ("blk.0.attn_k.weight", *f32(16, 32)),
         ("blk.0.attn_v.weight", *f32(16, 32)),
         ("blk.0.attn_output.weight", *f32(32, 32)),
         ("blk.0.ffn_norm.weight", *f32(32)),
         ("blk.0.ffn_gate.weight", *f32(64, 32)),
         ("blk.0.ffn_up.weight", *f32(64, 32)),
         ("blk.0.ffn_down.weight", *f32(32, 64))]
put("gguf", "llama-f32", gguf("llama", llama))
# One row of each: Q8_0 (8), Q4_0 (2), Q4_K (12), Q5_K (13), Q6_K (14), F16,
# BF16; random bytes are valid blocks (f16 scales may be inf or NaN).
blocks = [("blk.0.attn_q.weight", [256, 1], 8, rng.bytes(8 * 34)),
          ("blk.0.attn_k.weight", [256, 1], 2, rng.bytes(8 * 18)),
          ("blk.0.attn_v.weight", [256, 1], 12, rng.bytes(144)),
          ("blk.0.ffn_up.weight", [256, 1], 13, rng.bytes(176)),
          ("blk.0.ffn_down.weight", [256, 1], 14, rng.bytes(210)),
          ("output.weight", [32, 2], 1, rng.bytes(128)),
          ("token_embd.weight", [32, 2], 30, rng.bytes(128))]
put("gguf", "llama-blocks", gguf("llama", blocks))
# The formats read otherwise: Q5_0 (6, widened to Q8_0 when looked up), Q4_1
# (3) and Q5_1 (7, dequantized), and a Q5_0 expert stack (the widened
# blocks split per expert).
legacy = [("blk.0.attn_q.weight", [32, 4], 6, rng.bytes(4 * 22)),
          ("blk.0.attn_k.weight", [32, 4], 3, rng.bytes(4 * 20)),
          ("blk.0.attn_v.weight", [32, 4], 7, rng.bytes(4 * 24)),
          ("blk.0.ffn_gate_exps.weight", [32, 2, 2], 6, rng.bytes(4 * 22))]
put("gguf", "llama-legacy-blocks", gguf("llama", legacy, extra=[
    ("llama.expert_count", 4, struct.pack("<I", 2)),
    ("llama.expert_used_count", 4, struct.pack("<I", 1))]))
spm = [b"<unk>", b"<s>", b"</s>", b"\xe2\x96\x81", b"h", b"e", b"\xe2\x96\x81h",
       b"he"]
put("gguf", "llama-spm", gguf("llama", llama[:3], extra=[
    ("tokenizer.ggml.model", 8, gguf_string("llama")),
    ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, len(spm)) +
     b"".join(gguf_string(t) for t in spm)),
    ("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, len(spm)) +
     struct.pack(f"<{len(spm)}f", *[-float(i) for i in range(len(spm))])),
    ("tokenizer.ggml.token_type", 9, struct.pack("<IQ", 5, len(spm)) +
     struct.pack(f"<{len(spm)}i", 2, 3, 3, 1, 1, 1, 1, 1)),
    ("tokenizer.ggml.bos_token_id", 4, struct.pack("<I", 1))]))
tokens = [b"<s>", b"</s>", b"a", b"b", b"ab"]
put("gguf", "qwen2-tokens", gguf("qwen2", llama[:3], extra=[
    ("tokenizer.ggml.model", 8, gguf_string("gpt2")),
    ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, len(tokens)) +
     b"".join(gguf_string(t) for t in tokens)),
    ("tokenizer.ggml.token_type", 9, struct.pack("<IQ", 5, 5) +
     struct.pack("<5i", 3, 3, 1, 1, 1)),
    ("tokenizer.ggml.merges", 9, struct.pack("<IQ", 8, 1) +
     gguf_string("a b")),
    ("tokenizer.ggml.bos_token_id", 4, struct.pack("<I", 0)),
    ("general.alignment", 4, struct.pack("<I", 32))]))

# Inputs that once crashed a target (fuzz/regressions/<target>/) stay seeds.
for path in sorted(glob.glob(os.path.join(src, "fuzz/regressions/*/*"))):
    target = os.path.basename(os.path.dirname(path))
    with open(path, "rb") as f:
        put(target, "regression-" + os.path.basename(path), f.read())

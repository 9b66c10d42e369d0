"""Seed corpora for the fuzz targets, taken from the repository's test inputs.

Usage: make-corpus.py SRC_ROOT OUT_DIR. Writes OUT_DIR/<target>/<n> files:
safetensors (the bundled model's header, small valid files of each dtype),
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

# Inputs that once crashed a target (fuzz/regressions/<target>/) stay seeds.
for path in sorted(glob.glob(os.path.join(src, "fuzz/regressions/*/*"))):
    target = os.path.basename(os.path.dirname(path))
    with open(path, "rb") as f:
        put(target, "regression-" + os.path.basename(path), f.read())

"""Tiny GGUF files written as llama.cpp's converter writes them, and
transformers' own GGUF loader as the reference (run with %hf_python).

usage:
  gguf_model.py make ARCH DIR [--seed N]
      a random ARCH (llama or qwen2) model in transformers, saved to DIR/hf
      (config.json, f32 model.safetensors), and the same weights as GGUF
      files as convert_hf_to_gguf.py writes them (metadata, llama.cpp's
      tensor names, Llama's Q and K rows permuted for ggml's RoPE):
      DIR/f32.gguf, f16.gguf (matrices f16), q8_0.gguf and q4_0.gguf
      (matrices, the embedding's too, quantized by gguf-py, llama.cpp's
      quantizer), q4_k.gguf, q5_k.gguf and q6_k.gguf (likewise in the K
      formats, by the ports of llama.cpp's quantizers in
      test/numerics/Inputs/q*_k_ref.py: --pure files),
      and k.gguf, whose matrices are
      random Q4_K, Q5_K and Q6_K blocks (gguf-py cannot quantize to them),
      its embedding Q8_0; DIR/ids.npy (int64 [2, 9]).
  gguf_model.py convert HFDIR OUT.gguf [--quantize q8_0|q5_0|q5_1|q4_0|q4_1|q4_k
                                        [--reference DIR]]
                        [--rope-freqs drop|truncate]
      a Hugging Face directory (config.json, model.safetensors) of a llama,
      qwen2, qwen3, phi3, gemma, gemma2 or gemma3_text model to an f32 GGUF
      file, as
      convert_hf_to_gguf.py converts it (an explicit head_dim as key_length,
      Q/K norms, Phi-3's fused qkv_proj and gate_up_proj and its sliding
      window, Gemma's norms plus one, Gemma 2's and 3's sandwich norms,
      softcaps and window, a tied head without output.weight, Llama 3.1's
      rope_freqs.weight divisors, Phi-3's longrope factors and metadata,
      Mixtral's and Qwen3-MoE's experts stacked
      3-D; --quantize: matrices as gguf-py's Q8_0, Q5_0, Q5_1, Q4_0 or Q4_1
      blocks, or Q4_K
      ones by the port of llama.cpp's quantizer, --reference DIR the
      Hugging Face directory of the weights the blocks stand for; --rope-freqs
      writes the divisors wrong).
  gguf_model.py logits GGUF IDS OUT
      transformers' logits for the GGUF file (its from_pretrained(gguf_file=)
      dequantizes every tensor with gguf-py and undoes the permutation).
"""
import argparse
import os
import sys

import numpy as np

# K-quant rows need K a multiple of 256: hidden 256, FFN 512.
TINY = dict(vocab_size=96, hidden_size=256, intermediate_size=512,
            num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=64,
            rms_norm_eps=1e-5, rope_theta=10000.0, bos_token_id=1,
            eos_token_id=2, tie_word_embeddings=False)

LAYER = {"input_layernorm.weight": "attn_norm.weight",
         "self_attn.q_norm.weight": "attn_q_norm.weight",
         "self_attn.k_norm.weight": "attn_k_norm.weight",
         "self_attn.q_proj.weight": "attn_q.weight",
         "self_attn.q_proj.bias": "attn_q.bias",
         "self_attn.k_proj.weight": "attn_k.weight",
         "self_attn.k_proj.bias": "attn_k.bias",
         "self_attn.v_proj.weight": "attn_v.weight",
         "self_attn.v_proj.bias": "attn_v.bias",
         "self_attn.qkv_proj.weight": "attn_qkv.weight",
         "mlp.gate_up_proj.weight": "ffn_up.weight",
         "self_attn.o_proj.weight": "attn_output.weight",
         "post_attention_layernorm.weight": "ffn_norm.weight",
         "mlp.gate_proj.weight": "ffn_gate.weight",
         "mlp.up_proj.weight": "ffn_up.weight",
         "mlp.down_proj.weight": "ffn_down.weight"}
# Gemma 2's and 3's norms around each sublayer (llama.cpp's tensor_mapping).
SANDWICH = {"post_attention_layernorm.weight": "post_attention_norm.weight",
            "pre_feedforward_layernorm.weight": "ffn_norm.weight",
            "post_feedforward_layernorm.weight": "post_ffw_norm.weight"}
TOP = {"model.embed_tokens.weight": "token_embd.weight",
       "model.norm.weight": "output_norm.weight",
       "lm_head.weight": "output.weight"}


def gguf_name(name, sandwich=False):
    if name in TOP:
        return TOP[name]
    parts = name.split(".")
    rest = ".".join(parts[3:])
    table = dict(LAYER, **SANDWICH) if sandwich else LAYER
    return f"blk.{parts[2]}.{table[rest]}"


def add_gemma2_hparams(w, c, gemma3):
    """Gemma2Model's / Gemma3Model's set_gguf_parameters: no RoPE dimension
    count, Gemma 2 no freq_base (llama.cpp's 10000), the softcaps and the
    window; query_pre_attn_scalar and the layer pattern are not stored."""
    add_sizes(w, c)
    w.add_key_length(c["head_dim"])
    w.add_value_length(c["head_dim"])
    if gemma3:
        w.add_rope_freq_base(float(c.get("rope_theta", 1e6)))
        scaling = c.get("rope_scaling")
        if scaling:
            from gguf import RopeScalingType
            w.add_rope_scaling_type(RopeScalingType.LINEAR)
            w.add_rope_scaling_factor(scaling["factor"])
    else:
        w.add_attn_logit_softcapping(c["attn_logit_softcapping"])
        w.add_final_logit_softcapping(c["final_logit_softcapping"])
    w.add_sliding_window(c["sliding_window"])


def permute(w, heads):
    """convert_hf_to_gguf.py's LlamaModel.permute."""
    return (w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def add_sizes(w, c):
    """The sizes every converter writes (TextModel.set_gguf_parameters)."""
    heads = c["num_attention_heads"]
    w.add_context_length(c["max_position_embeddings"])
    w.add_embedding_length(c["hidden_size"])
    w.add_block_count(c["num_hidden_layers"])
    w.add_feed_forward_length(c["intermediate_size"])
    w.add_head_count(heads)
    w.add_head_count_kv(c.get("num_key_value_heads", heads))
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])


def add_hparams(w, c):
    """The hyperparameters convert_hf_to_gguf.py writes for config `c`."""
    heads = c["num_attention_heads"]
    add_sizes(w, c)
    w.add_rope_dimension_count(c.get("head_dim") or c["hidden_size"] // heads)
    w.add_rope_freq_base(float(c["rope_theta"]))


def random_k_blocks(kind, rows, k, rng):
    """Random but valid blocks: arbitrary integers and sub-scales, small
    finite f16 super-block scales."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType as T
    block, size = GGML_QUANT_SIZES[kind]
    data = rng.integers(0, 256, (rows, k // block, size), dtype=np.uint8)
    def put(offset, scale):
        d = (scale * (0.5 + rng.random((rows, k // block)))).astype(np.float16)
        data[:, :, offset:offset + 2] = d.view(np.uint8).reshape(
            rows, k // block, 2)
    if kind in (T.Q4_K, T.Q5_K):
        put(0, 4e-4 if kind == T.Q4_K else 2e-4)  # d
        put(2, 2e-3)  # dmin
    else:
        put(208, 3e-5)  # Q6_K's d, last
    return data.reshape(rows, k // block * size)


def randomize(model, rng):
    """Fills every parameter of `model` with random values sized to keep
    activations near unit scale (norms near 1, biases near 0)."""
    import torch
    for name, t in model.named_parameters():
        x = rng.standard_normal(tuple(t.shape))
        if t.ndim == 1:
            x = (1.0 if "norm" in name else 0.0) + 0.1 * x
        elif "embed" in name:
            x = 0.3 * x
        else:
            x = x * (3.0 if "lm_head" in name else 1.5) / np.sqrt(t.shape[1])
        with torch.no_grad():
            t.copy_(torch.from_numpy(x.astype(np.float32)))


def cmd_make(argv):
    import torch
    import transformers
    from gguf import GGMLQuantizationType as T, GGUFWriter, quants
    p = argparse.ArgumentParser(prog="gguf_model.py make")
    p.add_argument("arch", choices=["llama", "qwen2"])
    p.add_argument("dir")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    cls = {"llama": transformers.LlamaConfig,
           "qwen2": transformers.Qwen2Config}[a.arch]
    config = cls(**TINY)
    torch.manual_seed(a.seed)
    model = transformers.AutoModelForCausalLM.from_config(config).float()
    randomize(model, rng)
    hf = os.path.join(a.dir, "hf")
    model.save_pretrained(hf, safe_serialization=True)
    weights = {n: t.detach().numpy().copy()
               for n, t in model.state_dict().items()}
    heads, kv = TINY["num_attention_heads"], TINY["num_key_value_heads"]
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "..", "numerics", "Inputs"))
    import q4_k_ref
    import q5_k_ref
    import q6_k_ref
    k_quantizers = {"q4_k": (q4_k_ref.quantize_q4_k, T.Q4_K),
                    "q5_k": (q5_k_ref.quantize_q5_k, T.Q5_K),
                    "q6_k": (q6_k_ref.quantize_q6_k, T.Q6_K)}
    for kind in ["f32", "f16", "q8_0", "q4_0", *k_quantizers, "k"]:
        w = GGUFWriter(os.path.join(a.dir, f"{kind}.gguf"), a.arch)
        w.add_name(f"tiny {a.arch}")
        add_hparams(w, TINY)
        w.add_tokenizer_model("llama" if a.arch == "llama" else "gpt2")
        tokens = [f"t{i}".encode() for i in range(TINY["vocab_size"])]
        w.add_token_list(tokens)
        w.add_token_types([1] * len(tokens))
        if a.arch == "qwen2":
            w.add_token_merges([b"t 1"])
        else:
            w.add_token_scores([0.0] * len(tokens))
        w.add_bos_token_id(TINY["bos_token_id"])
        w.add_eos_token_id(TINY["eos_token_id"])
        for name, t in weights.items():
            if a.arch == "llama" and name.endswith("q_proj.weight"):
                t = permute(t, heads)
            if a.arch == "llama" and name.endswith("k_proj.weight"):
                t = permute(t, kv)
            gname = gguf_name(name)
            if t.ndim == 1 or kind == "f32":
                w.add_tensor(gname, t.astype(np.float32))
            elif kind == "f16":
                w.add_tensor(gname, t.astype(np.float16))
            elif kind in ("q8_0", "q4_0"):
                q = T.Q8_0 if kind == "q8_0" else T.Q4_0
                w.add_tensor(gname, quants.quantize(t, q), raw_dtype=q)
            elif kind in k_quantizers:
                quantize, q = k_quantizers[kind]
                w.add_tensor(gname, quantize(t), raw_dtype=q)
            elif "token_embd" in gname:
                w.add_tensor(gname, quants.quantize(t, T.Q8_0),
                             raw_dtype=T.Q8_0)
            else:
                q = (T.Q6_K if "output" == gname.split(".")[0] or
                     "attn_v" in gname or "ffn_down" in gname else
                     T.Q5_K if "attn_k" in gname or "ffn_up" in gname else
                     T.Q4_K)
                w.add_tensor(gname, random_k_blocks(q, *t.shape, rng),
                             raw_dtype=q)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
    ids = rng.integers(0, TINY["vocab_size"], (2, 9))
    np.save(os.path.join(a.dir, "ids.npy"), ids.astype(np.int64))
    print(f"{a.arch}: 8 GGUF files, ids {list(ids.shape)}")


def cmd_convert(argv):
    import json
    from gguf import GGUFWriter
    from safetensors.numpy import load_file
    p = argparse.ArgumentParser(prog="gguf_model.py convert")
    p.add_argument("hf")
    p.add_argument("out")
    p.add_argument("--quantize",
                   choices=["q8_0", "q5_0", "q5_1", "q4_0", "q4_1", "q4_k"],
                   help="matrices (experts' too; not the router, which "
                   "llama.cpp keeps f32) as Q8_0, Q5_0, Q5_1, Q4_0 or Q4_1 "
                   "blocks, by gguf-py, or Q4_K, by the port of llama.cpp's "
                   "quantizer")
    p.add_argument("--reference", help="with --quantize: write here the "
                   "Hugging Face directory of the weights the blocks stand "
                   "for (dequantized)")
    p.add_argument("--rope-freqs", choices=["drop", "truncate"],
                   help="write a broken file: no rope_freqs.weight, or one "
                   "a pair short")
    a = p.parse_args(argv)
    hf, out = a.hf, a.out
    c = json.load(open(os.path.join(hf, "config.json")))
    arch = {"gemma3_text": "gemma3", "mixtral": "llama",
            "qwen3_moe": "qwen3moe"}.get(c["model_type"], c["model_type"])
    weights = load_file(os.path.join(hf, "model.safetensors"))
    if a.reference:
        if not a.quantize:
            p.error("--reference needs --quantize")
        write_dequantized(weights, hf, a.reference, a.quantize)
    heads = c["num_attention_heads"]
    kv = c.get("num_key_value_heads", heads)
    head_dim = c.get("head_dim") or c["hidden_size"] // heads
    sandwich = arch in ("gemma2", "gemma3")
    w = GGUFWriter(out, arch)
    w.add_name(f"converted {arch}")
    if sandwich:
        add_gemma2_hparams(w, c, arch == "gemma3")
    else:
        if c.get("head_dim"):
            w.add_key_length(head_dim)
            w.add_value_length(head_dim)
        if c.get("sliding_window"):
            w.add_sliding_window(c["sliding_window"])
        add_hparams(w, c)
    weights = stack_experts(w, c, weights)

    def add(gname, t):
        if a.quantize and t.ndim >= 2 and "ffn_gate_inp" not in gname:
            blocks, kind = quantize_rows(t.astype(np.float32), a.quantize)
            w.add_tensor(gname, blocks, raw_dtype=kind)
        else:
            w.add_tensor(gname, t.astype(np.float32))

    for name, t in weights.items():
        if name.startswith("blk."):  # stacked experts, already named
            add(name, t)
            continue
        if arch == "llama" and name.endswith("q_proj.weight"):
            t = permute(t, heads)
        if arch == "llama" and name.endswith("k_proj.weight"):
            t = permute(t, kv)
        if arch.startswith("gemma") and name.endswith("norm.weight"):
            t = t + np.float32(1)  # Gemma*Model.modify_tensors
        if sandwich and name == "lm_head.weight":
            continue  # Gemma2Model.modify_tensors drops it (tied)
        add(gguf_name(name, sandwich), t)
    if arch == "phi3":
        add_longrope(w, c)
    if arch == "llama":
        factors = llama3_rope_factors(c, head_dim)
        if factors is not None and a.rope_freqs != "drop":
            if a.rope_freqs == "truncate":
                factors = factors[:-1]
            w.add_tensor("rope_freqs.weight", factors)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def quantize_rows(t, kind):
    """t's rows (along its last axis; an expert stack's too) as blocks of
    `kind` and their GGML type: Q8_0, Q5_0, Q5_1, Q4_0 and Q4_1 by gguf-py,
    Q4_K by the port
    of quantize_row_q4_K_ref (test/numerics/Inputs/q4_k_ref.py)."""
    from gguf import GGMLQuantizationType as T, quants
    legacy = {"q8_0": T.Q8_0, "q5_0": T.Q5_0, "q5_1": T.Q5_1,
              "q4_0": T.Q4_0, "q4_1": T.Q4_1}
    if kind in legacy:
        return quants.quantize(t, legacy[kind]), legacy[kind]
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "..", "numerics", "Inputs"))
    import q4_k_ref
    return q4_k_ref.quantize_q4_k(t), T.Q4_K


def quantizable(name, t):
    """What --quantize stores as blocks: matrices, not a router."""
    return t.ndim >= 2 and not name.endswith((".gate.weight",
                                              "ffn_gate_inp.weight"))


def write_dequantized(weights, hf, reference, kind):
    """Writes to `reference` (a copy of the directory `hf`) the weights the
    blocks of `kind` stand for: each quantizable matrix quantized and
    dequantized by gguf-py (rows quantize independently, so stacking and
    Q/K's row permutation commute with it)."""
    import shutil
    from gguf import quants
    from safetensors.numpy import save_file
    out = {}
    for name, t in weights.items():
        t = t.astype(np.float32)
        if quantizable(name, t):
            blocks, q = quantize_rows(t, kind)
            t = quants.dequantize(blocks, q).reshape(t.shape)
        out[name] = t.astype(np.float32)
    shutil.copytree(hf, reference, dirs_exist_ok=True)
    save_file(out, os.path.join(reference, "model.safetensors"),
              metadata={"format": "pt"})


def stack_experts(w, c, weights):
    """Mixtral's (LlamaModel) and Qwen3-MoE's (Qwen3MoeModel) experts as
    convert_hf_to_gguf.py writes them: the expert counts (and Qwen's expert
    width) in the metadata, each layer's experts stacked into 3-D
    ffn_{gate,up,down}_exps [E, rows, cols], the router as ffn_gate_inp.
    Returns the other tensors."""
    import re
    if c["model_type"] == "mixtral":
        count, parts = c["num_local_experts"], {"w1": "gate", "w3": "up",
                                                "w2": "down"}
    elif c["model_type"] == "qwen3_moe":
        count, parts = c["num_experts"], {"gate_proj": "gate",
                                          "up_proj": "up",
                                          "down_proj": "down"}
        w.add_expert_feed_forward_length(c["moe_intermediate_size"])
    else:
        return weights
    w.add_expert_count(count)
    w.add_expert_used_count(c["num_experts_per_tok"])
    rest, experts = {}, {}
    for name, t in weights.items():
        m = re.match(r"model\.layers\.(\d+)\.(?:block_sparse_moe|mlp)\."
                     r"(?:experts\.(\d+)\.(\w+)|(gate))\.weight$", name)
        if not m:
            rest[name] = t
        elif m.group(4):
            rest[f"blk.{m.group(1)}.ffn_gate_inp.weight"] = t.astype(np.float32)
        else:
            layer, e, part = int(m.group(1)), int(m.group(2)), parts[m.group(3)]
            experts.setdefault((layer, part), {})[e] = t
    for (layer, part), by_expert in experts.items():
        rest[f"blk.{layer}.ffn_{part}_exps.weight"] = np.stack(
            [by_expert[e] for e in range(count)]).astype(np.float32)
    return rest


def add_longrope(w, c):
    """Phi3MiniModel: a longrope scaling as its attention factor and
    original context (metadata) and the long and short factors (tensors)."""
    import math
    scaling = c.get("rope_scaling") or {}
    if scaling.get("rope_type", scaling.get("type", "")).lower() not in (
            "longrope", "su"):
        return
    original = c["original_max_position_embeddings"]
    scale = c["max_position_embeddings"] / original
    w.add_rope_scaling_attn_factors(
        math.sqrt(1 + math.log(scale) / math.log(original))
        if scale > 1.0 else 1.0)
    w.add_rope_scaling_orig_ctx_len(original)
    w.add_tensor("rope_factors_long.weight",
                 np.array(scaling["long_factor"], np.float32))
    w.add_tensor("rope_factors_short.weight",
                 np.array(scaling["short_factor"], np.float32))


def llama3_rope_factors(c, dim):
    """LlamaModel.generate_extra_tensors: a llama3 rope_scaling becomes one
    f32 divisor per rotated pair (no metadata), its original context read
    from the top-level hparams (8192 when absent, as for Llama 3.1)."""
    import math
    scaling = c.get("rope_scaling") or {}
    if scaling.get("rope_type", "").lower() != "llama3":
        return None
    base = c.get("rope_theta", 10000.0)
    freqs = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float32) / dim))
    factor = scaling.get("factor", 8.0)
    low = scaling.get("low_freq_factor", 1.0)
    high = scaling.get("high_freq_factor", 4.0)
    old = c.get("original_max_position_embeddings", 8192)
    low_wavelen, high_wavelen = old / low, old / high
    out = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            out.append(1)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def cmd_logits(argv):
    """transformers' GGUF loader (load_gguf_checkpoint: what
    from_pretrained(gguf_file=) runs, without its accelerate dependency):
    the file's config and its tensors dequantized by gguf-py, Llama's Q/K
    rows permuted back."""
    import torch
    import transformers
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint
    gguf, ids, out = argv
    loaded = load_gguf_checkpoint(gguf, return_tensors=True)
    fields = loaded["config"]
    arch = fields.pop("model_type")
    config = transformers.AutoConfig.for_model(arch, **fields)
    config.tie_word_embeddings = "lm_head.weight" not in loaded["tensors"]
    model = transformers.AutoModelForCausalLM.from_config(config).float()
    state = {n: torch.from_numpy(np.asarray(t, dtype=np.float32))
             for n, t in loaded["tensors"].items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    # A tied head has no tensor of its own.
    missing = [m for m in missing if m != "lm_head.weight" or
               not config.tie_word_embeddings]
    if missing or unexpected:
        sys.exit(f"{gguf}: missing {missing}, unexpected {unexpected}")
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=torch.from_numpy(np.load(ids)),
                       use_cache=False).logits.float()
    np.save(out, logits.numpy())


def main():
    cmd, argv = sys.argv[1], sys.argv[2:]
    {"make": cmd_make, "convert": cmd_convert,
     "logits": cmd_logits}[cmd](argv)


if __name__ == "__main__":
    main()

"""A Llama of TinyLlama-1.1B's shape (d 2048, 22 layers, 32 heads, 4 KV
heads, FFN 5632, V 32000) with random weights, written twice with the same
weights: a Hugging Face directory (config.json, model.safetensors in f32)
for tfm, and GGUF files for llama.cpp in F32, Q8_0 and Q4_0 (gguf-py's
quantizer, which is llama.cpp's; tfm's --quantize q8_0|q4_0 stores the same
blocks).

  make_model.py OUT [--layers N] [--types f32,q8_0]   (run with the
  reference venv's python; --types "" writes the Hugging Face directory
  alone)
      [--experts E --top-k K --expert-ffn M]

With --experts, each layer's MLP is a Mixtral sparse block instead: a router
and E SwiGLU experts of FFN M, K chosen per token (a Mixtral of TinyLlama's
attention; llama.cpp's converter writes it as architecture llama with
expert_count, the experts stacked in 3-D ffn_*_exps and the router
ffn_gate_inp left f32 in every file type, as llama.cpp's quantizer leaves
it).

The GGUF files are what convert_hf_to_gguf.py would write for the
directory (its Q and K rows permuted for ggml's RoPE), so that tfm runs
them as they are too (bench/llamacpp/run.py) and both compute one model.
Timing only: the weights are random (normal, std 0.02) and the vocabulary
is placeholders.
"""
import argparse
import json
import os

import numpy as np
from gguf import GGMLQuantizationType, GGUFWriter, LlamaFileType, quants
from safetensors.numpy import save_file

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--layers", type=int, default=22)
p.add_argument("--types", default="f32,q8_0")
p.add_argument("--llama-quantize")
p.add_argument("--experts", type=int, default=0)
p.add_argument("--top-k", type=int, default=2)
p.add_argument("--expert-ffn", type=int, default=1408)
args = p.parse_args()
types = [t for t in args.types.split(",") if t]
if "q4_k_m" in types and ("f32" not in types or not args.llama_quantize):
    p.error("q4_k_m is made from the f32 file by --llama-quantize")

D, HEADS, KV, FFN, V = 2048, 32, 4, 5632, 32000
DH = D // HEADS
rng = np.random.default_rng(0)


def normal(*shape):
    return (rng.standard_normal(shape, dtype=np.float32) * 0.02)


hf = {"model.embed_tokens.weight": normal(V, D),
      "model.norm.weight": np.ones(D, np.float32),
      "lm_head.weight": normal(V, D)}
gg = {"token_embd.weight": "model.embed_tokens.weight",
      "output_norm.weight": "model.norm.weight",
      "output.weight": "lm_head.weight"}
for i in range(args.layers):
    h, g = f"model.layers.{i}.", f"blk.{i}."
    layer = {
        "input_layernorm.weight": ("attn_norm.weight", np.ones(D, np.float32)),
        "self_attn.q_proj.weight": ("attn_q.weight", normal(D, D)),
        "self_attn.k_proj.weight": ("attn_k.weight", normal(KV * DH, D)),
        "self_attn.v_proj.weight": ("attn_v.weight", normal(KV * DH, D)),
        "self_attn.o_proj.weight": ("attn_output.weight", normal(D, D)),
        "post_attention_layernorm.weight": ("ffn_norm.weight",
                                            np.ones(D, np.float32)),
    }
    if args.experts:
        E, M = args.experts, args.expert_ffn
        moe = h + "block_sparse_moe."
        hf[moe + "gate.weight"] = normal(E, D)
        gg[g + "ffn_gate_inp.weight"] = moe + "gate.weight"
        for part, gpart, shape in (("w1", "ffn_gate_exps", (M, D)),
                                   ("w3", "ffn_up_exps", (M, D)),
                                   ("w2", "ffn_down_exps", (D, M))):
            names = [f"{moe}experts.{e}.{part}.weight" for e in range(E)]
            for name in names:
                hf[name] = normal(*shape)
            gg[g + gpart + ".weight"] = names  # stacked [E, rows, cols]
    else:
        layer.update({
            "mlp.gate_proj.weight": ("ffn_gate.weight", normal(FFN, D)),
            "mlp.up_proj.weight": ("ffn_up.weight", normal(FFN, D)),
            "mlp.down_proj.weight": ("ffn_down.weight", normal(D, FFN)),
        })
    for name, (gname, value) in layer.items():
        hf[h + name] = value
        gg[g + gname] = h + name

hfdir = os.path.join(args.out, "hf")
os.makedirs(hfdir, exist_ok=True)
config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
          "hidden_size": D, "intermediate_size": FFN,
          "num_attention_heads": HEADS, "num_key_value_heads": KV,
          "num_hidden_layers": args.layers, "vocab_size": V,
          "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
          "max_position_embeddings": 2048, "hidden_act": "silu",
          "tie_word_embeddings": False, "torch_dtype": "float32",
          "bos_token_id": 1, "eos_token_id": 2}
if args.experts:
    config.update(architectures=["MixtralForCausalLM"], model_type="mixtral",
                  intermediate_size=args.expert_ffn,
                  num_local_experts=args.experts,
                  num_experts_per_tok=args.top_k)
with open(os.path.join(hfdir, "config.json"), "w") as f:
    json.dump(config, f)
save_file(hf, os.path.join(hfdir, "model.safetensors"))

for kind in [t for t in types if t != "q4_k_m"]:
    path = os.path.join(args.out, f"model-{kind}.gguf")
    w = GGUFWriter(path, "llama")
    w.add_name("tinyllama-shaped random")
    w.add_context_length(2048)
    w.add_embedding_length(D)
    w.add_block_count(args.layers)
    w.add_feed_forward_length(args.expert_ffn if args.experts else FFN)
    if args.experts:
        w.add_expert_count(args.experts)
        w.add_expert_used_count(args.top_k)
    w.add_rope_dimension_count(DH)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_file_type({"f32": LlamaFileType.ALL_F32,
                     "bf16": LlamaFileType.MOSTLY_BF16,
                     "q8_0": LlamaFileType.MOSTLY_Q8_0,
                     "q4_0": LlamaFileType.MOSTLY_Q4_0}[kind])
    w.add_tokenizer_model("llama")
    w.add_token_list([b"<unk>", b"<s>", b"</s>"] +
                     [f"t{i}".encode() for i in range(3, V)])
    w.add_token_scores([0.0] * V)
    w.add_token_types([2, 3, 3] + [1] * (V - 3))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    for gname, hname in gg.items():
        t = np.stack([hf[n] for n in hname]) if isinstance(hname, list) \
            else hf[hname]
        # convert_hf_to_gguf.py's LlamaModel.permute.
        heads = {"attn_q.weight": HEADS, "attn_k.weight": KV}.get(
            gname.split(".", 2)[-1])
        if heads:
            t = (t.reshape(heads, 2, t.shape[0] // heads // 2, D)
                 .swapaxes(1, 2).reshape(t.shape))
        quant = {"bf16": GGMLQuantizationType.BF16,
                 "q8_0": GGMLQuantizationType.Q8_0,
                 "q4_0": GGMLQuantizationType.Q4_0}.get(kind)
        # llama.cpp's own Q4_0 files keep the embedding and the output in
        # Q4_0 too (--pure): all 2-D tensors quantized, as here.
        if quant is not None and t.ndim >= 2 and "gate_inp" not in gname:
            w.add_tensor(gname, quants.quantize(t, quant), raw_dtype=quant)
        else:
            w.add_tensor(gname, t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
if "q4_k_m" in types:
    import subprocess
    made = subprocess.run([args.llama_quantize,
                           os.path.join(args.out, "model-f32.gguf"),
                           os.path.join(args.out, "model-q4_k_m.gguf"),
                           "Q4_K_M"], capture_output=True, text=True)
    if made.returncode != 0:
        raise SystemExit(f"llama-quantize failed:\n{made.stderr[-2000:]}")
print(args.out)

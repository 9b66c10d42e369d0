#!/usr/bin/env python3
"""Trains the bundled tiny byte-level Llama on the King James Bible.

The corpus is the public-domain KJV text shipped by Debian's `bible-kjv`
package (`bible Gen1:1-Rev22:21`). The model is a Llama architecture (RMSNorm,
RoPE, GQA, SwiGLU) over bytes (vocab 256), written with the same math as
python/tfm/reference.py; weights are saved under Hugging Face Llama names in
model.safetensors next to a Hugging Face config.json, so tfm loads them as it
would a published checkpoint.

  /usr/bin/python3 models/tiny-kjv/train.py [--steps N] [--minutes M]

`--wide DIR` trains models/tiny-kjv-256's shape instead (hidden 256, ffn
512, 8 heads: every matrix's K a multiple of 256, so the 256-weight
super-blocks of Q4_K, Q5_K and Q6_K quantize all of them, where
tiny-kjv's K of 192 leaves most matrices f32) and stores its weights as
BF16 (half the bytes in git); bench/quant-accuracy.py measures the K-quants
on it:

  /usr/bin/python3 models/tiny-kjv/train.py --wide models/tiny-kjv-256 \
      --minutes 25
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from tfm import reference as ref  # noqa: E402
from tfm.io import BF16, write_safetensors  # noqa: E402

CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "vocab_size": 256,
    "hidden_size": 192,
    "intermediate_size": 512,
    "num_hidden_layers": 4,
    "num_attention_heads": 6,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "max_position_embeddings": 256,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "hidden_act": "silu",
    "tie_word_embeddings": False,
    "attention_bias": False,
    "mlp_bias": False,
    "rope_scaling": None,
    "torch_dtype": "float32",
}

WIDE = dict(CONFIG, hidden_size=256, intermediate_size=512,
            num_attention_heads=8, torch_dtype="bfloat16")


def corpus():
    text = subprocess.run(["bible", "Gen1:1-Rev22:21"], check=True,
                          stdout=subprocess.PIPE).stdout
    return torch.tensor(list(text), dtype=torch.long)


def init_weights(cfg, gen):
    d, m, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    hq, hkv, dh = (cfg["num_attention_heads"], cfg["num_key_value_heads"],
                   cfg["head_dim"])
    w = {}

    def lin(name, out_f, in_f, scale=1.0):
        w[name] = torch.randn(out_f, in_f, generator=gen) * scale / math.sqrt(in_f)

    w["model.embed_tokens.weight"] = torch.randn(v, d, generator=gen) * 0.02
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = torch.ones(d)
        w[p + "post_attention_layernorm.weight"] = torch.ones(d)
        lin(p + "self_attn.q_proj.weight", hq * dh, d)
        lin(p + "self_attn.k_proj.weight", hkv * dh, d)
        lin(p + "self_attn.v_proj.weight", hkv * dh, d)
        lin(p + "self_attn.o_proj.weight", d, hq * dh, 0.5)
        lin(p + "mlp.gate_proj.weight", m, d)
        lin(p + "mlp.up_proj.weight", m, d)
        lin(p + "mlp.down_proj.weight", d, m, 0.5)
    w["model.norm.weight"] = torch.ones(d)
    lin("lm_head.weight", v, d)
    return w


def forward(cfg, w, ids):
    x = w["model.embed_tokens.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        x = ref.llama_block(w, f"model.layers.{i}.", x,
                            cfg["num_attention_heads"],
                            cfg["num_key_value_heads"], cfg["rms_norm_eps"],
                            cfg["rope_theta"])
    x = ref.rms_norm(x, w["model.norm.weight"], cfg["rms_norm_eps"])
    return x @ w["lm_head.weight"].t()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--minutes", type=float, default=12.0)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--context", type=int, default=128)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--wide", metavar="DIR",
                        help="train the wide shape (WIDE) into DIR, BF16")
    args = parser.parse_args()
    config = WIDE if args.wide else CONFIG
    out = args.wide or HERE

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    data = corpus()
    split = int(len(data) * 0.98)
    train, val = data[:split], data[split:]
    w = init_weights(config, gen)
    params = list(w.values())
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)

    def batch(source):
        starts = torch.randint(0, len(source) - args.context - 1,
                               (args.batch,), generator=gen)
        x = torch.stack([source[s:s + args.context] for s in starts])
        y = torch.stack([source[s + 1:s + args.context + 1] for s in starts])
        return x, y

    start = time.time()
    for step in range(args.steps):
        lr = args.lr * min(1.0, (step + 1) / 100) * 0.5 * (
            1 + math.cos(math.pi * min(1.0, (time.time() - start) / (60 * args.minutes))))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = batch(train)
        logits = forward(config, w, x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 256), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        elapsed = time.time() - start
        if step % 50 == 0:
            with torch.no_grad():
                vx, vy = batch(val)
                vloss = torch.nn.functional.cross_entropy(
                    forward(config, w, vx).reshape(-1, 256), vy.reshape(-1))
            print(f"step {step} loss {loss.item():.3f} val {vloss.item():.3f} "
                  f"lr {lr:.2e} {elapsed:.0f}s", flush=True)
        if elapsed > 60 * args.minutes:
            break

    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    store = BF16 if args.wide else (lambda a: a)
    write_safetensors(os.path.join(out, "model.safetensors"),
                      {n: store(t.detach().contiguous().numpy())
                       for n, t in w.items()},
                      metadata={"format": "pt"})
    print(f"saved after {step + 1} steps, final loss {loss.item():.3f}")


if __name__ == "__main__":
    main()

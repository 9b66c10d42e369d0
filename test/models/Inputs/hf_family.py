"""Tiny random checkpoints saved by Hugging Face transformers, and their
reference logits and greedy tokens, for the Llama-family variant tests.

Runs under %hf_python (transformers 4.46.3 over torch 1.13).

usage:
  hf_family.py make CONFIG DIR [--seed N] [--batch B] [--seq S]
      builds the transformers model of CONFIG (a config.json) with random
      weights, writes it with save_pretrained (DIR/config.json and an f32
      DIR/model.safetensors) and random prompt ids [B, S] to DIR/ids.npy.
  hf_family.py logits DIR IDS OUT       reference logits [B, S, V] (f32)
  hf_family.py greedy DIR IDS N OUT     reference greedy tokens [B, S + N]:
      an argmax loop, each step a full forward pass over the whole sequence
      (transformers' generate() does not import with torch 1.13).
  hf_family.py close A B                exits 1 unless A and B agree within
      1e-4 abs + 1e-3 rel (and have the same shape)
  hf_family.py same A B                 exits 1 unless A == B exactly

Qwen3 is newer than transformers 4.46, so its reference is built here from
transformers' Llama modules, following the published Qwen3 modeling code
(transformers >= 4.51, models/qwen3/modeling_qwen3.py): Qwen3 is Llama
(RMSNorm, SwiGLU, GQA, RoPE, `head_dim` independent of hidden_size / heads,
`attention_bias` on q/k/v/o) plus, in each attention, `q_norm` and `k_norm`:
RMSNorms of size head_dim applied to every query / key head after the q/k
projection and before RoPE:
    q = q_norm(q_proj(x).view(B, S, H, dh)).transpose(1, 2)
Here that is a forward hook on q_proj/k_proj that applies the head-wise norm
(registered as self_attn.q_norm / k_norm, so the checkpoint names are the
published ones). save_pretrained then writes a Llama config, which is
replaced by the Qwen3 CONFIG.
"""
import json
import os
import sys

import numpy as np
import torch

ATOL, RTOL = 1e-4, 1e-3


def load_json(path):
    with open(path) as f:
        return json.load(f)


def add_qk_norm(model, cfg):
    """Qwen3's per-head q/k RMSNorm on a Llama model (see the docstring)."""
    from transformers.models.llama.modeling_llama import LlamaRMSNorm
    dh = cfg["head_dim"]
    eps = cfg.get("rms_norm_eps", 1e-6)
    for layer in model.model.layers:
        attn = layer.self_attn
        for which in ("q", "k"):
            norm = LlamaRMSNorm(dh, eps=eps)
            attn.add_module(f"{which}_norm", norm)

            def hook(module, inputs, out, norm=norm):
                return norm(out.view(*out.shape[:-1], -1, dh)).flatten(-2)
            getattr(attn, f"{which}_proj").register_forward_hook(hook)


def build(cfg):
    """The transformers model for the config dict `cfg`, in eval mode."""
    import transformers
    kind = cfg["model_type"]
    fields = {k: v for k, v in cfg.items() if k != "model_type"}
    if kind == "qwen3":
        # Qwen3's fields are Llama's, with attention_bias and head_dim as is.
        fields = {k: v for k, v in fields.items()
                  if k not in ("use_sliding_window", "sliding_window",
                               "max_window_layers")}
        config = transformers.LlamaConfig(**fields)
    else:
        config = transformers.AutoConfig.for_model(kind, **fields)
    # Eager attention: the masks (causal, sliding window) are explicit.
    config._attn_implementation = "eager"
    model = transformers.AutoModelForCausalLM.from_config(config)
    if kind == "qwen3":
        add_qk_norm(model, cfg)
    return model.eval()


def randomize(model, seed):
    """Weights large enough that the logits spread over a few units: norm
    scales near 1, biases small, matrices ~ 1.5 / sqrt(fan_in)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            x = torch.randn(p.shape, generator=g)
            if p.dim() == 1:
                p.copy_((1.0 if name.endswith("norm.weight") else 0.0) + 0.1 * x)
            elif "embed_tokens" in name:
                p.copy_(0.5 * x)
            else:
                p.copy_(x * 1.5 / np.sqrt(p.shape[1]))


def load(dir):
    """The model saved in DIR (weights from DIR/model.safetensors)."""
    from safetensors.torch import load_file
    cfg = load_json(os.path.join(dir, "config.json"))
    model = build(cfg)
    state = load_file(os.path.join(dir, "model.safetensors"))
    missing, unexpected = model.load_state_dict(state, strict=False)
    # A tied head is saved once; nothing else may be missing.
    missing = [m for m in missing if m != "lm_head.weight"]
    if missing or unexpected:
        sys.exit(f"{dir}: missing {missing}, unexpected {unexpected}")
    if cfg.get("tie_word_embeddings"):
        model.tie_weights()
    return model


def cmd_make(args):
    import argparse
    p = argparse.ArgumentParser(prog="hf_family.py make")
    p.add_argument("config")
    p.add_argument("dir")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=8)
    a = p.parse_args(args)
    cfg = load_json(a.config)
    torch.manual_seed(a.seed)
    model = build(cfg)
    randomize(model, a.seed)
    model.save_pretrained(a.dir, safe_serialization=True)
    if cfg["model_type"] == "qwen3":
        with open(os.path.join(a.dir, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
    rng = np.random.default_rng(a.seed)
    ids = rng.integers(0, cfg["vocab_size"], (a.batch, a.seq)).astype(np.int64)
    np.save(os.path.join(a.dir, "ids.npy"), ids)
    n = sum(p.numel() for p in model.parameters())
    print(f"saved {cfg['model_type']}: {n} parameters, ids {list(ids.shape)}")


def forward(model, ids):
    with torch.no_grad():
        return model(torch.from_numpy(ids), use_cache=False).logits.float()


def cmd_logits(dir, ids, out):
    np.save(out, forward(load(dir), np.load(ids)).numpy())


def cmd_greedy(dir, ids, n, out):
    """As transformer-runner --generate writes them: a sequence that produced
    an EOS id continues with the first EOS id, and generation ends once every
    sequence has."""
    model = load(dir)
    eos = load_json(os.path.join(dir, "config.json")).get("eos_token_id")
    eos = [] if eos is None else [eos] if isinstance(eos, int) else eos
    seq = np.load(ids)
    done = np.zeros(seq.shape[0], dtype=bool)
    for _ in range(int(n)):
        nxt = forward(model, seq)[:, -1, :].argmax(-1).numpy()
        nxt = np.where(done, eos[0] if eos else 0, nxt)
        seq = np.concatenate([seq, nxt[:, None].astype(np.int64)], axis=1)
        done |= np.isin(nxt, eos)
        if done.all():
            break
    np.save(out, seq)


def cmd_close(a, b):
    x, y = np.load(a), np.load(b)
    if x.shape != y.shape:
        sys.exit(f"FAIL: shapes {x.shape} and {y.shape} differ")
    err = np.abs(x - y)
    bad = err > ATOL + RTOL * np.abs(y)
    print(f"max abs error {err.max():.3g} over {x.size} logits "
          f"(reference spread {y.std():.3g})")
    if bad.any():
        i = np.unravel_index(np.argmax(err - RTOL * np.abs(y)), x.shape)
        sys.exit(f"FAIL: at {i}: {x[i]} vs reference {y[i]}")
    print("PASS: logits match transformers")


def cmd_same(a, b):
    x, y = np.load(a), np.load(b)
    if x.shape != y.shape or not (x == y).all():
        sys.exit(f"FAIL: tokens differ:\n{x}\nreference:\n{y}")
    print(f"PASS: {x.shape[0]}x{x.shape[1]} tokens equal transformers'")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "make":
        cmd_make(args)
    elif cmd == "logits":
        cmd_logits(*args)
    elif cmd == "greedy":
        cmd_greedy(*args)
    elif cmd == "close":
        cmd_close(*args)
    elif cmd == "same":
        cmd_same(*args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

"""Random checkpoints for Hugging Face configs, and PyTorch references.

usage:
  hf_case.py make CONFIG DIR [--batch B] [--seq S] [--seed N]
                  [--prefix P] [--buffers] [--extra] [--damage KIND]
      writes DIR/w.safetensors (parameters named as in the Hugging Face
      checkpoint, each name prefixed with P; --buffers adds GPT-2's attn.bias
      and attn.masked_bias buffers, --extra an unrelated tensor) and
      DIR/ids.npy (int64 [B, S]). --damage missing|misnamed|misshaped breaks
      one tensor of the first layer.
  hf_case.py logits CONFIG W IDS OUT     reference logits [B, S, V] (f32)
  hf_case.py greedy CONFIG W IDS N OUT   reference greedy generation:
      [B, S + N] int64, each step recomputing the whole sequence (no cache).
  hf_case.py same A B                    exits non-zero unless A == B exactly
"""
import json
import sys

import numpy as np
import torch

from tfm import reference
from tfm.io import read_safetensors, write_safetensors


def load_config(path):
    with open(path) as f:
        return json.load(f)


def parameter_shapes(c):
    """{name: shape} of every parameter, in checkpoint naming and layout."""
    shapes = {}
    if c["model_type"] == "gpt2":
        d, v, n = c["n_embd"], c["vocab_size"], c["n_positions"]
        m = c.get("n_inner") or 4 * d
        shapes["wte.weight"] = (v, d)
        shapes["wpe.weight"] = (n, d)
        for i in range(c["n_layer"]):
            p = f"h.{i}."
            for ln in ("ln_1", "ln_2"):
                shapes[p + ln + ".weight"] = (d,)
                shapes[p + ln + ".bias"] = (d,)
            for name, (fan_in, fan_out) in (("attn.c_attn", (d, 3 * d)),
                                            ("attn.c_proj", (d, d)),
                                            ("mlp.c_fc", (d, m)),
                                            ("mlp.c_proj", (m, d))):
                shapes[p + name + ".weight"] = (fan_in, fan_out)
                shapes[p + name + ".bias"] = (fan_out,)
        shapes["ln_f.weight"] = (d,)
        shapes["ln_f.bias"] = (d,)
        return shapes
    d, v, m = c["hidden_size"], c["vocab_size"], c["intermediate_size"]
    h = c["num_attention_heads"]
    hkv = c.get("num_key_value_heads", h)
    dh = c.get("head_dim") or d // h
    shapes["model.embed_tokens.weight"] = (v, d)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes[p + "input_layernorm.weight"] = (d,)
        shapes[p + "post_attention_layernorm.weight"] = (d,)
        shapes[p + "self_attn.q_proj.weight"] = (h * dh, d)
        shapes[p + "self_attn.k_proj.weight"] = (hkv * dh, d)
        shapes[p + "self_attn.v_proj.weight"] = (hkv * dh, d)
        shapes[p + "self_attn.o_proj.weight"] = (d, h * dh)
        if c["model_type"] == "mixtral":
            e_count = c["num_local_experts"]
            shapes[p + "block_sparse_moe.gate.weight"] = (e_count, d)
            for e in range(e_count):
                q = p + f"block_sparse_moe.experts.{e}."
                shapes[q + "w1.weight"] = (m, d)
                shapes[q + "w3.weight"] = (m, d)
                shapes[q + "w2.weight"] = (d, m)
        else:
            shapes[p + "mlp.gate_proj.weight"] = (m, d)
            shapes[p + "mlp.up_proj.weight"] = (m, d)
            shapes[p + "mlp.down_proj.weight"] = (d, m)
    shapes["model.norm.weight"] = (d,)
    if not c.get("tie_word_embeddings", False):
        shapes["lm_head.weight"] = (v, d)
    return shapes


def random_weights(c, rng):
    """Sizes that keep activations near unit scale and spread the logits, so
    that greedy choices are not near-ties that rounding could flip."""
    gpt2 = c["model_type"] == "gpt2"
    weights = {}
    for name, shape in parameter_shapes(c).items():
        if len(shape) == 1:
            base = 1.0 if name.endswith("weight") else 0.0
            value = base + 0.1 * rng.standard_normal(shape)
        elif "wte" in name or "embed_tokens" in name or "wpe" in name:
            # GPT-2's tied head favours the input token itself: keep the
            # embeddings small next to what the blocks add.
            value = rng.standard_normal(shape) * (0.3 if gpt2 else 1.0)
        else:
            fan_in = shape[0] if gpt2 else shape[1]
            scale = 3.0 if name == "lm_head.weight" else 2.0
            value = rng.standard_normal(shape) * scale / np.sqrt(fan_in)
        weights[name] = value.astype(np.float32)
    return weights


def make(argv):
    config, out = argv[0], argv[1]
    opts = {"--batch": "1", "--seq": "5", "--seed": "0", "--prefix": "",
            "--damage": ""}
    flags = set()
    rest = argv[2:]
    while rest:
        key = rest.pop(0)
        if key in ("--buffers", "--extra"):
            flags.add(key)
        else:
            opts[key] = rest.pop(0)
    c = load_config(config)
    rng = np.random.default_rng(int(opts["--seed"]))
    weights = random_weights(c, rng)
    first = sorted(n for n in weights if ".0." in n and n.endswith("weight")
                   and len(weights[n].shape) == 2)[0]
    if opts["--damage"] == "missing":
        del weights[first]
    elif opts["--damage"] == "misnamed":
        weights[first.replace(".weight", ".wieght")] = weights.pop(first)
    elif opts["--damage"] == "misshaped":
        weights[first] = weights[first][:, :-1].copy()
    elif opts["--damage"]:
        sys.exit(f"unknown damage {opts['--damage']}")
    named = {opts["--prefix"] + k: v for k, v in weights.items()}
    if "--buffers" in flags:
        n = c["n_positions"]
        for i in range(c["n_layer"]):
            p = f"{opts['--prefix']}h.{i}.attn."
            named[p + "bias"] = np.tril(np.ones((1, 1, n, n), bool))
            named[p + "masked_bias"] = np.array(-1e4, np.float32)
    if "--extra" in flags:
        named["score.weight"] = np.zeros((2, 3), np.float32)
    write_safetensors(f"{out}/w.safetensors", named, metadata={"format": "pt"})
    ids = rng.integers(0, c["vocab_size"],
                       (int(opts["--batch"]), int(opts["--seq"])))
    np.save(f"{out}/ids.npy", ids.astype(np.int64))


def model_logits(c, w, ids):
    return reference.hf_causal_lm_logits(c, w, ids)


def load(config, weights, ids):
    w, _ = read_safetensors(weights)
    w = {k: torch.from_numpy(v) for k, v in w.items()}
    return load_config(config), w, torch.from_numpy(np.load(ids)).long()


def main():
    cmd, argv = sys.argv[1], sys.argv[2:]
    torch.manual_seed(0)
    if cmd == "make":
        make(argv)
    elif cmd == "logits":
        c, w, ids = load(*argv[:3])
        with torch.no_grad():
            np.save(argv[3], model_logits(c, w, ids).numpy().astype(np.float32))
    elif cmd == "greedy":
        c, w, ids = load(*argv[:3])
        margin = float("inf")
        with torch.no_grad():
            for _ in range(int(argv[3])):
                last = model_logits(c, w, ids)[:, -1]
                top = torch.topk(last, 2, dim=-1).values
                margin = min(margin, float((top[:, 0] - top[:, 1]).min()))
                ids = torch.cat([ids, last.argmax(-1, keepdim=True)], dim=1)
        np.save(argv[4], ids.numpy().astype(np.int64))
        new = ids[:, -int(argv[3]):]
        print(f"reference: {new.unique().numel()} distinct new tokens, "
              f"smallest top-2 logit margin {margin:.3g}")
    elif cmd == "same":
        a, b = np.load(argv[0]), np.load(argv[1])
        if a.shape != b.shape or a.dtype != b.dtype or not (a == b).all():
            sys.exit(f"different:\n{a!r}\n{b!r}")
        print(f"same: {a.dtype}{list(a.shape)}")
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()

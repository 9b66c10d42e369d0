"""Whole-model numerics against PyTorch, for lit tests.

usage:
  hf_model.py weights MODULE.mlir DIR [--seed N]
      random weights for every `tfm.param` argument of @forward in MODULE,
      named as the module names them (Hugging Face names), written to
      DIR/w.safetensors with tfm.io; random token ids of @forward's
      `input_ids` shape to DIR/ids.npy (int64).
  hf_model.py check CONFIG DIR LOGITS.npy [--atol A] [--rtol R]
                    [--scale-weight NAME=FACTOR]
      PyTorch logits (tfm.reference.hf_causal_lm_logits) for the config.json
      CONFIG and DIR's weights and ids; exits 1 unless LOGITS.npy matches them
      within A abs + R rel (default 1e-4 / 1e-3). --scale-weight changes one
      weight of the reference only: a test that the check is sensitive.
  hf_model.py same A.npy B.npy [--atol A]
      exits 1 unless A and B have the same shape and agree within A
      (default 1e-5) absolute.
"""
import argparse
import json
import re
import sys

import numpy as np

_FUNC = re.compile(r"func\.func @(\w+)\((.*?)\)\s*->", re.S)
_ARG = re.compile(r'tensor<((?:\d+x)+)(\w+)>\s*\{tfm\.(param|input)\s*=\s*'
                  r'"([^"]+)"')


def forward_signature(path):
    """[(kind, name, shape)] of @forward's annotated tensor arguments."""
    text = open(path).read()
    for m in _FUNC.finditer(text):
        if m.group(1) == "forward":
            return [(a.group(3), a.group(4),
                     tuple(int(d) for d in a.group(1).rstrip("x").split("x")))
                    for a in _ARG.finditer(m.group(2))]
    sys.exit(f"{path}: no @forward")


def random_weights(params, rng):
    """Norm scales near 1, biases small, matrices scaled by 1/sqrt(fan_in) so
    that activations stay near unit size through the layers and the logits
    spread over a few units (a weak check would compare near-zero logits)."""
    weights = {}
    for name, shape in params:
        x = rng.standard_normal(shape)
        if len(shape) == 1:
            x = (1.0 if name.endswith("weight") else 0.0) + 0.1 * x
        elif "wte" in name or "wpe" in name or "embed_tokens" in name:
            x = 0.5 * x
        else:
            # Conv1D (GPT-2 "c_*") weights are [in, out]; nn.Linear [out, in].
            fan_in = shape[0] if ".c_" in name else shape[1]
            x = x * 1.5 / np.sqrt(fan_in)
        weights[name] = x.astype(np.float32)
    return weights


def cmd_weights(argv):
    from tfm.io import write_safetensors
    p = argparse.ArgumentParser(prog="hf_model.py weights")
    p.add_argument("module")
    p.add_argument("dir")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    sig = forward_signature(a.module)
    rng = np.random.default_rng(a.seed)
    params = [(n, s) for k, n, s in sig if k == "param"]
    weights = random_weights(params, rng)
    vocab = next(s[0] for n, s in params
                 if n.endswith("wte.weight") or n.endswith("embed_tokens.weight"))
    ids_shape = next(s for k, n, s in sig if k == "input" and n == "input_ids")
    write_safetensors(f"{a.dir}/w.safetensors", weights)
    np.save(f"{a.dir}/ids.npy",
            rng.integers(0, vocab, ids_shape).astype(np.int64))
    print(f"weights: {len(weights)} tensors, "
          f"{sum(w.size for w in weights.values())} parameters; "
          f"ids: {list(ids_shape)}")


def cmd_check(argv):
    import torch
    from tfm import reference
    from tfm.io import read_safetensors
    p = argparse.ArgumentParser(prog="hf_model.py check")
    p.add_argument("config")
    p.add_argument("dir")
    p.add_argument("logits")
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--scale-weight", default=None)
    a = p.parse_args(argv)
    config = json.load(open(a.config))
    w, _ = read_safetensors(f"{a.dir}/w.safetensors")
    w = {k: torch.from_numpy(v) for k, v in w.items()}
    if a.scale_weight:
        name, factor = a.scale_weight.rsplit("=", 1)
        w[name] = w[name] * float(factor)
    ids = torch.from_numpy(np.load(f"{a.dir}/ids.npy"))
    with torch.no_grad():
        want = reference.hf_causal_lm_logits(config, w, ids).numpy()
    got = np.load(a.logits)
    if got.shape != want.shape or got.dtype != np.float32:
        print(f"FAIL: logits {got.dtype}{list(got.shape)}, reference "
              f"{want.dtype}{list(want.shape)}")
        return 1
    err = np.abs(got.astype(np.float64) - want)
    print(f"logits {list(got.shape)}: max abs error {err.max():.2e}, "
          f"max |reference| {np.abs(want).max():.2f}, "
          f"reference std {want.std():.2f}")
    if not np.allclose(got, want, atol=a.atol, rtol=a.rtol):
        i = np.unravel_index(np.argmax(err - a.rtol * np.abs(want)), err.shape)
        print(f"FAIL: at {list(i)}: got {got[i]}, reference {want[i]}")
        return 1
    print("PASS: logits match PyTorch")
    return 0


def cmd_same(argv):
    p = argparse.ArgumentParser(prog="hf_model.py same")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--atol", type=float, default=1e-5)
    a = p.parse_args(argv)
    x, y = np.load(a.a), np.load(a.b)
    if x.shape != y.shape:
        print(f"FAIL: shapes {list(x.shape)} and {list(y.shape)}")
        return 1
    err = float(np.max(np.abs(x.astype(np.float64) - y), initial=0.0))
    print(f"same shape {list(x.shape)}: max abs difference {err:.2e}")
    if not err <= a.atol:
        print(f"FAIL: differ by more than {a.atol}")
        return 1
    print("PASS: the same logits")
    return 0


def main():
    cmd, argv = sys.argv[1], sys.argv[2:]
    commands = {"weights": cmd_weights, "check": cmd_check, "same": cmd_same}
    if cmd not in commands:
        sys.exit(f"unknown command {cmd}")
    return commands[cmd](argv) or 0


if __name__ == "__main__":
    sys.exit(main())

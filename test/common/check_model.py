#!/usr/bin/env python3
"""Runs a tfm model through transformer-runner and compares it with PyTorch.

Random weights for every `tfm.param` argument of the model are written to a
.safetensors file, random inputs to .npy files; the runner's output is
compared with the reference implementation from tfm.reference within the f32
tolerance (1e-4 abs + 1e-3 rel, as numpy.allclose). Exits 1 on mismatch.

  check_model.py MODEL.mlir --kind gpt2-block --heads 12 [runner options...]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch

from tfm import reference as ref
from tfm.io import write_safetensors

_ARG = re.compile(r'tensor<((?:\d+x)+)(\w+)>\s*\{tfm\.(param|input)\s*=\s*"([^"]+)"')
_DTYPES = {"f32": torch.float32, "f16": torch.float16, "i64": torch.int64,
           "i32": torch.int32}


def signature(path):
    """[(kind, name, shape, dtype)] of the annotated arguments in `path`."""
    text = open(path).read()
    return [(m.group(3), m.group(4),
             [int(d) for d in m.group(1).rstrip("x").split("x")], m.group(2))
            for m in _ARG.finditer(text)]


def random_weights(params, seed):
    """Name -> tensor: norm scales near 1, biases and weights small."""
    gen = torch.Generator().manual_seed(seed)
    weights = {}
    for name, shape in params:
        t = torch.randn(shape, generator=gen)
        if name.endswith("norm.weight") or re.search(r"ln_\w+\.weight$", name):
            t = 1.0 + 0.1 * t
        elif name.endswith("wte.weight") or name.endswith("embed_tokens.weight"):
            t = 0.5 * t
        elif len(shape) == 2:
            fan_in = shape[0] if ".c_" in name else shape[1]
            t = t / np.sqrt(fan_in)
        else:
            t = 0.1 * t
        weights[name] = t
    return weights


def reference(args, w, inputs):
    if args.kind == "gpt2-block":
        return ref.gpt2_block(w, args.prefix, inputs["hidden"], args.heads, args.eps)
    if args.kind == "llama-block":
        return ref.llama_block(w, args.prefix, inputs["hidden"], args.heads,
                               args.kv_heads, args.eps, args.theta)
    if args.kind == "gpt2-mlp":
        # x + c_proj(gelu(c_fc(x))), GPT-2's MLP and its residual.
        x = inputs["hidden"]
        h = ref.linear(x, w[args.prefix + "mlp.c_fc.weight"],
                       w[args.prefix + "mlp.c_fc.bias"], "in_out")
        h = ref.gelu(h, args.gelu)
        return x + ref.linear(h, w[args.prefix + "mlp.c_proj.weight"],
                              w[args.prefix + "mlp.c_proj.bias"], "in_out")
    if args.kind == "swiglu-mlp":
        x = inputs["hidden"]
        return x + ref.swiglu_mlp(w, args.prefix + "mlp.", x)
    if args.kind == "linear-gelu-residual":
        # res + gelu(x W^T + b), W as nn.Linear stores it.
        h = ref.linear(inputs["hidden"], w[args.prefix + "fc.weight"],
                       w[args.prefix + "fc.bias"], "out_in")
        return inputs["res"] + ref.gelu(h, args.gelu)
    if args.kind == "lm-head":
        # layer_norm(x) W^T, a final norm and an untied head ([V, d]).
        h = ref.layer_norm(inputs["hidden"], w[args.prefix + "ln_f.weight"],
                           w[args.prefix + "ln_f.bias"], args.eps)
        return ref.linear(h, w[args.prefix + "lm_head.weight"])
    if args.kind == "gpt2":
        return ref.gpt2_model(w, inputs["input_ids"], args.layers, args.heads,
                              args.eps, args.prefix)
    if args.kind == "attention" and args.offsets:
        # Per-sequence offsets (ragged batches): each sequence alone.
        return torch.cat([ref.attention(inputs["q"][b:b + 1], inputs["k"][b:b + 1],
                                        inputs["v"][b:b + 1], offset=offset,
                                        window=args.window)
                          for b, offset in enumerate(args.offsets)])
    if args.kind == "attention":
        return ref.attention(inputs["q"], inputs["k"], inputs["v"],
                             causal=not args.not_causal, offset=args.offset,
                             window=args.window)
    raise SystemExit(f"unknown kind {args.kind}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--kind", required=True)
    parser.add_argument("--heads", type=int, default=0)
    parser.add_argument("--kv-heads", type=int)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--prefix", default="")
    parser.add_argument("--eps", type=float, default=1e-5)
    parser.add_argument("--theta", type=float, default=10000.0)
    parser.add_argument("--gelu", default="tanh", choices=["tanh", "none"],
                        help="gpt2-mlp, linear-gelu-residual: GELU form")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--atol", type=float, default=1e-4)
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--output", default="hidden")
    parser.add_argument("--offset", type=int,
                        help="attention: position of the first query")
    parser.add_argument("--not-causal", action="store_true")
    parser.add_argument("--offsets", type=lambda v: [int(x) for x in v.split(",")],
                        help="attention: the input `pos` as one offset per "
                             "sequence, e.g. 0,20,59")
    parser.add_argument("--window", type=int,
                        help="attention: the op's sliding_window")
    args, runner_args = parser.parse_known_args()

    sig = signature(args.model)
    weights = random_weights([(n, s) for k, n, s, _ in sig if k == "param"],
                             args.seed)
    gen = torch.Generator().manual_seed(args.seed + 1)
    inputs = {}
    for kind, name, shape, dtype in sig:
        if kind != "input":
            continue
        if name == "pos" and args.offsets:
            inputs[name] = torch.tensor(args.offsets, dtype=_DTYPES[dtype])
        elif dtype.startswith("i"):
            vocab = next(t.shape[0] for n, t in weights.items()
                         if n.endswith("wte.weight") or n.endswith("embed_tokens.weight"))
            inputs[name] = torch.randint(0, vocab, shape, generator=gen)
        else:
            inputs[name] = torch.randn(shape, generator=gen)

    with tempfile.TemporaryDirectory() as tmp:
        wpath = os.path.join(tmp, "weights.safetensors")
        write_safetensors(wpath, {n: t.numpy() for n, t in weights.items()})
        cmd = [os.path.join(os.environ.get("TFM_TOOLS_DIR", ""), "transformer-runner"),
               args.model, "--weights", wpath]
        for name, value in inputs.items():
            ipath = os.path.join(tmp, name + ".npy")
            np.save(ipath, value.numpy())
            cmd += ["--input", f"{name}={ipath}"]
        opath = os.path.join(tmp, "out.npy")
        cmd += ["--output", f"{args.output}={opath}"] + runner_args
        run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        if run.returncode != 0:
            print(run.stdout)
            print(f"FAIL: transformer-runner exited {run.returncode}")
            return 1
        got = np.load(opath)

    with torch.no_grad():
        want = reference(args, weights, inputs).numpy()
    if got.shape != want.shape:
        print(f"FAIL: shape {got.shape}, reference {want.shape}")
        return 1
    err = np.abs(got - want)
    print(f"max abs error {err.max():.3e}, max |ref| {np.abs(want).max():.3e}")
    if not np.allclose(got, want, atol=args.atol, rtol=args.rtol):
        i = np.unravel_index(np.argmax(err - args.rtol * np.abs(want)), err.shape)
        print(f"FAIL: at {i}: got {got[i]}, reference {want[i]}")
        return 1
    print("PASS: matches PyTorch")
    return 0


if __name__ == "__main__":
    sys.exit(main())

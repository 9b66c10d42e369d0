"""Weights, inputs and checks of bf16-pairs.test.

usage: bf16_pairs.py write DIR
       bf16_pairs.py check DIR ENTRY GOT.npy
       bf16_pairs.py bound DIR LAYOUT GOT.npy
       bf16_pairs.py attention DIR GOT.npy

`write` makes DIR/w.safetensors (bf16 weights) and DIR/ENTRY.x.npy for each
entry of Inputs/bf16-pairs.mlir. `check` compares an entry's output with a
float64 reference over the same bf16-rounded x and weights, rounded once to
bf16 as the entry's result is: every element within one bf16 unit in the
last place (2^-8 |ref|) plus 1e-4 of the largest |ref| (f32 sums in another
order); an f32 result within 1e-5 |ref| + 1e-6 of the largest (the bf16
products are exact in f32, only the sums round). Prints PASS or the worst
element. `bound` checks a weight of Inputs/bf16-pairs-bound.mlir as bound
(DIR/bound.safetensors, written by `write`) against numpy's packing.
`attention` checks @attention's output (q, k, v in DIR/attention.{q,k,v}.npy)
against float64 causal GQA attention on the same bf16 values, rounded once
to bf16: within 2^-8 |ref| + 1e-3 of the largest |ref|.
"""
import os
import sys

import numpy as np

from tfm.io import BF16, write_safetensors

# entry -> (x shape, weight name, weight shape, layout, bias name)
CASES = {
    "proj": ((1, 130, 400), "proj.weight", (200, 400), "out_in", "proj.bias"),
    "head": ((1, 7, 64), "head.weight", (64, 203), "in_out", None),
    "row": ((1, 1, 400), "proj.weight", (200, 400), "out_in", "proj.bias"),
    "odd": ((1, 9, 37), "odd.weight", (48, 37), "out_in", None),
    "logits": ((6, 40), "logits.weight", (40, 72), "in_out", None),
}
# Entries whose result is the f32 accumulator itself (not rounded to bf16).
F32_RESULTS = {"logits"}


def bf16(a):
    """a rounded to bfloat16 (nearest even), as f32."""
    bits = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def weights():
    rng = np.random.default_rng(7)
    w = {}
    for _, name, shape, _, bias in CASES.values():
        if name not in w:
            w[name] = bf16(rng.standard_normal(shape) * 0.1)
        if bias and bias not in w:
            w[bias] = bf16(rng.standard_normal(shape[0]))
    return w


def bound_weight():
    """The [N, K] = [40, 8] weight of Inputs/bf16-pairs-bound.mlir."""
    return bf16(np.arange(320).reshape(40, 8) * 0.25 - 40.0)


def inputs(entry):
    shape = CASES[entry][0]
    return (np.arange(np.prod(shape)).reshape(shape) % 97 / 48.0 - 1.0 +
            0.01 * np.sin(np.arange(np.prod(shape)).reshape(shape))).astype(
                np.float32)


def main():
    mode, out = sys.argv[1], sys.argv[2]
    w = weights()
    if mode == "write":
        os.makedirs(out, exist_ok=True)
        write_safetensors(os.path.join(out, "w.safetensors"),
                          {k: BF16(v) for k, v in w.items()})
        for entry in CASES:
            np.save(os.path.join(out, entry + ".x.npy"), inputs(entry))
        w = bound_weight()
        write_safetensors(os.path.join(out, "bound.safetensors"),
                          {"w": BF16(w), "wt": BF16(w.T)})
        rng = np.random.default_rng(11)
        for name, heads in (("q", 4), ("k", 2), ("v", 2)):
            np.save(os.path.join(out, f"attention.{name}.npy"),
                    rng.standard_normal((1, heads, 77, 64)).astype(np.float32))
        return
    if mode == "attention":
        got = np.load(sys.argv[3])
        q, k, v = (bf16(np.load(os.path.join(out, f"attention.{n}.npy")))
                   .astype(np.float64) for n in "qkv")
        k, v = np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
        s = scores.shape[-1]
        scores[..., np.triu(np.ones((s, s), bool), 1)] = -np.inf
        p = np.exp(scores - scores.max(-1, keepdims=True))
        ref = (p / p.sum(-1, keepdims=True)) @ v
        tol = 2.0 ** -8 * np.abs(ref) + 1e-3 * np.abs(ref).max()
        err = np.abs(got - ref)
        print(f"PASS: attention (max error {err.max():.3g})"
              if got.shape == ref.shape and np.all(err <= tol)
              else f"FAIL: attention, max error {err.max():.3g}")
        return
    if mode == "bound":
        layout, got = sys.argv[3], np.load(sys.argv[4])
        w = bound_weight()  # [N, K] = [40, 8]; "in_out" binds w.T
        n, k, panel = w.shape[0], w.shape[1], 16
        panels = -(-n // panel)
        expected = np.zeros((panels, k // 2, panel, 2), np.float32)
        for col in range(n):
            for kk in range(k):
                expected[col // panel, kk // 2, col % panel, kk % 2] = w[col, kk]
        print("PASS: bound as pairs" if np.array_equal(got, expected)
              else f"FAIL: {layout} pairs differ from numpy's packing")
        return
    entry, got = sys.argv[3], np.load(sys.argv[4])
    _, name, _, layout, bias = CASES[entry]
    x = bf16(inputs(entry)).astype(np.float64)
    wt = w[name].astype(np.float64)
    ref = x @ (wt.T if layout == "out_in" else wt)
    if bias:
        ref = ref + w[bias].astype(np.float64)
    if entry in F32_RESULTS:
        tol = 1e-5 * np.abs(ref) + 1e-6 * np.abs(ref).max()
    else:
        tol = 2.0 ** -8 * np.abs(ref) + 1e-4 * np.abs(ref).max()
    err = np.abs(got.astype(np.float64) - ref)
    if got.shape != ref.shape:
        print(f"FAIL: shape {got.shape}, expected {ref.shape}")
    elif np.all(err <= tol):
        print(f"PASS: {entry} (max error {err.max():.3g})")
    else:
        i = np.unravel_index(np.argmax(err - tol), err.shape)
        print(f"FAIL: {entry} at {i}: got {got[i]}, expected {ref[i]}, "
              f"{int((err > tol).sum())} elements off")


if __name__ == "__main__":
    main()

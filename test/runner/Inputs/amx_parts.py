"""Writes a weight with edge cases (subnormal, ties, large, padding), or
checks the runner's binding of it as AMX tiles' bf16 parts against numpy.

  amx_parts.py write W.safetensors
  amx_parts.py check W.safetensors PARTS.npy PANEL

The binding (tfm.param_pack with format = "amx_bf16x3", out_in layout):
S[i, n / 16, k / 2, 2 (n % 16) + k % 2] = part i of W[n, k], w = w0 + w1 +
w2, wi = bf16(w - w0 - ... ) rounded to nearest even, subnormals read as
zero; zero in the padding columns n >= N.
"""
import sys

import numpy as np

from tfm.io import read_safetensors, write_safetensors


def bf16(x):
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    subnormal = ((bits & 0x7F800000) == 0) & ((bits & 0x7FFFFF) != 0)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    rounded = np.where(subnormal, (bits >> 16) & 0x8000, rounded)
    return (rounded.astype(np.uint32) << 16).view(np.float32)


def main():
    if sys.argv[1] == "write":
        rng = np.random.default_rng(0)
        w = (rng.standard_normal((40, 16)) * 0.05).astype(np.float32)
        bits = w.view(np.uint32)
        bits[0, 0] = 0x00012345  # subnormal: zero
        bits[0, 1] = 0x3F808000  # halfway: to even, down
        bits[0, 2] = 0x3F818000  # halfway: to even, up
        w[0, 3] = -1e30
        write_safetensors(sys.argv[2], {"w": w})
        return
    tensors, _ = read_safetensors(sys.argv[2])
    w = tensors["w"]
    parts = np.load(sys.argv[3])
    panel = int(sys.argv[4])
    n, k = w.shape
    padded = -(-n // panel) * panel
    value = np.zeros((k, padded), np.float32)
    value[:, :n] = w.T
    expected = np.zeros((3, padded // 16, k // 2, 32), np.float32)
    kk, nn = np.meshgrid(np.arange(k), np.arange(padded), indexing="ij")
    for i in range(3):
        part = bf16(value)
        expected[i, nn // 16, kk // 2, 2 * (nn % 16) + kk % 2] = part
        value = (value - part).astype(np.float32)
    if parts.shape != expected.shape:
        print(f"FAIL: shape {parts.shape}, expected {expected.shape}")
        return
    same = np.array_equal(parts.view(np.uint32), expected.view(np.uint32))
    print("PASS: parts as numpy splits them" if same else
          f"FAIL: {np.count_nonzero(parts != expected)} parts differ")


main()

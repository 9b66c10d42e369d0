"""Writes the weight and input files for one transformer-runner test case.

usage: make_case.py CASE DIR

Every case targets the model of linear-residual.mlir:
  out = hidden + hidden @ W + b,  hidden [2, 4, 8] f32, W [8, 8] (in_out), b [8]
"good" also writes DIR/expected.npy, computed here with numpy; the other
cases damage exactly one thing.
"""
import os
import struct
import sys

import numpy as np

from tfm.io import BF16, write_safetensors

W, B = "h.0.mlp.c_proj.weight", "h.0.mlp.c_proj.bias"


def main():
    case, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(1234)
    x = rng.standard_normal((2, 4, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 8)) * 0.3).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    weights = {W: w, B: b}
    path = os.path.join(out, "w.safetensors")
    npy = os.path.join(out, "x.npy")
    np.save(npy, x)

    if case == "good":
        np.save(os.path.join(out, "expected.npy"), x + x @ w + b)
    elif case == "misaligned":
        # align=1 leaves the data area at an odd offset: the runner must copy.
        write_safetensors(path, weights, metadata={"format": "pt"}, align=1)
        np.save(os.path.join(out, "expected.npy"), x + x @ w + b)
        return
    elif case == "missing":
        del weights[B]
    elif case == "misshaped":
        weights[W] = w.T.reshape(4, 16)
    elif case == "wrong-dtype-f16":
        weights[B] = b.astype(np.float16)
    elif case == "wrong-dtype-bf16":
        weights[W] = BF16(w)
    elif case == "wrong-dtype-i64":
        weights[B] = np.arange(8, dtype=np.int64)
    elif case == "npy-wrong-dtype":
        np.save(npy, x.astype(np.float64))
    elif case == "npy-wrong-shape":
        np.save(npy, x.reshape(4, 2, 8))
    elif case == "npy-fortran":
        np.save(npy, np.asfortranarray(x))
    elif case == "npy-truncated":
        np.save(npy, x)
        with open(npy, "r+b") as f:
            f.truncate(os.path.getsize(npy) - 4)
    elif case == "npy-bad-magic":
        with open(npy, "wb") as f:
            f.write(b"\x93NUMPX\x01\x00" + b"\x00" * 64)
    elif case == "npy-bad-header":
        header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4, 8"
        header += b" " * (117 - len(header)) + b"\n"
        with open(npy, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
            f.write(header + x.tobytes())
    elif case not in ("truncated", "bad-json", "huge-header", "overlap",
                      "bad-span", "unknown-dtype", "too-short"):
        sys.exit(f"unknown case {case}")

    write_safetensors(path, weights, metadata={"format": "pt"})
    blob = bytearray(open(path, "rb").read())
    (n,) = struct.unpack("<Q", blob[:8])
    header = bytes(blob[8:8 + n])
    data = bytes(blob[8 + n:])

    def rewrite(new_header, new_data=data, length=None):
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(new_header) if length is None
                                else length))
            f.write(new_header)
            f.write(new_data)

    if case == "truncated":
        rewrite(header, data[:-10])
    elif case == "bad-json":
        rewrite(header.replace(b'"dtype":', b'"dtype"', 1))
    elif case == "huge-header":
        rewrite(header, length=1 << 40)
    elif case == "too-short":
        with open(path, "wb") as f:
            f.write(b"\x10\x00\x00")
    elif case == "overlap":
        # The bias claims the last 32 bytes of the weight.
        rewrite(header.replace(b"[256,288]", b"[224,256]"))
    elif case == "bad-span":
        rewrite(header.replace(b"[256,288]", b"[256,284]"))
    elif case == "unknown-dtype":
        rewrite(header.replace(b'"F32"', b'"Q4_K"', 1))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Accuracy of one f32 GEMM y = x W^T (nn.Linear layout) through
transformer-runner, against float64, for each set of pipeline options given
(default: the AMX path and the FMA path, "amx=1" and "amx=0").

  /usr/bin/python3 bench/gemm-accuracy.py [M K N] [--options OPTS ...]

Prints, per option set, the max |error| and the RMS error over the output.
Weights N(0, 0.02), inputs N(0, 1), fixed seeds.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
runner = os.path.join(os.environ.get("TFM_BUILD_DIR", os.path.join(root, "build")),
                      "bin", "transformer-runner")
p = argparse.ArgumentParser()
p.add_argument("shape", type=int, nargs="*", default=[512, 2048, 5632])
p.add_argument("--options", nargs="+", default=["amx=1", "amx=0"])
args = p.parse_args()
m, k, n = args.shape
with tempfile.TemporaryDirectory() as work:
    x = np.random.default_rng(0).standard_normal((1, m, k)).astype(np.float32)
    w = (np.random.default_rng(1).standard_normal((n, k)) * 0.02).astype(np.float32)
    np.save(f"{work}/x.npy", x)
    header = json.dumps({"w": {"dtype": "F32", "shape": [n, k],
                               "data_offsets": [0, w.nbytes]}}).encode()
    header += b" " * (-len(header) % 8)
    with open(f"{work}/w.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + w.tobytes())
    with open(f"{work}/gemm.mlir", "w") as f:
        f.write(f'func.func @gemm(%x: tensor<1x{m}x{k}xf32> {{tfm.input = "x"}}, '
                f'%w: tensor<{n}x{k}xf32> {{tfm.param = "w"}}) -> tensor<1x{m}x{n}xf32> {{\n'
                f'  %y = tfm.linear %x, %w {{layout = #tfm.layout<out_in>}} : '
                f'(tensor<1x{m}x{k}xf32>, tensor<{n}x{k}xf32>) -> tensor<1x{m}x{n}xf32>\n'
                f'  return %y : tensor<1x{m}x{n}xf32>\n}}\n')
    ref = x[0].astype(np.float64) @ w.T.astype(np.float64)
    print(f"# GEMM {m}x{k}x{n}, against float64 (max |ref| {np.abs(ref).max():.3g})")
    for opts in args.options:
        subprocess.run([runner, f"{work}/gemm.mlir", "--weights", f"{work}/w.safetensors",
                        "--input", f"x={work}/x.npy", "--output", f"result0={work}/y.npy",
                        "--no-cache", "--pipeline-options", opts],
                       check=True, stdout=subprocess.DEVNULL)
        err = np.abs(np.load(f"{work}/y.npy")[0] - ref)
        print(f"{opts or '(defaults)'}: max |error| {err.max():.2e}, "
              f"RMS {np.sqrt((err ** 2).mean()):.2e}")

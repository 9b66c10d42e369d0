"""Seed corpora for the fuzz targets, taken from the repository's test inputs.

Usage: make-corpus.py SRC_ROOT OUT_DIR. Writes OUT_DIR/<target>/<n> files:
safetensors (the bundled model's header, small valid files of each dtype),
npy (numpy's own files of each dtype the reader takes), config (every
config.json under test/ and models/), ir (examples/ and the dialect tests,
split at `// -----`), and fuzz/regressions/<target>/: inputs that once
crashed a target.
"""
import glob
import io
import json
import os
import struct
import sys

import numpy as np

src, out = sys.argv[1], sys.argv[2]


def put(target, name, data):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data)


def safetensors(tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


# The bundled model's header alone, and small valid files.
with open(os.path.join(src, "models/tiny-kjv/model.safetensors"), "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    put("safetensors", "tiny-kjv-header", struct.pack("<Q", n) + f.read(n))
put("safetensors", "f32", safetensors(
    {"w": ("F32", [2, 3], np.arange(6, dtype=np.float32).tobytes())},
    {"format": "pt"}))
put("safetensors", "mixed", safetensors({
    "a": ("F16", [4], np.ones(4, np.float16).tobytes()),
    "b": ("BF16", [2], b"\x80\x3f\x00\x40"),
    "c": ("I64", [1, 1], np.array([[7]], np.int64).tobytes()),
    "d": ("F32", [0], b"")}))

for i, arr in enumerate([np.zeros((2, 3), np.float32), np.arange(5, dtype=np.int64),
                         np.ones((1, 2, 2), np.float16), np.array(3.5),
                         np.array([[1, 2]], np.int32), np.array([True, False]),
                         np.zeros((0, 4), np.uint8)]):
    buf = io.BytesIO()
    np.save(buf, arr)
    put("npy", f"{i}", buf.getvalue())

configs = sorted(glob.glob(os.path.join(src, "test/**/*.json"), recursive=True)
                 + [os.path.join(src, "models/tiny-kjv/config.json")])
for i, path in enumerate(configs):
    with open(path, "rb") as f:
        put("config", f"{i}", f.read())

count = 0
for path in sorted(glob.glob(os.path.join(src, "examples/*.mlir"))
                   + glob.glob(os.path.join(src, "test/Dialect/Tfm/*.mlir"))):
    with open(path) as f:
        for chunk in f.read().split("// -----"):
            put("ir", f"{count}", chunk.encode())
            count += 1

# Inputs that once crashed a target (fuzz/regressions/<target>/) stay seeds.
for path in sorted(glob.glob(os.path.join(src, "fuzz/regressions/*/*"))):
    target = os.path.basename(os.path.dirname(path))
    with open(path, "rb") as f:
        put(target, "regression-" + os.path.basename(path), f.read())

"""Sizes from an API caller's numbers: the C API checks B x S, the prompt
plus the new tokens against the context, and the output's size before any
of them is computed or written (none may wrap); Python range-checks its
integer arguments before ctypes (which would wrap them silently) and the
context before allocating the output."""
import ctypes
import sys

import numpy as np
import tfm
from tfm import engine

config = sys.argv[1]
m = tfm.load(config, random_weights=1, threads=1)
lib = engine._library()
handle = m._live()
ids = (ctypes.c_int64 * 4)(1, 2, 3, 4)
out = (ctypes.c_int64 * 64)()
sentinel = out[63] = 777


def generate(count, batch=1, seq=2, capacity=64):
    options = engine._GenerateOptions()
    lib.tfmModelGenerateOptionsInit(handle, seq, ctypes.byref(options))
    options.maxNewTokens = count
    options.stopAtModelEos = 0
    generated = ctypes.c_int64()
    status = lib.tfmModelGenerate(handle, ids, batch, seq,
                                  ctypes.byref(options), engine._TokenCallback(),
                                  None, out, capacity, ctypes.byref(generated))
    return status, lib.tfmModelGetLastError(handle).decode()


for name, count in (("2^63 - 1", 2**63 - 1), ("2^63 - 2", 2**63 - 2),
                    ("2^40", 2**40)):
    status, error = generate(count)
    print(f"C generate {name}: status {status}: {error}")
print(f"C output untouched: {out[63] == sentinel}")
floats = (ctypes.c_float * 16)()
for batch, seq in ((2**62, 4), (2**33, 2**33)):
    status = lib.tfmModelLogits(handle, ids, batch, seq, 1, floats, 16)
    print(f"C logits [{batch}, {seq}]: status {status}: "
          f"{lib.tfmModelGetLastError(handle).decode()}")

for name, call in (
        ("max_new_tokens=2**64+3",
         lambda: m.generate([1, 2], max_new_tokens=2**64 + 3)),
        ("max_new_tokens=10**12",
         lambda: m.generate([1, 2], max_new_tokens=10**12)),
        ("max_new_tokens=2.5", lambda: m.generate([1, 2], max_new_tokens=2.5)),
        ("seed=-1", lambda: m.generate([1, 2], max_new_tokens=2, seed=-1)),
        ("top_k=2**70", lambda: m.generate([1, 2], max_new_tokens=2,
                                           top_k=2**70)),
        ("threads=2**32", lambda: tfm.load(config, random_weights=1,
                                           threads=2**32)),
        ("random_weights=2**64", lambda: tfm.load(config,
                                                  random_weights=2**64))):
    try:
        call()
        print(f"{name}: no error")
    except tfm.TfmError as e:
        print(f"{name}: TfmError: {e}")
print("generate 3 still works:", len(m.generate([1, 2], max_new_tokens=3)))

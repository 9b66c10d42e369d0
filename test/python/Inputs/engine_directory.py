"""The checks of engine-directory.test: DIR EXPECTED.npy EXPECTED_TOKENS.npy."""
import json
import os
import shutil
import sys

import numpy as np

import tfm

path, expected, expected_tokens = sys.argv[1:4]
ids = np.load(f"{path}/ids.npy")
model = tfm.load(path, cache=False)
if model.warnings:
    sys.exit(f"FAIL: warnings: {model.warnings}")

logits = model.logits(ids)
reference = np.load(expected)
if not np.allclose(logits, reference, atol=1e-4, rtol=1e-3):
    sys.exit(f"FAIL: logits differ by {np.max(np.abs(logits - reference))}")
print("PASS: logits match transformers")

tokens = model.generate(ids, max_new_tokens=6)
if not np.array_equal(tokens, np.load(expected_tokens)):
    sys.exit(f"FAIL: tokens {tokens} != {np.load(expected_tokens)}")
print("PASS: greedy tokens equal transformers'")

total = model.ledger["totals"]["weight_bytes"]
index = json.load(open(f"{path}/model.safetensors.index.json"))
stored = index["metadata"]["total_size"]
if total != stored:
    sys.exit(f"FAIL: ledger weight_bytes {total} != total_size {stored}")
print(f"PASS: ledger weight_bytes {total} equal the index's total_size")
model.close()

tfm.load(path, dtype="f32", cache=False).close()
print("PASS: dtype f32 spelled out loads")

# Computed in bf16 (the checkpoint's type, bound as stored): f32 logits
# within bf16's budget of the f32 reference (hf_dir.py HALF_BUDGET, 5% of
# the largest |logit|), the same ledger bytes.
with tfm.load(path, dtype="bf16", cache=False) as half:
    got = half.logits(ids)
    if got.dtype != np.float32 or got.shape != reference.shape:
        sys.exit(f"FAIL: bf16 logits {got.dtype}{list(got.shape)}")
    err = np.max(np.abs(got - reference)) / np.max(np.abs(reference))
    if err > 5e-2:
        sys.exit(f"FAIL: bf16 logits off by {err:.3g} of the range")
    if half.ledger["totals"]["weight_bytes"] != stored:
        sys.exit("FAIL: the bf16 model's ledger counts other bytes")
print("PASS: dtype bf16 computes within bf16's budget")

try:
    tfm.load(path, dtype="int8", cache=False)
    sys.exit("FAIL: dtype int8 loaded")
except tfm.TfmError as e:
    print(f"error: {e}")

# An index whose map puts a tensor in the wrong shard.
broken = os.path.join(os.path.dirname(path), "broken")
shutil.copytree(path, broken)
index["weight_map"]["lm_head.weight"] = "model-00001-of-00003.safetensors"
json.dump(index, open(f"{broken}/model.safetensors.index.json", "w"))
try:
    tfm.load(broken, cache=False)
    sys.exit("FAIL: a broken index loaded")
except tfm.TfmError as e:
    print(f"error: {e}")

"""For each prompt length: makes a checkpoint and ids (hf_case.py make),
PyTorch's logits, and the runner's logits from chunked prefill (chunks of
16), and checks them within 1e-4 abs + 1e-3 rel. Prints one line per length
with the runner's chunk summary and the error.

Usage: chunked_case.py DIR MODEL LENGTH... (DIR/MODEL.json is the config)
"""
import os
import re
import subprocess
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
out_dir, model, lengths = sys.argv[1], sys.argv[2], sys.argv[3:]
config = os.path.join(out_dir, model + ".json")
case = os.path.join(here, "hf_case.py")
for length in lengths:
    d = os.path.join(out_dir, f"{model}-{length}")
    os.makedirs(d, exist_ok=True)
    subprocess.run([sys.executable, case, "make", config, d, "--batch", "2",
                    "--seq", length, "--seed", "5"], check=True)
    subprocess.run([sys.executable, case, "logits", config,
                    f"{d}/w.safetensors", f"{d}/ids.npy", f"{d}/expected.npy"],
                   check=True, stdout=subprocess.DEVNULL)
    run = subprocess.run(["transformer-runner", config, "--weights",
                          f"{d}/w.safetensors", "--input-ids", f"{d}/ids.npy",
                          "--prefill-chunk", "16", "--output",
                          f"{d}/logits.npy"],
                         check=True, capture_output=True, text=True)
    summary = re.search(r"\((\d+ chunk\(s\) of \d+, KV cache of \d+ positions)\)",
                        run.stdout)
    if not summary:
        sys.exit(f"L={length}: no prefill summary in:\n{run.stdout}")
    got, want = np.load(f"{d}/logits.npy"), np.load(f"{d}/expected.npy")
    if got.shape != want.shape:
        sys.exit(f"L={length}: shape {got.shape}, expected {want.shape}")
    error = float(np.abs(got - want).max())
    if not np.allclose(got, want, atol=1e-4, rtol=1e-3):
        sys.exit(f"L={length}: logits differ from PyTorch's, max abs error "
                 f"{error:.3g}")
    print(f"L={length}: {summary.group(1)}: max abs error {error:.3g}")

"""What Q8_0 and Q4_0 weights cost in accuracy, as llama.cpp's
`llama-perplexity --kl-divergence` reports it: on models/tiny-kjv (a trained
byte-level Llama) over 16 x 256 = 4096 bytes of the KJV text (Debian's
bible-kjv, the model's corpus), tfm's logits with --quantize FORMAT against
its f32 logits: mean and max KL divergence per token, top-1 agreement, and
each one's perplexity on the next byte. Each format twice: on int8
activations (the default where the CPU has int8 dot products: FORMAT) and
on f32 activations (`--pipeline-options=int8-dot=0`: FORMAT/f32).

  build/reference-venv/bin/python bench/quant-accuracy.py [--runner PATH]
      [--formats q8_0,q4_0]
"""
import argparse
import os
import subprocess
import tempfile

import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
p = argparse.ArgumentParser()
p.add_argument("--runner", default=os.path.join(root, "build", "bin",
                                                "transformer-runner"))
p.add_argument("--sequences", type=int, default=16)
p.add_argument("--formats", default="q8_0,q4_0")
args = p.parse_args()
formats = args.formats.split(",")

text = subprocess.run(["bible", "Gen1:1-Rev22:21"], capture_output=True,
                      check=True).stdout
seq = 256
data = np.frombuffer(text, np.uint8)
# Evenly spaced windows across the whole text.
starts = np.linspace(0, len(data) - seq - 1, args.sequences).astype(np.int64)
ids = np.stack([data[s:s + seq] for s in starts]).astype(np.int64)
model = os.path.join(root, "models", "tiny-kjv")
with tempfile.TemporaryDirectory() as tmp:
    np.save(f"{tmp}/ids.npy", ids)
    logits = {}
    runs = [("f32", [])]
    for f in formats:
        runs += [(f, ["--quantize", f]),
                 (f + "/f32", ["--quantize", f,
                               "--pipeline-options=int8-dot=0"])]
    for name, extra in runs:
        subprocess.run([args.runner, f"{model}/config.json", "--weights",
                        f"{model}/model.safetensors", "--input-ids",
                        f"{tmp}/ids.npy", "--output", f"{tmp}/{name.replace('/', '-')}.npy"]
                       + extra, check=True, capture_output=True)
        logits[name] = np.load(f"{tmp}/{name.replace('/', '-')}.npy").astype(np.float64)


def log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


lp = log_softmax(logits["f32"])
targets = ids[:, 1:]


def perplexity(l):
    picked = np.take_along_axis(l[:, :-1], targets[..., None], -1)[..., 0]
    return float(np.exp(-picked.mean()))


print(f"tokens: {lp.shape[0] * lp.shape[1]} ({args.sequences} x {seq}); "
      f"perplexity f32 {perplexity(lp):.4f}")
for name, _ in runs[1:]:
    lq = log_softmax(logits[name])
    kl = (np.exp(lp) * (lp - lq)).sum(axis=-1)
    top1 = (logits["f32"].argmax(-1) == logits[name].argmax(-1)).mean()
    print(f"{name}: KL(f32 || {name}) mean {kl.mean():.3g}, max "
          f"{kl.max():.3g}; top-1 agreement {100 * top1:.2f}%; perplexity "
          f"{perplexity(lq):.4f}")

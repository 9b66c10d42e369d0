"""What quantized weights cost in accuracy, as llama.cpp's
`llama-perplexity --kl-divergence` reports it: on a trained byte-level
Llama over 16 x 256 = 4096 bytes of the KJV text (Debian's bible-kjv, the
model's corpus), tfm's logits for each quantized form of the model against
its f32 logits: mean and max KL divergence per token, top-1 agreement, and
each one's perplexity on the next byte.

Formats, each from where users' quantized weights come from:
  q8_0 q4_0 q4_k q5_k q6_k   tfm's --quantize at load, run twice: on int8
                             activations (the default where the CPU has
                             int8 dot products: FORMAT) and on f32 ones
                             (`--pipeline-options=int8-dot=0`: FORMAT/f32)
  gguf:TYPE                  a GGUF file: the f32 model converted as
                             convert_hf_to_gguf.py does
                             (test/models/Inputs/gguf_model.py), then
                             quantized by llama.cpp's own llama-quantize to
                             TYPE (q4_k_m, q5_k_m, q6_k...: its mixtures,
                             Q6_K LM head and all); skipped without
                             --llama-quantize
  gptq-w4g128[-asym]         GPTQ 4-bit checkpoints, groups of 128, its
  awq-w4g128                 symmetric (asymmetric) rule; AutoAWQ's;
  ct-w4g128 ct-w8            compressed-tensors pack-quantized w4a16
                             (groups of 128) and w8a16 (per channel), all
                             written by test/models/Inputs/gptq_model.py
                             from the f32 weights, rounded to nearest
  gptq-w4g128[-asym]-cal     the same GPTQ checkpoints from GPTQ's
  gptq-w4g128-asym-cal-act   error-compensating search on 15 other
                             windows of the text (gptq_model.py
                             --calibrate), and with desc_act's order

Two models: models/tiny-kjv (d 192), whose K of 192 only blocks of 32
divide (q8_0, q4_0), and models/tiny-kjv-256 (d 256, BF16 weights run in
f32; the default), whose every K the K-quants' super-blocks of 256 divide.

  build/reference-venv/bin/python bench/quant-accuracy.py [--runner PATH]
      [--model tiny-kjv|tiny-kjv-256] [--formats q8_0,gguf:q4_k_m,...]
      [--llama-quantize PATH]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
inputs = os.path.join(root, "test", "models", "Inputs")
p = argparse.ArgumentParser()
p.add_argument("--runner", default=os.path.join(root, "build", "bin",
                                                "transformer-runner"))
p.add_argument("--sequences", type=int, default=16)
p.add_argument("--model", choices=["tiny-kjv", "tiny-kjv-256"],
               default="tiny-kjv-256")
p.add_argument("--formats")
p.add_argument("--llama-quantize", default=os.path.join(
    root, "build", "llamacpp", "build", "bin", "llama-quantize"))
args = p.parse_args()
formats = (args.formats or (
    "q8_0,q4_0" if args.model == "tiny-kjv" else
    "q8_0,q4_0,q4_k,q5_k,q6_k,gguf:q8_0,gguf:q4_0,gguf:q4_k_m,gguf:q5_k_m,"
    "gguf:q6_k,gptq-w4g128,gptq-w4g128-asym,gptq-w4g128-cal,"
    "gptq-w4g128-asym-cal,gptq-w4g128-asym-cal-act,awq-w4g128,ct-w4g128,ct-w8"
)).split(",")
if any(f.startswith("gguf:") for f in formats) and \
        not os.path.exists(args.llama_quantize):
    print(f"no {args.llama_quantize} (bash bench/llamacpp/setup.sh): "
          "skipping the GGUF formats", file=sys.stderr)
    formats = [f for f in formats if not f.startswith("gguf:")]

text = subprocess.run(["bible", "Gen1:1-Rev22:21"], capture_output=True,
                      check=True).stdout
seq = 256
data = np.frombuffer(text, np.uint8)
# Evenly spaced windows across the whole text.
starts = np.linspace(0, len(data) - seq - 1, args.sequences).astype(np.int64)
ids = np.stack([data[s:s + seq] for s in starts]).astype(np.int64)
# GPTQ's calibration text: as many windows, each half-way between two of
# the evaluated ones (none of their bytes).
gap = (starts[1] - starts[0]) // 2 if len(starts) > 1 else seq
calibration = np.stack([data[s + gap:s + gap + seq]
                        for s in starts[:-1]]).astype(np.int64)
model = os.path.join(root, "models", args.model)


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")


def f32_directory(tmp):
    """The model as an f32 Hugging Face directory (the GGUF converter reads
    f32 safetensors; BF16 weights widen exactly)."""
    import torch
    import transformers
    out = f"{tmp}/f32"
    if not os.path.exists(out):
        transformers.AutoModelForCausalLM.from_pretrained(
            model, torch_dtype=torch.float32).save_pretrained(
                out, safe_serialization=True)
    return out


def sources(tmp, name):
    """The runner's arguments that run format `name`."""
    weights = [f"{model}/config.json", "--weights",
               f"{model}/model.safetensors"]
    if name == "f32":
        return weights + ["--dtype", "f32"]
    if name.endswith("/f32"):
        return sources(tmp, name[:-4]) + ["--pipeline-options=int8-dot=0"]
    if name.startswith("gguf:"):
        kind = name[5:]
        f32 = f"{tmp}/model-f32.gguf"
        if not os.path.exists(f32):
            run([sys.executable, f"{inputs}/gguf_model.py", "convert",
                 f32_directory(tmp), f32])
        out = f"{tmp}/model-{kind}.gguf"
        run([args.llama_quantize, f32, out, kind.upper()])
        return [out]
    if name.split("-")[0] in ("gptq", "awq", "ct"):
        method, shape, *rest = name.split("-")
        bits = shape[1]
        group = shape.split("g")[1] if "g" in shape else "-1"
        out = f"{tmp}/{name}"
        cmd = [sys.executable, f"{inputs}/gptq_model.py", "make", out,
               "--from", f32_directory(tmp), "--bits", bits, "--group", group,
               "--sym", "0" if "asym" in rest or method == "awq" else "1",
               "--method", {"ct": "compressed-tensors"}.get(method, method)]
        if "cal" in rest:  # GPTQ's search on the calibration text
            cmd += ["--calibrate", f"{tmp}/calibration.npy"]
        if "act" in rest:
            cmd += ["--act-order", "1"]
        run(cmd)
        return [f"{out}/gptq"]
    return weights + ["--quantize", name]


with tempfile.TemporaryDirectory() as tmp:
    np.save(f"{tmp}/ids.npy", ids)
    np.save(f"{tmp}/calibration.npy", calibration)
    names = ["f32"]
    for f in formats:
        # --quantize's formats run on both kinds of activations.
        names += [f, f + "/f32"] if ":" not in f and "-" not in f else [f]
    logits = {}
    for name in names:
        out = f"{tmp}/{name.replace('/', '-').replace(':', '-')}.npy"
        run([args.runner] + sources(tmp, name)
            + ["--input-ids", f"{tmp}/ids.npy", "--output", out])
        logits[name] = np.load(out).astype(np.float64)


def log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


lp = log_softmax(logits["f32"])
targets = ids[:, 1:]


def perplexity(l):
    picked = np.take_along_axis(l[:, :-1], targets[..., None], -1)[..., 0]
    return float(np.exp(-picked.mean()))


print(f"{args.model}: tokens {lp.shape[0] * lp.shape[1]} "
      f"({args.sequences} x {seq}); perplexity f32 {perplexity(lp):.4f}")
print("| format | KL(f32 ‖ q) mean | max | top-1 agreement | perplexity |")
print("|---|---|---|---|---|")
for name in names[1:]:
    lq = log_softmax(logits[name])
    kl = (np.exp(lp) * (lp - lq)).sum(axis=-1)
    top1 = (logits["f32"].argmax(-1) == logits[name].argmax(-1)).mean()
    print(f"| {name} | {kl.mean():.3g} | {kl.max():.3g} | {100 * top1:.2f}% "
          f"| {perplexity(lq):.4f} |")

"""GPT-2 small on the GPU: tfm against PyTorch eager, interleaved.

Runs on the GPU machine (its own python3 with torch and transformers; no
network: the model is built from GPT2Config with random weights, the same
shapes as gpt2-small). tfm's side is the prepared gpu-check artifacts
(scripts/gpu-check.sh prepare/pack/unpack): gpt2-small-prefill (128 tokens)
and gpt2-small-decode (one token at position 128), f16 operands with f32
accumulation. PyTorch's: GPT2LMHeadModel in f32 and in f16, prefill of 128
tokens, and one decode step on a KV cache of 128 positions (cropped back to
128 after each step).

Each round times every system (median of --repeat calls, synchronised);
the table gives the median over rounds. Usage:
  python3 bench/peers/gpu_gpt2.py [--build build] [--rounds 3] [--repeat 10]
"""
import argparse
import os
import re
import statistics
import subprocess
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def tfm_ms(tool, artifact, repeat):
    out = subprocess.run([tool, artifact, "--random", "--repeat", str(repeat)],
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"median ([0-9.]+) ms", out).group(1))


def synchronize():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def torch_ms(fn, repeat):
    for _ in range(3):
        fn()
    synchronize()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        synchronize()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    tool = os.path.join(args.build, "bin", "tfm-artifact-run")
    check = os.path.join(args.build, "gpu-check")

    torch.manual_seed(0)
    config = GPT2Config()  # gpt2-small: 12 layers, d 768, vocab 50257
    models = {name: GPT2LMHeadModel(config).to("cuda", dtype).eval()
              for name, dtype in (("f32", torch.float32),
                                  ("f16", torch.float16))}
    ids = torch.randint(0, config.vocab_size, (1, 128), device="cuda")
    token = ids[:, -1:]

    def torch_cases(model):
        with torch.no_grad():
            past = model(ids, use_cache=True).past_key_values

        def prefill():
            with torch.no_grad():
                model(ids, use_cache=True)

        def decode():
            with torch.no_grad():
                model(token, past_key_values=past, use_cache=True)
            # A Cache object grows in place (transformers 5); legacy tuples
            # are not changed.
            if hasattr(past, "crop"):
                past.crop(128)
        return prefill, decode

    cases = {name: torch_cases(m) for name, m in models.items()}
    results = {}
    for _ in range(args.rounds):
        for step in ("prefill", "decode"):
            results.setdefault(("tfm (f16 operands)", step), []).append(
                tfm_ms(tool, os.path.join(check, f"gpt2-small-{step}",
                                          "artifact"), args.repeat))
            for name, (prefill, decode) in cases.items():
                fn = prefill if step == "prefill" else decode
                results.setdefault((f"PyTorch {torch.__version__} {name}",
                                    step), []).append(
                    torch_ms(fn, args.repeat))

    print(f"device: {torch.cuda.get_device_name()}; rounds {args.rounds}, "
          f"median of {args.repeat} calls each")
    print(f"{'system':34} {'prefill 128 ms':>15} {'decode ms/token':>16}")
    systems = dict.fromkeys(s for s, _ in results)
    for system in systems:
        p = statistics.median(results[(system, "prefill")])
        d = statistics.median(results[(system, "decode")])
        print(f"{system:34} {p:15.3f} {d:16.3f}")


if __name__ == "__main__":
    main()

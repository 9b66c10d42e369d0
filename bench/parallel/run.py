"""Tensor parallelism on one machine: one process with T threads against T
ranks of one thread each (`mpirun -np T ... --tensor-parallel T`), on the
TinyLlama-1.1B-shaped model of bench/llamacpp/make_model.py, in interleaved
rounds; medians, CPU model named.

  run.py DIR --runner build/bin/transformer-runner [--rounds 3] [--ranks 2]

Per configuration:
  prefill: `--input-ids (1 x 128 ids) --repeat 3`, the warm forward's median
      (ms), and the time rank 0 spent in all-reduces per forward (ms);
  decode: `--input-ids (1 id) --generate 32`, the decode median (ms/token)
      and all-reduce time per generated token (ms; the one-token prefill
      included), as llama-bench's tg32 decodes from an empty context;
  the peak RSS of (rank 0's) process, MiB.
All-reduce time includes waiting for the slower rank: it is what the sums
cost this rank, not the wire time alone.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def run(cmd):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if out.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout[-3000:]}")
    return out.stdout


def measure(prefix, hf, ids128, ids1, threads):
    """(prefill ms, all-reduce ms per prefill, decode ms/token, all-reduce ms
    per token, peak RSS MiB) of one configuration."""
    common = [hf, "--threads", str(threads)]
    out = run(prefix + common + ["--input-ids", ids128, "--repeat", "3"])
    prefill = float(re.search(r"forward: ([0-9.]+) ms \(warm", out)[1])
    sums = re.search(r"(\d+) (?:MPI |NCCL )?all-reduces of [0-9.]+ MiB in all took ([0-9.]+) ms",
                     out)
    prefill_sums = float(sums[2]) / 4 if sums else 0.0  # 1 cold + 3 warm
    rss = float(re.search(r"peak ([0-9.]+) MiB", out)[1])
    out = run(prefix + common + ["--input-ids", ids1, "--generate", "32",
                                 "--ignore-eos"])
    decode = float(re.search(r"^decode: ([0-9.]+) ms/token", out, re.M)[1])
    sums = re.search(r"(\d+) (?:MPI |NCCL )?all-reduces of [0-9.]+ MiB in all took ([0-9.]+) ms",
                     out)
    decode_sums = float(sums[2]) / 32 if sums else 0.0
    rss = max(rss, float(re.search(r"peak ([0-9.]+) MiB", out)[1]))
    return prefill, prefill_sums, decode, decode_sums, rss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--runner", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ranks", type=int, default=2)
    args = p.parse_args()
    mpirun = shutil.which("mpirun")
    if not mpirun:
        sys.exit("mpirun not found: install openmpi-bin (scripts/setup.sh)")
    tmp = tempfile.mkdtemp()
    ids128, ids1 = os.path.join(tmp, "ids128.npy"), os.path.join(tmp, "ids1.npy")
    rng = np.random.default_rng(1)
    np.save(ids128, rng.integers(3, 32000, (1, 128)))
    np.save(ids1, rng.integers(3, 32000, (1, 1)))
    hf = os.path.join(args.dir, "hf")
    n = args.ranks
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    configs = {
        f"1 process x {n} threads": ([args.runner], n),
        f"{n} ranks x 1 thread": ([mpirun, *root, "--bind-to", "none", "-np",
                                   str(n), args.runner, "--tensor-parallel",
                                   str(n)], 1),
    }
    results = {name: [] for name in configs}
    for r in range(args.rounds):
        for name, (prefix, threads) in configs.items():
            results[name].append(measure(prefix, hf, ids128, ids1, threads))
            print(f"round {r + 1} {name}: {results[name][-1]}", file=sys.stderr)
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; "
          f"{args.rounds} interleaved rounds, medians")
    print("| configuration | prefill 128 (ms) | all-reduce / prefill (ms) | "
          "decode (ms/token) | all-reduce / token (ms) | peak RSS (MiB) |")
    print("|---|---|---|---|---|---|")
    for name, rows in results.items():
        med = [statistics.median(col) for col in zip(*rows)]
        print(f"| {name} | {med[0]:.1f} | {med[1]:.2f} | {med[2]:.2f} | "
              f"{med[3]:.3f} | {med[4]:.0f} |")


if __name__ == "__main__":
    main()

"""tfm against llama.cpp on the same model file (make_model.py's GGUF):
prefill of 128 tokens (ms) and decode (ms/token) at each thread count, and
peak RSS, per type, in interleaved rounds; medians, CPU model named.

  run.py DIR --runner build/bin/transformer-runner --llama-bench PATH
         [--rounds 3] [--threads 1,2] [--types f32,q8_0] [--tfm-cpu NAME]

llama.cpp: `llama-bench -m DIR/model-<type>.gguf -p 128 -n 32 -t T -r 1`
(its pp128 and tg32; tg32 decodes 32 tokens from an empty context).
tfm: `transformer-runner DIR/model-<type>.gguf --input-ids (128 ids)
--generate 32 --threads T --repeat 3 [--dtype bf16]` (warm prefill median,
decode median ms/token after the 128-token prompt).

--tfm-cpu NAME runs tfm with TFM_CPU=NAME (its plan and machine code for that
CPU, less what this one lacks): `--tfm-cpu x86-64-v3` against the llama-bench
of `setup.sh avx2` measures AVX2 code on both sides on an AVX-512 host.
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile

import numpy as np


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def timed(cmd):
    """Runs cmd; its stdout and the peak RSS of the process in MiB."""
    pid = os.fork()
    if pid == 0:
        fd = os.open(timed.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execv(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    with open(timed.path) as f:
        out = f.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out[-2000:]}")
    return out, usage.ru_maxrss / 1024.0


def llama_cpp(bench, model, threads):
    out, rss = timed([bench, "-m", model, "-p", "128", "-n", "32", "-t",
                      str(threads), "-r", "1", "-o", "json"])
    rows = json.loads(out[out.index("["):out.rindex("]") + 1])
    pp = next(r for r in rows if r["n_prompt"] == 128 and r["n_gen"] == 0)
    tg = next(r for r in rows if r["n_gen"] == 32 and r["n_prompt"] == 0)
    return pp["avg_ns"] / 1e6, tg["avg_ns"] / 1e6 / 32, rss


def tfm(runner, model, ids, threads, kind):
    cmd = [runner, model, "--input-ids", ids, "--generate", "32",
           "--threads", str(threads), "--repeat", "3"]
    if kind == "bf16":
        # A BF16 file computes in bf16 (else its weights widen to f32).
        cmd += ["--dtype", "bf16"]
    out, rss = timed(cmd)
    prefill = float(re.search(r"^prefill: ([0-9.]+) ms", out, re.M)[1])
    decode = float(re.search(r"^decode: ([0-9.]+) ms/token", out, re.M)[1])
    return prefill, decode, rss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--runner", required=True)
    p.add_argument("--llama-bench", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", default=f"1,{os.cpu_count()}")
    p.add_argument("--types", default="f32,q8_0")
    p.add_argument("--tfm-cpu", help="TFM_CPU for tfm's runs")
    args = p.parse_args()
    if args.tfm_cpu:
        os.environ["TFM_CPU"] = args.tfm_cpu
    timed.path = tempfile.mktemp(suffix=".out")
    ids = os.path.join(args.dir, "ids.npy")
    np.save(ids, np.random.default_rng(1).integers(3, 32000, (1, 128)))
    threads = [int(t) for t in args.threads.split(",")]
    types = args.types.split(",")
    results = {}
    for r in range(args.rounds):
        for t in threads:
            for kind in types:
                model = os.path.join(args.dir, f"model-{kind}.gguf")
                for system in ("llama.cpp", "tfm"):
                    if system == "llama.cpp":
                        m = llama_cpp(args.llama_bench, model, t)
                    else:
                        m = tfm(args.runner, model, ids, t, kind)
                    results.setdefault((kind, t, system), []).append(m)
                    print(f"round {r}: {kind} t={t} {system}: prefill "
                          f"{m[0]:.1f} ms, decode {m[1]:.2f} ms/token, "
                          f"RSS {m[2]:.0f} MiB", file=sys.stderr, flush=True)
    print(f"CPU: {cpu_model()}; {args.rounds} interleaved rounds, medians"
          + (f"; tfm with TFM_CPU={args.tfm_cpu}" if args.tfm_cpu else ""))
    print("| type | threads | llama.cpp prefill / decode | tfm prefill / "
          "decode | prefill x | decode x | RSS llama.cpp / tfm (MiB) |")
    print("|---|---|---|---|---|---|---|")
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    for kind in types:
        for t in threads:
            l, f = results[(kind, t, "llama.cpp")], results[(kind, t, "tfm")]
            print(f"| {kind} | {t} | {med(l, 0):.0f} ms / {med(l, 1):.1f} "
                  f"ms | {med(f, 0):.0f} ms / {med(f, 1):.1f} ms | "
                  f"{med(l, 0) / med(f, 0):.2f} | {med(l, 1) / med(f, 1):.2f}"
                  f" | {med(l, 2):.0f} / {med(f, 2):.0f} |")


if __name__ == "__main__":
    main()

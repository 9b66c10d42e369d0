#!/usr/bin/env python3
"""Naive against flash attention on CPU, and PyTorch's attention, same run.

For each sequence length S (12 heads, dh = 64, batch 1, causal, f32) it
compiles one tfm.attention through transformer-runner in three forms:

  naive       --tfm-cpu-pipeline flash-attention=0 (materialises S x S scores)
  flash       flash-attention=1 (tiled online softmax, future tiles skipped)
  flash-noskip  flash-attention=1 debug=flash-causal-skip=0 (every tile visited
              and masked: what the causal skip saves)

and PyTorch 1.13's attention (matmul, masked softmax, matmul; the reference
the tests use). Each runs in its own process: time is the median of
--repeat runs as the runner reports it, peak memory the process's maximum
resident set (wait4 ru_maxrss), which includes the JIT and the inputs.

  /usr/bin/python3 bench/attention/run.py [--sizes 1024 4096 8192] [--repeat 3]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(os.environ.get("TFM_BUILD_DIR", os.path.join(ROOT, "build")),
                      "bin", "transformer-runner")
HEADS, DH = 12, 64

TORCH_ATTENTION = r"""
import math, os, resource, sys, time
import numpy as np, torch
torch.set_num_threads(int(os.environ.get("TFM_BENCH_THREADS", "1")))
q, k, v = (torch.from_numpy(np.load(p)) for p in sys.argv[1:4])
repeat = int(sys.argv[4])
s = q.shape[2]
def attention():
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    mask = torch.ones(s, s, dtype=torch.bool).triu(1)
    scores = scores.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)
times = []
with torch.no_grad():
    for _ in range(repeat):
        t = time.perf_counter(); attention(); times.append((time.perf_counter() - t) * 1e3)
print("median_ms", sorted(times)[len(times) // 2])
"""


def model(path, s):
    t = f"tensor<1x{HEADS}x{s}x{DH}xf32>"
    with open(path, "w") as f:
        f.write(f"""func.func @forward(%q: {t} {{tfm.input = "q"}}, %k: {t} {{tfm.input = "k"}}, %v: {t} {{tfm.input = "v"}}) -> ({t} {{tfm.output = "out"}}) {{
  %a = tfm.attention %q, %k, %v : ({t}, {t}, {t}) -> {t}
  return %a : {t}
}}
""")


def measure(cmd, env=None):
    """(stdout, peak RSS in MiB) of one process."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit(f"failed ({status}): {' '.join(cmd)}\n{out}")
    return out, usage.ru_maxrss / 1024.0


def run_tfm(tmp, s, options, repeat):
    cmd = [RUNNER, os.path.join(tmp, f"attention-{s}.mlir"),
           "--pipeline-options", options, "--repeat", str(repeat)]
    for name in "qkv":
        cmd += ["--input", f"{name}={os.path.join(tmp, name + '.npy')}"]
    out, rss = measure(cmd)
    m = re.search(r"median\s+([0-9.eE+-]+)\s*ms", out)
    if not m:
        sys.exit(f"no median in runner output:\n{out}")
    return float(m.group(1)), rss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096, 8192])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--forms", nargs="+",
                        default=["naive", "flash", "flash-noskip", "torch"],
                        help="subset of naive flash flash-noskip torch")
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in args.sizes:
            model(os.path.join(tmp, f"attention-{s}.mlir"), s)
            rng = np.random.default_rng(0)
            for name in "qkv":
                np.save(os.path.join(tmp, name + ".npy"),
                        rng.standard_normal((1, HEADS, s, DH), dtype=np.float32))
            forms = {
                "naive": "flash-attention=0",
                "flash": "flash-attention=1",
                "flash-noskip": "flash-attention=1 debug=flash-causal-skip=0",
            }
            result = {}
            for form, options in forms.items():
                if form not in args.forms:
                    continue
                result[form] = run_tfm(tmp, s, options, args.repeat)
                print(f"S={s} {form}: {result[form][0]:.1f} ms, peak {result[form][1]:.0f} MiB",
                      flush=True)
            if "torch" in args.forms:
                # One thread, like tfm's code: torch's setting does not reach
                # OpenBLAS's own thread pool, the environment does.
                threads = os.environ.get("TFM_BENCH_THREADS", "1")
                env = dict(os.environ, OPENBLAS_NUM_THREADS=threads,
                           OMP_NUM_THREADS=threads)
                out, rss = measure(["/usr/bin/python3", "-c", TORCH_ATTENTION] +
                                   [os.path.join(tmp, n + ".npy") for n in "qkv"] +
                                   [str(args.repeat)], env=env)
                result["torch"] = (float(out.split()[-1]), rss)
                print(f"S={s} torch: {result['torch'][0]:.1f} ms, peak {rss:.0f} MiB",
                      flush=True)
            rows.append((s, result))

    print()
    print(f"causal attention, 12 heads, dh=64, f32, median of {args.repeat}; "
          "peak = max RSS of the process")
    print(f"{'S':>6} | {'naive ms':>9} {'MiB':>6} | {'flash ms':>9} {'MiB':>6} | "
          f"{'no-skip ms':>10} | {'torch ms':>9} {'MiB':>6} | "
          f"{'mem naive/flash':>15} {'noskip/flash':>12} {'flash/torch':>11}")
    nan = (float("nan"), float("nan"))
    for s, r in rows:
        naive, flash = r.get("naive", nan), r.get("flash", nan)
        noskip, torch = r.get("flash-noskip", nan), r.get("torch", nan)
        print(f"{s:>6} | {naive[0]:>9.1f} {naive[1]:>6.0f} | "
              f"{flash[0]:>9.1f} {flash[1]:>6.0f} | {noskip[0]:>10.1f} | "
              f"{torch[0]:>9.1f} {torch[1]:>6.0f} | "
              f"{naive[1] / flash[1]:>15.1f} "
              f"{noskip[0] / flash[0]:>12.2f} "
              f"{flash[0] / torch[0]:>11.2f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Interleaved A/B timing of pipeline variants through transformer-runner.

On a shared, noisy VM two configurations timed one after the other measure
the neighbours as much as the change. This script alternates the
configurations round by round (A B C, A B C, ...), one runner process per
configuration and round, and reports each configuration's median over the
rounds of its per-process medians, with the spread, and its time relative
to the first configuration. Used for the A/B numbers quoted in
bench/README.md.

  /usr/bin/python3 bench/ab.py --gemm 512 5632 2048 \\
      --config base: --config rows128:tiling=block-rows=128 --rounds 5 --threads 1
  /usr/bin/python3 bench/ab.py --model block.mlir --weights block.safetensors \\
      --input hidden=x.npy --config static:dynamic-schedule=0 \\
      --config dynamic: --threads 2

A configuration is LABEL:PIPELINE_OPTIONS, optionally followed by
:ENV=VALUE,ENV=VALUE (environment variables of that runner process only).
TFM_BUILD_DIR among them runs that build's runner instead: two commits
compared interleaved (a worktree of the older one built in its own
directory), e.g. --config old::TFM_BUILD_DIR=/tmp/old/build --config new:
With --gemm (M K N, f32, layout --layout) the module and input are made
here, the weights random, and GFLOP/s are printed too.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("TFM_BUILD_DIR", os.path.join(ROOT, "build"))
RUNNER = os.path.join(BUILD, "bin", "transformer-runner")


def gemm_module(m, k, n, layout):
    w = f"{n}x{k}" if layout == "out_in" else f"{k}x{n}"
    return f"""func.func @linear(%x: tensor<1x{m}x{k}xf32> {{tfm.input = "x"}},
                  %w: tensor<{w}xf32> {{tfm.param = "w"}})
    -> (tensor<1x{m}x{n}xf32> {{tfm.output = "y"}}) {{
  %y = tfm.linear %x, %w {{layout = #tfm.layout<{layout}>}}
      : (tensor<1x{m}x{k}xf32>, tensor<{w}xf32>) -> tensor<1x{m}x{n}xf32>
  return %y : tensor<1x{m}x{n}xf32>
}}
"""


def parse_config(text):
    parts = text.split(":", 2)
    if len(parts) < 2 or not parts[0]:
        raise argparse.ArgumentTypeError(
            f"--config {text!r}: expected LABEL:OPTIONS[:ENV=V,...]")
    env = {}
    if len(parts) == 3 and parts[2]:
        for item in parts[2].split(","):
            name, eq, value = item.partition("=")
            if not eq or not name:
                raise argparse.ArgumentTypeError(
                    f"--config {text!r}: {item!r} is not ENV=VALUE")
            env[name] = value
    return {"label": parts[0], "options": parts[1], "env": env}


def runner_of(config):
    build = config["env"].get("TFM_BUILD_DIR")
    return os.path.join(build, "bin", "transformer-runner") if build else RUNNER


def run_once(args, model, inputs, weights_args, config):
    cmd = [runner_of(config), model, *weights_args, "--repeat", str(args.repeat),
           "--print-values", "0", f"--threads={args.threads}",
           # Every process compiles: an environment variable can change the
           # code without changing the cache's key. Compiling is not timed.
           "--no-cache"]
    for item in inputs:
        cmd += ["--input", item]
    if config["options"]:
        cmd.append(f"--pipeline-options={config['options']}")
    env = dict(os.environ, **config["env"])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    out = proc.stdout + proc.stderr
    found = re.search(r"median ([\d.]+) ms", out)
    if proc.returncode != 0 or not found:
        tail = out.strip().splitlines()[-1:] or ["no output"]
        sys.exit(f"ab.py: {config['label']}: transformer-runner exited "
                 f"{proc.returncode}: {tail[0]}")
    return float(found.group(1))


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--model", help=".mlir module to run")
    what.add_argument("--gemm", nargs=3, type=int, metavar=("M", "K", "N"),
                      help="time one f32 tfm.linear of these sizes")
    p.add_argument("--layout", default="out_in", choices=("in_out", "out_in"))
    p.add_argument("--weights", help=".safetensors (default: random weights)")
    p.add_argument("--input", action="append", default=[],
                   metavar="NAME=FILE.npy")
    p.add_argument("--config", action="append", type=parse_config,
                   required=True, help="LABEL:PIPELINE_OPTIONS[:ENV=V,...]")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=10,
                   help="timed calls per runner process")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--flops", type=float,
                   help="FLOPs of one call, to print GFLOP/s")
    args = p.parse_args()
    for config in args.config:
        if not os.access(runner_of(config), os.X_OK):
            sys.exit(f"ab.py: {config['label']}: no runner at "
                     f"{runner_of(config)} (build first, or set TFM_BUILD_DIR)")
    if args.rounds < 1 or args.repeat < 1 or args.threads < 1:
        sys.exit("ab.py: --rounds, --repeat and --threads must be positive")

    work = tempfile.mkdtemp(prefix="tfm-ab-")
    model, inputs, flops = args.model, list(args.input), args.flops
    if args.gemm:
        m, k, n = args.gemm
        model = os.path.join(work, "linear.mlir")
        with open(model, "w") as fh:
            fh.write(gemm_module(m, k, n, args.layout))
        x = os.path.join(work, "x.npy")
        np.save(x, np.random.default_rng(0).random((1, m, k), np.float32))
        inputs = [f"x={x}"]
        flops = flops or 2.0 * m * k * n
    weights_args = (["--weights", args.weights] if args.weights
                    else ["--random-weights", "1"])

    times = {c["label"]: [] for c in args.config}
    try:
        for r in range(1, args.rounds + 1):
            cells = []
            for config in args.config:
                ms = run_once(args, model, inputs, weights_args, config)
                times[config["label"]].append(ms)
                cells.append(f"{config['label']} {ms:.2f} ms")
            print(f"round {r}: " + "  ".join(cells), flush=True)
    finally:
        for name in os.listdir(work):
            os.remove(os.path.join(work, name))
        os.rmdir(work)

    base = statistics.median(times[args.config[0]["label"]])
    print(f"\n{args.rounds} rounds, {args.threads} thread(s), {args.repeat} "
          "calls per process; median of the per-process medians")
    header = "| config | median ms | min | max | vs first |"
    if flops:
        header += " GFLOP/s |"
    print(header)
    print("|" + " --- |" * (header.count("|") - 1))
    for config in args.config:
        t = times[config["label"]]
        med = statistics.median(t)
        row = (f"| {config['label']} | {med:.2f} | {min(t):.2f} | "
               f"{max(t):.2f} | {med / base:.3f} |")
        if flops:
            row += f" {flops / med / 1e6:.1f} |"
        print(row)


if __name__ == "__main__":
    main()

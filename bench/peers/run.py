#!/usr/bin/env python3
"""tfm against PyTorch 1.13 and onnxruntime on the same blocks, one
interleaved run.

Cases (B = 1, f32):
  gpt2    GPT-2-small block (d 768, 12 heads, MLP 3072, pre-LN, tanh GELU,
          biases) at each --sizes S (default 128 512 2048)
  llama   Llama GQA block (d 2048, 16 q / 4 kv heads of 128, SwiGLU 5632,
          RMSNorm, RoPE) at S = --llama-seq (512)
  lmhead  final LayerNorm + LM head d 768 -> V 50257 over 128 tokens
  gemm    one tfm.linear 512x768x3072 (M x K x N), layout in_out and out_in
  decode  (opt-in) ms/token of greedy decoding with a KV cache, 12-layer
          GPT-2-small (V 50257), --decode-prompt tokens then
          --decode-tokens new ones; tfm compiles the whole model (~1 min)

Systems, each at every --threads count (default 1 and all cores):
  tfm     build/bin/transformer-runner (TFM_BUILD_DIR) with --repeat; at one
          thread only unless the runner has a --threads option
  torch   Debian's PyTorch 1.13 running python/tfm/reference.py's modules
          (the PyTorch references the tests compare tfm against: the same
          math), threads set by torch.set_num_threads and
          OMP/OPENBLAS/MKL_NUM_THREADS in the worker's environment; with
          OPENBLAS_CORETYPE set to the OpenBLAS kernel whose sgemm is
          fastest here (its own choice or one the CPU flags allow; it
          misdetects some CPUs; --openblas-coretype)
  ort     onnxruntime (bench/.venv, see setup-venv.sh) on the same PyTorch
          module exported by torch.onnx.export (opset 17), intra-op threads
          = the count, inter-op 1

All three run on the same weights and inputs (one .safetensors per case,
uniform in [-0.05, 0.05), norm scales around 1), so round 0 also checks tfm
and onnxruntime against PyTorch (max abs difference).

Rounds: in each round every system times every case once (one warm-up, then
--repeat calls; tfm: one runner process, compile not timed), the systems'
order rotated each round and case. A system's time is the median over
rounds of its per-round medians; min is its fastest single call.

  bash bench/peers/setup-venv.sh      # once: bench/.venv with onnxruntime
  /usr/bin/python3 bench/peers/run.py [--cases gpt2,llama,lmhead,gemm]
      [--sizes 128 512 2048] [--rounds 3] [--repeat N] [--threads 1,all]

The tables (markdown) go to stdout, progress to stderr.
"""
import argparse
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tfm import io as tfm_io  # noqa: E402
from tfm import models  # noqa: E402
from tfm.builder import Module  # noqa: E402

BUILD = os.environ.get("TFM_BUILD_DIR", os.path.join(ROOT, "build"))
RUNNER = os.path.join(BUILD, "bin", "transformer-runner")
# --tfm-pipeline-options: passed to every runner call.
TFM_PIPELINE_OPTIONS = ""
TORCH_PYTHON = "/usr/bin/python3"
VENV_PYTHON = os.path.join(ROOT, "bench", ".venv", "bin", "python")
WORKER = os.path.join(HERE, "worker.py")
ALL_CASES = ("gpt2", "llama", "lmhead", "gemm", "decode")
DEFAULT_CASES = "gpt2,llama,lmhead,gemm"

GPT2_SMALL = {"model_type": "gpt2", "vocab_size": 50257, "n_embd": 768,
              "n_layer": 12, "n_head": 12, "n_positions": 1024,
              "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5}
LLAMA_GQA = {"model_type": "llama", "vocab_size": 32000, "hidden_size": 2048,
             "num_hidden_layers": 1, "num_attention_heads": 16,
             "num_key_value_heads": 4, "intermediate_size": 5632,
             "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
             "rope_theta": 10000.0}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# --- the machine ---------------------------------------------------------------

def machine_info():
    model, flags = "?", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model == "?":
                    model = value.strip()
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    wanted = ["avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
              "avx512_bf16", "amx_tile"]
    return model, [f for f in wanted if f in flags], len(os.sched_getaffinity(0))


def openblas_core(coretype=None):
    """The core OpenBLAS picks in Debian's python3 (its numpy and torch load
    the same libblas.so.3), optionally under OPENBLAS_CORETYPE."""
    env = dict(os.environ, OPENBLAS_VERBOSE="2", OPENBLAS_NUM_THREADS="1")
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    proc = subprocess.run([TORCH_PYTHON, "-c", "import numpy"], env=env,
                          capture_output=True, text=True)
    m = re.findall(r"Core: (\w+)", proc.stdout + proc.stderr)
    return m[-1] if m else None


def openblas_sgemm_gflops(coretype=None):
    """One thread's f32 GEMM rate (GFLOP/s, best of 5) of Debian's OpenBLAS
    under OPENBLAS_CORETYPE=coretype (None: its own detection), on the
    bench's GEMM shape 512x768x3072 through numpy (the libblas.so.3 that
    PyTorch loads too)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    code = ("import numpy as np, time\n"
            "a = np.random.rand(512, 768).astype(np.float32)\n"
            "b = np.random.rand(768, 3072).astype(np.float32)\n"
            "a @ b\n"
            "best = float('inf')\n"
            "for _ in range(5):\n"
            "    t = time.perf_counter(); a @ b\n"
            "    best = min(best, time.perf_counter() - t)\n"
            "print(2 * 512 * 768 * 3072 / best / 1e9)\n")
    proc = subprocess.run([TORCH_PYTHON, "-c", code], env=env,
                          capture_output=True, text=True)
    try:
        return float(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def choose_openblas_coretype(option, flags):
    """(OPENBLAS_CORETYPE to set or None, a line for the report).

    OpenBLAS 0.3.21's DYNAMIC_ARCH does not always pick its fastest kernel:
    on VMs whose CPUID hides the CPU model (/proc/cpuinfo "Intel Xeon
    Processor") it falls back to Prescott, an SSE3 kernel at about a quarter
    of the AVX-512 one's speed; on an AMD Zen 5 VM (family 26) it said
    Cooperlake in one process and Haswell (AVX2, half of SkylakeX's sgemm
    rate there) in the next. Either would make PyTorch look slower than it
    can be. 'auto' times one thread's sgemm under its own choice and under
    each kernel the CPU flags allow (SkylakeX with avx512f, Haswell with
    avx2 + fma), keeps the fastest and pins it."""
    detected = openblas_core()
    if option == "none":
        return None, f"OpenBLAS core: {detected or '?'} (auto-detected, not overridden)"
    if option != "auto":
        return option, (f"OpenBLAS core: {openblas_core(option) or '?'} "
                        f"(OPENBLAS_CORETYPE={option}; it detects {detected or '?'})")
    candidates = [None]
    if "avx512f" in flags and detected != "SkylakeX":
        candidates.append("SkylakeX")
    if {"avx2", "fma"} <= set(flags) and detected != "Haswell":
        candidates.append("Haswell")
    rates = {c: openblas_sgemm_gflops(c) for c in candidates}
    measured = {c: r for c, r in rates.items() if r is not None}
    if not measured:
        return None, f"OpenBLAS core: {detected or '?'} (auto-detected; sgemm not timed)"
    best = max(measured, key=measured.get)
    timed = ", ".join(f"{c or detected or '?'} {r:.0f}" for c, r in measured.items())
    if best is None:
        # Pinned all the same: the detection can differ between processes.
        return detected, (f"OpenBLAS core: {detected or '?'} (auto-detected, then "
                          f"pinned: the fastest one-thread sgemm here, GFLOP/s: "
                          f"{timed})")
    return best, (f"OpenBLAS core: {openblas_core(best) or best} (OPENBLAS_CORETYPE="
                  f"{best}: the fastest one-thread sgemm here, GFLOP/s: {timed}; "
                  f"it detects {detected or '?'})")


def llvm_host_cpu():
    """LLVM's name for this CPU (tfm's JIT compiles for the host CPU)."""
    try:
        out = subprocess.run(["/usr/lib/llvm-22/bin/llc", "--version"],
                             capture_output=True, text=True).stdout
    except OSError:
        return None
    m = re.search(r"Host CPU: (\S+)", out)
    return m.group(1) if m else None


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def cpu_steal_seconds():
    """Time the hypervisor ran something else while this VM's vCPUs were
    runnable (all CPUs, /proc/stat's steal column, in seconds), or None.
    A 2-thread run during which one vCPU is taken away for a second runs at
    one thread's speed: steal tells such rounds from the code's own."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


# --- cases -----------------------------------------------------------------------

def random_weights(params, seed):
    """{name: array} for a {name: Type} of parameters, like the runner's
    --random-weights: uniform in [-0.05, 0.05), 1-D '*weight' (norm scales)
    around 1."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, t in params.items():
        a = rng.uniform(-0.05, 0.05, size=t.shape).astype(np.float32)
        if len(t.shape) == 1 and name.endswith("weight"):
            a += 1.0
        out[name] = a
    return out


def flops_gemm(m, k, n):
    return 2 * m * k * n


def make_cases(args, work):
    """The cases to run, each a dict the workers also read."""
    cases = []
    rng = np.random.default_rng(0)

    half = args.dtype != "f32"
    suffix = f"-{args.dtype}" if half else ""

    def add(name, kind, module, extra, flops, title):
        name += suffix
        if half:
            title += f", {args.dtype}"
        f = module.functions[0]
        path = os.path.join(work, name)
        with open(path + ".mlir", "w") as fh:
            fh.write(module.to_mlir())
        weights = random_weights(f.params, len(cases) + 1)
        if half:
            weights = {k: tfm_io.BF16(v) for k, v in weights.items()}
        tfm_io.write_safetensors(path + ".safetensors", weights)
        (arg, shape), = [(a, v.type.shape) for v, a_attr, a in f._args
                         if a_attr == "tfm.input"]
        np.save(path + ".x.npy", rng.standard_normal(shape).astype(np.float32))
        case = {"name": name, "kind": kind, "title": title, "dtype": args.dtype,
                "mlir": path + ".mlir",
                "weights": path + ".safetensors", "input": path + ".x.npy",
                "input_name": arg, "output_name": f._results[0][2],
                "onnx": path + ".onnx", "flops": flops}
        case.update(extra)
        cases.append(case)

    if "gpt2" in args.cases:
        c = models.parse_config(dict(GPT2_SMALL, n_positions=max(1024, *args.sizes)))
        d, m = c.hidden_size, c.intermediate_size
        for s in args.sizes:
            module = models.build_block(c, 0, 1, s, dtype=args.dtype)
            flops = 2 * s * (4 * d * d + 2 * d * m) + 2 * s * s * d  # causal half
            add(f"gpt2-S{s}", "gpt2_block", module,
                {"heads": c.num_heads, "eps": c.norm_eps}, flops,
                f"GPT-2-small block, S = {s}")
    if "llama" in args.cases:
        c = models.parse_config(LLAMA_GQA)
        s, d, m = args.llama_seq, c.hidden_size, c.intermediate_size
        kv = c.num_kv_heads * c.head_dim
        module = models.build_block(c, 0, 1, s, dtype=args.dtype)
        flops = 2 * s * (2 * d * d + 2 * d * kv + 3 * d * m) + 2 * s * s * d
        add(f"llama-S{s}", "llama_block", module,
            {"heads": c.num_heads, "kv_heads": c.num_kv_heads, "eps": c.norm_eps,
             "theta": c.rope_theta}, flops,
            f"Llama GQA block (d 2048, 16/4 heads, SwiGLU 5632), S = {s}")
    if "lmhead" in args.cases:
        s, d, v = args.lmhead_tokens, 768, 50257
        module = Module()
        f = module.function("lm_head")
        x = f.input("hidden", (1, s, d))
        h = f.layer_norm(x, f.param("ln_f.weight", (d,)), f.param("ln_f.bias", (d,)),
                         eps=1e-5, name="ln_f")
        f.output("logits", f.lm_head(h, f.param("lm_head.weight", (v, d)),
                                     name="lm_head"))
        add(f"lmhead-S{s}", "lm_head", module, {"eps": 1e-5}, flops_gemm(s, d, v),
            f"LayerNorm + LM head 768 -> 50257, {s} tokens")
    if "gemm" in args.cases:
        mm, k, n = args.gemm
        for layout in ("in_out", "out_in"):
            module = Module()
            f = module.function("linear")
            x = f.input("x", (1, mm, k))
            w = f.param("w", (k, n) if layout == "in_out" else (n, k), args.dtype)
            if half:
                x = f.convert(x, args.dtype)
            y = f.linear(x, w, layout=layout)
            f.output("y", f.convert(y, "f32") if half else y)
            add(f"gemm-{layout}", "gemm", module, {"layout": layout},
                flops_gemm(mm, k, n), f"GEMM {mm}x{k}x{n}, layout {layout}")
    if "decode" in args.cases:
        p, n = args.decode_prompt, args.decode_tokens
        raw = dict(GPT2_SMALL, n_layer=args.decode_layers)
        c = models.parse_config(raw)
        module = models.build_model(c, 1, p, kv_cache=p + n)
        name = "decode"
        path = os.path.join(work, name)
        config = os.path.join(work, "decode-config.json")
        with open(config, "w") as fh:
            json.dump(raw, fh)
        log(f"writing the {c.num_layers}-layer GPT-2-small weights ({path}.safetensors)")
        tfm_io.write_safetensors(path + ".safetensors",
                                 random_weights(module.functions[0].params, 99))
        ids = rng.integers(0, c.vocab_size, size=(1, p)).astype(np.int64)
        np.save(path + ".ids.npy", ids)
        cases.append({"name": name, "kind": "decode", "config": config,
                      "title": f"decode, {c.num_layers}-layer GPT-2-small (V 50257), prompt {p}, "
                               f"{n} new tokens (ms/token)",
                      "weights": path + ".safetensors", "input": path + ".ids.npy",
                      "layers": c.num_layers, "heads": c.num_heads, "eps": c.norm_eps,
                      "generate": n, "flops": None})
    for case in cases:
        if case["kind"] != "decode":
            case["repeat"] = args.repeat or max(5, min(20, round(4e10 / case["flops"])))
    return cases


# --- systems ---------------------------------------------------------------------

class Worker:
    """A persistent worker.py process for one (system, threads)."""

    def __init__(self, python, system, threads, coretype=None):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads),
                   OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
        if coretype:
            env["OPENBLAS_CORETYPE"] = coretype
        self.name = f"{system}/{threads}"
        self.proc = subprocess.Popen([python, WORKER, system, str(threads)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env)

    def request(self, **req):
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if line.startswith("@@ "):
                return json.loads(line[3:])
        raise RuntimeError(f"{self.name}: worker exited "
                           f"({self.proc.wait()})")

    def close(self):
        try:
            self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait()


def runner_has_threads():
    try:
        out = subprocess.run([RUNNER, "--help"], capture_output=True, text=True).stdout
    except OSError:
        return False
    return re.search(r"^\s*--threads\b", out, re.M) is not None


def run_tfm(case, threads, thread_flag, save, work):
    """{"times_ms" summary} of one runner process."""
    if case["kind"] == "decode":
        cmd = [RUNNER, case["config"], "--weights", case["weights"],
               "--input-ids", case["input"], "--generate", str(case["generate"])]
        if save:
            cmd += ["--output-tokens", save]
    else:
        cmd = [RUNNER, case["mlir"], "--weights", case["weights"],
               "--input", f"{case['input_name']}={case['input']}",
               "--repeat", str(case["repeat"]), "--print-values", "0"]
        if save:
            cmd += ["--output", f"{case['output_name']}={save}"]
    if thread_flag:
        cmd += [f"--threads={threads}"]
    if TFM_PIPELINE_OPTIONS:
        cmd += [f"--pipeline-options={TFM_PIPELINE_OPTIONS}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        return {"error": f"transformer-runner exited {proc.returncode}: "
                         f"{out.strip().splitlines()[-1:] or ''}"}
    compile_ms = re.search(r"compile: ([\d.]+) ms", out)
    result = {"compile_ms": float(compile_ms.group(1)) if compile_ms else None}
    if case["kind"] == "decode":
        m = re.search(r"decode: ([\d.]+) ms/token median \((\d+) steps, min ([\d.]+) ms", out)
        pre = re.search(r"prefill: ([\d.]+) ms", out)
        if not m:
            return {"error": f"no decode time in: {out.strip()[-300:]}"}
        result.update(median=float(m.group(1)), min=float(m.group(3)),
                      prefill_ms=float(pre.group(1)) if pre else None)
    else:
        m = re.search(r"median ([\d.eE+-]+) ms, min ([\d.eE+-]+) ms", out)
        if not m:
            return {"error": f"no run time in: {out.strip()[-300:]}"}
        result.update(median=float(m.group(1)), min=float(m.group(2)))
    return result


def run_worker(worker, case, save):
    if case["kind"] == "decode":
        r = worker.request(cmd="decode", case=case, save=save)
        if "error" in r:
            return r
        steps = r["step_ms"] or [float("nan")]
        return {"median": statistics.median(steps), "min": min(steps),
                "prefill_ms": r["prefill_ms"]}
    r = worker.request(cmd="time", case=case, repeat=case["repeat"], save=save)
    if "error" in r:
        return r
    return {"median": statistics.median(r["times_ms"]), "min": min(r["times_ms"])}


# --- report ----------------------------------------------------------------------

def fmt(x, digits=2):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}f}"


def summarise(results):
    """{system key: {"median", "min", ...}} from per-round results."""
    out = {}
    for key, rounds in results.items():
        ok = [r for r in rounds if "error" not in r]
        if not ok:
            out[key] = {"error": rounds[-1]["error"] if rounds else "not run"}
            continue
        s = {"median": statistics.median(r["median"] for r in ok),
             "min": min(r["min"] for r in ok), "rounds": len(ok)}
        for extra in ("compile_ms", "prefill_ms"):
            vals = [r[extra] for r in ok if r.get(extra) is not None]
            if vals:
                s[extra] = statistics.median(vals)
        out[key] = s
    return out


def best(summary, system):
    """(threads, stats) of a system's fastest thread count."""
    rows = [(t, s) for (sy, t), s in summary.items() if sy == system and "error" not in s]
    return min(rows, key=lambda r: r[1]["median"]) if rows else (None, None)


def report(cases, systems, results, checks):
    lines = []
    ratios = []
    for case in cases:
        summary = summarise(results[case["name"]])
        tfm_t, tfm_best = best(summary, "tfm")
        tfm_one = summary.get(("tfm", 1))
        unit = "ms/token" if case["kind"] == "decode" else "ms"
        gflops = case.get("flops")
        lines.append(f"### {case['title']}\n")
        head = f"| system | threads | median {unit} | min {unit} | x tfm best |"
        sep = "| --- | ---: | ---: | ---: | ---: |"
        if gflops:
            head += " GFLOP/s |"
            sep += " ---: |"
        if case["kind"] == "decode":
            head += " prefill ms |"
            sep += " ---: |"
        lines += [head, sep]
        for key in systems:
            if key[0] == "ort" and case["kind"] == "decode":
                continue
            s = summary.get(key)
            if s is None:
                continue
            if "error" in s:
                lines.append(f"| {key[0]} | {key[1]} | error: {s['error']} | | |"
                             + (" |" if gflops else "")
                             + (" |" if case["kind"] == "decode" else ""))
                continue
            ratio = s["median"] / tfm_best["median"] if tfm_best else None
            row = (f"| {key[0]} | {key[1]} | {fmt(s['median'])} | {fmt(s['min'])} | "
                   f"{fmt(ratio)} |")
            if gflops:
                row += f" {fmt(gflops / s['median'] / 1e6, 1)} |"
            if case["kind"] == "decode":
                row += f" {fmt(s.get('prefill_ms'), 1)} |"
            lines.append(row)
        notes = []
        compile_ms = [s.get("compile_ms") for (sy, _), s in summary.items()
                      if sy == "tfm" and s.get("compile_ms")]
        if compile_ms:
            notes.append(f"tfm compile {fmt(statistics.median(compile_ms) / 1e3, 1)} s "
                         f"(not timed)")
        if case["name"] in checks:
            notes.append(checks[case["name"]])
        if case.get("repeat"):
            notes.append(f"{case['repeat']} timed calls per round")
        if notes:
            lines.append("\n" + "; ".join(notes) + ".")
        lines.append("")
        # Ratios > 1: the peer is slower than tfm.
        row = {"case": case["name"], "gflops": gflops}
        for peer in ("torch", "ort"):
            one = summary.get((peer, 1))
            row[f"{peer}_1"] = (one["median"] / tfm_one["median"]
                                if one and tfm_one and "error" not in one
                                and "error" not in tfm_one else None)
            _, peer_best = best(summary, peer)
            row[f"{peer}_best"] = (peer_best["median"] / tfm_best["median"]
                                   if peer_best and tfm_best else None)
        for system in ("tfm", "torch", "ort"):
            _, b = best(summary, system)
            row[f"{system}_gflops"] = gflops / b["median"] / 1e6 if gflops and b else None
        row["tfm_best_threads"] = tfm_t
        ratios.append(row)

    lines.append("### Summary (peer time / tfm time; above 1: tfm is faster)\n")
    lines.append("| case | torch/tfm 1 thread | torch/tfm best | ORT/tfm 1 thread | "
                 "ORT/tfm best | tfm GFLOP/s | torch GFLOP/s | ORT GFLOP/s |")
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in ratios:
        lines.append(f"| {r['case']} | {fmt(r['torch_1'])} | {fmt(r['torch_best'])} | "
                     f"{fmt(r['ort_1'])} | {fmt(r['ort_best'])} | "
                     f"{fmt(r['tfm_gflops'], 1)} | {fmt(r['torch_gflops'], 1)} | "
                     f"{fmt(r['ort_gflops'], 1)} |")
    lines.append("")
    lines.append("GFLOP/s: each system at its best thread count; the case's matmul "
                 "FLOPs (2 M K N per linear; attention 2 S^2 d, the causal half) "
                 "over the median time.")
    return "\n".join(lines)


def compare(case, work):
    """One line: tfm and ORT against PyTorch on round 0's outputs."""
    ref_path = os.path.join(work, f"{case['name']}.torch.npy")
    if not os.path.exists(ref_path):
        return None
    ref = np.load(ref_path)
    parts = []
    for system in ("tfm", "ort"):
        path = os.path.join(work, f"{case['name']}.{system}.npy")
        if not os.path.exists(path):
            continue
        y = np.load(path)
        if case["kind"] == "decode":
            y = y.reshape(-1)[-len(ref):]
            same = int(np.sum(y == ref))
            parts.append(f"{system} tokens equal to torch's: {same}/{len(ref)}")
        elif y.shape != ref.shape:
            parts.append(f"{system} output shape {y.shape} != torch {ref.shape}")
        else:
            diff = float(np.max(np.abs(y.astype(np.float64) - ref)))
            parts.append(f"max |{system} - torch| = {diff:.2e} "
                         f"(max |torch| {float(np.max(np.abs(ref))):.2f})")
    return "check: " + ", ".join(parts) if parts else None


# --- main ------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default=DEFAULT_CASES,
                   help=f"comma-separated, of {','.join(ALL_CASES)} "
                        f"(default {DEFAULT_CASES}; 'all' adds decode)")
    p.add_argument("--sizes", type=int, nargs="+", default=[128, 512, 2048],
                   help="GPT-2 block sequence lengths")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=0,
                   help="timed calls per round (default: by case size, 5 to 20)")
    p.add_argument("--threads", default="1,all",
                   help="comma-separated thread counts; 'all' = the CPUs this "
                        "process may use")
    p.add_argument("--systems", default="tfm,torch,ort")
    p.add_argument("--llama-seq", type=int, default=512)
    p.add_argument("--lmhead-tokens", type=int, default=128)
    p.add_argument("--gemm", type=int, nargs=3, default=[512, 768, 3072],
                   metavar=("M", "K", "N"))
    p.add_argument("--decode-prompt", type=int, default=128)
    p.add_argument("--decode-tokens", type=int, default=64)
    p.add_argument("--decode-layers", type=int, default=12,
                   help="layers of the decode model (fewer for a quick check)")
    p.add_argument("--openblas-coretype", default="auto",
                   help="OPENBLAS_CORETYPE for PyTorch: 'auto' (the "
                        "kernel with the fastest one-thread sgemm among "
                        "OpenBLAS's own choice and those the CPU flags "
                        "allow), 'none', or a core name such as SkylakeX")
    p.add_argument("--no-check", action="store_true",
                   help="skip round 0's output comparison")
    p.add_argument("--keep", metavar="DIR",
                   help="work in DIR (modules, weights, .onnx) and keep it")
    p.add_argument("--dtype", default="f32", choices=("f32", "bf16"),
                   help="parameters and computation of the gpt2, llama and "
                        "gemm cases (bf16: tfm and PyTorch only; inputs and "
                        "outputs stay f32, converted in the case)")
    p.add_argument("--tfm-pipeline-options", default="", metavar="OPTIONS",
                   help="tfm's --pipeline-options, e.g. debug=amx-choice=measured "
                        "(default: none, the pipeline's defaults)")
    args = p.parse_args(argv)
    global TFM_PIPELINE_OPTIONS
    TFM_PIPELINE_OPTIONS = args.tfm_pipeline_options
    cases = ALL_CASES if args.cases == "all" else tuple(
        c.strip() for c in args.cases.split(",") if c.strip())
    bad = [c for c in cases if c not in ALL_CASES]
    if bad:
        p.error(f"--cases: unknown {', '.join(bad)} (known: {', '.join(ALL_CASES)})")
    args.cases = cases
    if args.dtype != "f32":
        other = [c for c in cases if c not in ("gpt2", "llama", "gemm")]
        if other:
            p.error(f"--dtype {args.dtype}: only the gpt2, llama and gemm "
                    f"cases (not {', '.join(other)})")
    ncpu = len(os.sched_getaffinity(0))
    threads = []
    for t in args.threads.split(","):
        t = ncpu if t.strip() == "all" else int(t)
        if t not in threads:
            threads.append(t)
    args.threads = threads
    args.systems = [s.strip() for s in args.systems.split(",")]
    return args


def main(argv=None):
    args = parse_args(argv)
    if not os.access(RUNNER, os.X_OK) and "tfm" in args.systems:
        sys.exit(f"error: {RUNNER} not found (build first, or set TFM_BUILD_DIR)")
    model, flags, ncpu = machine_info()
    load_before = loadavg()
    steal_before = cpu_steal_seconds()
    thread_flag = "tfm" in args.systems and runner_has_threads()
    coretype, blas_line = choose_openblas_coretype(args.openblas_coretype, flags)
    tfm_threads = args.threads if thread_flag else [1]

    work = args.keep or tempfile.mkdtemp(prefix="tfm-peers-")
    os.makedirs(work, exist_ok=True)
    started = time.time()
    notes = []
    workers = {}
    try:
        log(f"work directory {work}; preparing cases")
        cases = make_cases(args, work)

        systems = []
        if "tfm" in args.systems:
            systems += [("tfm", t) for t in tfm_threads]
            if not thread_flag:
                notes.append("tfm: single-threaded (transformer-runner has no "
                             "--threads option)")
        if "torch" in args.systems:
            for t in args.threads:
                workers[("torch", t)] = Worker(TORCH_PYTHON, "torch", t, coretype)
                systems.append(("torch", t))
        versions = {}
        if ("torch", 1) in workers:
            exporter = workers[("torch", 1)]
        elif workers:
            exporter = next(iter(workers.values()))
        else:
            exporter = Worker(TORCH_PYTHON, "torch", 1, coretype)
            workers[("torch-export", 1)] = exporter
        versions["torch"] = exporter.request(cmd="info")

        if "ort" in args.systems and args.dtype != "f32":
            notes.append(f"onnxruntime: not run in {args.dtype} (its CPU "
                         f"kernels have no {args.dtype} MatMul)")
        elif "ort" in args.systems:
            if not os.access(VENV_PYTHON, os.X_OK):
                notes.append("onnxruntime: skipped (no bench/.venv; run "
                             "bench/peers/setup-venv.sh)")
            else:
                for t in args.threads:
                    workers[("ort", t)] = Worker(VENV_PYTHON, "ort", t)
                    systems.append(("ort", t))
                versions["ort"] = workers[("ort", args.threads[0])].request(cmd="info")
                for case in cases:
                    if case["kind"] == "decode":
                        continue
                    t0 = time.time()
                    r = exporter.request(cmd="export", case=case, path=case["onnx"])
                    if "error" in r:
                        log(f"export {case['name']}: {r['error']}")
                    else:
                        log(f"exported {case['name']} ({r['bytes'] / 2**20:.0f} MiB, "
                            f"{time.time() - t0:.1f} s)")
        if any(c["kind"] == "decode" for c in cases) and any(s == "ort" for s, _ in systems):
            notes.append("decode: onnxruntime not run (no KV-cache export)")

        results = {c["name"]: {key: [] for key in systems} for c in cases}
        for r in range(args.rounds):
            for ci, case in enumerate(cases):
                k = (r + ci) % len(systems)
                for key in systems[k:] + systems[:k]:
                    if key[0] == "ort" and case["kind"] == "decode":
                        continue
                    save = None
                    if r == 0 and not args.no_check and key[1] == systems_first(systems, key[0]):
                        save = os.path.join(work, f"{case['name']}.{key[0]}.npy")
                    t0, steal0 = time.time(), cpu_steal_seconds()
                    if key[0] == "tfm":
                        res = run_tfm(case, key[1], thread_flag, save, work)
                    else:
                        res = run_worker(workers[key], case, save)
                    results[case["name"]][key].append(res)
                    what = res.get("error") or (f"median {fmt(res['median'], 3)} ms, "
                                                f"min {fmt(res['min'], 3)} ms")
                    steal1 = cpu_steal_seconds()
                    stolen = (f", {steal1 - steal0:.2f} s stolen"
                              if steal0 is not None and steal1 is not None else "")
                    log(f"round {r + 1}/{args.rounds} {case['name']:>14} "
                        f"{key[0]:>5}/{key[1]}: {what} ({time.time() - t0:.1f} s{stolen})")
        checks = {}
        if not args.no_check:
            for case in cases:
                line = compare(case, work)
                if line:
                    checks[case["name"]] = line
    finally:
        for w in workers.values():
            w.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    load_after = loadavg()
    steal_after = cpu_steal_seconds()

    tv = versions.get("torch", {})
    ov = versions.get("ort", {})
    print(f"## tfm against PyTorch and onnxruntime ({time.strftime('%Y-%m-%d %H:%M %Z')})\n")
    print(f"- CPU: {model} (LLVM host CPU: {llvm_host_cpu() or '?'}), {ncpu} CPUs "
          f"usable; flags: {' '.join(flags) or 'none of avx2/fma/avx512f'}")
    print(f"- load average (1/5/15 min): before {load_before}, after {load_after}")
    if steal_before is not None and steal_after is not None:
        stolen = steal_after - steal_before
        share = 100 * stolen / max(1e-9, (time.time() - started) * ncpu)
        print(f"- CPU time stolen by the hypervisor during the run: {stolen:.1f} s "
              f"({share:.1f}% of the vCPUs' time)")
    if args.tfm_pipeline_options:
        print(f"- tfm pipeline options: {args.tfm_pipeline_options}")
    if args.dtype != "f32":
        print(f"- dtype: {args.dtype} (parameters and computation; f32 in "
              f"and out)")
    print(f"- threads: {', '.join(map(str, args.threads))} (tfm: "
          f"{', '.join(map(str, tfm_threads))})")
    print(f"- PyTorch {tv.get('torch', '?')} ({'; '.join(tv.get('build', [])) or 'BLAS ?'}), "
          f"numpy {tv.get('numpy', '?')}, onnxruntime {ov.get('onnxruntime', '-')}, "
          f"Python {platform.python_version()}")
    print(f"- {blas_line}")
    print(f"- {args.rounds} rounds, interleaved; times are medians over rounds of "
          f"per-round medians; wall time {time.time() - started:.0f} s")
    for n in notes:
        print(f"- {n}")
    print()
    print(report(cases, systems, results, checks))
    return 0


def systems_first(systems, name):
    """The first thread count of system `name` (the one whose round-0 output
    is saved for the check)."""
    return next(t for s, t in systems if s == name)


if __name__ == "__main__":
    sys.exit(main())

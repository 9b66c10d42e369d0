"""A timing worker of bench/peers/run.py: PyTorch or onnxruntime, one thread
count per process.

  worker.py torch THREADS   (Debian's /usr/bin/python3: PyTorch 1.13)
  worker.py ort THREADS     (bench/.venv/bin/python: onnxruntime)

run.py starts one per (system, threads) with OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS and MKL_NUM_THREADS set to THREADS in its environment
(torch.set_num_threads does not reach OpenBLAS's own pool), and sends JSON
requests one a line on stdin; each answer is one stdout line starting with
"@@ " (anything else on stdout is ignored). A case is prepared on its first
request and kept, so every later round times the same objects:

  {"cmd": "info"}                          versions and thread settings
  {"cmd": "time", "case": {...}, "repeat": N, "save": PATH or null}
      one warm-up call, then N timed calls: {"times_ms": [...]}; with
      "save", the (last) output is written to PATH as .npy
  {"cmd": "export", "case": {...}, "path": P}   (torch) torch.onnx.export
      of the case's module to P
  {"cmd": "decode", "case": {...}, "save": PATH or null}   (torch) prefill
      and greedy decode with a KV cache: {"prefill_ms", "step_ms": [...]}

The PyTorch modules are python/tfm/reference.py's: the same math as the tfm
blocks (tests/ compare the two), on the weights of the case's .safetensors
file, which run.py also hands to transformer-runner.
"""
import contextlib
import json
import math
import os
import re
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402


def answer(obj):
    sys.stdout.write("@@ " + json.dumps(obj) + "\n")
    sys.stdout.flush()


@contextlib.contextmanager
def export_workarounds(R):
    """Two workarounds for torch 1.13's ONNX exporter, in force during an
    export only, each the same math as the reference function it replaces:

    - layer_norm's normalized_shape from a traced x.shape[-1] fails ("Failed
      to export ... because it is not constant"): take it from the
      (constant) weight;
    - repeat_interleave over K/V heads (even by 1, in the MHA case) exports
      a graph that onnxruntime rejects ("/MatMul_3 ... left operand cannot
      broadcast on dim 1"): repeat them as Hugging Face's repeat_kv does
      (expand + reshape), and not at all for MHA.
    """
    import torch
    saved = R.layer_norm, R.attention

    def layer_norm(x, weight, bias, eps):
        return torch.nn.functional.layer_norm(x, tuple(weight.shape), weight, bias, eps)

    def attention(q, k, v, causal=True, offset=None, scale=None):
        # reference.attention with its repeat_interleave replaced (even a
        # repeat by 1 exports wrongly).
        b, hkv, skv, dh = k.shape
        hq, s = q.shape[1], q.shape[2]
        if hq != hkv:
            n = hq // hkv
            k, v = (t[:, :, None].expand(b, hkv, n, skv, dh).reshape(b, hq, skv, dh)
                    for t in (k, v))
        if offset is None:
            offset = skv - s
        if scale is None:
            scale = 1.0 / math.sqrt(dh)
        scores = torch.matmul(q.float(), k.float().transpose(-1, -2)) * scale
        if causal:
            qpos = torch.arange(offset, offset + s).view(s, 1)
            kpos = torch.arange(skv).view(1, skv)
            scores = scores.masked_fill(kpos > qpos, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v.float()).to(q.dtype)

    R.layer_norm, R.attention = layer_norm, attention
    try:
        yield
    finally:
        R.layer_norm, R.attention = saved


# --- PyTorch -----------------------------------------------------------------

class TorchCases:
    def __init__(self, threads):
        import torch
        from tfm import io, reference
        self.torch, self.io, self.R = torch, io, reference
        torch.set_num_threads(threads)
        torch.set_grad_enabled(False)
        self.cache = {}

    def weights(self, case):
        return {k: self.torch.from_numpy(np.ascontiguousarray(v))
                for k, v in self.io.read_safetensors(case["weights"])[0].items()}

    def function(self, case):
        """(f, inputs): f(*inputs) computes the case's output."""
        key = case["name"]
        if key in self.cache:
            return self.cache[key]
        torch = self.torch
        w = self.weights(case)
        x = torch.from_numpy(np.load(case["input"])) if case.get("input") else None
        kind = case["kind"]
        if case.get("dtype", "f32") == "bf16":
            # The same bf16 weights (read widened, narrowed back exactly)
            # and the computation in bf16; f32 in and out, as tfm's case.
            w = {k: v.to(torch.bfloat16) for k, v in w.items()}
            inner = self._function(kind, case, w)

            def f(h):
                return inner(h.to(torch.bfloat16)).float()
            self.cache[key] = (f, (x,))
            return self.cache[key]
        self.cache[key] = (self._function(kind, case, w), (x,))
        return self.cache[key]

    def _function(self, kind, case, w):
        """The case's computation on weights `w`."""
        torch, R = self.torch, self.R
        if kind == "gpt2_block":
            def f(h):
                return R.hf_gpt2_block(w, "h.0.", h, case["heads"], case["eps"], "tanh")
        elif kind == "llama_block":
            def f(h):
                return R.llama_block(w, "model.layers.0.", h, case["heads"],
                                     case["kv_heads"], case["eps"], case["theta"])
        elif kind == "lm_head":
            def f(h):
                h = R.layer_norm(h, w["ln_f.weight"], w["ln_f.bias"], case["eps"])
                return h @ w["lm_head.weight"].t()
        elif kind == "gemm":
            weight = w["w"]
            if case["layout"] == "out_in":
                def f(h):
                    return torch.nn.functional.linear(h, weight)
            else:
                def f(h):
                    return h @ weight
        else:
            raise ValueError(f"unknown case kind {kind!r}")
        return f

    def time(self, case, repeat, save):
        f, inputs = self.function(case)
        y = f(*inputs)
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            y = f(*inputs)
            times.append((time.perf_counter() - t) * 1e3)
        if save:
            np.save(save, y.numpy())
        return {"times_ms": times}

    def export(self, case, path):
        torch = self.torch
        f, inputs = self.function(case)

        class Module(torch.nn.Module):
            def forward(self, *args):
                return f(*args)

        with export_workarounds(self.R), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(Module(), inputs, path, opset_version=17,
                              input_names=["x"], output_names=["y"],
                              do_constant_folding=True)
        return {"path": path, "bytes": os.path.getsize(path)}

    # GPT-2 generation with a KV cache (past keys/values grown by torch.cat,
    # as Hugging Face's GPT-2 does), the tied LM head; greedy.
    def decode(self, case, save):
        torch, R = self.torch, self.R
        key = case["name"]
        if key not in self.cache:
            self.cache[key] = self.weights(case)
        w = self.cache[key]
        n_layer, n_head, eps = case["layers"], case["heads"], case["eps"]
        ids = torch.from_numpy(np.load(case["input"]).astype(np.int64))
        wte, wpe = w["wte.weight"], w["wpe.weight"]

        def forward(tokens, past, offset):
            s = tokens.shape[1]
            x = wte[tokens] + wpe[offset:offset + s]
            d = x.shape[-1]
            for i in range(n_layer):
                p = f"h.{i}."
                h = R.layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
                qkv = R.linear(h, w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"],
                               "in_out")
                q, k, v = (R.split_heads(t, n_head) for t in qkv.split(d, dim=-1))
                if past[i] is not None:
                    k = torch.cat((past[i][0], k), dim=2)
                    v = torch.cat((past[i][1], v), dim=2)
                past[i] = (k, v)
                a = R.attention(q, k, v)
                a = R.linear(R.merge_heads(a), w[p + "attn.c_proj.weight"],
                             w[p + "attn.c_proj.bias"], "in_out")
                x = x + a
                h = R.layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
                h = R.gelu(R.linear(h, w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"],
                                    "in_out"), "tanh")
                x = x + R.linear(h, w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"],
                                 "in_out")
            # All positions' logits, as tfm's @prefill and GPT2LMHeadModel.
            x = R.layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps)
            return (x @ wte.t())[:, -1]

        past = [None] * n_layer
        prompt = ids.shape[1]
        t = time.perf_counter()
        logits = forward(ids, past, 0)
        prefill_ms = (time.perf_counter() - t) * 1e3
        out = [int(logits.argmax(-1))]
        steps = []
        for step in range(1, case["generate"]):
            token = torch.tensor([[out[-1]]])
            t = time.perf_counter()
            logits = forward(token, past, prompt + step - 1)
            steps.append((time.perf_counter() - t) * 1e3)
            out.append(int(logits.argmax(-1)))
        if save:
            np.save(save, np.array(out, dtype=np.int64))
        return {"prefill_ms": prefill_ms, "step_ms": steps}

    def info(self):
        torch = self.torch
        config = torch.__config__.show()
        build = [m for m in (re.search(r"\b(BLAS_INFO=[^,]*)", config),
                             re.search(r"\b(USE_MKLDNN=[^,]*)", config)) if m]
        blas = "/usr/lib/x86_64-linux-gnu/libblas.so.3"
        build = [m.group(1) for m in build]
        if os.path.exists(blas):  # Debian's BLAS alternative (OpenBLAS or not)
            build.append("libblas.so.3 -> " + os.path.realpath(blas))
        return {"torch": torch.__version__, "numpy": np.__version__,
                "threads": torch.get_num_threads(), "build": build}


# --- onnxruntime -------------------------------------------------------------

class OrtCases:
    def __init__(self, threads):
        import onnxruntime as ort
        self.ort, self.threads = ort, threads
        self.cache = {}

    def session(self, case):
        key = case["name"]
        if key not in self.cache:
            ort = self.ort
            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            session = ort.InferenceSession(case["onnx"], options,
                                           providers=["CPUExecutionProvider"])
            feeds = {"x": np.load(case["input"])}
            self.cache[key] = (session, feeds)
        return self.cache[key]

    def time(self, case, repeat, save):
        session, feeds = self.session(case)
        y = session.run(None, feeds)[0]
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            y = session.run(None, feeds)[0]
            times.append((time.perf_counter() - t) * 1e3)
        if save:
            np.save(save, y)
        return {"times_ms": times}

    def info(self):
        return {"onnxruntime": self.ort.__version__, "numpy": np.__version__,
                "threads": self.threads}


def main():
    system, threads = sys.argv[1], int(sys.argv[2])
    cases = TorchCases(threads) if system == "torch" else OrtCases(threads)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        cmd = request["cmd"]
        try:
            if cmd == "info":
                answer(cases.info())
            elif cmd == "time":
                answer(cases.time(request["case"], request["repeat"], request.get("save")))
            elif cmd == "export":
                answer(cases.export(request["case"], request["path"]))
            elif cmd == "decode":
                answer(cases.decode(request["case"], request.get("save")))
            elif cmd == "quit":
                return
            else:
                answer({"error": f"unknown command {cmd!r}"})
        except Exception as e:  # reported per request; the run goes on
            answer({"error": f"{type(e).__name__}: {e}"})


if __name__ == "__main__":
    main()

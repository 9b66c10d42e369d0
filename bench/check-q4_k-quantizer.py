"""Checks tfm's two ports of llama.cpp's K-quant quantizers, Q4_K, Q5_K and
Q6_K, byte for byte against llama.cpp's own quantize_row_q4_K_ref,
quantize_row_q5_K_ref and quantize_row_q6_K_ref (ggml-quants.c), called
through ctypes from the bench's llama.cpp build (bench/llamacpp; its
libggml-base.so exports them and dequantize_row_q4_K, dequantize_row_q5_K,
dequantize_row_q6_K):

- the C++ runtime's quantizeQ4_K, quantizeQ5_K and quantizeQ6_K
  (lib/Runtime/Quantize.cpp), compiled here with DType.cpp into a small
  shared library by clang++ (and g++ where there is one) under several flag
  sets: the repository's own (-O3), -O0, and -O3 -march=native (FMA
  available: the quantizers must still round each product on its own);
- the numpy ports test/numerics/Inputs/q4_k_ref.py (quantize_q4_k),
  q5_k_ref.py (quantize_q5_k) and q6_k_ref.py (quantize_q6_k); and their
  dequantize_q4_k, dequantize_q5_k and dequantize_q6_k (gguf-py's) against
  ggml's dequantize_row_*.

Rows, the same for every format: random (normal, uniform, heavy-tailed,
scaled 1e-8 .. 1e4, lengths 256 .. 2048), all-zero, constant, one huge
outlier, all-negative, all-positive, f16-subnormal and zero scales (d
rounding to them), tiny weights (1e-17 .. 1e-9: below ggml's GROUP_MAX_EPS,
and products w * x * l that underflow to f32 subnormals in Q6_K's fit),
zero, constant and tiny sub-blocks among others, values on grids of halves
and integers (ties for nearest_int; how many of its arguments were ties is
reported), and the rows of each format's golden file
(test/numerics/Inputs/q4_k-golden.npz, q5_k-golden.npz, q6_k-golden.npz),
whose stored blocks are checked against llama.cpp too. Rows with NaN,
infinity or weights whose square overflows are run through every port (they
must not crash; matching is reported, not required).

  build/reference-venv/bin/python bench/check-q4_k-quantizer.py \\
      --ggml build/llamacpp/build/bin/libggml-base.so [--format all]
      [--rows 2000] [--cxx clang++-22,g++ | --cxx none] [--write-golden]

--format q4_k, q5_k, q6_k or all (the default: all three) picks the formats
checked. --write-golden (re)writes the picked formats' golden files: w
(float32 [12, 512], edge cases) and blocks (uint8 [12, 288] for Q4_K,
[12, 352] for Q5_K, [12, 420] for Q6_K: what llama.cpp writes for each
row).
"""
import argparse
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
inputs = os.path.join(root, "test", "numerics", "Inputs")
sys.path.insert(0, inputs)
import q4_k_ref  # noqa: E402
import q5_k_ref  # noqa: E402
import q6_k_ref  # noqa: E402

F = np.float32

p = argparse.ArgumentParser()
p.add_argument("--ggml", required=True, help="llama.cpp's libggml-base.so")
p.add_argument("--format", choices=["q4_k", "q5_k", "q6_k", "all"],
               default="all")
p.add_argument("--rows", type=int, default=2000,
               help="random rows (edge cases come on top)")
p.add_argument("--cxx", default="clang++-22,g++",
               help="compilers for the C++ port, or 'none'")
p.add_argument("--write-golden", action="store_true")
args = p.parse_args()

ggml = ctypes.CDLL(os.path.abspath(args.ggml))


class Format:
    """One block format: llama.cpp's functions, the numpy port's, tfm's."""

    def __init__(self, name, ggml_name, block_bytes, module, cxx):
        self.name, self.block_bytes, self.module = name, block_bytes, module
        self.ggml_name = ggml_name
        self.quantize_ref = getattr(ggml, f"quantize_row_{ggml_name}_ref")
        self.dequantize_ref = getattr(ggml, f"dequantize_row_{ggml_name}")
        for fn in (self.quantize_ref, self.dequantize_ref):
            fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        self.quantize = getattr(module, f"quantize_{name}")
        self.dequantize = getattr(module, f"dequantize_{name}")
        self.cxx = cxx                      # tfm's function
        self.golden = os.path.join(inputs, f"{name}-golden.npz")

    def call(self, fn, w):
        w = np.ascontiguousarray(w, F)
        out = np.zeros(w.size // 256 * self.block_bytes, np.uint8)
        fn(w.ctypes.data, out.ctypes.data, w.size)
        return out

    def llama_cpp(self, w):
        return self.call(self.quantize_ref, w)

    def llama_cpp_dequantize(self, blocks):
        out = np.zeros(blocks.size // self.block_bytes * 256, F)
        self.dequantize_ref(blocks.ctypes.data, out.ctypes.data, out.size)
        return out


FORMATS = [Format("q4_k", "q4_K", 144, q4_k_ref, "quantizeQ4_K"),
           Format("q5_k", "q5_K", 176, q5_k_ref, "quantizeQ5_K"),
           Format("q6_k", "q6_K", 210, q6_k_ref, "quantizeQ6_K")]
formats = [f for f in FORMATS if args.format in (f.name, "all")]


def golden_rows(name):
    """12 rows of 512: the edge cases, for CI (which has no llama.cpp).
    Q4_K's as its golden file has them; Q5_K's and Q6_K's with a few of
    their own."""
    rng = np.random.default_rng(44)
    n = 512
    w = np.zeros((12, n), F)
    w[0] = rng.standard_normal(n)                         # normal
    w[1] = rng.uniform(-1, 1, n) * 4e-3                   # f16-subnormal d
    w[2] = rng.standard_t(1.5, n) * 0.05                  # heavy tails
    # w[3]: all zero
    w[4] = F(0.375)                                       # constant
    w[5] = rng.standard_normal(n) * 0.01
    w[5, 77] = F(300.0)                                   # one huge outlier
    w[6] = -np.abs(rng.standard_normal(n)) - 0.5          # all negative
    w[7] = np.abs(rng.standard_normal(n)) + 0.5           # all positive
    w[8] = rng.standard_normal(n) * 1e-6                  # d rounds to 0
    w[9] = rng.standard_normal(n) * 2e4                   # large
    w[10] = rng.standard_normal(n)
    w[10, 0:32] = 0                                       # zero sub-blocks
    w[10, 96:160] = 0                                     # among others
    w[10, 288:320] = F(-0.5)                              # and a constant one
    w[11] = rng.integers(-16, 16, n) * F(0.5)             # ties
    if name == "q5_k":
        # Integers in [-31, 31], both ends in every sub-block of 32: the
        # range is 62, iscale 1/2 (and again at trial step count 31), every
        # odd weight + 31 a tie in make_qkx2_quants' rounding.
        w[11] = rng.integers(-31, 32, n)
        w[11, ::32] = 31
        w[11, 1::32] = -31
    if name == "q6_k":
        # The second super-block tiny: w^2 x underflows to f32 subnormals
        # in make_qx_quants' sums (its scales are still above 1e-15).
        w[8, 256:] = rng.standard_normal(256) * 1e-13
        # A lone zero sub-block of 16, and one below GROUP_MAX_EPS.
        w[10, 176:192] = 0
        w[10, 400:416] = rng.standard_normal(16) * 1e-16
        # Integers up to 64, 64 in every sub-block of 16: iscale = -1/2,
        # every odd weight a tie in make_qx_quants' first rounding.
        w[11] = rng.integers(-63, 64, n)
        w[11, ::16] = 64
    return w


def rows():
    """(name, row) for every row to check."""
    rng = np.random.default_rng(2025)
    out = []
    for i in range(args.rows):
        k = 256 * int(rng.choice([1, 2, 4, 8]))
        kind = i % 4
        if kind == 0:
            r = rng.standard_normal(k)
        elif kind == 1:
            r = rng.uniform(-1, 1, k) + rng.uniform(-1, 1)
        elif kind == 2:
            r = rng.standard_t(rng.uniform(1, 5), k)
        else:
            r = rng.laplace(size=k) ** 3
        scale = 10.0 ** rng.uniform(-8, 4)
        out.append((f"random/{['normal', 'uniform', 'heavy', 'cubed'][kind]}",
                    (r * scale).astype(F)))
    k = 512
    for s in [1e-8, 1e-6, 3e-5, 1e-3, 1.0, 1e3, 1e4, 6e4]:
        out.append(("zero", np.zeros(k, F)))
        out.append(("constant", np.full(k, s, F)))
        out.append(("constant", np.full(k, -s, F)))
        r = rng.standard_normal(k).astype(F) * F(s * 1e-3)
        r[rng.integers(k)] = F(s * 1e3) * rng.choice([-1, 1])
        out.append(("outlier", r))
        out.append(("negative", -np.abs(rng.standard_normal(k) * s).astype(F)))
        out.append(("positive", np.abs(rng.standard_normal(k) * s).astype(F)))
        r = np.abs(rng.standard_normal(k)).astype(F) + F(1)
        out.append(("negative", -r * F(s)))
        out.append(("positive", r * F(s)))
    # Q4_K's d = max scale / 63 below 2^-14 (f16 subnormal) from weights of
    # about 1e-2 down, and rounding to 0 below about 1e-5; Q6_K's d = max
    # scale / 128 from about 0.25 and 1e-4 down.
    for s in [1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3]:
        for _ in range(10):
            r = rng.standard_normal(k) * s
            out.append(("f16-subnormal", r.astype(F)))
    # Below and about ggml's GROUP_MAX_EPS (1e-15), and where Q6_K's sums
    # of w * x * l = x^3 l underflow.
    for s in [1e-17, 1e-16, 3e-16, 1e-15, 3e-15, 1e-14, 1e-13, 1e-12, 1e-11,
              1e-10, 1e-9]:
        for _ in range(5):
            out.append(("tiny", (rng.standard_normal(k) * s).astype(F)))
    for sub in [32, 16]:
        for _ in range(100 if sub == 32 else 60):
            r = rng.standard_normal(k).astype(F) * F(10.0 **
                                                     rng.uniform(-3, 2))
            for j in range(k // sub):
                u = rng.random()
                b = slice(sub * j, sub * j + sub)
                if u < 0.3:
                    r[b] = 0
                elif u < 0.4:
                    r[b] = r[sub * j]
                elif u < 0.5:
                    r[b] *= F(1e-4)
                elif u < 0.55:
                    r[b] *= F(1e-16)
            out.append(("zero-sub-blocks", r))
    for _ in range(100):
        step = F(rng.choice([0.5, 1.0, 0.25, 1 / 16]))
        out.append(("grid", rng.integers(-20, 20, k).astype(F) * step))
        out.append(("grid", rng.integers(0, 16, k).astype(F)))
        # Q6_K: a sub-block's largest 64 (or 32, -64) makes -32 / max a
        # power of 2, and odd (or any half) weights ties.
        r = rng.integers(-63, 64, k).astype(F) * step
        top = F(rng.choice([64, 32, -64])) * step
        r[rng.integers(0, 16) + np.arange(0, k, 16)] = top
        out.append(("grid", r))
    # Q5_K: a sub-block of 32 spanning [-31, 31] (or [-31, 0], [0, 62])
    # steps makes make_qkx2_quants' iscale a power of 2 in its first
    # rounding and at step count 31, and odd weights ties.
    for _ in range(100):
        step = F(rng.choice([0.5, 1.0, 0.25, 1 / 16]))
        lo, hi = [(-31, 31), (-31, 0), (0, 62)][int(rng.integers(3))]
        r = rng.integers(lo, hi + 1, k).astype(F) * step
        r[rng.integers(0, 32) + np.arange(0, k, 32)] = F(lo) * step
        r[rng.integers(0, 32) + np.arange(0, k, 32)] = F(hi) * step
        out.append(("grid", r))
    for name in ["q4_k", "q5_k", "q6_k"]:
        for r in golden_rows(name):
            out.append(("golden", r))
    return out


def special_rows():
    """Rows with NaN or infinity, or weights whose square overflows: none
    must crash; matching not required."""
    rng = np.random.default_rng(7)
    out = []
    for v in [np.nan, np.inf, -np.inf, 3e38, 1e20]:
        for count in [1, 5, 512]:
            r = rng.standard_normal(512).astype(F)
            r[rng.choice(512, count, replace=False)] = F(v)
            out.append(r)
    return out


def build_cxx(compiler, flags, tmp, tag):
    """The C++ ports as a shared library: {format name: quantizer}, each
    behind a C name."""
    wrapper = os.path.join(tmp, "wrapper.cpp")
    with open(wrapper, "w") as f:
        f.write('#include "tfm/Runtime/Quantize.h"\n')
        for fmt in FORMATS:
            f.write(f'extern "C" void tfm_quantize_{fmt.name}(const float *w,'
                    f' char *b, int64_t k) {{\n'
                    f'  mlir::tfm::runtime::{fmt.cxx}(w, k, b);\n}}\n')
    lib = os.path.join(tmp, f"libkquants-{tag}.so")
    llvm = "/usr/lib/llvm-22"
    cmd = [compiler, "-shared", "-fPIC", "-std=gnu++17", *flags,
           f"-I{root}/include", f"-I{llvm}/include", wrapper,
           f"{root}/lib/Runtime/Quantize.cpp", f"{root}/lib/Runtime/DType.cpp",
           "-o", lib, f"-L{llvm}/lib", "-lLLVM", f"-Wl,-rpath,{llvm}/lib"]
    subprocess.run(cmd, check=True)
    so = ctypes.CDLL(lib)
    fns = {}
    for fmt in FORMATS:
        fn = getattr(so, f"tfm_quantize_{fmt.name}")
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        fns[fmt.name] = fn
    return fns


def report(name, results):
    """results: (kind, matched) per row."""
    kinds = {}
    for kind, ok in results:
        k = kind.split("/")[0]
        m, n = kinds.get(k, (0, 0))
        kinds[k] = (m + ok, n + 1)
    matched = sum(ok for _, ok in results)
    detail = ", ".join(f"{k} {m}/{n}" for k, (m, n) in kinds.items())
    print(f"{name}: {matched}/{len(results)} rows bit for bit ({detail})")
    return matched == len(results)


class TieCounter:
    """Wraps a numpy port's nearest_int (its module's, and q4_k_ref's, whose
    code q5_k_ref runs) to count its arguments that are exactly halfway
    between two integers (ties to even)."""

    def __init__(self, module):
        self.modules = [q4_k_ref] + [m for m in [module] if m is not q4_k_ref
                                     and hasattr(m, "nearest_int")]
        self.inner = q4_k_ref.nearest_int
        self.ties = self.total = 0

    def __call__(self, x):
        x = np.asarray(x, F)
        with np.errstate(all="ignore"):
            frac = np.abs(x - np.floor(x))
        # Only where ggml's result is exact (|x| < 2^22), NaN excluded.
        self.ties += int(np.count_nonzero((frac == F(0.5)) &
                                          (np.abs(x) < F(2 ** 22))))
        self.total += x.size
        return self.inner(x)

    def __enter__(self):
        for m in self.modules:
            m.nearest_int = self
        return self

    def __exit__(self, *exc):
        for m in self.modules:
            m.nearest_int = self.inner


data = rows()
specials = special_rows()
ok = True

for fmt in formats:
    print(f"== {fmt.name}")
    if args.write_golden:
        w = golden_rows(fmt.name)
        blocks = np.stack([fmt.llama_cpp(r) for r in w])
        np.savez_compressed(fmt.golden, w=w, blocks=blocks)
        print(f"wrote {fmt.golden}: w {w.shape}, blocks {blocks.shape}")
    fmt.expected = [fmt.llama_cpp(r) for _, r in data]

    if os.path.exists(fmt.golden):
        g = np.load(fmt.golden)
        same = (np.array_equal(g["w"], golden_rows(fmt.name)) and
                all(np.array_equal(fmt.llama_cpp(r), b)
                    for r, b in zip(g["w"], g["blocks"])))
        print(f"{os.path.basename(fmt.golden)}: {len(g['w'])} rows, stored "
              f"blocks {'are' if same else 'are NOT'} llama.cpp's")
        ok &= same
    else:
        print(f"{os.path.basename(fmt.golden)}: missing (--write-golden)")
        ok = False

    # numpy: the whole set as one batch per length (as tests call it), and
    # the special rows one at a time.
    got = {}
    with TieCounter(fmt.module) as ties:
        for length in sorted({r.size for _, r in data}):
            idx = [i for i, (_, r) in enumerate(data) if r.size == length]
            batch = fmt.quantize(np.stack([data[i][1] for i in idx]))
            for i, b in zip(idx, batch):
                got[i] = b
    ok &= report(f"numpy quantize_{fmt.name}",
                 [(data[i][0], np.array_equal(got[i], fmt.expected[i]))
                  for i in range(len(data))])
    print(f"  nearest_int: {ties.ties} ties among {ties.total} arguments")
    with np.errstate(all="ignore"):  # inf dmin * 0: NaN, in ggml too
        deq = [np.array_equal(
            fmt.dequantize(e, (e.size // fmt.block_bytes * 256,)),
            fmt.llama_cpp_dequantize(e), equal_nan=True)
            for e in fmt.expected]
    print(f"numpy dequantize_{fmt.name}: {sum(deq)}/{len(deq)} rows as "
          f"dequantize_row_{fmt.ggml_name}")
    ok &= all(deq)
    sm = sum(np.array_equal(fmt.quantize(r), fmt.llama_cpp(r))
             for r in specials)
    print(f"numpy, NaN/inf rows (not required): {sm}/{len(specials)} match, "
          f"no crash")

compilers = [] if args.cxx == "none" else [
    c for c in args.cxx.split(",") if shutil.which(c)]
with tempfile.TemporaryDirectory() as tmp:
    for compiler in compilers:
        for flags in (["-O3", "-DNDEBUG"], ["-O0"],
                      ["-O3", "-DNDEBUG", "-march=native"]):
            tag = f"{os.path.basename(compiler)} {' '.join(flags)}"
            fns = build_cxx(compiler, flags, tmp,
                            tag.replace(" ", "_").replace("+", "p"))
            # gcc ignores `#pragma STDC FP_CONTRACT OFF` in C++ and fuses by
            # default where FMA exists: report, but do not fail on it.
            required = not (os.path.basename(compiler).startswith("g++")
                            and "-march=native" in flags)
            for fmt in formats:
                fn = fns[fmt.name]
                good = report(
                    f"C++ {fmt.cxx} [{tag}]" +
                    ("" if required else " (not required)"),
                    [(kind, np.array_equal(fmt.call(fn, r), e))
                     for (kind, r), e in zip(data, fmt.expected)])
                ok &= good or not required
                sm = sum(np.array_equal(fmt.call(fn, r), fmt.llama_cpp(r))
                         for r in specials)
                print(f"  NaN/inf rows (not required): {sm}/{len(specials)} "
                      f"match, no crash")

print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)

"""Checks tfm's two ports of llama.cpp's Q4_K quantizer byte for byte
against llama.cpp's own quantize_row_q4_K_ref (ggml-quants.c), called
through ctypes from the bench's llama.cpp build (bench/llamacpp; its
libggml-base.so exports quantize_row_q4_K_ref and dequantize_row_q4_K):

- the C++ runtime's quantizeQ4_K (lib/Runtime/Quantize.cpp), compiled here
  with DType.cpp into a small shared library by clang++ (and g++ where
  there is one) under several flag sets: the repository's own (-O3), -O0,
  and -O3 -march=native (FMA available: the quantizer must still round
  each product on its own);
- the numpy port test/numerics/Inputs/q4_k_ref.py (quantize_q4_k; and its
  dequantize_q4_k against ggml's dequantize_row_q4_K).

Rows: random (normal, uniform, heavy-tailed, scaled 1e-8 .. 1e4, lengths
256 .. 2048), all-zero, constant, one huge outlier, all-negative,
all-positive, f16-subnormal scales (~1e-6), zero sub-blocks among nonzero
ones, values on a grid of halves and integers (ties for nearest_int), and
the rows of test/numerics/Inputs/q4_k-golden.npz, whose stored blocks are
checked against llama.cpp too. Rows with NaN or infinity are run through
every port (they must not crash; matching is reported, not required).

  build/reference-venv/bin/python bench/check-q4_k-quantizer.py \\
      --ggml build/llamacpp/build/bin/libggml-base.so
      [--rows 2000] [--cxx clang++-22,g++ | --cxx none] [--write-golden]

--write-golden (re)writes q4_k-golden.npz: w (float32 [12, 512], edge cases)
and blocks (uint8 [12, 288], what llama.cpp writes for each row).
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

GOLDEN = os.path.join(inputs, "q4_k-golden.npz")
F = np.float32

p = argparse.ArgumentParser()
p.add_argument("--ggml", required=True, help="llama.cpp's libggml-base.so")
p.add_argument("--rows", type=int, default=2000,
               help="random rows (edge cases come on top)")
p.add_argument("--cxx", default="clang++-22,g++",
               help="compilers for the C++ port, or 'none'")
p.add_argument("--write-golden", action="store_true")
args = p.parse_args()

ggml = ctypes.CDLL(os.path.abspath(args.ggml))
ggml.quantize_row_q4_K_ref.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                       ctypes.c_int64]
ggml.dequantize_row_q4_K.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_int64]


def call(fn, w):
    w = np.ascontiguousarray(w, F)
    out = np.zeros(w.size // 256 * 144, np.uint8)
    fn(w.ctypes.data, out.ctypes.data, w.size)
    return out


def llama_cpp(w):
    return call(ggml.quantize_row_q4_K_ref, w)


def llama_cpp_dequantize(blocks):
    out = np.zeros(blocks.size // 144 * 256, F)
    ggml.dequantize_row_q4_K(blocks.ctypes.data, out.ctypes.data, out.size)
    return out


def golden_rows():
    """12 rows of 512: the edge cases, for CI (which has no llama.cpp)."""
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
    # d = max scale / 63 below 2^-14 (f16 subnormal) from weights of about
    # 1e-2 down, and rounding to 0 below about 1e-5.
    for s in [1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 3e-3]:
        for _ in range(10):
            r = rng.standard_normal(k) * s
            out.append(("f16-subnormal", r.astype(F)))
    for _ in range(100):
        r = rng.standard_normal(k).astype(F) * F(10.0 ** rng.uniform(-3, 2))
        for j in range(k // 32):
            u = rng.random()
            if u < 0.3:
                r[32 * j:32 * j + 32] = 0
            elif u < 0.4:
                r[32 * j:32 * j + 32] = r[32 * j]
            elif u < 0.5:
                r[32 * j:32 * j + 32] *= F(1e-4)
        out.append(("zero-sub-blocks", r))
    for _ in range(100):
        step = F(rng.choice([0.5, 1.0, 0.25, 1 / 16]))
        out.append(("grid", rng.integers(-20, 20, k).astype(F) * step))
        out.append(("grid", rng.integers(0, 16, k).astype(F)))
    for name, r in zip(["golden"] * 12, golden_rows()):
        out.append((name, r))
    return out


def special_rows():
    """Rows with NaN or infinity: none must crash; matching not required."""
    rng = np.random.default_rng(7)
    out = []
    for v in [np.nan, np.inf, -np.inf, 3e38]:
        for count in [1, 5, 512]:
            r = rng.standard_normal(512).astype(F)
            r[rng.choice(512, count, replace=False)] = F(v)
            out.append(r)
    return out


def build_cxx(compiler, flags, tmp, tag):
    """The C++ port as a shared library: quantizeQ4_K behind a C name."""
    wrapper = os.path.join(tmp, "wrapper.cpp")
    with open(wrapper, "w") as f:
        f.write('#include "tfm/Runtime/Quantize.h"\n'
                'extern "C" void tfm_quantize_q4_k(const float *w, char *b,'
                ' int64_t k) {\n'
                '  mlir::tfm::runtime::quantizeQ4_K(w, k, b);\n}\n')
    lib = os.path.join(tmp, f"libq4k-{tag}.so")
    llvm = "/usr/lib/llvm-22"
    cmd = [compiler, "-shared", "-fPIC", "-std=gnu++17", *flags,
           f"-I{root}/include", f"-I{llvm}/include", wrapper,
           f"{root}/lib/Runtime/Quantize.cpp", f"{root}/lib/Runtime/DType.cpp",
           "-o", lib, f"-L{llvm}/lib", "-lLLVM", f"-Wl,-rpath,{llvm}/lib"]
    subprocess.run(cmd, check=True)
    so = ctypes.CDLL(lib)
    so.tfm_quantize_q4_k.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_int64]
    return so.tfm_quantize_q4_k


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


if args.write_golden:
    w = golden_rows()
    blocks = np.stack([llama_cpp(r) for r in w])
    np.savez_compressed(GOLDEN, w=w, blocks=blocks)
    print(f"wrote {GOLDEN}: w {w.shape}, blocks {blocks.shape}")

data = rows()
specials = special_rows()
expected = [llama_cpp(r) for _, r in data]
ok = True

if os.path.exists(GOLDEN):
    g = np.load(GOLDEN)
    same = all(np.array_equal(llama_cpp(r), b)
               for r, b in zip(g["w"], g["blocks"]))
    print(f"q4_k-golden.npz: {len(g['w'])} rows, stored blocks "
          f"{'are' if same else 'are NOT'} llama.cpp's")
    ok &= same

# numpy: the whole set as one batch per length (as tests call it), and the
# special rows one at a time.
got = {}
for length in sorted({r.size for _, r in data}):
    idx = [i for i, (_, r) in enumerate(data) if r.size == length]
    batch = q4_k_ref.quantize_q4_k(np.stack([data[i][1] for i in idx]))
    for i, b in zip(idx, batch):
        got[i] = b
ok &= report("numpy quantize_q4_k",
             [(data[i][0], np.array_equal(got[i], expected[i]))
              for i in range(len(data))])
with np.errstate(all="ignore"):  # inf dmin * 0: NaN, in ggml too
    deq = [np.array_equal(q4_k_ref.dequantize_q4_k(e, (e.size // 144 * 256,)),
                          llama_cpp_dequantize(e), equal_nan=True)
           for e in expected]
print(f"numpy dequantize_q4_k: {sum(deq)}/{len(deq)} rows as "
      f"dequantize_row_q4_K")
ok &= all(deq)
sm = sum(np.array_equal(q4_k_ref.quantize_q4_k(r), llama_cpp(r))
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
            fn = build_cxx(compiler, flags, tmp,
                           tag.replace(" ", "_").replace("+", "p"))
            # gcc ignores `#pragma STDC FP_CONTRACT OFF` in C++ and fuses by
            # default where FMA exists: report, but do not fail on it.
            required = not (os.path.basename(compiler).startswith("g++")
                            and "-march=native" in flags)
            good = report(f"C++ quantizeQ4_K [{tag}]" +
                          ("" if required else " (not required)"),
                          [(kind, np.array_equal(call(fn, r), e))
                           for (kind, r), e in zip(data, expected)])
            ok &= good or not required
            sm = sum(np.array_equal(call(fn, r), llama_cpp(r))
                     for r in specials)
            print(f"  NaN/inf rows (not required): {sm}/{len(specials)} "
                  f"match, no crash")

print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)

"""Q8_0, Q4_0 and K-format weights (transformer-runner --quantize
q8_0|q4_0|q4_k|q5_k|q6_k) against llama.cpp's quantizer (gguf-py's numpy
port of it, pinned in the reference venv; for the K formats, which gguf-py
cannot quantize, q4_k_ref.py's, q5_k_ref.py's and q6_k_ref.py's ports,
checked against llama.cpp's own output). FORMAT is q8_0 (the default),
q4_0, q4_k, q5_k or q6_k (the K formats' super-blocks of 256 need larger K:
the model's D is 256 and its hidden width 512, the identity's K 512).

  q8_0.py model DIR S [FORMAT]
                           a small model (linear + bias, ReLU, an out_in
                           linear with K = 288 > one 256-step panel, residual,
                           LM head of 100 columns) for S tokens: DIR/model.mlir,
                           DIR/w.safetensors, DIR/x.npy; DIR/dequantized.safetensors
                           (the same weights quantized by llama.cpp's rules and
                           dequantized), DIR/expected.npy (the model in
                           float64 on them) and DIR/expected-int8.npy (the
                           same with each quantized linear's input quantized
                           to int8 per block of 32, as --pipeline-options
                           int8-dot=1 defines it)
  q8_0.py identity DIR [FORMAT]
                           y = I W for weights of assorted magnitudes (zero,
                           tiny, subnormal-scale and large blocks): y is the
                           dequantized W exactly; DIR/expected.npy is
                           gguf-py's dequantize(quantize(W))
  q8_0.py close A B TOL    max |A - B| <= TOL * max |B|
  q8_0.py exact A B        A and B bit for bit
"""
import os
import sys

import numpy as np
from gguf import GGMLQuantizationType, quants
from safetensors.numpy import save_file

D, HIDDEN, VOCAB = 64, 288, 100


FORMAT = GGMLQuantizationType.Q8_0
K_FORMATS = (GGMLQuantizationType.Q4_K, GGMLQuantizationType.Q5_K,
             GGMLQuantizationType.Q6_K)


def llama_cpp_q8_0(w):
    """The weights llama.cpp's Q8_0 (or FORMAT) stores for w, along its last
    dimension, dequantized (the integer times the f16 scale, exact in
    float32)."""
    w = np.ascontiguousarray(w, np.float32)
    if FORMAT in K_FORMATS:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import q4_k_ref
        import q5_k_ref
        import q6_k_ref
        packed = {GGMLQuantizationType.Q4_K: q4_k_ref.quantize_q4_k,
                  GGMLQuantizationType.Q5_K: q5_k_ref.quantize_q5_k,
                  GGMLQuantizationType.Q6_K: q6_k_ref.quantize_q6_k}[FORMAT](w)
    else:
        packed = quants.quantize(w, FORMAT)
    return quants.dequantize(packed, FORMAT).reshape(w.shape)


def set_format(name):
    global FORMAT, D, HIDDEN
    FORMAT = {"q8_0": GGMLQuantizationType.Q8_0,
              "q4_0": GGMLQuantizationType.Q4_0,
              "q4_k": GGMLQuantizationType.Q4_K,
              "q5_k": GGMLQuantizationType.Q5_K,
              "q6_k": GGMLQuantizationType.Q6_K}[name]
    if FORMAT in K_FORMATS:
        D, HIDDEN = 256, 512


def int8_activations(x):
    """x with each block of 32 along its last dimension quantized to int8 as
    tfm's int8 kernels do (d = amax / 127 and its inverse in float32, q =
    roundeven(x * (1 / d))), dequantized."""
    b = x.astype(np.float32).reshape(*x.shape[:-1], -1, 32)
    d = (np.max(np.abs(b), axis=-1, keepdims=True) / np.float32(127)).astype(np.float32)
    inv = np.where(d != 0, np.float32(1) / np.where(d != 0, d, 1), 0).astype(np.float32)
    q = np.round((b * inv).astype(np.float32))   # numpy rounds half to even
    return (q.astype(np.float64) * d).reshape(x.shape)


def model(out, s):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(8)
    w = {
        "w1": rng.standard_normal((D, HIDDEN)).astype(np.float32) * 0.2,
        "b1": rng.standard_normal(HIDDEN).astype(np.float32) * 0.1,
        "w2": rng.standard_normal((D, HIDDEN)).astype(np.float32) * 0.1,
        "head": rng.standard_normal((VOCAB, D)).astype(np.float32) * 0.3,
    }
    x = rng.standard_normal((1, s, D)).astype(np.float32)
    save_file(w, f"{out}/w.safetensors")
    np.save(f"{out}/x.npy", x)
    # Quantized along K: w1 is in_out [K, N], so along its columns.
    dq = dict(w)
    dq["w1"] = llama_cpp_q8_0(w["w1"].T).T.copy()
    dq["w2"] = llama_cpp_q8_0(w["w2"])
    dq["head"] = llama_cpp_q8_0(w["head"])
    save_file(dq, f"{out}/dequantized.safetensors")
    f = {k: v.astype(np.float64) for k, v in dq.items()}
    h = np.maximum(x @ f["w1"] + f["b1"], 0.0)
    r = x + h @ f["w2"].T
    np.save(f"{out}/expected.npy", r @ f["head"].T)
    # On int8 activations: each quantized linear reads its input quantized
    # (the float32 values tfm holds, so that rounding sees the same numbers
    # up to the f32 chain's rounding).
    h = np.maximum(int8_activations(x) @ f["w1"] + f["b1"], 0.0)
    r = x + int8_activations(h) @ f["w2"].T
    np.save(f"{out}/expected-int8.npy", int8_activations(r) @ f["head"].T)
    t = f"tensor<1x{s}x"
    with open(f"{out}/model.mlir", "w") as m:
        m.write(f"""func.func @forward(%x: {t}{D}xf32> {{tfm.input = "x"}},
    %w1: tensor<{D}x{HIDDEN}xf32> {{tfm.param = "w1"}},
    %b1: tensor<{HIDDEN}xf32> {{tfm.param = "b1"}},
    %w2: tensor<{D}x{HIDDEN}xf32> {{tfm.param = "w2"}},
    %head: tensor<{VOCAB}x{D}xf32> {{tfm.param = "head"}})
    -> ({t}{VOCAB}xf32> {{tfm.output = "logits"}}) {{
  %h = tfm.linear %x, %w1, %b1 : ({t}{D}xf32>, tensor<{D}x{HIDDEN}xf32>, tensor<{HIDDEN}xf32>) -> {t}{HIDDEN}xf32>
  %a = tfm.relu %h : ({t}{HIDDEN}xf32>) -> {t}{HIDDEN}xf32>
  %z = tfm.linear %a, %w2 {{layout = #tfm.layout<out_in>}} : ({t}{HIDDEN}xf32>, tensor<{D}x{HIDDEN}xf32>) -> {t}{D}xf32>
  %r = tfm.residual_add %x, %z : ({t}{D}xf32>, {t}{D}xf32>) -> {t}{D}xf32>
  %l = tfm.lm_head %r, %head : ({t}{D}xf32>, tensor<{VOCAB}x{D}xf32>) -> {t}{VOCAB}xf32>
  return %l : {t}{VOCAB}xf32>
}}
""")


def identity(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)
    n, k = 40, 512 if FORMAT in K_FORMATS else 128
    w = rng.standard_normal((n, k)).astype(np.float32)
    w[0, :32] = 0.0                   # an all-zero block: scale 0
    w[1, :32] *= 1e-6                 # a scale far below 2^-14: f16 subnormal
    w[2, :32] *= 3e4                  # large weights
    w[3, 32:64] = np.float32(0.5)     # a constant block: every value 127
    w[5, 64:96] = -w[5, 64:96]        # a negative extreme: Q4_0's d > 0
    w[6, 96:128] = np.float32(-0.25)  # equal magnitudes: the first decides
    w[4, :] = np.round(w[4, :] * 127) / 127   # ties near x.5 after scaling
    if k > 128:                       # the K formats' sub- and super-blocks
        w[7, 256:] = 0.0              # an all-zero super-block
        w[8, 288:320] *= 1e3          # one sub-block far above the rest
        w[9, :] = np.abs(w[9, :])     # no negative weight: min 0
        w[10, 300:400] = np.float32(2.0)
    save_file({"w": w}, f"{out}/w.safetensors")
    np.save(f"{out}/x.npy", np.eye(k, dtype=np.float32)[None])
    np.save(f"{out}/expected.npy", llama_cpp_q8_0(w).T[None])
    with open(f"{out}/model.mlir", "w") as m:
        m.write(f"""func.func @forward(%x: tensor<1x{k}x{k}xf32> {{tfm.input = "x"}},
    %w: tensor<{n}x{k}xf32> {{tfm.param = "w"}}) -> (tensor<1x{k}x{n}xf32> {{tfm.output = "y"}}) {{
  %y = tfm.linear %x, %w {{layout = #tfm.layout<out_in>}} : (tensor<1x{k}x{k}xf32>, tensor<{n}x{k}xf32>) -> tensor<1x{k}x{n}xf32>
  return %y : tensor<1x{k}x{n}xf32>
}}
""")


def close(a, b, tol):
    a, b = np.load(a), np.load(b)
    err = float(np.max(np.abs(a.astype(np.float64) - b)))
    scale = float(np.max(np.abs(b)))
    print(f"max error {err:.3g} of max |expected| {scale:.3g} "
          f"(tolerance {float(tol):g})")
    if a.shape != b.shape or not err <= float(tol) * scale:
        sys.exit("FAIL: mismatch")
    print("PASS")


def exact(a, b):
    """Equal value for value (a weight of 0 may be +0 or -0: a block whose
    f16 scale underflows to 0 dequantizes to q * 0)."""
    a, b = np.load(a), np.load(b)
    if a.shape != b.shape:
        sys.exit(f"FAIL: shape {a.shape}, expected {b.shape}")
    bad = np.argwhere(a != b.astype(np.float32))
    if len(bad):
        sys.exit(f"FAIL: {len(bad)} values differ, first at {bad[0].tolist()}"
                 f": {a[tuple(bad[0])]} vs {b[tuple(bad[0])]}")
    print("PASS: exactly")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd in ("model", "identity") and len(args) > (2 if cmd == "model" else 1):
        set_format(args.pop())
    {"model": lambda: model(args[0], int(args[1])),
     "identity": lambda: identity(args[0]),
     "close": lambda: close(*args),
     "exact": lambda: exact(*args)}[cmd]()

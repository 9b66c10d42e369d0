"""llama.cpp's Q4_K quantizer in numpy: a port of quantize_row_q4_K_ref (and
its helpers make_qkx2_quants, nearest_int and the 6-bit scale packing that
get_scale_min_k4 unpacks) from ggml/src/ggml-quants.c, bit for bit --
checked against llama.cpp's own quantize_row_q4_K_ref by
bench/check-q4_k-quantizer.py, and against its output stored in
q4_k-golden.npz. gguf-py has a Q4_K dequantizer but no quantizer.

  quantize_q4_k(w)              float32 [..., K] (K a multiple of 256) ->
                                uint8 [..., K // 256 * 144]: ggml's
                                block_q4_K super-blocks (f16 d, f16 dmin,
                                12 bytes of 6-bit scales and mins, 128 bytes
                                of 4-bit q), as llama.cpp writes them
  dequantize_q4_k(blocks, shape)
                                the float32 weights those blocks stand for
                                (gguf-py's dequantizer)

As a script (q4_k.test; q5_k_ref.py and q6_k_ref.py share these
commands):
  q4_k_ref.py check-golden GOLDEN.npz
                                quantize_q4_k(w) is the golden file's blocks
                                (llama.cpp's own output for its rows w)
  q4_k_ref.py golden-identity GOLDEN.npz DIR
                                y = I W for the golden rows W (out_in,
                                [12, 512]): DIR/model.mlir, w.safetensors,
                                x.npy and expected.npy, the dequantized
                                golden blocks (what tfm's quantizer must
                                store for W)

Bit for bit means every float32 operation is ggml's, in its order: sums are
sequential left to right (never numpy's pairwise np.sum), each product and
sum rounded on its own (ggml's x86-64 build has no FMA), and rounding to an
integer is nearest_int's (x + 1.5 * 2^23 in float32, ties to even -- not
roundf). The work is vectorised over all sub-blocks at once; the loops run
over the 32 weights of a sub-block and ggml's 21 trial scales.
"""
import numpy as np

F = np.float32
QK_K = 256       # weights per super-block
SUB = 32         # weights per sub-block
BLOCK_BYTES = 144


def nearest_int(x):
    """ggml's nearest_int: x (float32) + 12582912 in float32, whose low 23
    mantissa bits then hold the rounded integer + 2^22. Ties to even; exact
    for |x| < 2^22, some integer in [-2^22, 2^22) otherwise (NaN included)."""
    biased = np.asarray(x, F) + F(12582912.0)
    return (biased.view(np.int32) & 0x007FFFFF) - 0x00400000


def _sum(terms):
    """sum over the last axis as ggml's `float s = 0; s += t[i]` does."""
    s = np.zeros(terms.shape[:-1], F)
    for i in range(terms.shape[-1]):
        s = s + terms[..., i]
    return s


def make_qkx2_quants(x, w, nmax=15, rmin=-1.0, rdelta=0.1, nstep=20):
    """ggml's make_qkx2_quants (squared error) for each row of x [S, n] with
    importance w [S, n]: (L [S, n] int, scale [S], the_min [S]), x ~ scale *
    L - the_min. From the range [min(x, 0), max(x)] in nmax steps, then
    nstep + 1 trial step counts nmax + rmin + rdelta * i across the range
    from the best min so far, each solved by weighted least squares for a
    scale and min; the least weighted error wins (the first of equals)."""
    rmin, rdelta = F(rmin), F(rdelta)
    n = x.shape[-1]
    lo, hi = x[:, 0].copy(), x[:, 0].copy()
    sum_w = w[:, 0].copy()
    sum_x = sum_w * x[:, 0]
    for i in range(1, n):
        lo = np.where(x[:, i] < lo, x[:, i], lo)
        hi = np.where(x[:, i] > hi, x[:, i], hi)
        sum_w = sum_w + w[:, i]
        sum_x = sum_x + w[:, i] * x[:, i]
    lo = np.where(lo > 0, F(0), lo)
    flat = hi == lo           # ggml returns L = 0, scale 0, the_min = -min

    iscale = F(nmax) / (hi - lo)
    scale = F(1) / iscale
    L = np.clip(nearest_int(iscale[:, None] * (x - lo[:, None])), 0, nmax)
    diff = scale[:, None] * L.astype(F) + lo[:, None] - x
    best = _sum(w * (diff * diff))
    for step in range(nstep + 1):
        # As in ggml, a better trial's min moves the range the next ones
        # step across.
        iscale = (rmin + rdelta * F(step) + F(nmax)) / (hi - lo)
        laux = np.clip(nearest_int(iscale[:, None] * (x - lo[:, None])), 0,
                       nmax)
        l = laux.astype(F)
        sum_l = _sum(w * l)
        sum_l2 = _sum(w * l * l)
        sum_xl = _sum(w * l * x)
        det = sum_w * sum_l2 - sum_l * sum_l
        this_scale = (sum_w * sum_xl - sum_x * sum_l) / det
        this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det
        positive = this_min > 0
        this_min = np.where(positive, F(0), this_min)
        this_scale = np.where(positive, sum_xl / sum_l2, this_scale)
        diff = this_scale[:, None] * l + this_min[:, None] - x
        err = _sum(w * (diff * diff))
        better = ~flat & (det > 0) & (err < best)
        L = np.where(better[:, None], laux, L)
        best = np.where(better, err, best)
        scale = np.where(better, this_scale, scale)
        lo = np.where(better, this_min, lo)
    L = np.where(flat[:, None], 0, L)
    scale = np.where(flat, F(0), scale)
    return L, scale, -lo


def quantize_super_blocks(w, nmax, rmin, nstep):
    """What quantize_row_q4_K_ref and quantize_row_q5_K_ref share, for w
    [..., K] along its last axis, q in [0, nmax] (15 or 31; rmin and nstep
    make_qkx2_quants' for it): (lead, w's leading shape; header uint8
    [blocks, 16], f16 d, f16 dmin and the 12 bytes of 6-bit scales and mins;
    L int [blocks, 8, 32], each weight's q), for the format to pack L."""
    w = np.ascontiguousarray(w, F)
    if w.shape[-1] % QK_K:
        raise ValueError(f"last dimension {w.shape[-1]} is not a multiple "
                         f"of {QK_K}")
    lead = w.shape[:-1]
    x = w.reshape(-1, QK_K // SUB, SUB)      # [blocks, 8, 32]
    nb = x.shape[0]
    with np.errstate(all="ignore"):
        # Importance of each weight: the sub-block's RMS plus its magnitude.
        rms = np.sqrt(_sum(x * x) / F(32))
        imp = rms[..., None] + np.abs(x)
        L, scales, mins = make_qkx2_quants(x.reshape(-1, SUB),
                                           imp.reshape(-1, SUB), nmax=nmax,
                                           rmin=rmin, nstep=nstep)
        L = L.reshape(nb, 8, SUB)
        scales, mins = scales.reshape(nb, 8), mins.reshape(nb, 8)

        # The 6-bit scales and mins in units of the largest / 63; ggml's
        # `uint8_t ls = nearest_int(...)` keeps the int's low byte.
        max_scale = np.zeros(nb, F)
        max_min = np.zeros(nb, F)
        for j in range(8):
            max_scale = np.where(scales[:, j] > max_scale, scales[:, j],
                                 max_scale)
            max_min = np.where(mins[:, j] > max_min, mins[:, j], max_min)
        inv_scale = np.where(max_scale > 0, F(63) / max_scale, F(0))
        inv_min = np.where(max_min > 0, F(63) / max_min, F(0))
        ls = np.minimum(63, nearest_int(inv_scale[:, None] * scales) & 0xFF)
        lm = np.minimum(63, nearest_int(inv_min[:, None] * mins) & 0xFF)
        # f16 rounded to nearest even, as GGML_FP32_TO_FP16.
        d = (max_scale / F(63)).astype(np.float16)
        dmin = (max_min / F(63)).astype(np.float16)

        # Each weight again against the scale and min it is read with; a
        # sub-block whose scale is 0 keeps make_qkx2_quants' L.
        dj = d.astype(F)[:, None] * ls.astype(F)
        dmj = dmin.astype(F)[:, None] * lm.astype(F)
        requant = np.clip(nearest_int((x + dmj[..., None]) / dj[..., None]),
                          0, nmax)
        L = np.where((dj != 0)[..., None], requant, L)

    head = np.empty((nb, 16), np.uint8)
    head[:, 0:2] = d.astype("<f2").view(np.uint8).reshape(nb, 2)
    head[:, 2:4] = dmin.astype("<f2").view(np.uint8).reshape(nb, 2)
    # get_scale_min_k4's packing: sub-blocks 0-3 in the low 6 bits of bytes
    # j (scale) and j + 4 (min); 4-7 in the nibbles of bytes j + 4 and the
    # top 2 bits of bytes j - 4 and j.
    head[:, 4:8] = ls[:, :4] | ((ls[:, 4:] >> 4) << 6)
    head[:, 8:12] = lm[:, :4] | ((lm[:, 4:] >> 4) << 6)
    head[:, 12:16] = (ls[:, 4:] & 0xF) | ((lm[:, 4:] & 0xF) << 4)
    return lead, head, L


def quantize_q4_k(w):
    """ggml's block_q4_K bytes for w [..., K] along its last axis, as
    quantize_row_q4_K_ref writes them."""
    lead, head, L = quantize_super_blocks(w, nmax=15, rmin=-1.0, nstep=20)
    nb = len(head)
    out = np.empty((nb, BLOCK_BYTES), np.uint8)
    out[:, :16] = head
    # Sub-blocks 2i and 2i + 1 in the low and high nibbles of bytes
    # 32i..32i+31.
    pairs = L.reshape(nb, 4, 2, SUB)
    out[:, 16:] = (pairs[:, :, 0] | (pairs[:, :, 1] << 4)).reshape(nb, 128)
    return out.reshape(*lead, -1)


def dequantize_q4_k(blocks, shape):
    """The float32 weights [shape] that Q4_K `blocks` stand for (gguf-py's
    dequantizer, as ggml's dequantize_row_q4_K)."""
    from gguf import GGMLQuantizationType, quants
    b = np.ascontiguousarray(blocks, np.uint8).reshape(-1, BLOCK_BYTES)
    return quants.dequantize(b, GGMLQuantizationType.Q4_K).reshape(shape)


# The script's commands, shared with q5_k_ref.py and q6_k_ref.py: each
# takes the format's quantizer or dequantizer.
def check_golden(path, quantize=quantize_q4_k):
    golden = np.load(path)
    ours = quantize(golden["w"])
    bad = np.argwhere(np.any(ours != golden["blocks"], axis=-1)).ravel()
    if ours.shape != golden["blocks"].shape or len(bad):
        raise SystemExit(f"FAIL: rows {bad.tolist()} differ from llama.cpp's")
    print(f"PASS: {len(ours)} rows as llama.cpp quantizes them")


def golden_identity(path, out, dequantize=dequantize_q4_k):
    import os
    from safetensors.numpy import save_file
    os.makedirs(out, exist_ok=True)
    golden = np.load(path)
    w = np.ascontiguousarray(golden["w"], F)
    n, k = w.shape
    save_file({"w": w}, f"{out}/w.safetensors")
    np.save(f"{out}/x.npy", np.eye(k, dtype=F)[None])
    np.save(f"{out}/expected.npy",
            dequantize(golden["blocks"], w.shape).T[None])
    t = f"tensor<1x{k}x"
    with open(f"{out}/model.mlir", "w") as m:
        m.write(f"""func.func @forward(%x: {t}{k}xf32> {{tfm.input = "x"}},
    %w: tensor<{n}x{k}xf32> {{tfm.param = "w"}}) -> ({t}{n}xf32> {{tfm.output = "y"}}) {{
  %y = tfm.linear %x, %w {{layout = #tfm.layout<out_in>}} : ({t}{k}xf32>, tensor<{n}x{k}xf32>) -> {t}{n}xf32>
  return %y : {t}{n}xf32>
}}
""")


def script(quantize, dequantize):
    """Runs sys.argv's command (check-golden or golden-identity) for the
    format of `quantize` and `dequantize`."""
    import sys
    cmd, args = sys.argv[1], sys.argv[2:]
    {"check-golden": lambda path: check_golden(path, quantize),
     "golden-identity": lambda path, out: golden_identity(path, out,
                                                          dequantize),
     }[cmd](*args)


if __name__ == "__main__":
    script(quantize_q4_k, dequantize_q4_k)

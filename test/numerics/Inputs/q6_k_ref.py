"""llama.cpp's Q6_K quantizer in numpy: a port of quantize_row_q6_K_ref (and
its helpers make_qx_quants -- rmse_type 1, no importance given -- and
nearest_int, and the packing of ql, qh, the int8 scales and d) from
ggml/src/ggml-quants.c, bit for bit -- checked against llama.cpp's own
quantize_row_q6_K_ref by bench/check-q4_k-quantizer.py --format q6_k, and
against its output stored in q6_k-golden.npz. gguf-py has a Q6_K
dequantizer but no quantizer.

  quantize_q6_k(w)              float32 [..., K] (K a multiple of 256) ->
                                uint8 [..., K // 256 * 210]: ggml's
                                block_q6_K super-blocks (128 bytes of the
                                low 4 bits of q, 64 of its high 2 bits, 16
                                int8 scales, f16 d), as llama.cpp writes them
  dequantize_q6_k(blocks, shape)
                                the float32 weights those blocks stand for
                                (gguf-py's dequantizer)

As a script, as q4_k_ref.py (whose code it shares):
  q6_k_ref.py check-golden GOLDEN.npz
                                quantize_q6_k(w) is the golden file's blocks
                                (llama.cpp's own output for its rows w)
  q6_k_ref.py golden-identity GOLDEN.npz DIR
                                y = I W for the golden rows W (out_in,
                                [12, 512]): DIR/model.mlir, w.safetensors,
                                x.npy and expected.npy, the dequantized
                                golden blocks (what tfm's quantizer must
                                store for W)

Bit for bit means every float32 operation is ggml's, in its order, as in
q4_k_ref.py: sequential sums, each product rounded on its own, nearest_int's
rounding (ties to even). The work is vectorised over all sub-blocks of 16 at
once; the loops run over their 16 weights and ggml's 18 trial scales.
"""
import numpy as np

from q4_k_ref import F, QK_K, _sum, nearest_int, script

SUB = 16         # weights per sub-block
BLOCK_BYTES = 210
GROUP_MAX_EPS = F(1e-15)


def make_qx_quants(x, nmax=32):
    """ggml's make_qx_quants(n, nmax, x, L, rmse_type=1, qw=NULL) for each
    row of x [S, n]: (L [S, n] int in [0, 2 nmax), scale [S]), x ~ scale *
    (L - nmax). From L - nmax = round(-nmax x / max), max the signed weight
    of largest magnitude (the first of equals), then 18 trial step counts
    nmax + 0.1 is (is in [-9, 9] but 0), each with its least-squares scale
    (weights x^2); the largest sum(w x l)^2 / sum(w l^2) wins (the first of
    equals). Rows whose every |x| is below GROUP_MAX_EPS: L = 0, scale 0."""
    S, n = x.shape
    amax = np.zeros(S, F)
    mx = np.zeros(S, F)
    for i in range(n):
        ax = np.abs(x[:, i])
        bigger = ax > amax
        amax = np.where(bigger, ax, amax)
        mx = np.where(bigger, x[:, i], mx)
    zero = amax < GROUP_MAX_EPS
    w = x * x

    def trial(iscale):
        l = np.clip(nearest_int(iscale[:, None] * x), -nmax, nmax - 1)
        lf = l.astype(F)
        # As ggml's w*x[i]*l and w*l*l: left to right, l as a float.
        return l + nmax, _sum(w * x * lf), _sum(w * lf * lf)

    L, sum_lx, sum_l2 = trial(F(-nmax) / mx)
    scale = np.where(sum_l2 != 0, sum_lx / sum_l2, F(0))
    best = scale * sum_lx
    for step in range(-9, 10):
        if step == 0:
            continue
        laux, sum_lx, sum_l2 = trial(-(F(nmax) + F(0.1) * F(step)) / mx)
        better = (sum_l2 > 0) & (sum_lx * sum_lx > best * sum_l2)
        L = np.where(better[:, None], laux, L)
        scale = np.where(better, sum_lx / sum_l2, scale)
        best = np.where(better, scale * sum_lx, best)
    L = np.where(zero[:, None], 0, L)
    scale = np.where(zero, F(0), scale)
    return L, scale


def quantize_q6_k(w):
    """ggml's block_q6_K bytes for w [..., K] along its last axis, as
    quantize_row_q6_K_ref writes them."""
    w = np.ascontiguousarray(w, F)
    if w.shape[-1] % QK_K:
        raise ValueError(f"last dimension {w.shape[-1]} is not a multiple "
                         f"of {QK_K}")
    lead = w.shape[:-1]
    x = w.reshape(-1, QK_K // SUB, SUB)      # [blocks, 16, 16]
    nb = x.shape[0]
    with np.errstate(all="ignore"):
        L, scales = make_qx_quants(x.reshape(-1, SUB))
        L = L.reshape(nb, QK_K // SUB, SUB)
        scales = scales.reshape(nb, QK_K // SUB)

        # The signed scale of largest magnitude (the first of equals); a
        # super-block whose scales are all below GROUP_MAX_EPS is all zero.
        max_scale = np.zeros(nb, F)
        max_abs = np.zeros(nb, F)
        for j in range(QK_K // SUB):
            a = np.abs(scales[:, j])
            bigger = a > max_abs
            max_abs = np.where(bigger, a, max_abs)
            max_scale = np.where(bigger, scales[:, j], max_scale)
        zero = max_abs < GROUP_MAX_EPS

        # The int8 scales in units of d = -max_scale / 128: ggml's
        # `int8_t = MIN(127, nearest_int(...))`, the int's low byte.
        iscale = F(-128) / max_scale
        # f16 rounded to nearest even, as GGML_FP32_TO_FP16.
        d = (F(1) / iscale).astype(np.float16)
        sc = ((np.minimum(127, nearest_int(iscale[:, None] * scales)) & 0xFF)
              ^ 0x80) - 0x80

        # Each weight again against the scale it is read with; a sub-block
        # whose scale is 0 keeps make_qx_quants' L.
        dj = d.astype(F)[:, None] * sc.astype(F)
        requant = np.clip(nearest_int(x / dj[..., None]), -32, 31) + 32
        L = np.where((dj != 0)[..., None], requant, L)

    d = np.where(zero, np.float16(0), d)
    sc = np.where(zero[:, None], 0, sc)
    L = np.where(zero[:, None, None], 0, L).astype(np.uint8)

    out = np.empty((nb, BLOCK_BYTES), np.uint8)
    # Per half of 128: weights i, i + 32, i + 64, i + 96 (i < 32) keep their
    # low 4 bits in the low nibble of ql[i], of ql[i + 32], the high nibble
    # of ql[i], of ql[i + 32]; their high 2 bits in bits 0-1, 2-3, 4-5, 6-7
    # of qh[i].
    q = L.reshape(nb, 2, 4, 32)
    lo, hi = q & 0xF, q >> 4
    ql = np.concatenate([lo[:, :, 0] | (lo[:, :, 2] << 4),
                         lo[:, :, 1] | (lo[:, :, 3] << 4)], axis=-1)
    qh = (hi[:, :, 0] | (hi[:, :, 1] << 2) | (hi[:, :, 2] << 4) |
          (hi[:, :, 3] << 6))
    out[:, 0:128] = ql.reshape(nb, 128)
    out[:, 128:192] = qh.reshape(nb, 64)
    out[:, 192:208] = sc.astype(np.int8).view(np.uint8)
    out[:, 208:210] = d.astype("<f2").view(np.uint8).reshape(nb, 2)
    return out.reshape(*lead, -1)


def dequantize_q6_k(blocks, shape):
    """The float32 weights [shape] that Q6_K `blocks` stand for (gguf-py's
    dequantizer, as ggml's dequantize_row_q6_K)."""
    from gguf import GGMLQuantizationType, quants
    b = np.ascontiguousarray(blocks, np.uint8).reshape(-1, BLOCK_BYTES)
    return quants.dequantize(b, GGMLQuantizationType.Q6_K).reshape(shape)


if __name__ == "__main__":
    script(quantize_q6_k, dequantize_q6_k)

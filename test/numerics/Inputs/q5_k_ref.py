"""llama.cpp's Q5_K quantizer in numpy: a port of quantize_row_q5_K_ref from
ggml/src/ggml-quants.c, bit for bit -- checked against llama.cpp's own
quantize_row_q5_K_ref by bench/check-q4_k-quantizer.py --format q5_k, and
against its output stored in q5_k-golden.npz. gguf-py has a Q5_K
dequantizer but no quantizer.

quantize_row_q5_K_ref is quantize_row_q4_K_ref with q in [0, 31]:
make_qkx2_quants with nmax 31, rmin -0.5 and nstep 15 (16 trial step counts
from 30.5 to 32, by 0.1), the same 6-bit scales and mins, d and dmin, and
each weight requantized into [0, 31]. That shared part is q4_k_ref.py's
(quantize_super_blocks); this file packs its q: the low 4 bits as Q4_K's,
the fifth bits in qh.

  quantize_q5_k(w)              float32 [..., K] (K a multiple of 256) ->
                                uint8 [..., K // 256 * 176]: ggml's
                                block_q5_K super-blocks (f16 d, f16 dmin,
                                12 bytes of 6-bit scales and mins, 32 bytes
                                qh of the fifth bits of q, 128 bytes of
                                their low 4 bits), as llama.cpp writes them
  dequantize_q5_k(blocks, shape)
                                the float32 weights those blocks stand for
                                (gguf-py's dequantizer)

As a script, as q4_k_ref.py (whose code it shares):
  q5_k_ref.py check-golden GOLDEN.npz
                                quantize_q5_k(w) is the golden file's blocks
                                (llama.cpp's own output for its rows w)
  q5_k_ref.py golden-identity GOLDEN.npz DIR
                                y = I W for the golden rows W (out_in,
                                [12, 512]): DIR/model.mlir, w.safetensors,
                                x.npy and expected.npy, the dequantized
                                golden blocks (what tfm's quantizer must
                                store for W)

Bit for bit means every float32 operation is ggml's, in its order, as in
q4_k_ref.py: sequential sums, each product rounded on its own, nearest_int's
rounding (ties to even). The work is vectorised over all sub-blocks of 32
at once; the loops run over their 32 weights and ggml's 16 trial scales.
"""
import numpy as np

from q4_k_ref import SUB, quantize_super_blocks, script

BLOCK_BYTES = 176


def quantize_q5_k(w):
    """ggml's block_q5_K bytes for w [..., K] along its last axis, as
    quantize_row_q5_K_ref writes them."""
    lead, head, L = quantize_super_blocks(w, nmax=31, rmin=-0.5, nstep=15)
    nb = len(head)
    out = np.empty((nb, BLOCK_BYTES), np.uint8)
    out[:, :16] = head
    # Sub-blocks 2i and 2i + 1: the low 4 bits of their weights u in the low
    # and high nibbles of qs[32i + u], their fifth bits in bits 2i and
    # 2i + 1 of qh[u].
    L = L.astype(np.uint8)
    pairs = (L & 0xF).reshape(nb, 4, 2, SUB)
    high = (L >> 4).reshape(nb, 8, SUB)
    qh = np.zeros((nb, SUB), np.uint8)
    for s in range(8):
        qh |= high[:, s] << np.uint8(s)
    out[:, 16:48] = qh
    out[:, 48:] = (pairs[:, :, 0] | (pairs[:, :, 1] << 4)).reshape(nb, 128)
    return out.reshape(*lead, -1)


def dequantize_q5_k(blocks, shape):
    """The float32 weights [shape] that Q5_K `blocks` stand for (gguf-py's
    dequantizer, as ggml's dequantize_row_q5_K)."""
    from gguf import GGMLQuantizationType, quants
    b = np.ascontiguousarray(blocks, np.uint8).reshape(-1, BLOCK_BYTES)
    return quants.dequantize(b, GGMLQuantizationType.Q5_K).reshape(shape)


if __name__ == "__main__":
    script(quantize_q5_k, dequantize_q5_k)

//===- Quantize.h - weights in quantized block formats ----------*- C++ -*-===//
//
// The block formats tfm binds quantized weights in (tfm.param_quant; see
// docs/design.md, "Quantized weights"). A row of K weights is cut into
// blocks along K; each block keeps its integers and a scale, and the weight
// it stands for is integer * scale, exactly representable in f32.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_QUANTIZE_H
#define TFM_RUNTIME_QUANTIZE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::tfm::runtime {

/// Q8_0 (llama.cpp's name): blocks of 32 weights, each an int8 times one f16
/// scale d = max |w| / 127 of its block.
inline constexpr int64_t kQ8_0BlockSize = 32;

/// Quantizes `k` weights (k a multiple of kQ8_0BlockSize) to Q8_0: the
/// integers to `values` (k of them), the scales' f16 bits to `scales` (k / 32
/// of them). Bit for bit what llama.cpp's reference quantizer
/// (quantize_row_q8_0_ref) stores for the same row: d rounded to f16 to
/// nearest even, each weight times 1/d (the f32 reciprocal of the unrounded
/// d) rounded half away from zero.
void quantizeQ8_0(const float *weights, int64_t k, int8_t *values,
                  uint16_t *scales);

/// The weights a Q8_0 row stands for: values[i] * scale of its block.
void dequantizeQ8_0(const int8_t *values, const uint16_t *scales, int64_t k,
                    float *weights);

/// Q4_0 (llama.cpp's name): blocks of 32 weights, each (q - 8) * d for a
/// 4-bit q and one f16 scale d per block.
inline constexpr int64_t kQ4_0BlockSize = 32;

/// Quantizes `k` weights (a multiple of 32) to Q4_0: per block, 16 bytes
/// to `values` (byte u holding weight u in its low nibble and weight u + 16
/// in its high one) and the scale's f16 bits to `scales`. Bit for bit
/// llama.cpp's quantize_row_q4_0_ref: d = (the block's weight of largest
/// magnitude, the first of equals) / -8, rounded to f16; q = min(15,
/// trunc(w * (1/d) + 8.5)), with the reciprocal of the unrounded d.
void quantizeQ4_0(const float *weights, int64_t k, uint8_t *values,
                  uint16_t *scales);

/// The weights a Q4_0 row stands for: (q - 8) * its block's scale.
void dequantizeQ4_0(const uint8_t *values, const uint16_t *scales, int64_t k,
                    float *weights);

/// How a weight file's tensor is stored when not as plain elements: in
/// llama.cpp's block formats, as GGUF files carry them (tfm/Runtime/Gguf.h).
/// A row of K weights (K a multiple of the format's block) is a sequence of
/// blocks, each `getBlockBytes` bytes for `getBlockWeights` weights, in
/// ggml's layout:
/// - Q8_0: f16 d, int8 q[32]; w = q * d.
/// - Q4_0: f16 d, uint8 q[16] (weight u in the low nibble of byte u, weight
///   u + 16 in its high one); w = (q - 8) * d.
/// - Q4_K: a super-block of 256 in 8 sub-blocks of 32: f16 d, f16 dmin, 12
///   bytes of 6-bit sub-block scales and mins, uint8 q[128] (sub-blocks 2i
///   and 2i + 1 in the low and high nibbles of bytes 32i..32i+31);
///   w = d * scale * q - dmin * min.
/// - Q5_K: Q4_K's header, uint8 qh[32] (the fifth bit of weight l of
///   sub-block s in bit s of qh[l]), uint8 q[128]; w as Q4_K's with q + 16
///   qh-bit.
/// - Q6_K: uint8 ql[128] (low 4 bits), uint8 qh[64] (high 2 bits), int8
///   scales[16] (one per 16 weights), f16 d; w = d * scale * (q - 32).
/// - Q4_1 (read only, dequantized when bound): f16 d, f16 m, uint8 q[16]
///   (weights j and j + 16 in the low and high nibbles of byte j);
///   w = q * d + m.
/// - Q5_1 (likewise): f16 d, f16 m, the fifth bits as a little-endian
///   uint32 (weight j's bit j), uint8 q[16] as Q4_1's; w = q * d + m.
enum class BlockFormat : uint8_t {
  None,
  Q8_0,
  Q4_0,
  Q4_K,
  Q5_K,
  Q6_K,
  Q4_1,
  Q5_1
};

/// Whether tfm's kernels read `format`'s blocks (tfm.param_quant); the
/// others (Q4_1, Q5_1: a min per block) are dequantized when bound.
bool isHeldBlockFormat(BlockFormat format);

/// Weights per block (32, or 256 for the K formats' super-blocks).
int64_t getBlockWeights(BlockFormat format);
/// Bytes per block.
int64_t getBlockBytes(BlockFormat format);
/// llama.cpp's spelling: "Q8_0", "Q4_K", ...
llvm::StringRef getBlockFormatName(BlockFormat format);

/// The `k` weights of a row stored as `format` blocks at `blocks` (k a
/// multiple of the format's block), exactly as ggml's dequantize_row_*:
/// every product rounded once to f32, in ggml's order.
void dequantizeBlocks(BlockFormat format, const char *blocks, int64_t k,
                      float *weights);

/// Quantizes `k` weights (a multiple of 256) to Q4_K: k / 256 super-blocks
/// of 144 bytes at `blocks`, in the layout above. Bit for bit llama.cpp's
/// quantize_row_q4_K_ref: each sub-block of 32 gets a scale and min fitted
/// by weighted least squares (make_qkx2_quants); they are rounded to 6 bits
/// in units of the super-block's largest / 63, whose f16 (rounded to nearest
/// even) are d and dmin; each weight is then requantized to the nearest q
/// (ties to even) in [0, 15] for the scale and min it will be read with.
/// Every float operation is ggml's, in its order, none fused. NaN or
/// infinite weights give some blocks (not necessarily ggml's).
void quantizeQ4_K(const float *weights, int64_t k, char *blocks);

/// Quantizes `k` weights (a multiple of 256) to Q5_K: k / 256 super-blocks
/// of 176 bytes at `blocks`, in the layout above. Bit for bit llama.cpp's
/// quantize_row_q5_K_ref, which is quantize_row_q4_K_ref's with q in [0,
/// 31]: make_qkx2_quants fits each sub-block of 32 from the range in 31
/// steps and then 16 step counts from 30.5 to 32 (by 0.1); the 6-bit scales
/// and mins, d and dmin are Q4_K's; each weight is then requantized to the
/// nearest q (ties to even) in [0, 31], its low 4 bits kept in q and its
/// fifth in qh. Every float operation is ggml's, in its order, none fused.
/// NaN or infinite weights give some blocks (not necessarily ggml's).
void quantizeQ5_K(const float *weights, int64_t k, char *blocks);

/// Quantizes `k` weights (a multiple of 256) to Q6_K: k / 256 super-blocks
/// of 210 bytes at `blocks`, in the layout above. Bit for bit llama.cpp's
/// quantize_row_q6_K_ref: each sub-block of 16 gets a signed scale fitted by
/// least squares weighted by w^2 (make_qx_quants; its largest weight at q -
/// 32 = -32), rounded to int8 in units of the super-block's largest / -128,
/// whose f16 (rounded to nearest even) is d; each weight is then
/// requantized to the nearest q (ties to even) in [0, 63] for the scale it
/// will be read with (all zero where every scale is below 1e-15). Every
/// float operation is ggml's, in its order, none fused. NaN or infinite
/// weights give some blocks (not necessarily ggml's).
void quantizeQ6_K(const float *weights, int64_t k, char *blocks);

/// llama.cpp's Q5_0 blocks (32 weights in 22 bytes: f16 d, the fifth bits
/// qh as a little-endian uint32, bytes qs holding weights j and j + 16 in
/// their low and high nibbles; w = d * (q - 16)) rewritten as Q8_0 blocks of
/// the same weights: the int8 q - 16 in [-16, 15] under the same d, so that
/// each weight dequantizes to the same product. `numBlocks` blocks from
/// `q5` to `q8`. (Q4_K_M and Q4_K_S files hold in Q5_0 the Q4_K tensors
/// whose rows 256 does not divide.)
void widenQ5_0ToQ8_0(const char *q5, int64_t numBlocks, char *q8);

/// Splits a row of blocks into the parts tfm binds them as: the integers
/// (`values`: k bytes for Q8_0, k / 2 for Q4_0, in quantizeQ8_0's and
/// quantizeQ4_0's order; Q4_K's in Q4_0's order, each sub-block of 32 as a
/// block: byte u holding its steps u and u + 16; Q5_K's and Q6_K's
/// unsigned q a byte a weight, in order) and the scales' f16 bits
/// (`scales`: k / 32 of them; Q4_K, Q5_K: each super-block's d and dmin, k
/// / 128; Q6_K: its d, k / 256). The K formats' sub-block scales go to
/// `subScales` (k / 16 bytes: Q4_K's and Q5_K's 6-bit sc, m per sub-block,
/// unpacked; Q6_K's signed scale of each 16; else unused).
void splitBlocks(BlockFormat format, const char *blocks, int64_t k,
                 uint8_t *values, uint16_t *scales, uint8_t *subScales);

/// `k` unsigned 6-bit q (Q6_K's values as splitBlocks gives them) in the
/// 6-bit layout of a column the int8 kernels read (mlir::tfm::
/// isSixBitValues): 24 bytes per block of 32, k * 3 / 4 in all.
void packSixBitValues(const uint8_t *q, int64_t k, uint8_t *out);

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_QUANTIZE_H

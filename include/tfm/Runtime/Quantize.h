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

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_QUANTIZE_H

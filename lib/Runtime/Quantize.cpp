//===- Quantize.cpp - weights in quantized block formats ------------------===//
#include "tfm/Runtime/Quantize.h"

#include "tfm/Runtime/DType.h"

#include <algorithm>
#include <cmath>

using namespace mlir::tfm;

void runtime::quantizeQ8_0(const float *weights, int64_t k, int8_t *values,
                           uint16_t *scales) {
  for (int64_t block = 0; block < k / kQ8_0BlockSize; ++block) {
    const float *w = weights + block * kQ8_0BlockSize;
    // As llama.cpp's MAX(a, b): a NaN weight propagates as it does there.
    float amax = 0.0f;
    for (int64_t i = 0; i < kQ8_0BlockSize; ++i) {
      float magnitude = std::fabs(w[i]);
      amax = amax > magnitude ? amax : magnitude;
    }
    float d = amax / 127.0f;
    float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    scales[block] = floatToHalf(d);
    // roundf(x) (half away from zero) as trunc(x + copysign(0.5, x)) in
    // double, where the sum is exact: the same integer, without a libm
    // call per weight.
    for (int64_t i = 0; i < kQ8_0BlockSize; ++i) {
      double x = w[i] * inverse;
      values[block * kQ8_0BlockSize + i] =
          static_cast<int8_t>(static_cast<int>(x + std::copysign(0.5, x)));
    }
  }
}

void runtime::quantizeQ4_0(const float *weights, int64_t k, uint8_t *values,
                           uint16_t *scales) {
  constexpr int64_t half = kQ4_0BlockSize / 2;
  for (int64_t block = 0; block < k / kQ4_0BlockSize; ++block) {
    const float *w = weights + block * kQ4_0BlockSize;
    // The signed weight of largest magnitude; the first of equals, and a
    // NaN never replaces it, as in llama.cpp's loop.
    float amax = 0.0f, max = 0.0f;
    for (int64_t i = 0; i < kQ4_0BlockSize; ++i)
      if (amax < std::fabs(w[i])) {
        amax = std::fabs(w[i]);
        max = w[i];
      }
    float d = max / -8;
    float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    scales[block] = floatToHalf(d);
    uint8_t *q = values + block * half;
    for (int64_t u = 0; u < half; ++u) {
      float x0 = w[u] * inverse, x1 = w[half + u] * inverse;
      // llama.cpp's MIN(15, (int8_t)(x + 8.5f)): the sum truncated to an
      // integer (it lies in [0.5, 16.5] for finite weights).
      int q0 = std::min(15, int(static_cast<int8_t>(x0 + 8.5f)));
      int q1 = std::min(15, int(static_cast<int8_t>(x1 + 8.5f)));
      q[u] = uint8_t(q0) | uint8_t(q1 << 4);
    }
  }
}

void runtime::dequantizeQ4_0(const uint8_t *values, const uint16_t *scales,
                             int64_t k, float *weights) {
  constexpr int64_t half = kQ4_0BlockSize / 2;
  for (int64_t i = 0; i < k; ++i) {
    int64_t block = i / kQ4_0BlockSize, u = i % kQ4_0BlockSize;
    uint8_t byte = values[block * half + u % half];
    int q = u < half ? byte & 0xf : byte >> 4;
    weights[i] = float(q - 8) * halfToFloat(scales[block]);
  }
}

void runtime::dequantizeQ8_0(const int8_t *values, const uint16_t *scales,
                             int64_t k, float *weights) {
  for (int64_t i = 0; i < k; ++i)
    weights[i] = float(values[i]) * halfToFloat(scales[i / kQ8_0BlockSize]);
}

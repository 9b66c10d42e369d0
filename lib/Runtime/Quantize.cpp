//===- Quantize.cpp - weights in quantized block formats ------------------===//
#include "tfm/Runtime/Quantize.h"

#include "tfm/Runtime/DType.h"

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

void runtime::dequantizeQ8_0(const int8_t *values, const uint16_t *scales,
                             int64_t k, float *weights) {
  for (int64_t i = 0; i < k; ++i)
    weights[i] = float(values[i]) * halfToFloat(scales[i / kQ8_0BlockSize]);
}

//===- Quantize.cpp - weights in quantized block formats ------------------===//
#include "tfm/Runtime/Quantize.h"

#include "tfm/Runtime/DType.h"

#include <algorithm>
#include <cstring>
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

int64_t runtime::getBlockWeights(BlockFormat format) {
  switch (format) {
  case BlockFormat::None:
    return 1;
  case BlockFormat::Q8_0:
  case BlockFormat::Q4_0:
    return 32;
  case BlockFormat::Q4_K:
  case BlockFormat::Q5_K:
  case BlockFormat::Q6_K:
    return 256;
  }
  return 1;
}

int64_t runtime::getBlockBytes(BlockFormat format) {
  switch (format) {
  case BlockFormat::None:
    return 0;
  case BlockFormat::Q8_0:
    return 2 + 32;
  case BlockFormat::Q4_0:
    return 2 + 16;
  case BlockFormat::Q4_K:
    return 2 + 2 + 12 + 128;
  case BlockFormat::Q5_K:
    return 2 + 2 + 12 + 32 + 128;
  case BlockFormat::Q6_K:
    return 128 + 64 + 16 + 2;
  }
  return 0;
}

llvm::StringRef runtime::getBlockFormatName(BlockFormat format) {
  switch (format) {
  case BlockFormat::None:
    return "none";
  case BlockFormat::Q8_0:
    return "Q8_0";
  case BlockFormat::Q4_0:
    return "Q4_0";
  case BlockFormat::Q4_K:
    return "Q4_K";
  case BlockFormat::Q5_K:
    return "Q5_K";
  case BlockFormat::Q6_K:
    return "Q6_K";
  }
  return "none";
}

// Each product and difference of the dequantizers below is rounded on its
// own, as ggml's reference C (and gguf-py's numpy) computes them: a fused
// multiply-add would give other floats.
#pragma STDC FP_CONTRACT OFF

/// The f16 at `p` (unaligned), as a float.
static float loadHalf(const uint8_t *p) {
  return runtime::halfToFloat(uint16_t(p[0] | p[1] << 8));
}

/// Sub-block `j`'s 6-bit scale and min of a Q4_K/Q5_K super-block's 12
/// packed bytes (ggml's get_scale_min_k4): sub-blocks 0-3 keep theirs in
/// the low 6 bits of bytes j and j + 4; 4-7 in a nibble of byte j + 4 and
/// the top 2 bits of bytes j - 4 and j.
static void getScaleMin(int j, const uint8_t *q, uint8_t &scale,
                        uint8_t &min) {
  if (j < 4) {
    scale = q[j] & 63;
    min = q[j + 4] & 63;
  } else {
    scale = (q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4);
    min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

/// One Q4_K (or, with `qh`, Q5_K) super-block.
static void dequantizeQ4Q5K(const uint8_t *block, bool five, float *y) {
  float d = loadHalf(block), dmin = loadHalf(block + 2);
  const uint8_t *scales = block + 4;
  const uint8_t *qh = five ? block + 16 : nullptr;
  const uint8_t *q = block + 16 + (five ? 32 : 0);
  int is = 0;
  uint8_t u1 = 1, u2 = 2;
  for (int j = 0; j < 256; j += 64) {
    uint8_t sc, m;
    getScaleMin(is, scales, sc, m);
    float d1 = d * sc, m1 = dmin * m;
    getScaleMin(is + 1, scales, sc, m);
    float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l)
      *y++ = d1 * float((q[l] & 0xf) + (qh && (qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l)
      *y++ = d2 * float((q[l] >> 4) + (qh && (qh[l] & u2) ? 16 : 0)) - m2;
    q += 32;
    is += 2;
    u1 <<= 2;
    u2 <<= 2;
  }
}

/// One Q6_K super-block.
static void dequantizeQ6K(const uint8_t *block, float *y) {
  const uint8_t *ql = block, *qh = block + 128;
  const int8_t *sc = reinterpret_cast<const int8_t *>(block + 192);
  float d = loadHalf(block + 208);
  for (int n = 0; n < 256; n += 128) {
    for (int l = 0; l < 32; ++l) {
      int is = l / 16;
      int q1 = int((ql[l] & 0xf) | ((qh[l] >> 0 & 3) << 4)) - 32;
      int q2 = int((ql[l + 32] & 0xf) | ((qh[l] >> 2 & 3) << 4)) - 32;
      int q3 = int((ql[l] >> 4) | ((qh[l] >> 4 & 3) << 4)) - 32;
      int q4 = int((ql[l + 32] >> 4) | ((qh[l] >> 6 & 3) << 4)) - 32;
      y[l] = d * sc[is] * q1;
      y[l + 32] = d * sc[is + 2] * q2;
      y[l + 64] = d * sc[is + 4] * q3;
      y[l + 96] = d * sc[is + 6] * q4;
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

void runtime::dequantizeBlocks(BlockFormat format, const char *blocks,
                               int64_t k, float *weights) {
  const auto *b = reinterpret_cast<const uint8_t *>(blocks);
  int64_t per = getBlockWeights(format), bytes = getBlockBytes(format);
  for (int64_t i = 0; i < k / per; ++i, b += bytes, weights += per) {
    switch (format) {
    case BlockFormat::None:
      return;
    case BlockFormat::Q8_0: {
      float d = loadHalf(b);
      for (int l = 0; l < 32; ++l)
        weights[l] = float(int8_t(b[2 + l])) * d;
      break;
    }
    case BlockFormat::Q4_0: {
      float d = loadHalf(b);
      for (int l = 0; l < 16; ++l) {
        weights[l] = float((b[2 + l] & 0xf) - 8) * d;
        weights[l + 16] = float((b[2 + l] >> 4) - 8) * d;
      }
      break;
    }
    case BlockFormat::Q4_K:
    case BlockFormat::Q5_K:
      dequantizeQ4Q5K(b, format == BlockFormat::Q5_K, weights);
      break;
    case BlockFormat::Q6_K:
      dequantizeQ6K(b, weights);
      break;
    }
  }
}

void runtime::splitBlocks(BlockFormat format, const char *blocks, int64_t k,
                          uint8_t *values, uint16_t *scales) {
  const auto *b = reinterpret_cast<const uint8_t *>(blocks);
  int64_t bytes = getBlockBytes(format), payload = bytes - 2;
  for (int64_t i = 0; i < k / 32; ++i, b += bytes) {
    scales[i] = uint16_t(b[0] | b[1] << 8);
    std::memcpy(values + i * payload, b + 2, payload);
  }
}

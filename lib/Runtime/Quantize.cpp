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

bool runtime::isHeldBlockFormat(BlockFormat format) {
  return format != BlockFormat::None && format != BlockFormat::Q4_1 &&
         format != BlockFormat::Q5_1;
}

int64_t runtime::getBlockWeights(BlockFormat format) {
  switch (format) {
  case BlockFormat::None:
    return 1;
  case BlockFormat::Q8_0:
  case BlockFormat::Q4_0:
  case BlockFormat::Q4_1:
  case BlockFormat::Q5_1:
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
  case BlockFormat::Q4_1:
    return 2 + 2 + 16;
  case BlockFormat::Q5_1:
    return 2 + 2 + 4 + 16;
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
  case BlockFormat::Q4_1:
    return "Q4_1";
  case BlockFormat::Q5_1:
    return "Q5_1";
  }
  return "none";
}

// Each product and difference of the dequantizers and the Q4_K, Q5_K and
// Q6_K quantizers below is rounded on its own, as ggml's reference C (built
// without FMA for x86-64's baseline) and gguf-py's numpy compute them: a
// fused multiply-add would give other floats.
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

/// ggml's nearest_int: `x` rounded to an integer, ties to even, by adding
/// 1.5 * 2^23 in float (which leaves the rounded integer in the low mantissa
/// bits) -- not roundf, which rounds ties away from zero. Exact for |x| <
/// 2^22; beyond that, and for NaN or infinity, some integer in [-2^22, 2^22)
/// as in ggml, which every caller clamps: never an out-of-range float to int
/// conversion.
static int nearestInt(float x) {
  float biased = x + 12582912.0f;
  uint32_t bits;
  std::memcpy(&bits, &biased, sizeof(bits));
  return int(bits & 0x007fffff) - 0x00400000;
}

/// ggml's make_qkx2_quants as quantize_row_q4_K_ref and quantize_row_q5_K_ref
/// call it (n = 32, rdelta = 0.1, squared error; Q4_K: nmax = 15, rmin = -1,
/// nstep = 20; Q5_K: nmax = 31, rmin = -0.5, nstep = 15): the `l` in [0,
/// nmax] of sub-block `x` and the scale (returned) and min (`negMin`, its
/// negation) with x ~ scale * l - negMin, fitted by least squares weighted
/// by `importance`. It starts from the range [min(x, 0), max(x)] in nmax
/// steps, then tries the nstep + 1 step counts nmax + rmin + 0.1 i (Q4_K's
/// 21 from 14 to 16, Q5_K's 16 from 30.5 to 32) across the range from the
/// best min so far, each solved for the best scale and min, and keeps the
/// one of least weighted error. Every float operation in ggml's order: the
/// sums are sequential, not pairwise.
static float fitQ4Q5KSubBlock(const float *x, const float *importance, int nmax,
                              float rmin, int nstep, uint8_t *l,
                              float &negMin) {
  constexpr int n = 32;
  constexpr float rdelta = 0.1f;
  float min = x[0], max = x[0];
  float sumW = importance[0];
  float sumX = sumW * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min)
      min = x[i];
    if (x[i] > max)
      max = x[i];
    float w = importance[i];
    sumW += w;
    sumX += w * x[i];
  }
  // The min is at most 0: a sub-block of positive weights keeps q = 0 for 0.
  if (min > 0)
    min = 0;
  if (max == min) {
    std::fill(l, l + n, 0);
    negMin = -min;
    return 0.0f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float bestError = 0;
  for (int i = 0; i < n; ++i) {
    l[i] = uint8_t(std::clamp(nearestInt(iscale * (x[i] - min)), 0, nmax));
    float diff = scale * l[i] + min - x[i];
    bestError += importance[i] * (diff * diff);
  }
  uint8_t trial[n];
  for (int step = 0; step <= nstep; ++step) {
    iscale = (rmin + rdelta * step + nmax) / (max - min);
    float sumL = 0, sumL2 = 0, sumXL = 0;
    for (int i = 0; i < n; ++i) {
      int q = std::clamp(nearestInt(iscale * (x[i] - min)), 0, nmax);
      trial[i] = uint8_t(q);
      float w = importance[i];
      // As ggml's w*l*l and w*l*x[i]: left to right, l as a float.
      sumL += w * q;
      sumL2 += w * q * q;
      sumXL += w * q * x[i];
    }
    float det = sumW * sumL2 - sumL * sumL;
    if (!(det > 0))
      continue;
    float trialScale = (sumW * sumXL - sumX * sumL) / det;
    float trialMin = (sumL2 * sumX - sumL * sumXL) / det;
    if (trialMin > 0) {
      trialMin = 0;
      trialScale = sumXL / sumL2;
    }
    float error = 0;
    for (int i = 0; i < n; ++i) {
      float diff = trialScale * trial[i] + trialMin - x[i];
      error += importance[i] * (diff * diff);
    }
    if (error < bestError) {
      std::copy(trial, trial + n, l);
      bestError = error;
      scale = trialScale;
      min = trialMin;
    }
  }
  negMin = -min;
  return scale;
}

/// What quantize_row_q4_K_ref and quantize_row_q5_K_ref share for the 256
/// weights `x` of a super-block, their q in [0, nmax] (15 or 31; `rmin` and
/// `nstep` make_qkx2_quants' for it): the 16 bytes of the header (f16 d,
/// f16 dmin, the 12 packed 6-bit scales and mins) to `b`, and each weight's
/// q to `l`, to be packed as the format packs them.
static void quantizeQ4Q5KSuperBlock(const float *x, int nmax, float rmin,
                                    int nstep, uint8_t *b, uint8_t *l) {
  constexpr int sub = 32, subBlocks = 256 / sub;
  float scales[subBlocks], mins[subBlocks];
  // Scales are positive (the min is taken out), so 0 starts the maxima.
  float maxScale = 0, maxMin = 0;
  for (int j = 0; j < subBlocks; ++j) {
    const float *xs = x + sub * j;
    // Each weight's importance: the sub-block's RMS plus its magnitude.
    float sumX2 = 0;
    for (int i = 0; i < sub; ++i)
      sumX2 += xs[i] * xs[i];
    float rms = std::sqrt(sumX2 / 32);
    float importance[sub];
    for (int i = 0; i < sub; ++i)
      importance[i] = rms + std::fabs(xs[i]);
    scales[j] = fitQ4Q5KSubBlock(xs, importance, nmax, rmin, nstep, l + sub * j,
                                 mins[j]);
    if (scales[j] > maxScale)
      maxScale = scales[j];
    if (mins[j] > maxMin)
      maxMin = mins[j];
  }

  // The 6-bit scales and mins in units of the largest / 63 (ggml's
  // uint8_t ls = nearest_int(...): the int's low byte, then at most 63),
  // packed as getScaleMin unpacks them.
  float inverseScale = maxScale > 0 ? 63.f / maxScale : 0.f;
  float inverseMin = maxMin > 0 ? 63.f / maxMin : 0.f;
  uint8_t *packed = b + 4;
  for (int j = 0; j < subBlocks; ++j) {
    uint8_t ls =
        std::min<uint8_t>(63, uint8_t(nearestInt(inverseScale * scales[j])));
    uint8_t lm =
        std::min<uint8_t>(63, uint8_t(nearestInt(inverseMin * mins[j])));
    if (j < 4) {
      packed[j] = ls;
      packed[j + 4] = lm;
    } else {
      packed[j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
      packed[j - 4] |= (ls >> 4) << 6;
      packed[j] |= (lm >> 4) << 6;
    }
  }
  uint16_t d = runtime::floatToHalf(maxScale / 63.f);
  uint16_t dmin = runtime::floatToHalf(maxMin / 63.f);
  b[0] = uint8_t(d);
  b[1] = uint8_t(d >> 8);
  b[2] = uint8_t(dmin);
  b[3] = uint8_t(dmin >> 8);

  // Each weight again against the scale and min it will be read with
  // (the f16 d and dmin times the 6-bit ones). A sub-block whose scale
  // rounds to 0 keeps the fit's integers, as in ggml.
  for (int j = 0; j < subBlocks; ++j) {
    uint8_t sc, m;
    getScaleMin(j, packed, sc, m);
    const float dj = runtime::halfToFloat(d) * sc;
    if (dj == 0)
      continue;
    const float dmj = runtime::halfToFloat(dmin) * m;
    for (int i = 0; i < sub; ++i)
      l[sub * j + i] =
          uint8_t(std::clamp(nearestInt((x[sub * j + i] + dmj) / dj), 0, nmax));
  }
}

void runtime::quantizeQ4_K(const float *weights, int64_t k, char *blocks) {
  auto *b = reinterpret_cast<uint8_t *>(blocks);
  for (int64_t block = 0; block < k / 256; ++block, b += 144) {
    uint8_t l[256];
    quantizeQ4Q5KSuperBlock(weights + block * 256, 15, -1.0f, 20, b, l);
    // Sub-blocks 2i and 2i + 1 in the low and high nibbles of bytes
    // 32i..32i+31.
    uint8_t *q = b + 16;
    for (int j = 0; j < 256; j += 64, q += 32)
      for (int i = 0; i < 32; ++i)
        q[i] = l[j + i] | (l[j + i + 32] << 4);
  }
}

void runtime::quantizeQ5_K(const float *weights, int64_t k, char *blocks) {
  auto *b = reinterpret_cast<uint8_t *>(blocks);
  for (int64_t block = 0; block < k / 256; ++block, b += 176) {
    uint8_t l[256];
    quantizeQ4Q5KSuperBlock(weights + block * 256, 31, -0.5f, 15, b, l);
    // Sub-blocks 2i and 2i + 1: the low 4 bits of their weights u in the
    // low and high nibbles of q[32i + u], the fifth bits in bits 2i and
    // 2i + 1 of qh[u].
    uint8_t *qh = b + 16, *q = b + 48;
    std::memset(qh, 0, 32);
    for (int j = 0, s = 0; j < 256; j += 64, s += 2, q += 32)
      for (int u = 0; u < 32; ++u) {
        uint8_t lo = l[j + u], hi = l[j + u + 32];
        q[u] = uint8_t((lo & 0xf) | (hi & 0xf) << 4);
        qh[u] |= uint8_t((lo >> 4) << s | (hi >> 4) << (s + 1));
      }
  }
}

/// ggml's make_qx_quants as quantize_row_q6_K_ref calls it (n = 16, nmax =
/// 32, rmse_type 1, no importance given): the 6-bit `l` (q + 32, q in [-32,
/// 31]) of sub-block `x` and its scale (returned), x ~ scale * q, fitted by
/// least squares weighted by x^2. It starts from q = round(-32 x / max), max
/// the weight of largest magnitude (the first of equals; its q is -32, the
/// side with one more step), then tries the 18 step counts 32 + 0.1 is (is
/// in [-9, 9] but 0), each solved for the best scale, and keeps the one of
/// largest sum(w x q)^2 / sum(w q^2) (the first of equals; the comparison is
/// ggml's sumLX^2 > best * sumL2). A sub-block whose every |x| is below
/// ggml's GROUP_MAX_EPS (1e-15) gets q = -32 and scale 0. Every float
/// operation in ggml's order: the sums are sequential.
static float fitQ6KSubBlock(const float *x, uint8_t *l) {
  constexpr int n = 16, nmax = 32;
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < 1e-15f) {
    std::fill(l, l + n, 0);
    return 0.0f;
  }
  float iscale = -nmax / max;
  float sumLX = 0, sumL2 = 0;
  for (int i = 0; i < n; ++i) {
    int q = std::clamp(nearestInt(iscale * x[i]), -nmax, nmax - 1);
    l[i] = uint8_t(q + nmax);
    // As ggml's w*x[i]*l and w*l*l: left to right, l as a float.
    float w = x[i] * x[i];
    sumLX += w * x[i] * q;
    sumL2 += w * q * q;
  }
  float scale = sumL2 != 0 ? sumLX / sumL2 : 0.0f;
  float best = scale * sumLX;
  uint8_t trial[n];
  for (int is = -9; is <= 9; ++is) {
    if (is == 0)
      continue;
    iscale = -(nmax + 0.1f * is) / max;
    sumLX = sumL2 = 0;
    for (int i = 0; i < n; ++i) {
      int q = std::clamp(nearestInt(iscale * x[i]), -nmax, nmax - 1);
      trial[i] = uint8_t(q + nmax);
      float w = x[i] * x[i];
      sumLX += w * x[i] * q;
      sumL2 += w * q * q;
    }
    if (sumL2 > 0 && sumLX * sumLX > best * sumL2) {
      std::copy(trial, trial + n, l);
      scale = sumLX / sumL2;
      best = scale * sumLX;
    }
  }
  return scale;
}

void runtime::quantizeQ6_K(const float *weights, int64_t k, char *blocks) {
  constexpr int sub = 16, subBlocks = 256 / sub;
  auto *b = reinterpret_cast<uint8_t *>(blocks);
  for (int64_t block = 0; block < k / 256; ++block, b += 210) {
    const float *x = weights + block * 256;
    uint8_t l[256];
    float scales[subBlocks];
    // The signed scale of largest magnitude, the first of equals (a NaN
    // never replaces it).
    float maxScale = 0, maxAbsScale = 0;
    for (int j = 0; j < subBlocks; ++j) {
      scales[j] = fitQ6KSubBlock(x + sub * j, l + sub * j);
      float magnitude = std::fabs(scales[j]);
      if (magnitude > maxAbsScale) {
        maxAbsScale = magnitude;
        maxScale = scales[j];
      }
    }
    if (maxAbsScale < 1e-15f) {
      std::memset(b, 0, 210);
      continue;
    }

    // The int8 scales in units of d = -maxScale / 128 (so maxScale's is
    // -128): ggml's int8_t = MIN(127, nearest_int(...)). For finite weights
    // the int lies in [-128, 127]; otherwise its low byte, as ggml stores
    // it, taken without an implementation-defined conversion.
    float iscale = -128.f / maxScale;
    uint16_t d = floatToHalf(1 / iscale);
    uint8_t *sc = b + 192;
    for (int j = 0; j < subBlocks; ++j)
      sc[j] = uint8_t(std::min(127, nearestInt(iscale * scales[j])));
    b[208] = uint8_t(d);
    b[209] = uint8_t(d >> 8);

    // Each weight again against the scale it will be read with (the f16 d
    // times the int8 one). A sub-block whose scale is 0 keeps the fit's
    // integers, as in ggml.
    for (int j = 0; j < subBlocks; ++j) {
      int scale = (sc[j] ^ 0x80) - 0x80;
      const float dj = halfToFloat(d) * scale;
      if (dj == 0)
        continue;
      for (int i = 0; i < sub; ++i)
        l[sub * j + i] =
            uint8_t(std::clamp(nearestInt(x[sub * j + i] / dj), -32, 31) + 32);
    }

    // Per half of 128: weights i, i + 32, i + 64, i + 96 (i < 32) keep
    // their low 4 bits in the low nibble of ql[i], of ql[i + 32], the high
    // nibble of ql[i], of ql[i + 32], and their high 2 bits in bits 0-1,
    // 2-3, 4-5, 6-7 of qh[i], as dequantizeQ6K reads them.
    uint8_t *ql = b, *qh = b + 128;
    for (int j = 0; j < 256; j += 128, ql += 64, qh += 32)
      for (int i = 0; i < 32; ++i) {
        const uint8_t *q = l + j + i;
        ql[i] = uint8_t((q[0] & 0xf) | (q[64] & 0xf) << 4);
        ql[i + 32] = uint8_t((q[32] & 0xf) | (q[96] & 0xf) << 4);
        qh[i] = uint8_t(q[0] >> 4 | (q[32] >> 4) << 2 | (q[64] >> 4) << 4 |
                        (q[96] >> 4) << 6);
      }
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
    case BlockFormat::Q4_1:
    case BlockFormat::Q5_1: {
      // As ggml's dequantize_row_q4_1 / _q5_1: q * d, then + m.
      bool five = format == BlockFormat::Q5_1;
      float d = loadHalf(b), m = loadHalf(b + 2);
      uint32_t qh = 0;
      if (five)
        qh = uint32_t(b[4]) | uint32_t(b[5]) << 8 | uint32_t(b[6]) << 16 |
             uint32_t(b[7]) << 24;
      const uint8_t *qs = b + (five ? 8 : 4);
      for (int l = 0; l < 16; ++l) {
        int low = (qs[l] & 0xf) | int((qh >> l) & 1) << 4;
        int high = (qs[l] >> 4) | int((qh >> (l + 16)) & 1) << 4;
        float lowScaled = float(low) * d;
        float highScaled = float(high) * d;
        weights[l] = lowScaled + m;
        weights[l + 16] = highScaled + m;
      }
      break;
    }
    }
  }
}

void runtime::packSixBitValues(const uint8_t *q, int64_t k, uint8_t *out) {
  for (int64_t b = 0; b < k / 32; ++b, q += 32, out += 24) {
    std::memset(out, 0, 24);
    for (int c = 0; c < 16; ++c) {
      // Nibble quad u = c / 4 at quad u + 1 + u / 2, its high bits at quad
      // 3 (u / 2), bit 4 (u % 2).
      int u = c / 4, i = c % 4, shift = 4 * (u % 2);
      out[4 * (u + 1 + u / 2) + i] =
          uint8_t((q[c] & 15) | (q[c + 16] & 15) << 4);
      out[4 * (3 * (u / 2)) + i] |= uint8_t(
          ((q[c] >> 4) & 3) << shift | ((q[c + 16] >> 4) & 3) << (shift + 2));
    }
  }
}

void runtime::splitBlocks(BlockFormat format, const char *blocks, int64_t k,
                          uint8_t *values, uint16_t *scales,
                          uint8_t *subScales) {
  const auto *b = reinterpret_cast<const uint8_t *>(blocks);
  int64_t bytes = getBlockBytes(format), payload = bytes - 2;
  if (format == BlockFormat::Q6_K) {
    for (int64_t i = 0; i < k / 256; ++i, b += bytes) {
      const uint8_t *ql = b, *qh = b + 128;
      uint8_t *q = values + i * 256;
      // dequantizeQ6K's order: of each 128, weight l + 32 g (g < 4) has its
      // low bits in a nibble of ql and its high two in bits 2 g of qh[l].
      for (int n = 0; n < 2; ++n, ql += 64, qh += 32, q += 128)
        for (int l = 0; l < 32; ++l) {
          q[l] = uint8_t((ql[l] & 0xf) | ((qh[l] >> 0 & 3) << 4));
          q[l + 32] = uint8_t((ql[l + 32] & 0xf) | ((qh[l] >> 2 & 3) << 4));
          q[l + 64] = uint8_t((ql[l] >> 4) | ((qh[l] >> 4 & 3) << 4));
          q[l + 96] = uint8_t((ql[l + 32] >> 4) | ((qh[l] >> 6 & 3) << 4));
        }
      std::memcpy(subScales + i * 16, b + 192, 16);
      scales[i] = uint16_t(b[208] | b[209] << 8);
    }
    return;
  }
  if (format == BlockFormat::Q5_K) {
    for (int64_t i = 0; i < k / 256; ++i, b += bytes) {
      scales[2 * i] = uint16_t(b[0] | b[1] << 8);
      scales[2 * i + 1] = uint16_t(b[2] | b[3] << 8);
      const uint8_t *qh = b + 16, *qs = b + 48;
      for (int s = 0; s < 8; ++s) {
        getScaleMin(s, b + 4, subScales[2 * (8 * i + s)],
                    subScales[2 * (8 * i + s) + 1]);
        // As dequantizeQ4Q5K: sub-blocks 2j and 2j + 1 in the nibbles of
        // qs[32 j..], their fifth bits in bits 2j and 2j + 1 of qh.
        uint8_t *out = values + (8 * i + s) * 32;
        for (int l = 0; l < 32; ++l)
          out[l] = uint8_t(((qs[32 * (s / 2) + l] >> (4 * (s % 2))) & 15) |
                           (((qh[l] >> s) & 1) << 4));
      }
    }
    return;
  }
  if (format == BlockFormat::Q4_K) {
    for (int64_t i = 0; i < k / 256; ++i, b += bytes) {
      scales[2 * i] = uint16_t(b[0] | b[1] << 8);
      scales[2 * i + 1] = uint16_t(b[2] | b[3] << 8);
      const uint8_t *q = b + 16;
      for (int s = 0; s < 8; ++s) {
        getScaleMin(s, b + 4, subScales[2 * (8 * i + s)],
                    subScales[2 * (8 * i + s) + 1]);
        // Sub-blocks 2j and 2j + 1 are the low and high nibbles of bytes
        // 32 j..32 j + 31; tfm's block of 32 holds steps u and u + 16 in
        // byte u.
        const uint8_t *pair = q + 32 * (s / 2);
        int shift = 4 * (s % 2);
        uint8_t *out = values + (8 * i + s) * 16;
        for (int u = 0; u < 16; ++u)
          out[u] = uint8_t(((pair[u] >> shift) & 15) |
                           (((pair[u + 16] >> shift) & 15) << 4));
      }
    }
    return;
  }
  for (int64_t i = 0; i < k / 32; ++i, b += bytes) {
    scales[i] = uint16_t(b[0] | b[1] << 8);
    std::memcpy(values + i * payload, b + 2, payload);
  }
}

void runtime::widenQ5_0ToQ8_0(const char *q5, int64_t numBlocks, char *q8) {
  const auto *in = reinterpret_cast<const uint8_t *>(q5);
  auto *out = reinterpret_cast<uint8_t *>(q8);
  for (int64_t i = 0; i < numBlocks; ++i, in += 22, out += 34) {
    std::memcpy(out, in, 2); // d
    uint32_t qh = uint32_t(in[2]) | uint32_t(in[3]) << 8 |
                  uint32_t(in[4]) << 16 | uint32_t(in[5]) << 24;
    const uint8_t *qs = in + 6;
    // As ggml's dequantize_row_q5_0: weight j's fifth bit is qh bit j,
    // weight j + 16's bit j + 16.
    for (int j = 0; j < 16; ++j) {
      int low = (qs[j] & 15) | int((qh >> j) & 1) << 4;
      int high = (qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
      out[2 + j] = uint8_t(int8_t(low - 16));
      out[2 + j + 16] = uint8_t(int8_t(high - 16));
    }
  }
}

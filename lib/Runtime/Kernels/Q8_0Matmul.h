//===- Q8_0Matmul.h - f32 rows times Q8_0 weights, W lanes wide -*- C++ -*-===//
//
// The body of tfm's Q8_0 matmul micro-kernels, written once over a vector
// of W floats (clang's ext_vector_type); each translation unit that includes
// it is compiled for one instruction set (Q8_0MatmulAvx2.cpp with -mavx2
// -mfma, ...), so the same code becomes that set's instructions.
//
//   C[m, n] += sum_k A[m, k] * (Q[n, k] * D[n, k / 32])   for n in [n0, n1)
//
// with Q the int8 values of weight row n (K of them, contiguous) and D its
// blocks' f16 scales. Why this form and its measurements: docs/design.md,
// "Quantized weights".
//
// Two paths, chosen by the row count:
// - a few rows (decode): each weight row's blocks are converted to f32 once
//   and multiplied with every row of A; a block's products are summed
//   before its scale multiplies them (one multiply per block, not per weight),
//   four weight rows at a time so that sixteen FMA chains are in flight;
// - more rows (prefill): 256 K steps of 2W weight rows at a time are
//   dequantized (integer times scale, exact in f32) into a panel in L1, in
//   the order a register tile reads them, and a tile of 6 rows x 2W columns
//   accumulates over it with one FMA per weight and row, in K order: each
//   C element is the same chain of FMAs an f32 GEMM of the dequantized
//   weights computes.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_KERNELS_Q8_0MATMUL_H
#define TFM_RUNTIME_KERNELS_Q8_0MATMUL_H

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace tfm::kernels {

/// f16 bits to float (exact), without F16C.
inline float halfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent == 0) {
    float magnitude = float(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  } else {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

template <int W> struct Q8_0Matmul {
  using F = float __attribute__((ext_vector_type(W)));
  using Q = int8_t __attribute__((ext_vector_type(W)));
  static constexpr int64_t kBlock = 32;
  static_assert(kBlock % W == 0, "a vector never straddles two blocks");
  /// Prefill register tile: rows x (2 vectors of columns).
  static constexpr int kRows = 6;
  static constexpr int kPanel = 2 * W;
  /// K steps per dequantized panel (a multiple of the block).
  static constexpr int64_t kDepth = 256;
  /// Rows up to which the decode path runs.
  static constexpr int64_t kDecodeRows = 4;

  static F load(const float *p) {
    F v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float *p, F v) { std::memcpy(p, &v, sizeof v); }
  static F widen(const int8_t *p) {
    Q v;
    std::memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, F);
  }
  static F fma(F a, F b, F c) { return __builtin_elementwise_fma(a, b, c); }
  static float sum(F v) {
    float s = 0.0f;
    for (int i = 0; i < W; ++i)
      s += v[i];
    return s;
  }

  /// Decode: R rows of A, NC weight rows (columns of C) from `n`.
  template <int R, int NC>
  static void dot(const float *a, int64_t lda, const int8_t *q,
                  const uint16_t *d, float *c, int64_t ldc, int64_t k,
                  int64_t n) {
    int64_t blocks = k / kBlock;
    F acc[R][NC] = {};
    for (int64_t b = 0; b < blocks; ++b) {
      F part[R][NC] = {};
      for (int64_t t = 0; t < kBlock; t += W) {
        int64_t kk = b * kBlock + t;
        F w[NC];
        for (int j = 0; j < NC; ++j)
          w[j] = widen(q + (n + j) * k + kk);
        for (int r = 0; r < R; ++r) {
          F x = load(a + r * lda + kk);
          for (int j = 0; j < NC; ++j)
            part[r][j] = fma(x, w[j], part[r][j]);
        }
      }
      for (int j = 0; j < NC; ++j) {
        F scale = F(halfBitsToFloat(d[(n + j) * blocks + b]));
        for (int r = 0; r < R; ++r)
          acc[r][j] = fma(part[r][j], scale, acc[r][j]);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < NC; ++j)
        c[r * ldc + n + j] += sum(acc[r][j]);
  }

  /// R rows against weight rows [n0, n1), NC at a time: four for one row,
  /// fewer for more rows, so that the accumulators, partial sums and
  /// widened weights stay in 16 registers.
  template <int R>
  static void decode(const float *a, int64_t lda, const int8_t *q,
                     const uint16_t *d, float *c, int64_t ldc, int64_t k,
                     int64_t n0, int64_t n1) {
    constexpr int NC = R == 1 ? 4 : R == 2 ? 2 : 1;
    int64_t n = n0;
    for (; n + NC <= n1; n += NC)
      dot<R, NC>(a, lda, q, d, c, ldc, k, n);
    for (; n < n1; ++n)
      dot<R, 1>(a, lda, q, d, c, ldc, k, n);
  }

  /// Weight rows [n, n + cols) at K steps [k0, k0 + depth), dequantized
  /// into panel[kk][col] (2W columns, the missing ones zero).
  static void dequantizePanel(const int8_t *q, const uint16_t *d, int64_t k,
                              int64_t n, int cols, int64_t k0, int64_t depth,
                              float *panel) {
    int64_t blocks = k / kBlock;
    for (int col = 0; col < cols; ++col) {
      const int8_t *row = q + (n + col) * k + k0;
      const uint16_t *scales = d + (n + col) * blocks + k0 / kBlock;
      for (int64_t kk = 0; kk < depth; kk += W) {
        F v = widen(row + kk) * F(halfBitsToFloat(scales[kk / kBlock]));
        for (int i = 0; i < W; ++i)
          panel[(kk + i) * kPanel + col] = v[i];
      }
    }
    for (int col = cols; col < kPanel; ++col)
      for (int64_t kk = 0; kk < depth; ++kk)
        panel[kk * kPanel + col] = 0.0f;
  }

  /// R rows x `cols` columns of C (at most 2W) += A's rows times the panel.
  template <int R>
  static void tile(const float *a, int64_t lda, const float *panel, float *c,
                   int64_t ldc, int64_t depth, int cols) {
    F acc[R][2];
    for (int r = 0; r < R; ++r) {
      if (cols == kPanel) {
        acc[r][0] = load(c + r * ldc);
        acc[r][1] = load(c + r * ldc + W);
      } else {
        float row[kPanel] = {};
        std::memcpy(row, c + r * ldc, cols * sizeof(float));
        acc[r][0] = load(row);
        acc[r][1] = load(row + W);
      }
    }
    for (int64_t kk = 0; kk < depth; ++kk) {
      F b0 = load(panel + kk * kPanel), b1 = load(panel + kk * kPanel + W);
      for (int r = 0; r < R; ++r) {
        F x = F(a[r * lda + kk]);
        acc[r][0] = fma(x, b0, acc[r][0]);
        acc[r][1] = fma(x, b1, acc[r][1]);
      }
    }
    for (int r = 0; r < R; ++r) {
      if (cols == kPanel) {
        store(c + r * ldc, acc[r][0]);
        store(c + r * ldc + W, acc[r][1]);
      } else {
        float row[kPanel];
        store(row, acc[r][0]);
        store(row + W, acc[r][1]);
        std::memcpy(c + r * ldc, row, cols * sizeof(float));
      }
    }
  }

  static void prefill(const float *a, int64_t lda, const int8_t *q,
                      const uint16_t *d, float *c, int64_t ldc, int64_t m,
                      int64_t k, int64_t n0, int64_t n1) {
    alignas(64) float panel[kDepth * kPanel];
    for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
      int64_t depth = std::min(kDepth, k - k0);
      for (int64_t n = n0; n < n1; n += kPanel) {
        int cols = int(std::min<int64_t>(kPanel, n1 - n));
        dequantizePanel(q, d, k, n, cols, k0, depth, panel);
        const float *aBlock = a + k0;
        float *cBlock = c + n;
        int64_t r = 0;
        for (; r + kRows <= m; r += kRows)
          tile<kRows>(aBlock + r * lda, lda, panel, cBlock + r * ldc, ldc,
                      depth, cols);
        switch (m - r) {
#define TFM_TILE_CASE(R)                                                       \
  case R:                                                                      \
    tile<R>(aBlock + r * lda, lda, panel, cBlock + r * ldc, ldc, depth, cols); \
    break;
          TFM_TILE_CASE(1)
          TFM_TILE_CASE(2)
          TFM_TILE_CASE(3)
          TFM_TILE_CASE(4)
          TFM_TILE_CASE(5)
#undef TFM_TILE_CASE
        default:
          break;
        }
      }
    }
  }

  static void run(const float *a, const int8_t *q, const uint16_t *d,
                  float *c, int64_t lda, int64_t ldc, int64_t m, int64_t k,
                  int64_t n0, int64_t n1) {
    if (m > kDecodeRows)
      return prefill(a, lda, q, d, c, ldc, m, k, n0, n1);
    // Rows of A in groups of up to four.
    for (int64_t r = 0; r < m; r += 4) {
      const float *rows = a + r * lda;
      float *out = c + r * ldc;
      switch (std::min<int64_t>(4, m - r)) {
      case 1:
        decode<1>(rows, lda, q, d, out, ldc, k, n0, n1);
        break;
      case 2:
        decode<2>(rows, lda, q, d, out, ldc, k, n0, n1);
        break;
      case 3:
        decode<3>(rows, lda, q, d, out, ldc, k, n0, n1);
        break;
      default:
        decode<4>(rows, lda, q, d, out, ldc, k, n0, n1);
        break;
      }
    }
  }
};

} // namespace tfm::kernels

#endif // TFM_RUNTIME_KERNELS_Q8_0MATMUL_H

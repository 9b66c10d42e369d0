//===- BlockMatmul.h - f32 rows times block-quantized weights ---*- C++ -*-===//
//
// The body of tfm's quantized matmul micro-kernels, written once over a
// vector of W floats (clang's ext_vector_type); each translation unit that
// includes it is compiled for one instruction set (BlockMatmulAvx2.cpp with
// -mavx2 -mfma -mf16c, ...), so the same code becomes that set's
// instructions.
//
// The weights come in panels of P output columns (tfm-cpu-pack-weights,
// tfm/Runtime/Kernels.h): for panel j, K block b, step t and column r,
//
//   Q8_0: V[j, b, t, r] (int8)                   S[j, b, r] (f16)
//   Q4_0: V[j, b, t % 16, r] (two 4-bit q a byte: step t in the low nibble
//         when t < 16, else the high one; w's integer is q - 8)
//   Q4_K: V as Q4_0's, w = (d * sc) * q - dmin * m with the super-block's
//         D[j, b / 8, 0 | 1, r] (f16 d, dmin) and the block's SC[j, b,
//         0 | 1, r] (6-bit sc, m)
//   Q5_K: V as Q8_0's (an unsigned 5-bit q), w and its scales as Q4_K's
//   Q6_K: V as Q8_0's (an unsigned 6-bit q), w = (d * sc) * (q - 32) with
//         the super-block's D[j, b / 8, r] (f16) and the 16 steps' SC[j,
//         2 b + t / 16, r] (int8)
//
// and w = integer * S, exact in f32 (Q4_K's as llama.cpp rounds it: d * sc
// and dmin * m are exact, so is their product with q, and the difference
// is rounded once, as fma(q, d * sc, -(dmin * m)) rounds it); one K step of
// a panel is P contiguous bytes and one block's scales P contiguous f16,
// and
//
//   C[m, j * P + r] += sum_{b, t} A[m, b * 32 + t] * V[j, b, t, r] * S[j, b, r]
//
// for panels j in [j0, j1). Every C element is the chain of FMAs over K in
// order that an f32 GEMM of the dequantized weights computes, on either
// path:
// - a few rows (decode): each K step of a few panels is widened and scaled
//   in registers and multiplied into every row's accumulators, which stay in
//   registers for the whole K (the weights stream once, in one sequence per
//   panel);
// - more rows (prefill): 256 K steps of a panel are dequantized into an L1
//   buffer and a register tile of 6 rows x P columns accumulates over it.
// Why micro-kernels and their measurements: docs/design.md, "Quantized
// weights".
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_KERNELS_BLOCKMATMUL_H
#define TFM_RUNTIME_KERNELS_BLOCKMATMUL_H

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace tfm::kernels {
// Internal to each translation unit that includes this: each compiles it
// for its own instruction set, and one shared (ODR-merged) copy of an
// inline function would run one set's code on every path.
namespace {

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

/// A thread's scratch buffer `Slot` (each kernel file numbers its own),
/// 64-byte aligned, grown as needed and kept; null if out of memory.
template <int Slot> void *scratch(int64_t bytes) {
  struct Free {
    void operator()(void *p) const { std::free(p); }
  };
  thread_local std::unique_ptr<void, Free> buffer;
  thread_local int64_t capacity = 0;
  if (bytes > capacity) {
    // A whole number of 64-byte lines.
    int64_t rounded = (bytes + 63) / 64 * 64;
    buffer.reset(std::aligned_alloc(64, rounded));
    capacity = buffer ? rounded : 0;
  }
  return buffer.get();
}

/// The block formats the kernels read.
enum class WeightFormat { Q8_0, Q4_0, Q4_K, Q5_K, Q6_K };

/// W lanes per vector, V vectors per panel (P = V W columns), weights in
/// format Fm.
template <int W, int V, WeightFormat Fm> struct BlockMatmul {
  /// Two 4-bit steps a byte (Q4_0, Q4_K).
  static constexpr bool Q4 = Fm == WeightFormat::Q4_0 || Fm == WeightFormat::Q4_K;
  /// The parts of a block with scales of their own (Q6_K's 16s).
  static constexpr int kHalves = Fm == WeightFormat::Q6_K ? 2 : 1;
  /// A scale and a min per sub-block of 32 (Q4_K, Q5_K).
  static constexpr bool kMins =
      Fm == WeightFormat::Q4_K || Fm == WeightFormat::Q5_K;
  using F = float __attribute__((ext_vector_type(W)));
  using Q = int8_t __attribute__((ext_vector_type(W)));
  using U = uint8_t __attribute__((ext_vector_type(W)));
  static constexpr int64_t kBlock = 32;
  /// Columns per panel.
  static constexpr int kPanel = V * W;
  static_assert(V % 2 == 0, "the prefill tile takes two vectors at a time");
  /// Prefill register tile rows.
  static constexpr int kRows = 6;
  /// K steps per dequantized prefill panel (a multiple of the block).
  static constexpr int64_t kDepth = 256;
  /// Rows up to which the decode path runs, and the panels it streams at
  /// once (their accumulators, scales and one widened step in registers).
  static constexpr int64_t kDecodeRows = 4;
  static constexpr int kDecodePanels = V > 2 ? 1 : W >= 16 ? 4 : 2;
  /// How far ahead (bytes) the decode path prefetches each panel's values.
  static constexpr int64_t kPrefetchBytes = 2048;

  static F load(const float *p) {
    F v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float *p, F v) { std::memcpy(p, &v, sizeof v); }
  /// Where K step kk of a panel's values starts (bytes), P columns apart.
  static int64_t stepOffset(int64_t kk) {
    if constexpr (Q4)
      return ((kk / kBlock) * (kBlock / 2) + kk % (kBlock / 2)) * kPanel;
    return kk * kPanel;
  }
  /// W weights of K step kk: their integers times `scale`, plus `bias`
  /// for unsigned q. Q4_0's (q - 8) d is formed as fma(q, d, -8 d): the
  /// exact product, rounded once, is the representable (q - 8) d, so it is
  /// the same float in one operation fewer (decode is bound by these
  /// operations, not memory); Q4_K's as fma(q, d * sc, -(dmin * m)); Q6_K's
  /// (d * sc) (q - 32) as fma(q, d * sc, -32 (d * sc)), the exact value
  /// rounded once as ggml's product rounds it.
  static F dequantize(const int8_t *p, int64_t kk, F scale, F bias) {
    if constexpr (Q4) {
      U v;
      std::memcpy(&v, p, sizeof v);
      v = kk % kBlock < kBlock / 2 ? v & uint8_t(15) : v >> uint8_t(4);
      return fma(__builtin_convertvector(v, F), scale, bias);
    } else if constexpr (Fm == WeightFormat::Q6_K ||
                         Fm == WeightFormat::Q5_K) {
      U v;
      std::memcpy(&v, p, sizeof v);
      return fma(__builtin_convertvector(v, F), scale, bias);
    } else {
      Q v;
      std::memcpy(&v, p, sizeof v);
      return __builtin_convertvector(v, F) * scale;
    }
  }
  /// W f16 scales as floats.
  static F scales(const uint16_t *p) {
#if defined(__F16C__)
    if constexpr (W == 8) {
      __m256 v = _mm256_cvtph_ps(
          _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
      F f;
      std::memcpy(&f, &v, sizeof f);
      return f;
    }
#endif
#if defined(__AVX512F__)
    if constexpr (W == 16) {
      __m512 v = _mm512_cvtph_ps(
          _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
      F f;
      std::memcpy(&f, &v, sizeof f);
      return f;
    }
#endif
    F f;
    for (int i = 0; i < W; ++i)
      f[i] = halfBitsToFloat(p[i]);
    return f;
  }
  static F fma(F a, F b, F c) { return __builtin_elementwise_fma(a, b, c); }
  /// W unsigned (Q4_K's 6-bit) or signed (Q6_K's) bytes as floats.
  static F bytes(const uint8_t *p) {
    U v;
    std::memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, F);
  }
  static F signedBytes(const uint8_t *p) {
    Q v;
    std::memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, F);
  }

  struct Operands {
    const float *a;
    const int8_t *v;
    /// The f16 scales (Q4_K: the super-blocks' d and dmin) and Q4_K's
    /// blocks' sc and m.
    const uint16_t *s;
    const uint8_t *sc;
    float *c;
    int64_t lda, ldc, m, k;
    /// Panel j's values (a byte a K step, or half a byte) and scales.
    const int8_t *values(int64_t j) const {
      return v + j * (Q4 ? k / 2 : k) * kPanel;
    }
    const uint16_t *scalesOf(int64_t j) const {
      return s + j *
                     (kMins                      ? k / 256 * 2
                      : Fm == WeightFormat::Q6_K ? k / 256
                                                 : k / kBlock) *
                     kPanel;
    }
    /// The K formats' k / 16 sub-block scales a column.
    const uint8_t *subScalesOf(int64_t j) const {
      return sc + j * (k / 16) * kPanel;
    }
  };

  /// Block b's (Q6_K: its half h's) scale and bias (dequantize) for vector
  /// i of panel j.
  static void blockScale(const Operands &o, int64_t j, int64_t b, int h,
                         int i, F &scale, F &bias) {
    if constexpr (Fm == WeightFormat::Q6_K) {
      scale = scales(o.scalesOf(j) + b / 8 * kPanel + i * W) *
              signedBytes(o.subScalesOf(j) + (2 * b + h) * kPanel + i * W);
      bias = scale * F(-32.0f);
    } else if constexpr (kMins) {
      const uint16_t *super = o.scalesOf(j) + b / 8 * 2 * kPanel + i * W;
      const uint8_t *sub = o.subScalesOf(j) + b * 2 * kPanel + i * W;
      scale = scales(super) * bytes(sub);
      bias = -(scales(super + kPanel) * bytes(sub + kPanel));
    } else {
      scale = scales(o.scalesOf(j) + b * kPanel + i * W);
      bias = scale * F(-8.0f);
    }
  }

  /// Decode: R rows of A against NP panels from j.
  template <int R, int NP>
  static void decode(const Operands &o, const float *a, float *c, int64_t j) {
    F acc[R][NP][V];
    for (int r = 0; r < R; ++r)
      for (int p = 0; p < NP; ++p)
        for (int i = 0; i < V; ++i)
          acc[r][p][i] = load(c + r * o.ldc + (j + p) * kPanel + i * W);
    for (int64_t b = 0; b < o.k / kBlock; ++b)
      for (int h = 0; h < kHalves; ++h) {
      F scale[NP][V], bias[NP][V];
      for (int p = 0; p < NP; ++p)
        for (int i = 0; i < V; ++i)
          blockScale(o, j + p, b, h, i, scale[p][i], bias[p][i]);
      for (int64_t t = h * kBlock / kHalves; t < (h + 1) * kBlock / kHalves;
           ++t) {
        int64_t kk = b * kBlock + t;
        for (int p = 0; p < NP; ++p) {
          const int8_t *q = o.values(j + p) + stepOffset(kk);
          if ((kk * kPanel) % 64 == 0)
            __builtin_prefetch(q + kPrefetchBytes);
          F w[V];
          for (int i = 0; i < V; ++i)
            w[i] = dequantize(q + i * W, kk, scale[p][i], bias[p][i]);
          for (int r = 0; r < R; ++r) {
            F x = F(a[r * o.lda + kk]);
            for (int i = 0; i < V; ++i)
              acc[r][p][i] = fma(x, w[i], acc[r][p][i]);
          }
        }
      }
    }
    for (int r = 0; r < R; ++r)
      for (int p = 0; p < NP; ++p)
        for (int i = 0; i < V; ++i)
          store(c + r * o.ldc + (j + p) * kPanel + i * W, acc[r][p][i]);
  }

  template <int R>
  static void decodeRows(const Operands &o, const float *a, float *c,
                         int64_t j0, int64_t j1) {
    constexpr int NP = R == 1 ? kDecodePanels : R == 2 && V <= 2 ? 2 : 1;
    int64_t j = j0;
    for (; j + NP <= j1; j += NP)
      decode<R, NP>(o, a, c, j);
    for (; j < j1; ++j)
      decode<R, 1>(o, a, c, j);
  }

  /// Panel j's K steps [k0, k0 + depth), dequantized into panel[kk][col].
  static void dequantizePanel(const Operands &o, int64_t j, int64_t k0,
                              int64_t depth, float *panel) {
    const int8_t *q = o.values(j);
    for (int64_t kk = 0; kk < depth; kk += kBlock) {
      for (int h = 0; h < kHalves; ++h) {
        F scale[V], bias[V];
        for (int i = 0; i < V; ++i)
          blockScale(o, j, (k0 + kk) / kBlock, h, i, scale[i], bias[i]);
        for (int64_t t = kk + h * kBlock / kHalves;
             t < kk + (h + 1) * kBlock / kHalves; ++t)
          for (int i = 0; i < V; ++i)
            store(panel + t * kPanel + i * W,
                  dequantize(q + stepOffset(k0 + t) + i * W, k0 + t,
                             scale[i], bias[i]));
      }
    }
  }

  /// R rows x 2W columns of C (from panel column `col`) += A's rows times
  /// the panel.
  template <int R>
  static void tile(const float *a, int64_t lda, const float *panel, int col,
                   float *c, int64_t ldc, int64_t depth) {
    F acc[R][2];
    for (int r = 0; r < R; ++r) {
      acc[r][0] = load(c + r * ldc);
      acc[r][1] = load(c + r * ldc + W);
    }
    for (int64_t kk = 0; kk < depth; ++kk) {
      const float *row = panel + kk * kPanel + col;
      F b0 = load(row), b1 = load(row + W);
      for (int r = 0; r < R; ++r) {
        F x = F(a[r * lda + kk]);
        acc[r][0] = fma(x, b0, acc[r][0]);
        acc[r][1] = fma(x, b1, acc[r][1]);
      }
    }
    for (int r = 0; r < R; ++r) {
      store(c + r * ldc, acc[r][0]);
      store(c + r * ldc + W, acc[r][1]);
    }
  }

  static void prefill(const Operands &o, int64_t j0, int64_t j1) {
    alignas(64) float panel[kDepth * kPanel];
    for (int64_t k0 = 0; k0 < o.k; k0 += kDepth) {
      int64_t depth = std::min(kDepth, o.k - k0);
      for (int64_t j = j0; j < j1; ++j) {
        dequantizePanel(o, j, k0, depth, panel);
        const float *a = o.a + k0;
        // The panel's columns two vectors at a time (V is even).
        for (int col = 0; col < kPanel; col += 2 * W) {
        float *c = o.c + j * kPanel + col;
        int64_t r = 0;
        for (; r + kRows <= o.m; r += kRows)
          tile<kRows>(a + r * o.lda, o.lda, panel, col, c + r * o.ldc, o.ldc,
                      depth);
        switch (o.m - r) {
#define TFM_TILE_CASE(R)                                                       \
  case R:                                                                      \
    tile<R>(a + r * o.lda, o.lda, panel, col, c + r * o.ldc, o.ldc, depth);    \
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
  }

  /// C[m, j * P + r] += ... for panels [j0, j1).
  static void run(const float *a, const int8_t *v, const uint16_t *s,
                  const uint8_t *sc, float *c, int64_t lda, int64_t ldc,
                  int64_t m, int64_t k, int64_t j0, int64_t j1) {
    Operands o{a, v, s, sc, c, lda, ldc, m, k};
    if (m > kDecodeRows)
      return prefill(o, j0, j1);
    for (int64_t r = 0; r < m; r += 4) {
      const float *rows = a + r * lda;
      float *out = c + r * ldc;
      switch (std::min<int64_t>(4, m - r)) {
      case 1:
        decodeRows<1>(o, rows, out, j0, j1);
        break;
      case 2:
        decodeRows<2>(o, rows, out, j0, j1);
        break;
      case 3:
        decodeRows<3>(o, rows, out, j0, j1);
        break;
      default:
        decodeRows<4>(o, rows, out, j0, j1);
        break;
      }
    }
  }
};

/// Runs the kernel whose panel, W x V columns for one of `Vs`, is `panel`
/// wide; false if none is (each instruction set's translation unit lists
/// the vectors per panel it has code for).
template <int W, WeightFormat Fm, int... Vs>
bool runPanel(int64_t panel, const float *a, const int8_t *v,
              const uint16_t *s, const uint8_t *sc, float *c, int64_t lda,
              int64_t ldc, int64_t m, int64_t k, int64_t j0, int64_t j1) {
  return ((panel == W * Vs &&
           (BlockMatmul<W, Vs, Fm>::run(a, v, s, sc, c, lda, ldc, m, k, j0,
                                        j1),
            true)) ||
          ...);
}

} // namespace
} // namespace tfm::kernels

/// Defines an instruction set's entry points (Kernels.h), q8_0Matmul ISA,
/// q4_0Matmul ISA, q4_kMatmul ISA, q5_kMatmul ISA and q6_kMatmul ISA, for
/// panels of W x V
/// columns, V in the rest.
#define TFM_DEFINE_BLOCK_MATMUL(NAME, ISA, W, FORMAT, ...)                     \
  bool tfm::kernels::NAME##ISA(const float *a, const int8_t *v,                \
                               const uint16_t *s, const uint8_t *sc, float *c, \
                               int64_t lda, int64_t ldc, int64_t m, int64_t k, \
                               int64_t panel, int64_t j0, int64_t j1) {        \
    return runPanel<W, WeightFormat::FORMAT, __VA_ARGS__>(                     \
        panel, a, v, s, sc, c, lda, ldc, m, k, j0, j1);                        \
  }
#define TFM_DEFINE_BLOCK_MATMULS(ISA, W, ...)                                  \
  TFM_DEFINE_BLOCK_MATMUL(q8_0Matmul, ISA, W, Q8_0, __VA_ARGS__)               \
  TFM_DEFINE_BLOCK_MATMUL(q4_0Matmul, ISA, W, Q4_0, __VA_ARGS__)               \
  TFM_DEFINE_BLOCK_MATMUL(q4_kMatmul, ISA, W, Q4_K, __VA_ARGS__)               \
  TFM_DEFINE_BLOCK_MATMUL(q5_kMatmul, ISA, W, Q5_K, __VA_ARGS__)               \
  TFM_DEFINE_BLOCK_MATMUL(q6_kMatmul, ISA, W, Q6_K, __VA_ARGS__)

#endif // TFM_RUNTIME_KERNELS_BLOCKMATMUL_H

//===- Int8BlockMatmul.h - int8 rows times block weights --------*- C++ -*-===//
//
// The body of tfm's int8 quantized matmul micro-kernels: the activations'
// rows quantized per block of 32 along K to int8 (Q8_0's scheme: d = max |a|
// / 127, q = roundeven(a / d)), each block's products summed exactly in
// int32 by the target's int8 dot products, and the sum scaled once:
//
//   C[m, n] = fma(float(sum_t qa[m, b, t] qw[n, b, t]), dw[n, b] * da[m, b],
//                 C[m, n])       for blocks b = 0, 1, ... in order
//
// (Q4_0's integer is its 4-bit q minus 8). That is the function llama.cpp's
// CPU backend computes for Q8_0 and Q4_0 weights. A Q4_K weight (d * sc) *
// q - dmin * m has two terms, the min's from the block's activation sum:
//
//   C[m, n] = fma(float(sum_t qa q), (d * sc) * da, C[m, n])
//   C[m, n] = fma(dmin * m, -(da * float(sum_t qa)), C[m, n])
//
// (d * sc and dmin * m are exact, formed once per column for all rows, so
// a row's block costs what a Q4_0 one does; llama.cpp sums a super-block's
// sub-blocks in integers first, its activations quantized per 256; here per
// 32, as for the other formats; Q5_K likewise, its q 5-bit). A Q6_K weight (d *
// sc) * (q - 32), sc per 16 steps, is two such terms a block, one per half h:
//
//   C[m, n] = fma(float(sum_h qa q - 32 sum_h qa), (d * sc_h) * da, C[m, n])
// Every instruction set's variant gives the same floats: the integer sums
// are exact and the scaling is the same roundings in the same order.
//
// The weights come in panels of P columns with four K steps of a column in
// adjacent bytes, one 32-bit lane of an int8 dot product:
//
//   Q8_0: V[j, b, u, r, i] = the int8 at K step 32 b + 4 u + i (u < 8)
//   Q4_0: V[j, b, u, r, i] = two 4-bit q (u < 4): K step 32 b + 4 u + i in
//         the low nibble, 32 b + 16 + 4 u + i in the high one
//   Q4_K: as Q4_0's
//   Q5_K: as Q8_0's, each byte an unsigned 5-bit q
//   Q6_K: its unsigned 6-bit q in 6 bits (u < 6): nibble quad u (steps
//         4 u + i and 16 + 4 u + i, their low 4 bits as Q4_0's) at quad u +
//         1 + u / 2, their high 2 bits in byte i of quad 3 (u / 2), at bit
//         4 (u % 2) and two above (mlir::tfm::isSixBitValues)
//
// and the scales S[j, b, r] (f16; Q4_K: D and SC) as for the f32 kernels
// (BlockMatmul.h). Decode streams as many panels side by side as one
// row's accumulators fill in registers (the plan's decode vectors: 8 or 4
// on AVX-512, 4 on AVX2), each panel a stream of values and one of scales;
// more rows take a panel kMaxRows rows at a time (docs/design.md,
// "Quantized weights" and "Int8 panels").
//
// An instruction set is a traits struct (Isa below): `dotU8` adds to each
// 32-bit lane the four products of unsigned weight bytes and signed
// activation bytes (AVX-512 VNNI's vpdpbusd; AVX2's vpmaddubsw + vpmaddwd,
// whose 16-bit pair sums cannot saturate for 4-bit weights). Q8_0's signed
// weights become unsigned by flipping their sign bit (w + 128, the sum
// corrected by 128 times the block's activation sum) where the dot product
// accumulates in 32 bits, or by moving their sign onto the activations
// (|w| times sign(a, w), llama.cpp's AVX2 form) where pairs are summed in 16
// bits. Why int8 and its measurements: docs/design.md, "Quantized weights".
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_KERNELS_INT8BLOCKMATMUL_H
#define TFM_RUNTIME_KERNELS_INT8BLOCKMATMUL_H

#include "BlockMatmul.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace tfm::kernels {
// Internal to each translation unit that includes this: each compiles it
// for its own instruction set, and one shared (ODR-merged) copy of an
// inline function would run one set's code on every path.
namespace {

/// The activations' M rows quantized per block of 32 (contiguous): q [M,
/// K] int8, and for each block [M, K/32] its scale d and the sum of its q.
struct Int8Rows {
  const int8_t *q;
  const float *d;
  const int32_t *sum;
};

/// Quantizes A's rows (lda apart) given each block's largest magnitude
/// amax [M, K/32] (ldamax apart), as tfm-cpu-pack-weights' generic defines
/// it: d = amax / 127, q = roundeven(a * (d != 0 ? 1 / d : 0)); q [M, K],
/// d and sum [M, K/32] contiguous. Once per matmul, before its column
/// blocks (tfm-cpu-lower-quantized-matmuls); the same values on every
/// instruction set.
inline void quantizeRows(const float *a, int64_t lda, const float *amax,
                         int64_t ldamax, int64_t m, int64_t k, int8_t *q,
                         float *d, int32_t *sum) {
  int64_t blocks = k / 32;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      float scale = amax[r * ldamax + b] / 127.0f;
      float inverse = scale != 0.0f ? 1.0f / scale : 0.0f;
      const float *x = a + r * lda + b * 32;
      int8_t *out = q + r * k + b * 32;
      int32_t total = 0;
      for (int t = 0; t < 32; ++t) {
        // |x| <= amax keeps q in [-127, 127]; the clamp only makes a
        // non-finite activation's conversion defined (its block's d is then
        // NaN or infinite, and so is the result).
        out[t] = int8_t(__builtin_fminf(
            __builtin_fmaxf(__builtin_roundevenf(x[t] * inverse), -127.0f),
            127.0f));
        total += out[t];
      }
      d[r * blocks + b] = scale;
      sum[r * blocks + b] = total;
    }
}

/// The sum of a block's first 16 activations (Q6_K's scales are per 16).
inline int32_t halfSum(const int8_t *q) {
  int32_t total = 0;
  for (int t = 0; t < 16; ++t)
    total += q[t];
  return total;
}

/// Any instruction set: the definition above, one column at a time.
template <WeightFormat Fm> struct Int8BlockMatmulScalar {
  static constexpr bool Q4 = Fm == WeightFormat::Q4_0 || Fm == WeightFormat::Q4_K;
  static constexpr bool Q6 = Fm == WeightFormat::Q6_K;
  static void run(const Int8Rows &x, const int8_t *v, const uint16_t *s,
                  const uint8_t *sc, float *c, int64_t ldc, int64_t m,
                  int64_t k, int64_t panel, int64_t j0, int64_t j1) {
    int64_t blocks = k / 32, blockBytes = (Q4 ? 16 : Q6 ? 24 : 32) * panel;
    for (int64_t j = j0; j < j1; ++j)
      for (int64_t r = 0; r < panel; ++r)
        for (int64_t row = 0; row < m; ++row) {
          float acc = c[row * ldc + j * panel + r];
          for (int64_t b = 0; b < blocks; ++b) {
            const int8_t *block = v + (j * blocks + b) * blockBytes;
            const int8_t *q = x.q + row * k + b * 32;
            // The block's products, and Q6_K's per 16.
            int32_t sum = 0, halves[2] = {0, 0};
            for (int t = 0; t < 32; ++t) {
              int u = (Q4 || Q6 ? t % 16 : t) / 4, i = t % 4, h = t / 16;
              auto at = [&](int quad) {
                return uint8_t(block[(quad * panel + r) * 4 + i]);
              };
              int8_t byte = int8_t(at(Q6 ? u + 1 + u / 2 : u));
              int32_t w =
                  Q4 ? int32_t((uint8_t(byte) >> (4 * h)) & 15)
                  : Q6
                      ? int32_t(((uint8_t(byte) >> (4 * h)) & 15) |
                                ((at(3 * (u / 2)) >> (4 * (u % 2) + 2 * h)) & 3)
                                    << 4)
                  : Fm == WeightFormat::Q5_K ? int32_t(uint8_t(byte))
                                             : int32_t(byte);
              if (Fm == WeightFormat::Q4_0)
                w -= 8;
              sum += w * q[t];
              halves[t / 16] += w * q[t];
            }
            float da = x.d[row * blocks + b];
            if constexpr (Fm == WeightFormat::Q6_K) {
              float d = halfBitsToFloat(s[(j * (blocks / 8) + b / 8) * panel + r]);
              int32_t first = halfSum(q);
              int32_t sums[2] = {first, x.sum[row * blocks + b] - first};
              for (int h = 0; h < 2; ++h) {
                float scale =
                    d * float(int8_t(sc[(j * (k / 16) + 2 * b + h) * panel + r]));
                acc = std::fma(float(halves[h] - 32 * sums[h]), scale * da,
                               acc);
              }
            } else if constexpr (Fm == WeightFormat::Q4_K ||
                                 Fm == WeightFormat::Q5_K) {
              const uint16_t *super = s + (j * (blocks / 8) + b / 8) * 2 * panel;
              const uint8_t *sub = sc + (j * blocks + b) * 2 * panel;
              float scale = halfBitsToFloat(super[r]) * float(sub[r]);
              float min = halfBitsToFloat(super[panel + r]) *
                          float(sub[panel + r]);
              acc = std::fma(float(sum), scale * da, acc);
              acc = std::fma(min, -(da * float(x.sum[row * blocks + b])),
                             acc);
            } else {
              float scale = halfBitsToFloat(s[(j * blocks + b) * panel + r]) *
                            da;
              acc = std::fma(float(sum), scale, acc);
            }
          }
          c[row * ldc + j * panel + r] = acc;
        }
  }
};

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
/// AVX-512 VNNI: 16 lanes, vpdpbusd.
struct Avx512Vnni {
  using I = __m512i;
  using F = __m512;
  static constexpr int kLanes = 16;
  static constexpr int32_t kQ8Offset = 128;
  static constexpr int kMaxRows = 4;
  static constexpr int kRegisters = 32;
  static I load(const int8_t *p) { return _mm512_loadu_si512(p); }
  static void store(int8_t *p, I v) { _mm512_storeu_si512(p, v); }
  static I broadcast4(const int8_t *p) {
    int32_t x;
    std::memcpy(&x, p, 4);
    return _mm512_set1_epi32(x);
  }
  static I zero() { return _mm512_setzero_si512(); }
  static I low(I w) { return _mm512_and_si512(w, _mm512_set1_epi8(15)); }
  static I high(I w) {
    return _mm512_and_si512(_mm512_srli_epi16(w, 4), _mm512_set1_epi8(15));
  }
  /// `w` (nibbles, high bits clear) or'ed with bits 4-5 of each byte of
  /// `h` shifted left by S (right if negative), i.e. h's bits 4 - S and 5
  /// - S: a Q6_K nibble joined to its high bits. The 16-bit shift moves
  /// bits across bytes only into bits the mask clears.
  template <int S> static I withTop(I w, I h) {
    I shifted = h;
    if constexpr (S > 0)
      shifted = _mm512_slli_epi16(h, S);
    else if constexpr (S < 0)
      shifted = _mm512_srli_epi16(h, -S);
    return _mm512_or_si512(w,
                           _mm512_and_si512(shifted, _mm512_set1_epi8(0x30)));
  }
  static I dotU8(I acc, I u, I s) { return _mm512_dpbusd_epi32(acc, u, s); }
  /// A lane's worth of unsigned or signed bytes widened to int32 lanes.
  static I widenU8(const uint8_t *p) {
    return _mm512_cvtepu8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
  }
  static I widenI8(const uint8_t *p) {
    return _mm512_cvtepi8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
  }
  using Q8 = I;
  static Q8 prepareQ8(I w) {
    return _mm512_xor_si512(w, _mm512_set1_epi8(char(0x80)));
  }
  static I dotQ8(I acc, Q8 w, I s) { return dotU8(acc, w, s); }
  static F toFloat(I v, int32_t minus) {
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(v, _mm512_set1_epi32(minus)));
  }
  static F scales(const uint16_t *p) {
    return _mm512_cvtph_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
  }
  static F splat(float x) { return _mm512_set1_ps(x); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F loadF(const float *p) { return _mm512_loadu_ps(p); }
  static void storeF(float *p, F v) { _mm512_storeu_ps(p, v); }
};
#endif

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
/// AVX2: 8 lanes, vpmaddubsw + vpmaddwd.
struct Avx2 {
  using I = __m256i;
  using F = __m256;
  static constexpr int kLanes = 8;
  static constexpr int32_t kQ8Offset = 0;
  static constexpr int kMaxRows = 2;
  static constexpr int kRegisters = 16;
  static I load(const int8_t *p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
  }
  static void store(int8_t *p, I v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), v);
  }
  static I broadcast4(const int8_t *p) {
    int32_t x;
    std::memcpy(&x, p, 4);
    return _mm256_set1_epi32(x);
  }
  static I zero() { return _mm256_setzero_si256(); }
  static I low(I w) { return _mm256_and_si256(w, _mm256_set1_epi8(15)); }
  static I high(I w) {
    return _mm256_and_si256(_mm256_srli_epi16(w, 4), _mm256_set1_epi8(15));
  }
  /// As Avx512Vnni::withTop.
  template <int S> static I withTop(I w, I h) {
    I shifted = h;
    if constexpr (S > 0)
      shifted = _mm256_slli_epi16(h, S);
    else if constexpr (S < 0)
      shifted = _mm256_srli_epi16(h, -S);
    return _mm256_or_si256(w,
                           _mm256_and_si256(shifted, _mm256_set1_epi8(0x30)));
  }
  static I dotU8(I acc, I u, I s) {
    return _mm256_add_epi32(
        acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s),
                               _mm256_set1_epi16(1)));
  }
  static I widenU8(const uint8_t *p) {
    return _mm256_cvtepu8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)));
  }
  static I widenI8(const uint8_t *p) {
    return _mm256_cvtepi8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)));
  }
  struct Q8 {
    I magnitude, sign;
  };
  static Q8 prepareQ8(I w) { return {_mm256_sign_epi8(w, w), w}; }
  static I dotQ8(I acc, Q8 w, I s) {
    return dotU8(acc, w.magnitude, _mm256_sign_epi8(s, w.sign));
  }
  static F toFloat(I v, int32_t minus) {
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(v, _mm256_set1_epi32(minus)));
  }
  static F scales(const uint16_t *p) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
  }
  static F splat(float x) { return _mm256_set1_ps(x); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F loadF(const float *p) { return _mm256_loadu_ps(p); }
  static void storeF(float *p, F v) { _mm256_storeu_ps(p, v); }
};
#endif

/// V vectors of Isa's lanes per panel, weights in format Fm; Q6_K's in its
/// 6-bit layout, or (SixBit false) a byte a K step, as prefill unpacks a
/// panel of them.
template <class Isa, int V, WeightFormat Fm,
          bool SixBit = Fm == WeightFormat::Q6_K>
struct Int8BlockMatmul {
  using I = typename Isa::I;
  using F = typename Isa::F;
  /// Two 4-bit steps a byte (Q4_0, Q4_K).
  static constexpr bool Q4 = Fm == WeightFormat::Q4_0 || Fm == WeightFormat::Q4_K;
  /// Q6_K: its sums per 16 steps (quads 0-3 and 4-7 of its bytes, or the
  /// low and high nibbles of its 6-bit values, each with its high bits).
  static constexpr bool Q6 = Fm == WeightFormat::Q6_K;
  static constexpr bool kSixBit = Q6 && SixBit;
  /// Q4_K, Q5_K: a scale and a min per block; Q5_K's bytes unsigned.
  static constexpr bool kMins =
      Fm == WeightFormat::Q4_K || Fm == WeightFormat::Q5_K;
  static constexpr int kHalves = Q6 ? 2 : 1;
  static constexpr int kPanel = V * Isa::kLanes;
  /// Groups of four K steps a block holds per column (a nibble each for
  /// Q4_0: the low one, steps 4 u..; the high one, 16 + 4 u..; Q6_K's
  /// likewise, their high bits in two more).
  static constexpr int kQuads = Q4 || kSixBit ? 4 : 8;
  static constexpr int32_t kOffset = Fm == WeightFormat::Q4_0 ? 8
                                     : Fm == WeightFormat::Q8_0
                                         ? Isa::kQ8Offset
                                         : 0;
  static constexpr int64_t kBlockBytes = (Q4        ? 16
                                          : kSixBit ? 24
                                                    : 32) *
                                         int64_t(kPanel);
  /// Vectors of values a 64-byte line holds: one prefetch a line, issued
  /// with its first vector (the rows of a panel's block are whole lines, the
  /// packed weights 64-byte aligned), as a second to the same line would
  /// only cost an issue slot.
  static constexpr int kLineVectors = std::max(1, 64 / (Isa::kLanes * 4));
  /// The most vectors one row's tile accumulates in registers (decode): 8
  /// of 16 lanes (four panels of 32 columns or two of 64 on AVX-512), 4 of
  /// 8. The plan may ask for 4 on AVX-512 (run's `decodeVectors`).
  static constexpr int kMaxDecodeVectors = Isa::kLanes >= 16 ? 8 : 4;
  /// More rows: the vectors of a panel a tile of kMaxRows rows takes at a
  /// time, a panel of up to four whole (half of a 64-column panel at a
  /// time on AVX-512, each tile's K steps strided, measured about 10%
  /// slower on Q4_0 prefill), but two for Q6_K on AVX-512, whose two sums
  /// a block would not fit in registers.
  static constexpr int kPrefillVectors = Isa::kLanes >= 16 && Q6 ? 2 : 4;

  struct Operands {
    const Int8Rows &x;
    const int8_t *v;
    const uint16_t *s;
    const uint8_t *sc;
    float *c;
    int64_t ldc, m, k;
    /// How far ahead (bytes) each panel's values are prefetched: the plan's
    /// (`int8_prefetch_packed`, `int8_prefetch_bytewise`); 0, none.
    int64_t prefetch;
  };

  /// Rows [m0, m0 + R) against vectors [V0, V0 + T) of NP panels from j0.
  /// Not inlined into the loops over panels: inlined, Q8_0's decode tile
  /// measured 5-7% slower (the same instructions, scheduled worse).
  template <int R, int NP, int T, int V0>
  [[gnu::noinline]] static void tile(const Operands &o, int64_t m0,
                                     int64_t j0) {
    int64_t blocks = o.k / 32;
    // Vector i of the tile: its first column in a row of its panel.
    auto lane = [](int i) { return int64_t(V0 + i) * Isa::kLanes; };
    F acc[R][NP][T];
    for (int r = 0; r < R; ++r)
      for (int p = 0; p < NP; ++p)
        for (int i = 0; i < T; ++i)
          acc[r][p][i] =
              Isa::loadF(o.c + (m0 + r) * o.ldc + (j0 + p) * kPanel + lane(i));
    // One row (decode): the K formats' super-block scales (d, and dmin)
    // converted once per super-block rather than once per block, where they
    // fit in registers beside the accumulators and the sums (four left for
    // the rest): AVX-512's decode tile of 4 vectors, not 8, nor AVX2's
    // (measured only there). More rows keep the registers for their sums.
    constexpr int kSuperParts = kMins ? 2 : 1;
    constexpr bool kHoistSuper =
        R == 1 && (kMins || Q6) &&
        NP * T * (2 + (Q6 ? 1 : 0) + kSuperParts) + 4 <= Isa::kRegisters;
    // Part h (d; Q4_K's and Q5_K's dmin at 1) of block b's super-block
    // scales, for vector i of panel p.
    auto loadSuper = [&](int p, int64_t b, int i, int h) {
      return Isa::scales(
          o.s + ((j0 + p) * (blocks / 8) + b / 8) * kSuperParts * kPanel +
          h * kPanel + lane(i));
    };
    F super[kHoistSuper ? NP : 1][kHoistSuper ? T : 1][kSuperParts];
    auto superScale = [&](int p, int64_t b, int i, int h) -> F {
      if constexpr (kHoistSuper)
        return super[p][i][h];
      else
        return loadSuper(p, b, i, h);
    };
    for (int64_t b = 0; b < blocks; ++b) {
      if constexpr (kHoistSuper)
        if (b % 8 == 0)
          for (int p = 0; p < NP; ++p)
            for (int i = 0; i < T; ++i)
              for (int h = 0; h < kSuperParts; ++h)
                super[p][i][h] = loadSuper(p, b, i, h);
      // Q6_K's second half's sums in sum2.
      I sum[R][NP][T], sum2[Q6 ? R : 1][NP][T];
      for (int r = 0; r < R; ++r)
        for (int p = 0; p < NP; ++p)
          for (int i = 0; i < T; ++i) {
            sum[r][p][i] = Isa::zero();
            if constexpr (Q6)
              sum2[r][p][i] = Isa::zero();
          }
      const int8_t *q[R];
      for (int r = 0; r < R; ++r)
        q[r] = o.x.q + (m0 + r) * o.k + b * 32;
      for (int u = 0; u < kQuads; ++u) {
        I a[R], aHigh[R];
        for (int r = 0; r < R; ++r) {
          a[r] = Isa::broadcast4(q[r] + 4 * u);
          if constexpr (Q4 || kSixBit)
            aHigh[r] = Isa::broadcast4(q[r] + 16 + 4 * u);
        }
        for (int p = 0; p < NP; ++p) {
          // Quad u's row of the panel's block: kPanel columns, four bytes
          // each (Q6_K's nibbles after their high bits: quad u + 1 + u / 2).
          const int8_t *block = o.v + ((j0 + p) * blocks + b) * kBlockBytes;
          const int8_t *row =
              block + (kSixBit ? u + 1 + u / 2 : u) * kPanel * 4;
          for (int i = 0; i < T; ++i) {
            const int8_t *at = row + lane(i) * 4;
            if (o.prefetch && i % kLineVectors == 0)
              __builtin_prefetch(at + o.prefetch);
            I w = Isa::load(at);
            if constexpr (Q4) {
              I low = Isa::low(w), high = Isa::high(w);
              for (int r = 0; r < R; ++r) {
                sum[r][p][i] = Isa::dotU8(sum[r][p][i], low, a[r]);
                sum[r][p][i] = Isa::dotU8(sum[r][p][i], high, aHigh[r]);
              }
            } else if constexpr (Fm == WeightFormat::Q5_K) {
              for (int r = 0; r < R; ++r)
                sum[r][p][i] = Isa::dotU8(sum[r][p][i], w, a[r]);
            } else if constexpr (kSixBit) {
              const int8_t *top =
                  block + 3 * (u / 2) * kPanel * 4 + lane(i) * 4;
              if (o.prefetch && u % 2 == 0 && i % kLineVectors == 0)
                __builtin_prefetch(top + o.prefetch);
              I low, high;
              sixBits(w, Isa::load(top), u, low, high);
              for (int r = 0; r < R; ++r) {
                sum[r][p][i] = Isa::dotU8(sum[r][p][i], low, a[r]);
                sum2[r][p][i] = Isa::dotU8(sum2[r][p][i], high, aHigh[r]);
              }
            } else if constexpr (Q6) {
              for (int r = 0; r < R; ++r) {
                I &half = u < 4 ? sum[r][p][i] : sum2[r][p][i];
                half = Isa::dotU8(half, w, a[r]);
              }
            } else {
              auto prepared = Isa::prepareQ8(w);
              for (int r = 0; r < R; ++r)
                sum[r][p][i] = Isa::dotQ8(sum[r][p][i], prepared, a[r]);
            }
          }
        }
      }
      // Q6_K: each row's sum of the block's first 16 activations.
      int32_t firstHalf[R];
      if constexpr (Q6)
        for (int r = 0; r < R; ++r)
          firstHalf[r] = halfSum(q[r]);
      for (int p = 0; p < NP; ++p)
        for (int i = 0; i < T; ++i) {
          int64_t j = j0 + p;
          if constexpr (Q6) {
            // Per column: d * sc of each half (exact in f32); per row, the
            // halves' activation sums for the q - 32.
            F d = superScale(p, b, i, 0);
            const uint8_t *sub =
                o.sc + (j * (o.k / 16) + 2 * b) * kPanel + lane(i);
            F scale0 = Isa::mul(d, Isa::toFloat(Isa::widenI8(sub), 0));
            F scale1 = Isa::mul(d, Isa::toFloat(Isa::widenI8(sub + kPanel), 0));
            for (int r = 0; r < R; ++r) {
              int64_t at = (m0 + r) * blocks + b;
              float da = o.x.d[at];
              int32_t first = firstHalf[r];
              acc[r][p][i] =
                  Isa::fma(Isa::toFloat(sum[r][p][i], 32 * first),
                           Isa::mul(scale0, Isa::splat(da)), acc[r][p][i]);
              acc[r][p][i] = Isa::fma(
                  Isa::toFloat(sum2[r][p][i], 32 * (o.x.sum[at] - first)),
                  Isa::mul(scale1, Isa::splat(da)), acc[r][p][i]);
            }
            continue;
          }
          if constexpr (kMins) {
            // Per column: d * sc and dmin * m (exact in f32), once for every
            // row.
            F d = superScale(p, b, i, 0), dmin = superScale(p, b, i, 1);
            const uint8_t *sub = o.sc + (j * blocks + b) * 2 * kPanel + lane(i);
            F scale = Isa::mul(d, Isa::toFloat(Isa::widenU8(sub), 0));
            F min = Isa::mul(dmin, Isa::toFloat(Isa::widenU8(sub + kPanel), 0));
            for (int r = 0; r < R; ++r) {
              int64_t at = (m0 + r) * blocks + b;
              float da = o.x.d[at];
              acc[r][p][i] =
                  Isa::fma(Isa::toFloat(sum[r][p][i], 0),
                           Isa::mul(scale, Isa::splat(da)), acc[r][p][i]);
              acc[r][p][i] = Isa::fma(
                  min, Isa::splat(-(da * float(o.x.sum[at]))), acc[r][p][i]);
            }
            continue;
          }
          F dw = Isa::scales(o.s + (j * blocks + b) * kPanel + lane(i));
          for (int r = 0; r < R; ++r) {
            int64_t at = (m0 + r) * blocks + b;
            F scale = Isa::mul(dw, Isa::splat(o.x.d[at]));
            acc[r][p][i] =
                Isa::fma(Isa::toFloat(sum[r][p][i], kOffset * o.x.sum[at]),
                         scale, acc[r][p][i]);
          }
        }
    }
    for (int r = 0; r < R; ++r)
      for (int p = 0; p < NP; ++p)
        for (int i = 0; i < T; ++i)
          Isa::storeF(o.c + (m0 + r) * o.ldc + (j0 + p) * kPanel + lane(i),
                      acc[r][p][i]);
  }

  /// The tiles of T vectors that make up a panel, side by side.
  template <int T> using Slices = std::make_integer_sequence<int, V / T>;
  template <int R, int NP, int T, int... S>
  static void slices(const Operands &o, int64_t m0, int64_t j,
                     std::integer_sequence<int, S...>) {
    static_assert(V % T == 0, "a panel is whole tiles");
    (tile<R, NP, T, S * T>(o, m0, j), ...);
  }

  /// One row (decode) against panels [j0, j1): DV accumulators in
  /// registers, as whole panels streamed side by side (each a stream of
  /// values and one of scales) or, for a wider panel, a part of one at a
  /// time.
  template <int DV>
  static void decode(const Operands &o, int64_t j0, int64_t j1) {
    constexpr int T = std::min(V, DV);
    constexpr int NP = std::max(1, DV / V);
    int64_t j = j0;
    for (; j + NP <= j1; j += NP)
      slices<1, NP, T>(o, 0, j, Slices<T>());
    for (; j < j1; ++j)
      slices<1, 1, T>(o, 0, j, Slices<T>());
  }

  /// Q6_K's 6-bit values: nibble quad u's vector `w` and the vector `top`
  /// of its high bits as the 6-bit q of its steps 4 u.. (`low`) and 16 +
  /// 4 u.. (`high`): their high bits, at bit 4 (u % 2) of `top` and two
  /// above, moved to bits 4-5.
  static void sixBits(I w, I top, int u, I &low, I &high) {
    low = u % 2 == 0 ? Isa::template withTop<4>(Isa::low(w), top)
                     : Isa::template withTop<0>(Isa::low(w), top);
    high = u % 2 == 0 ? Isa::template withTop<2>(Isa::high(w), top)
                      : Isa::template withTop<-2>(Isa::high(w), top);
  }

  /// Q6_K: `blocks` blocks of a panel's 6-bit values as bytes, the layout
  /// of Int8BlockMatmul<Isa, V, Q6_K, false> ([K/32, 8, P, 4]: quads 0-3
  /// steps 4 u.., 4-7 steps 16 + 4 u..).
  static void unpackPanel(const int8_t *packed, int64_t blocks, int8_t *out) {
    constexpr int64_t kQuadBytes = kPanel * 4;
    for (int64_t b = 0; b < blocks;
         ++b, packed += kBlockBytes, out += 32 * kPanel)
      for (int u = 0; u < 4; ++u)
        for (int64_t x = 0; x < kQuadBytes; x += Isa::kLanes * 4) {
          I low, high;
          sixBits(Isa::load(packed + (u + 1 + u / 2) * kQuadBytes + x),
                  Isa::load(packed + 3 * (u / 2) * kQuadBytes + x), u, low,
                  high);
          Isa::store(out + u * kQuadBytes + x, low);
          Isa::store(out + (4 + u) * kQuadBytes + x, high);
        }
  }

  /// More rows: kMaxRows rows at a time against panels [j0, j1), each in
  /// slices of kPrefillVectors. (A slice against every tile of rows in
  /// turn measured 5% slower on Q4_0 prefill than rows outermost.) Q6_K's
  /// 6-bit values, for more than one tile of rows, are unpacked a panel at
  /// a time to bytes and multiplied as such: unpacked per tile they
  /// measured 5% slower (docs/design.md, "Q6_K in 6 bits").
  static void prefill(const Operands &o, int64_t j0, int64_t j1) {
    if constexpr (kSixBit) {
      int64_t blocks = o.k / 32;
      // The thread's unpacked panel (scratch slot 0).
      auto *bytes =
          o.m > Isa::kMaxRows
              ? static_cast<int8_t *>(scratch<0>(32 * blocks * kPanel))
              : nullptr;
      if (bytes) {
        using Bytes = Int8BlockMatmul<Isa, V, Fm, false>;
        for (int64_t j = j0; j < j1; ++j) {
          unpackPanel(o.v + j * blocks * kBlockBytes, blocks, bytes);
          // Panel j's scales and columns as those of panel 0; its bytes,
          // just unpacked, are in cache: no prefetch.
          typename Bytes::Operands panel{o.x,
                                         bytes,
                                         o.s + j * (blocks / 8) * kPanel,
                                         o.sc + j * (o.k / 16) * kPanel,
                                         o.c + j * kPanel,
                                         o.ldc,
                                         o.m,
                                         o.k,
                                         /*prefetch=*/0};
          Bytes::prefill(panel, 0, 1);
        }
        return;
      }
    }
    constexpr int T = std::min(V, kPrefillVectors), kRows = Isa::kMaxRows;
    int64_t m0 = 0;
    for (; m0 + kRows <= o.m; m0 += kRows)
      for (int64_t j = j0; j < j1; ++j)
        slices<kRows, 1, T>(o, m0, j, Slices<T>());
    for (int64_t j = j0; j < j1; ++j)
      switch (o.m - m0) {
      case 1:
        slices<1, 1, T>(o, m0, j, Slices<T>());
        break;
      case 2:
        if constexpr (kRows > 2)
          slices<2, 1, T>(o, m0, j, Slices<T>());
        break;
      case 3:
        if constexpr (kRows > 3)
          slices<3, 1, T>(o, m0, j, Slices<T>());
        break;
      default:
        break;
      }
  }

  static void run(const Int8Rows &x, const int8_t *v, const uint16_t *s,
                  const uint8_t *sc, float *c, int64_t ldc, int64_t m,
                  int64_t k, int64_t j0, int64_t j1, int64_t decodeVectors,
                  int64_t prefetch) {
    Operands o{x, v, s, sc, c, ldc, m, k, prefetch};
    if (m != 1)
      prefill(o, j0, j1);
    else if (decodeVectors < kMaxDecodeVectors)
      decode<4>(o, j0, j1);
    else
      decode<kMaxDecodeVectors>(o, j0, j1);
  }
};

/// Runs, for panels of `panel` columns, the variant whose panel is Isa's
/// lanes x one of `Vs` (false if none is); Isa void: the scalar
/// definition, any panel.
template <class Isa, WeightFormat Fm, int... Vs>
bool runInt8Panel(int64_t panel, const Int8Rows &rows, const int8_t *v,
                  const uint16_t *s, const uint8_t *sc, float *c, int64_t ldc,
                  int64_t m, int64_t k, int64_t j0, int64_t j1,
                  int64_t decodeVectors, int64_t prefetch) {
  if constexpr (std::is_void_v<Isa>) {
    Int8BlockMatmulScalar<Fm>::run(rows, v, s, sc, c, ldc, m, k, panel, j0,
                                   j1);
    return true;
  } else {
    return ((panel == Isa::kLanes * Vs && (Int8BlockMatmul<Isa, Vs, Fm>::run(
                                               rows, v, s, sc, c, ldc, m, k, j0,
                                               j1, decodeVectors, prefetch),
                                           true)) ||
            ...);
  }
}

} // namespace
} // namespace tfm::kernels

/// Defines an instruction set's int8 entry points (Kernels.h):
/// quantizeRows ISA, and q8_0Int8Matmul ISA, q4_0Int8Matmul ISA,
/// q4_kInt8Matmul ISA, q5_kInt8Matmul ISA and q6_kInt8Matmul ISA by
/// `runInt8Panel<TRAITS,
/// format, Vs...>`.
#define TFM_DEFINE_INT8_BLOCK_MATMUL(NAME, ISA, TRAITS, FORMAT, ...)           \
  bool tfm::kernels::NAME##ISA(                                                \
      const int8_t *q, const float *d, const int32_t *sum, const int8_t *v,    \
      const uint16_t *s, const uint8_t *sc, float *c, int64_t ldc, int64_t m,  \
      int64_t k, int64_t panel, int64_t j0, int64_t j1, int64_t decodeVectors, \
      int64_t prefetch) {                                                      \
    return runInt8Panel<TRAITS, WeightFormat::FORMAT __VA_OPT__(, )            \
                                    __VA_ARGS__>(panel, Int8Rows{q, d, sum},   \
                                                 v, s, sc, c, ldc, m, k, j0,   \
                                                 j1, decodeVectors, prefetch); \
  }
#define TFM_DEFINE_INT8_BLOCK_MATMULS(ISA, TRAITS, ...)                        \
  void tfm::kernels::quantizeRows##ISA(const float *a, int64_t lda,            \
                                       const float *amax, int64_t ldamax,      \
                                       int64_t m, int64_t k, int8_t *q,        \
                                       float *d, int32_t *sum) {               \
    quantizeRows(a, lda, amax, ldamax, m, k, q, d, sum);                       \
  }                                                                            \
  TFM_DEFINE_INT8_BLOCK_MATMUL(q8_0Int8Matmul, ISA, TRAITS,                    \
                               Q8_0 __VA_OPT__(, ) __VA_ARGS__)                \
  TFM_DEFINE_INT8_BLOCK_MATMUL(q4_0Int8Matmul, ISA, TRAITS,                    \
                               Q4_0 __VA_OPT__(, ) __VA_ARGS__)                \
  TFM_DEFINE_INT8_BLOCK_MATMUL(q4_kInt8Matmul, ISA, TRAITS,                    \
                               Q4_K __VA_OPT__(, ) __VA_ARGS__)                \
  TFM_DEFINE_INT8_BLOCK_MATMUL(q5_kInt8Matmul, ISA, TRAITS,                    \
                               Q5_K __VA_OPT__(, ) __VA_ARGS__)                \
  TFM_DEFINE_INT8_BLOCK_MATMUL(q6_kInt8Matmul, ISA, TRAITS,                    \
                               Q6_K __VA_OPT__(, ) __VA_ARGS__)

#endif // TFM_RUNTIME_KERNELS_INT8BLOCKMATMUL_H

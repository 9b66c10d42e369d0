//===- Int8BlockMatmulAmx.cpp - the int8 matmuls on AMX tiles -------------===//
//
// Int8BlockMatmul.h's definition on AMX-INT8 tiles, for prefill (rows in
// tiles of 16): each block of 32 K steps is one tile product (`tdpbssd`,
// or `tdpbsud` for unsigned weight bytes) of the activations' 16 x 32 int8
// tile and a weight tile of 8 K quads x 16 columns -- the packed panels'
// own layout (four K steps of a column adjacent), read in place for the
// byte formats and unpacked once per panel for the nibble ones and Q6_K's
// 6-bit values. The int32 sums are stored and scaled into f32 accumulators
// by AVX-512 with the roundings of the other variants, in the same order,
// so every variant gives the same floats. Q6_K, whose scales are per 16 K
// steps, takes a tile product per half block. The next three products run while
// one's sums are scaled.
//
// Compiled with AMX-TILE, AMX-INT8 and AVX-512 (VNNI, BW) flags
// (CMakeLists.txt); the entry points (Entries.cpp) run it only where the
// CPU has them and Linux granted the tile data. Why and the measurements:
// docs/design.md, "Quantized weights".
//
//===----------------------------------------------------------------------===//
#include "BlockMatmul.h"
#include "Kernels.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>

using namespace tfm::kernels;

namespace {
/// A tile's rows, and a C tile's int32 columns (64 bytes a row).
constexpr int kTileRows = 16;
constexpr int kTileCols = 16;
/// K steps a block of the activations (its scale d and sum).
constexpr int kBlock = 32;

/// The tile registers: part u's sums (a part: a block, or Q6_K's half
/// block, one tile product) in tile u % 4 (0-3), its activations in 4 +
/// u % 2 and its weights in 6 + u % 2: three parts' products in flight
/// while one part's sums are scaled.
constexpr int kSum = 0, kActivations = 4, kWeights = 6;
constexpr int kSumTiles = 4;

/// LDTILECFG's 64-byte operand (palette 1).
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t startRow = 0;
  uint8_t reserved[14] = {};
  uint16_t bytesPerRow[16] = {};
  uint8_t rows[16] = {};
};

/// Configures the tiles for `rows` rows of activations (1..16) and parts of
/// `part` K steps (32 or 16).
void configureTiles(int rows, int part) {
  TileConfig config;
  for (int set = 0; set < kSumTiles; ++set) {
    config.bytesPerRow[kSum + set] = kTileCols * 4;
    config.rows[kSum + set] = uint8_t(rows);
  }
  for (int set = 0; set < 2; ++set) {
    config.bytesPerRow[kActivations + set] = uint16_t(part);
    config.rows[kActivations + set] = uint8_t(rows);
    config.bytesPerRow[kWeights + set] = kTileCols * 4;
    config.rows[kWeights + set] = uint8_t(part / 4);
  }
  _tile_loadconfig(&config);
}

// Scratch slots (scratch<Slot>, BlockMatmul.h): 0, an unpacked panel of
// nibbles or Q6_K's 6-bit values, K x P bytes; 1, Q6_K's activation sums
// per 16 K steps, M x K/16 int32; 2, the K formats' min factors, M x K/32
// f32.

template <WeightFormat Fm> struct AmxInt8Matmul {
  /// Two 4-bit steps a byte (Q4_0, Q4_K): unpacked before the products, as
  /// Q6_K's 6-bit values are.
  static constexpr bool Q4 =
      Fm == WeightFormat::Q4_0 || Fm == WeightFormat::Q4_K;
  /// A scale and a min per block (Q4_K, Q5_K).
  static constexpr bool kMins =
      Fm == WeightFormat::Q4_K || Fm == WeightFormat::Q5_K;
  /// Signed weight bytes (Q8_0; Q4_0's q - 8 as unpacked): tdpbssd; else
  /// unsigned: tdpbsud.
  static constexpr bool kSigned =
      Fm == WeightFormat::Q8_0 || Fm == WeightFormat::Q4_0;
  /// Q6_K: a scale per 16 K steps, so a tile product per half block, each
  /// corrected by 32 times its activations' sum (q - 32).
  static constexpr bool Q6 = Fm == WeightFormat::Q6_K;
  /// K steps a tile product, and the weight tile's K quads.
  static constexpr int kPart = Q6 ? 16 : kBlock;
  static constexpr int kQuads = kPart / 4;

  struct Operands {
    const int8_t *q;
    const float *d;
    const int32_t *sum;
    const uint16_t *s;
    const uint8_t *sc;
    float *c;
    int64_t ldc, m, k, panel, blocks;
    /// Q6_K: the sums of each part's 16 activations, [M, K/16].
    int32_t *partSums;
    /// Q4_K, Q5_K: each block's -(d * float(sum)), the factor of its min
    /// term, [M, K/32] (formed once rather than per column tile).
    float *minFactors;
  };

  /// Q6_K: partSums (the activations' half blocks' sums, exact integers
  /// like the VNNI kernel's halfSum); K is whole super-blocks of 256.
  static void sumParts(const Operands &o) {
    const __m512i flip = _mm512_set1_epi8(char(0x80));
    int64_t parts = o.k / kPart;
    for (int64_t r = 0; r < o.m; ++r)
      for (int64_t x = 0; x < o.k; x += 64) {
        // Sums of 8 bytes + 128 each, two to a part of 16.
        alignas(64) int64_t eights[8];
        _mm512_store_si512(
            eights,
            _mm512_sad_epu8(
                _mm512_xor_si512(_mm512_loadu_si512(o.q + r * o.k + x), flip),
                _mm512_setzero_si512()));
        for (int i = 0; i < 4; ++i)
          o.partSums[r * parts + x / kPart + i] =
              int32_t(eights[2 * i] + eights[2 * i + 1]) - kPart * 128;
      }
  }

  /// Panel j's nibbles as bytes, in the packed layout of a byte format
  /// ([K/32, 8, P, 4]: quads 0-3 the low nibbles, 4-7 the high ones),
  /// Q4_0's minus 8; Q6_K's 6-bit values likewise, each nibble with its
  /// high bits (quads 0 and 3 of its block, each before the two nibble
  /// quads whose bits it holds: Int8BlockMatmul.h).
  static void unpack(const int8_t *packed, int64_t blocks, int64_t panel,
                     int8_t *out) {
    const __m512i mask = _mm512_set1_epi8(15), top = _mm512_set1_epi8(0x30);
    const __m512i eight = _mm512_set1_epi8(Fm == WeightFormat::Q4_0 ? 8 : 0);
    int64_t half = 16 * panel; // bytes of a block's nibble quads
    int64_t quad = 4 * panel;  // bytes of one quad (a multiple of 64)
    int64_t stride = Q6 ? half + 2 * quad : half;
    for (int64_t b = 0; b < blocks; ++b, packed += stride, out += 2 * half)
      for (int64_t x = 0; x < half; x += 64) {
        // Nibble quad u (Q6_K's at quad u + 1 + u / 2, after its high bits).
        int64_t u = x / quad;
        __m512i w = _mm512_loadu_si512(
            packed + (Q6 ? (u + 1 + u / 2) * quad + x % quad : x));
        __m512i low = _mm512_and_si512(w, mask);
        __m512i high = _mm512_and_si512(_mm512_srli_epi16(w, 4), mask);
        if constexpr (Q6) {
          __m512i h =
              _mm512_loadu_si512(packed + 3 * (u / 2) * quad + x % quad);
          if (u % 2 == 1)
            h = _mm512_srli_epi16(h, 4);
          low = _mm512_or_si512(low,
                                _mm512_and_si512(_mm512_slli_epi16(h, 4), top));
          high = _mm512_or_si512(
              high, _mm512_and_si512(_mm512_slli_epi16(h, 2), top));
        }
        _mm512_store_si512(out + x, _mm512_sub_epi8(low, eight));
        _mm512_store_si512(out + half + x, _mm512_sub_epi8(high, eight));
      }
  }

  /// Part u's tile product into sum tile S = u % 4: A rows . B columns.
  template <int S>
  [[gnu::always_inline]] static void issue(const int8_t *a, int64_t lda,
                                           const int8_t *w, int64_t wStride,
                                           int64_t u) {
    constexpr int T = S % 2;
    _tile_zero(kSum + S);
    _tile_loadd(kActivations + T, a + u * kPart, lda);
    _tile_loadd(kWeights + T, w + u * kQuads * wStride, wStride);
    if constexpr (kSigned)
      _tile_dpbssd(kSum + S, kActivations + T, kWeights + T);
    else
      _tile_dpbsud(kSum + S, kActivations + T, kWeights + T);
  }

  /// Part u's sums in tile S scaled into the accumulators of rows [m0, m0
  /// + rows) and columns [c0, c0 + 16) of panel j, as Int8BlockMatmul's
  /// tile scales them.
  template <int S, bool Full>
  [[gnu::always_inline]] static void
  drain(const Operands &o, int64_t j, int64_t m0, int rows, int64_t c0,
        int64_t u, int32_t (&sums)[kTileRows * kTileCols],
        __m512 (&acc)[kTileRows]) {
    _tile_stored(kSum + S, sums, kTileCols * 4);
    const int64_t panel = o.panel, blocks = o.blocks;
    const int64_t b = Q6 ? u / 2 : u; // the activations' block
    auto half = [](const uint16_t *p) {
      return _mm512_cvtph_ps(
          _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
    };
    auto widen = [](const uint8_t *p, auto extend) {
      return _mm512_cvtepi32_ps(
          extend(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))));
    };
    auto unsignedBytes = [](__m128i x) { return _mm512_cvtepu8_epi32(x); };
    auto signedBytes = [](__m128i x) { return _mm512_cvtepi8_epi32(x); };
    __m512 scale, min;
    if constexpr (Q6) {
      // d * sc of the part's 16 K steps.
      scale = _mm512_mul_ps(
          half(o.s + (j * (blocks / 8) + b / 8) * panel + c0),
          widen(o.sc + (j * (o.k / 16) + u) * panel + c0, signedBytes));
    } else if constexpr (kMins) {
      const uint16_t *super = o.s + (j * (blocks / 8) + b / 8) * 2 * panel + c0;
      const uint8_t *sub = o.sc + (j * blocks + b) * 2 * panel + c0;
      scale = _mm512_mul_ps(half(super), widen(sub, unsignedBytes));
      min = _mm512_mul_ps(half(super + panel), widen(sub + panel, unsignedBytes));
    } else {
      scale = half(o.s + (j * blocks + b) * panel + c0);
    }
#pragma clang loop unroll(full)
    for (int r = 0; r < kTileRows; ++r) {
      if (!Full && r >= rows)
        continue;
      int64_t at = (m0 + r) * blocks + b;
      float da = o.d[at];
      __m512i products = _mm512_load_si512(sums + r * kTileCols);
      if constexpr (Q6) // q - 32
        products = _mm512_sub_epi32(
            products,
            _mm512_set1_epi32(32 * o.partSums[(m0 + r) * (o.k / kPart) + u]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(products),
                               _mm512_mul_ps(scale, _mm512_set1_ps(da)),
                               acc[r]);
      if constexpr (kMins)
        acc[r] = _mm512_fmadd_ps(min, _mm512_set1_ps(o.minFactors[at]), acc[r]);
    }
  }

  /// C rows [m0, m0 + rows) x columns [c0, c0 + 16) of panel j, over all
  /// parts, B the panel's weight bytes (packed or unpacked).
  template <bool Full>
  static void columnTile(const Operands &o, int64_t j, int64_t m0, int rows,
                         int64_t c0, const int8_t *w) {
    float *c = o.c + m0 * o.ldc + j * o.panel + c0;
    __m512 acc[kTileRows];
#pragma clang loop unroll(full)
    for (int r = 0; r < kTileRows; ++r)
      acc[r] = Full || r < rows ? _mm512_loadu_ps(c + r * o.ldc)
                                : _mm512_setzero_ps();
    alignas(64) int32_t sums[kTileRows * kTileCols];
    const int8_t *a = o.q + m0 * o.k;
    const int8_t *cols = w + c0 * 4;
    int64_t stride = o.panel * 4, parts = o.k / kPart;
    if (parts > 0)
      issue<0>(a, o.k, cols, stride, 0);
    if (parts > 1)
      issue<1>(a, o.k, cols, stride, 1);
    if (parts > 2)
      issue<2>(a, o.k, cols, stride, 2);
    // Part u + 3's product issued before part u's sums are scaled (one
    // product ahead instead: 10% slower).
    for (int64_t u0 = 0; u0 < parts; u0 += kSumTiles) {
      auto step = [&](auto tile, int64_t u) {
        constexpr int S = decltype(tile)::value;
        if (u + 3 < parts)
          issue<(S + 3) % kSumTiles>(a, o.k, cols, stride, u + 3);
        if (u < parts)
          drain<S, Full>(o, j, m0, rows, c0, u, sums, acc);
      };
      step(std::integral_constant<int, 0>(), u0);
      step(std::integral_constant<int, 1>(), u0 + 1);
      step(std::integral_constant<int, 2>(), u0 + 2);
      step(std::integral_constant<int, 3>(), u0 + 3);
    }
#pragma clang loop unroll(full)
    for (int r = 0; r < kTileRows; ++r)
      if (Full || r < rows)
        _mm512_storeu_ps(c + r * o.ldc, acc[r]);
  }

  static bool run(const int8_t *q, const float *d, const int32_t *sum,
                  const int8_t *v, const uint16_t *s, const uint8_t *sc,
                  float *c, int64_t ldc, int64_t m, int64_t k, int64_t panel,
                  int64_t j0, int64_t j1) {
    if (panel % kTileCols != 0 || m < 1)
      return false;
    Operands o{q,     d,     sum,         s,       sc,     c,      ldc,
               m,     k,     panel, k / kBlock, nullptr, nullptr};
    int64_t panelBytes = k * panel; // a byte per K step and column
    int8_t *unpacked =
        Q4 || Q6 ? static_cast<int8_t *>(scratch<0>(panelBytes)) : nullptr;
    if constexpr (Q6)
      o.partSums = static_cast<int32_t *>(
          scratch<1>(m * (k / kPart) * int64_t(sizeof(int32_t))));
    if constexpr (kMins)
      o.minFactors = static_cast<float *>(
          scratch<2>(m * o.blocks * int64_t(sizeof(float))));
    if (((Q4 || Q6) && !unpacked) || (Q6 && !o.partSums) ||
        (kMins && !o.minFactors))
      return false; // the next variant needs no buffer
    if constexpr (Q6)
      sumParts(o);
    if constexpr (kMins)
      for (int64_t at = 0; at < m * o.blocks; ++at)
        o.minFactors[at] = -(d[at] * float(sum[at]));
    int configured = 0;
    for (int64_t j = j0; j < j1; ++j) {
      const int8_t *w;
      if constexpr (Q4 || Q6) {
        unpack(v + j * (Q6 ? panelBytes * 3 / 4 : panelBytes / 2), o.blocks,
               panel, unpacked);
        w = unpacked;
      } else {
        w = v + j * panelBytes;
      }
      for (int64_t m0 = 0; m0 < m; m0 += kTileRows) {
        int rows = int(std::min<int64_t>(kTileRows, m - m0));
        if (rows != configured)
          configureTiles(configured = rows, kPart);
        for (int64_t c0 = 0; c0 < panel; c0 += kTileCols) {
          if (rows == kTileRows)
            columnTile<true>(o, j, m0, rows, c0, w);
          else
            columnTile<false>(o, j, m0, rows, c0, w);
        }
      }
    }
    // Lets the kernel skip saving the tile data on a context switch.
    _tile_release();
    return true;
  }
};
} // namespace

#define TFM_DEFINE_AMX_INT8_MATMUL(NAME, FORMAT)                               \
  bool tfm::kernels::NAME##Amx(                                                \
      const int8_t *q, const float *d, const int32_t *sum, const int8_t *v,    \
      const uint16_t *s, const uint8_t *sc, float *c, int64_t ldc, int64_t m,  \
      int64_t k, int64_t panel, int64_t j0, int64_t j1, int64_t, int64_t) {    \
    return AmxInt8Matmul<WeightFormat::FORMAT>::run(q, d, sum, v, s, sc, c,    \
                                                    ldc, m, k, panel, j0, j1); \
  }
TFM_DEFINE_AMX_INT8_MATMUL(q8_0Int8Matmul, Q8_0)
TFM_DEFINE_AMX_INT8_MATMUL(q4_0Int8Matmul, Q4_0)
TFM_DEFINE_AMX_INT8_MATMUL(q4_kInt8Matmul, Q4_K)
TFM_DEFINE_AMX_INT8_MATMUL(q5_kInt8Matmul, Q5_K)
TFM_DEFINE_AMX_INT8_MATMUL(q6_kInt8Matmul, Q6_K)
#undef TFM_DEFINE_AMX_INT8_MATMUL

//===- Int8BlockMatmulAmx.cpp - the int8 matmuls on AMX tiles -------------===//
//
// Int8BlockMatmul.h's definition on AMX-INT8 tiles, for prefill (rows in
// tiles of 16): each block of 32 K steps is one tile product (`tdpbssd`,
// or `tdpbsud` for unsigned weight bytes) of the activations' 16 x 32 int8
// tile and a weight tile of 8 K quads x 16 columns -- the packed panels'
// own layout (four K steps of a column adjacent), read in place for the
// byte formats and unpacked once per panel for the nibble ones. The int32
// sums are stored and scaled into f32 accumulators by AVX-512 with the
// roundings of the other variants, in the same order, so every variant
// gives the same floats. The next three blocks' tile products run while
// this one's sums are scaled.
//
// Compiled with AMX-TILE, AMX-INT8 and AVX-512 (VNNI, BW) flags
// (CMakeLists.txt); the entry points (Entries.cpp) run it only where the
// CPU has them and Linux granted the tile data. Q6_K (scales per 16 K
// steps) has no code here: its variant returns false, and the caller runs
// the AVX-512 VNNI one. Why and the measurements: docs/design.md,
// "Quantized weights".
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
/// K steps a block (a tile product), and the K quads of a weight tile.
constexpr int kBlock = 32;
constexpr int kQuads = kBlock / 4;

/// The tile registers: block b's sums in tile b % 4 (0-3), its activations
/// in 4 + b % 2 and its weights in 6 + b % 2: three blocks' products in
/// flight while one block's sums are scaled.
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

/// Configures the tiles for `rows` rows of activations (1..16).
void configureTiles(int rows) {
  TileConfig config;
  for (int set = 0; set < kSumTiles; ++set) {
    config.bytesPerRow[kSum + set] = kTileCols * 4;
    config.rows[kSum + set] = uint8_t(rows);
  }
  for (int set = 0; set < 2; ++set) {
    config.bytesPerRow[kActivations + set] = kBlock;
    config.rows[kActivations + set] = uint8_t(rows);
    config.bytesPerRow[kWeights + set] = kTileCols * 4;
    config.rows[kWeights + set] = kQuads;
  }
  _tile_loadconfig(&config);
}

/// A thread's buffer for an unpacked nibble panel (K x P bytes), grown as
/// needed and kept.
int8_t *unpackBuffer(int64_t bytes) {
  struct Free {
    void operator()(int8_t *p) const { std::free(p); }
  };
  thread_local std::unique_ptr<int8_t, Free> buffer;
  thread_local int64_t capacity = 0;
  if (bytes > capacity) {
    // 64-byte aligned, a whole number of 64-byte lines.
    int64_t rounded = (bytes + 63) / 64 * 64;
    buffer.reset(static_cast<int8_t *>(std::aligned_alloc(64, rounded)));
    capacity = buffer ? rounded : 0;
  }
  return buffer.get(); // null if out of memory
}

template <WeightFormat Fm> struct AmxInt8Matmul {
  /// Two 4-bit steps a byte (Q4_0, Q4_K): unpacked before the products.
  static constexpr bool Q4 =
      Fm == WeightFormat::Q4_0 || Fm == WeightFormat::Q4_K;
  /// A scale and a min per block (Q4_K, Q5_K).
  static constexpr bool kMins =
      Fm == WeightFormat::Q4_K || Fm == WeightFormat::Q5_K;
  /// Signed weight bytes (Q8_0; Q4_0's q - 8 as unpacked): tdpbssd; else
  /// unsigned: tdpbsud.
  static constexpr bool kSigned =
      Fm == WeightFormat::Q8_0 || Fm == WeightFormat::Q4_0;

  struct Operands {
    const int8_t *q;
    const float *d;
    const int32_t *sum;
    const uint16_t *s;
    const uint8_t *sc;
    float *c;
    int64_t ldc, m, k, panel, blocks;
  };

  /// Panel j's nibbles as bytes, in the packed layout of a byte format
  /// ([K/32, 8, P, 4]: quads 0-3 the low nibbles, 4-7 the high ones),
  /// Q4_0's minus 8.
  static void unpack(const int8_t *packed, int64_t blocks, int64_t panel,
                     int8_t *out) {
    const __m512i mask = _mm512_set1_epi8(15);
    const __m512i eight = _mm512_set1_epi8(Fm == WeightFormat::Q4_0 ? 8 : 0);
    int64_t half = 16 * panel; // bytes of a block's packed quads
    for (int64_t b = 0; b < blocks; ++b, packed += half, out += 2 * half)
      for (int64_t x = 0; x < half; x += 64) {
        __m512i w = _mm512_loadu_si512(packed + x);
        __m512i low = _mm512_and_si512(w, mask);
        __m512i high = _mm512_and_si512(_mm512_srli_epi16(w, 4), mask);
        _mm512_store_si512(out + x, _mm512_sub_epi8(low, eight));
        _mm512_store_si512(out + half + x, _mm512_sub_epi8(high, eight));
      }
  }

  /// Block b's tile product into sum tile S = b % 4: A rows . B columns.
  template <int S>
  [[gnu::always_inline]] static void issue(const int8_t *a, int64_t lda,
                                           const int8_t *w, int64_t wStride,
                                           int64_t b) {
    constexpr int T = S % 2;
    _tile_zero(kSum + S);
    _tile_loadd(kActivations + T, a + b * kBlock, lda);
    _tile_loadd(kWeights + T, w + b * kQuads * wStride, wStride);
    if constexpr (kSigned)
      _tile_dpbssd(kSum + S, kActivations + T, kWeights + T);
    else
      _tile_dpbsud(kSum + S, kActivations + T, kWeights + T);
  }

  /// Block b's sums in tile S scaled into the accumulators of rows
  /// [m0, m0 + rows) and columns [c0, c0 + 16) of panel j, as
  /// Int8BlockMatmul's tile scales them.
  template <int S, bool Full>
  [[gnu::always_inline]] static void
  drain(const Operands &o, int64_t j, int64_t m0, int rows, int64_t c0,
        int64_t b, int32_t (&sums)[kTileRows * kTileCols],
        __m512 (&acc)[kTileRows]) {
    _tile_stored(kSum + S, sums, kTileCols * 4);
    const int64_t panel = o.panel, blocks = o.blocks;
    __m512 scale, min;
    if constexpr (kMins) {
      const uint16_t *super = o.s + (j * (blocks / 8) + b / 8) * 2 * panel + c0;
      const uint8_t *sub = o.sc + (j * blocks + b) * 2 * panel + c0;
      auto widen = [](const uint8_t *p) {
        return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i *>(p))));
      };
      auto half = [](const uint16_t *p) {
        return _mm512_cvtph_ps(
            _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
      };
      scale = _mm512_mul_ps(half(super), widen(sub));
      min = _mm512_mul_ps(half(super + panel), widen(sub + panel));
    } else {
      scale =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(
              o.s + (j * blocks + b) * panel + c0)));
    }
#pragma clang loop unroll(full)
    for (int r = 0; r < kTileRows; ++r) {
      if (!Full && r >= rows)
        continue;
      int64_t at = (m0 + r) * blocks + b;
      float da = o.d[at];
      __m512 products =
          _mm512_cvtepi32_ps(_mm512_load_si512(sums + r * kTileCols));
      acc[r] = _mm512_fmadd_ps(
          products, _mm512_mul_ps(scale, _mm512_set1_ps(da)), acc[r]);
      if constexpr (kMins)
        acc[r] = _mm512_fmadd_ps(min, _mm512_set1_ps(-(da * float(o.sum[at]))),
                                 acc[r]);
    }
  }

  /// C rows [m0, m0 + rows) x columns [c0, c0 + 16) of panel j, over all
  /// blocks, B the panel's weight bytes (packed or unpacked).
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
    int64_t stride = o.panel * 4, blocks = o.blocks;
    if (blocks > 0)
      issue<0>(a, o.k, cols, stride, 0);
    if (blocks > 1)
      issue<1>(a, o.k, cols, stride, 1);
    if (blocks > 2)
      issue<2>(a, o.k, cols, stride, 2);
    // Block b + 3's product issued before block b's sums are scaled (one
    // product ahead instead: 10% slower).
    for (int64_t b0 = 0; b0 < blocks; b0 += kSumTiles) {
      auto step = [&](auto tile, int64_t b) {
        constexpr int S = decltype(tile)::value;
        if (b + 3 < blocks)
          issue<(S + 3) % kSumTiles>(a, o.k, cols, stride, b + 3);
        if (b < blocks)
          drain<S, Full>(o, j, m0, rows, c0, b, sums, acc);
      };
      step(std::integral_constant<int, 0>(), b0);
      step(std::integral_constant<int, 1>(), b0 + 1);
      step(std::integral_constant<int, 2>(), b0 + 2);
      step(std::integral_constant<int, 3>(), b0 + 3);
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
    if (Fm == WeightFormat::Q6_K || panel % kTileCols != 0 || m < 1)
      return false;
    Operands o{q, d, sum, s, sc, c, ldc, m, k, panel, k / kBlock};
    int64_t panelBytes = k * panel; // a byte per K step and column
    int8_t *unpacked = Q4 ? unpackBuffer(panelBytes) : nullptr;
    if (Q4 && !unpacked)
      return false; // the next variant needs no buffer
    int configured = 0;
    for (int64_t j = j0; j < j1; ++j) {
      const int8_t *w;
      if constexpr (Q4) {
        unpack(v + j * panelBytes / 2, o.blocks, panel, unpacked);
        w = unpacked;
      } else {
        w = v + j * panelBytes;
      }
      for (int64_t m0 = 0; m0 < m; m0 += kTileRows) {
        int rows = int(std::min<int64_t>(kTileRows, m - m0));
        if (rows != configured)
          configureTiles(configured = rows);
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
      int64_t k, int64_t panel, int64_t j0, int64_t j1) {                      \
    return AmxInt8Matmul<WeightFormat::FORMAT>::run(q, d, sum, v, s, sc, c,    \
                                                    ldc, m, k, panel, j0, j1); \
  }
TFM_DEFINE_AMX_INT8_MATMUL(q8_0Int8Matmul, Q8_0)
TFM_DEFINE_AMX_INT8_MATMUL(q4_0Int8Matmul, Q4_0)
TFM_DEFINE_AMX_INT8_MATMUL(q4_kInt8Matmul, Q4_K)
TFM_DEFINE_AMX_INT8_MATMUL(q5_kInt8Matmul, Q5_K)
TFM_DEFINE_AMX_INT8_MATMUL(q6_kInt8Matmul, Q6_K)
#undef TFM_DEFINE_AMX_INT8_MATMUL

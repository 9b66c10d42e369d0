//===- Kernels.h - the instruction-set variants of each kernel -*- C++ -*-===//
#ifndef TFM_RUNTIME_KERNELS_KERNELS_H
#define TFM_RUNTIME_KERNELS_KERNELS_H

#include <cstdint>

namespace tfm::kernels {
/// C[m, j * panel + r] += A[m, :] . the dequantized weights of panel j,
/// column r, for panels [j0, j1) (BlockMatmul.h), compiled for SSE2
/// (x86-64), AVX2 + FMA + F16C, AVX-512, over Q8_0, Q4_0 and the K formats
/// weights (`s` the f16 scales, the K formats' super-blocks'; `sc` their
/// sub-blocks' scales, else unused). False if this variant has no code
/// for `panel` columns.
#define TFM_DECLARE_BLOCK_MATMUL(NAME)                                         \
  bool NAME(const float *a, const int8_t *v, const uint16_t *s,                \
            const uint8_t *sc, float *c, int64_t lda, int64_t ldc, int64_t m,  \
            int64_t k, int64_t panel, int64_t j0, int64_t j1);
#define TFM_DECLARE_BLOCK_MATMULS(ISA)                                         \
  TFM_DECLARE_BLOCK_MATMUL(q8_0Matmul##ISA)                                    \
  TFM_DECLARE_BLOCK_MATMUL(q4_0Matmul##ISA)                                    \
  TFM_DECLARE_BLOCK_MATMUL(q4_kMatmul##ISA)                                    \
  TFM_DECLARE_BLOCK_MATMUL(q5_kMatmul##ISA)                                    \
  TFM_DECLARE_BLOCK_MATMUL(q6_kMatmul##ISA)
TFM_DECLARE_BLOCK_MATMULS(Sse2)
TFM_DECLARE_BLOCK_MATMULS(Avx2)
TFM_DECLARE_BLOCK_MATMULS(Avx512)
#undef TFM_DECLARE_BLOCK_MATMULS
#undef TFM_DECLARE_BLOCK_MATMUL
/// A's rows (lda apart) quantized per block of 32 with the blocks' largest
/// magnitudes amax [M, K/32] (ldamax apart) into q [M, K], d and sum [M,
/// K/32] (Int8BlockMatmul.h's quantizeRows), and C[m, j * panel + r] +=
/// the int8 definition of Int8BlockMatmul.h for those rows against the
/// Q8_0, Q4_0, Q4_K, Q5_K or Q6_K (6-bit) weights of panels [j0, j1) with
/// four K steps a column adjacent. Compiled for SSE2 (the scalar
/// definition, any panel), AVX2 + FMA + F16C (vpmaddubsw), AVX-512 VNNI +
/// BW. A single row (decode)
/// accumulates in `decodeVectors` vectors (the plan's: 8 or 4 on AVX-512;
/// AVX2 takes 4, the tiles ignore it). The values are prefetched
/// `prefetch` bytes ahead (the plan's; 0: not at all; the tiles ignore
/// it). False if this variant has no code for `panel` columns.
#define TFM_DECLARE_INT8_BLOCK_MATMUL(NAME)                                    \
  bool NAME(const int8_t *q, const float *d, const int32_t *sum,               \
            const int8_t *v, const uint16_t *s, const uint8_t *sc, float *c,   \
            int64_t ldc, int64_t m, int64_t k, int64_t panel, int64_t j0,      \
            int64_t j1, int64_t decodeVectors, int64_t prefetch);
#define TFM_DECLARE_INT8_MATMUL(ISA)                                           \
  void quantizeRows##ISA(const float *a, int64_t lda, const float *amax,      \
                         int64_t ldamax, int64_t m, int64_t k, int8_t *q,      \
                         float *d, int32_t *sum);                              \
  TFM_DECLARE_INT8_BLOCK_MATMUL(q8_0Int8Matmul##ISA)                           \
  TFM_DECLARE_INT8_BLOCK_MATMUL(q4_0Int8Matmul##ISA)                           \
  TFM_DECLARE_INT8_BLOCK_MATMUL(q4_kInt8Matmul##ISA)                           \
  TFM_DECLARE_INT8_BLOCK_MATMUL(q5_kInt8Matmul##ISA)                           \
  TFM_DECLARE_INT8_BLOCK_MATMUL(q6_kInt8Matmul##ISA)
TFM_DECLARE_INT8_MATMUL(Sse2)
TFM_DECLARE_INT8_MATMUL(Avx2)
TFM_DECLARE_INT8_MATMUL(Avx512)
#undef TFM_DECLARE_INT8_MATMUL
/// The same on AMX-INT8 tiles (Int8BlockMatmulAmx.cpp), the same floats,
/// rows quantized by AVX-512's quantizeRows; false for panels not a
/// multiple of 16 columns (or where a scratch buffer cannot be had).
TFM_DECLARE_INT8_BLOCK_MATMUL(q8_0Int8MatmulAmx)
TFM_DECLARE_INT8_BLOCK_MATMUL(q4_0Int8MatmulAmx)
TFM_DECLARE_INT8_BLOCK_MATMUL(q4_kInt8MatmulAmx)
TFM_DECLARE_INT8_BLOCK_MATMUL(q5_kInt8MatmulAmx)
TFM_DECLARE_INT8_BLOCK_MATMUL(q6_kInt8MatmulAmx)
#undef TFM_DECLARE_INT8_BLOCK_MATMUL
} // namespace tfm::kernels

#endif // TFM_RUNTIME_KERNELS_KERNELS_H

//===- Kernels.h - the instruction-set variants of each kernel -*- C++ -*-===//
#ifndef TFM_RUNTIME_KERNELS_KERNELS_H
#define TFM_RUNTIME_KERNELS_KERNELS_H

#include <cstdint>

namespace tfm::kernels {
/// C[m, j * panel + r] += A[m, :] . the dequantized weights of panel j,
/// column r, for panels [j0, j1) (BlockMatmul.h), compiled for SSE2
/// (x86-64), AVX2 + FMA + F16C, AVX-512, over Q8_0 and over Q4_0 weights.
/// False if this variant has no code for `panel` columns.
bool q8_0MatmulSse2(const float *a, const int8_t *v, const uint16_t *s,
                    float *c, int64_t lda, int64_t ldc, int64_t m, int64_t k,
                    int64_t panel, int64_t j0, int64_t j1);
bool q8_0MatmulAvx2(const float *a, const int8_t *v, const uint16_t *s,
                    float *c, int64_t lda, int64_t ldc, int64_t m, int64_t k,
                    int64_t panel, int64_t j0, int64_t j1);
bool q8_0MatmulAvx512(const float *a, const int8_t *v, const uint16_t *s,
                      float *c, int64_t lda, int64_t ldc, int64_t m, int64_t k,
                      int64_t panel, int64_t j0, int64_t j1);
bool q4_0MatmulSse2(const float *a, const int8_t *v, const uint16_t *s,
                    float *c, int64_t lda, int64_t ldc, int64_t m, int64_t k,
                    int64_t panel, int64_t j0, int64_t j1);
bool q4_0MatmulAvx2(const float *a, const int8_t *v, const uint16_t *s,
                    float *c, int64_t lda, int64_t ldc, int64_t m, int64_t k,
                    int64_t panel, int64_t j0, int64_t j1);
bool q4_0MatmulAvx512(const float *a, const int8_t *v, const uint16_t *s,
                      float *c, int64_t lda, int64_t ldc, int64_t m, int64_t k,
                      int64_t panel, int64_t j0, int64_t j1);
} // namespace tfm::kernels

#endif // TFM_RUNTIME_KERNELS_KERNELS_H

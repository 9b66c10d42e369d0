//===- Kernels.h - the instruction-set variants of each kernel -*- C++ -*-===//
#ifndef TFM_RUNTIME_KERNELS_KERNELS_H
#define TFM_RUNTIME_KERNELS_KERNELS_H

#include <cstdint>

namespace tfm::kernels {
/// C[m, n] += A[m, :] . dequantized weight row n, n in [n0, n1)
/// (Q8_0Matmul.h), compiled for SSE2 (x86-64), AVX2 + FMA, AVX-512.
void q8_0MatmulSse2(const float *a, const int8_t *q, const uint16_t *d,
                    float *c, int64_t lda, int64_t ldc, int64_t m, int64_t k,
                    int64_t n0, int64_t n1);
void q8_0MatmulAvx2(const float *a, const int8_t *q, const uint16_t *d,
                    float *c, int64_t lda, int64_t ldc, int64_t m, int64_t k,
                    int64_t n0, int64_t n1);
void q8_0MatmulAvx512(const float *a, const int8_t *q, const uint16_t *d,
                      float *c, int64_t lda, int64_t ldc, int64_t m, int64_t k,
                      int64_t n0, int64_t n1);
} // namespace tfm::kernels

#endif // TFM_RUNTIME_KERNELS_KERNELS_H

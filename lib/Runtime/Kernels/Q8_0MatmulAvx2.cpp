//===- Q8_0MatmulAvx2.cpp - the Q8_0 matmul for Avx2 (8 lanes) -----------===//
//
// Compiled with this instruction set's flags (lib/Runtime/Kernels/
// CMakeLists.txt); the kernel itself is Q8_0Matmul.h.
//
//===----------------------------------------------------------------------===//
#include "Q8_0Matmul.h"
#include "Kernels.h"

void tfm::kernels::q8_0MatmulAvx2(const float *a, const int8_t *q,
                                 const uint16_t *d, float *c, int64_t lda,
                                 int64_t ldc, int64_t m, int64_t k, int64_t n0,
                                 int64_t n1) {
  Q8_0Matmul<8>::run(a, q, d, c, lda, ldc, m, k, n0, n1);
}

//===- Q8_0MatmulAvx512.cpp - the Q8_0 matmul for Avx512 (16 lanes) ---------===//
//
// Compiled with this instruction set's flags (lib/Runtime/Kernels/
// CMakeLists.txt); the kernel itself is Q8_0Matmul.h. Panels of 32 columns.
//
//===----------------------------------------------------------------------===//
#include "Q8_0Matmul.h"
#include "Kernels.h"

bool tfm::kernels::q8_0MatmulAvx512(const float *a, const int8_t *v,
                                 const uint16_t *s, float *c, int64_t lda,
                                 int64_t ldc, int64_t m, int64_t k,
                                 int64_t panel, int64_t j0, int64_t j1) {
  switch (panel) {
  case 32:
    Q8_0Matmul<16, 2>::run(a, v, s, c, lda, ldc, m, k, j0, j1);
    return true;
  default:
    return false;
  }
}

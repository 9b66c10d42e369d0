//===- Q8_0MatmulSse2.cpp - the Q8_0 matmul for Sse2 (4 lanes) ---------===//
//
// Compiled with this instruction set's flags (lib/Runtime/Kernels/
// CMakeLists.txt); the kernel itself is Q8_0Matmul.h. Panels of 8, 16, 32 columns.
//
//===----------------------------------------------------------------------===//
#include "Q8_0Matmul.h"
#include "Kernels.h"

bool tfm::kernels::q8_0MatmulSse2(const float *a, const int8_t *v,
                                 const uint16_t *s, float *c, int64_t lda,
                                 int64_t ldc, int64_t m, int64_t k,
                                 int64_t panel, int64_t j0, int64_t j1) {
  switch (panel) {
  case 8:
    Q8_0Matmul<4, 2>::run(a, v, s, c, lda, ldc, m, k, j0, j1);
    return true;
  case 16:
    Q8_0Matmul<4, 4>::run(a, v, s, c, lda, ldc, m, k, j0, j1);
    return true;
  case 32:
    Q8_0Matmul<4, 8>::run(a, v, s, c, lda, ldc, m, k, j0, j1);
    return true;
  default:
    return false;
  }
}

//===- BlockMatmulAvx2.cpp - the quantized matmuls for Avx2 (8 lanes) ---===//
//
// Compiled with this instruction set's flags (lib/Runtime/Kernels/
// CMakeLists.txt); the kernels themselves are BlockMatmul.h. Panels of
// 16, 32 columns.
//
//===----------------------------------------------------------------------===//
#include "BlockMatmul.h"
#include "Kernels.h"

using namespace tfm::kernels;

template <bool Q4>
static bool run(const int8_t *v, const float *a, const uint16_t *s, float *c,
                int64_t lda, int64_t ldc, int64_t m, int64_t k, int64_t panel,
                int64_t j0, int64_t j1) {
  switch (panel) {
  case 16:
    BlockMatmul<8, 2, Q4>::run(a, v, s, c, lda, ldc, m, k, j0, j1);
    return true;
  case 32:
    BlockMatmul<8, 4, Q4>::run(a, v, s, c, lda, ldc, m, k, j0, j1);
    return true;
  default:
    return false;
  }
}

bool tfm::kernels::q8_0MatmulAvx2(const float *a, const int8_t *v,
                                   const uint16_t *s, float *c, int64_t lda,
                                   int64_t ldc, int64_t m, int64_t k,
                                   int64_t panel, int64_t j0, int64_t j1) {
  return run<false>(v, a, s, c, lda, ldc, m, k, panel, j0, j1);
}

bool tfm::kernels::q4_0MatmulAvx2(const float *a, const int8_t *v,
                                   const uint16_t *s, float *c, int64_t lda,
                                   int64_t ldc, int64_t m, int64_t k,
                                   int64_t panel, int64_t j0, int64_t j1) {
  return run<true>(v, a, s, c, lda, ldc, m, k, panel, j0, j1);
}

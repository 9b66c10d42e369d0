//===- Entries.cpp - the kernels' entry points and symbol table -----------===//
//
// Each entry point runs its instruction set's variant where this CPU has it
// and the next narrower one otherwise (tfm/Runtime/Kernels.h).
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"

#include "tfm/Runtime/Kernels.h"

#include <algorithm>

using namespace tfm::kernels;

namespace {
/// A rank-N strided memref as MLIR's C interface passes it (a pointer to
/// its descriptor).
template <typename T, int N> struct MemRef {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[N];
  int64_t strides[N];
  T *data() const { return aligned + offset; }
};

using Q8_0Matmul = void (*)(const float *, const int8_t *, const uint16_t *,
                            float *, int64_t, int64_t, int64_t, int64_t,
                            int64_t, int64_t);

/// The variant of the widest instruction set this CPU has, at most `isa`'s.
Q8_0Matmul selectQ8_0Matmul(int widest) {
  static const int host = __builtin_cpu_supports("avx512f")   ? 2
                          : __builtin_cpu_supports("avx2") &&
                                  __builtin_cpu_supports("fma")
                              ? 1
                              : 0;
  switch (std::min(widest, host)) {
  case 2:
    return q8_0MatmulAvx512;
  case 1:
    return q8_0MatmulAvx2;
  default:
    return q8_0MatmulSse2;
  }
}

/// A block of columns [n0, n1) of C[M, N] += A[M, K/32, 32] . W^T, W the
/// Q8_0 values V[N, K/32, 32] times their scales S[N, K/32]. The compiler
/// passes A and C with unit-stride rows and V, S contiguous
/// (tfm-cpu-lower-quantized-matmuls).
void runQ8_0Matmul(int widest, MemRef<float, 3> *a, MemRef<int8_t, 3> *v,
                   MemRef<uint16_t, 2> *s, MemRef<float, 2> *c, int64_t n0,
                   int64_t n1) {
  selectQ8_0Matmul(widest)(a->data(), v->data(), s->data(), c->data(),
                           a->strides[0], c->strides[0], a->sizes[0],
                           a->sizes[1] * a->sizes[2], n0, n1);
}
} // namespace

#define TFM_Q8_0_MATMUL(NAME, WIDEST)                                          \
  extern "C" void NAME(MemRef<float, 3> *a, MemRef<int8_t, 3> *v,             \
                       MemRef<uint16_t, 2> *s, MemRef<float, 2> *c,           \
                       int64_t n0, int64_t n1) {                               \
    runQ8_0Matmul(WIDEST, a, v, s, c, n0, n1);                                 \
  }
TFM_Q8_0_MATMUL(_mlir_ciface_tfm_q8_0_matmul_sse2, 0)
TFM_Q8_0_MATMUL(_mlir_ciface_tfm_q8_0_matmul_avx2, 1)
TFM_Q8_0_MATMUL(_mlir_ciface_tfm_q8_0_matmul_avx512, 2)
#undef TFM_Q8_0_MATMUL

llvm::ArrayRef<mlir::tfm::runtime::KernelSymbol>
mlir::tfm::runtime::getKernelSymbols() {
  static const KernelSymbol symbols[] = {
      {"_mlir_ciface_tfm_q8_0_matmul_sse2",
       reinterpret_cast<void *>(&_mlir_ciface_tfm_q8_0_matmul_sse2)},
      {"_mlir_ciface_tfm_q8_0_matmul_avx2",
       reinterpret_cast<void *>(&_mlir_ciface_tfm_q8_0_matmul_avx2)},
      {"_mlir_ciface_tfm_q8_0_matmul_avx512",
       reinterpret_cast<void *>(&_mlir_ciface_tfm_q8_0_matmul_avx512)},
  };
  return symbols;
}

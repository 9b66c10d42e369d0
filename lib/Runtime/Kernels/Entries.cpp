//===- Entries.cpp - the kernels' entry points and symbol table -----------===//
//
// Each entry point runs its instruction set's variant where this CPU has it
// and the next narrower one otherwise (tfm/Runtime/Kernels.h).
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"

#include "tfm/Runtime/Kernels.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <tuple>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

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

using Variant = bool (*)(const float *, const int8_t *, const uint16_t *,
                        const uint8_t *, float *, int64_t, int64_t, int64_t,
                        int64_t, int64_t, int64_t, int64_t);

/// Panels [j0, j1) of C[M, J, P] += A[M, K/32, 32] . W, W the Q8_0, Q4_0 or
/// Q4_K values V[J, K/32, 32 or 16, P] times their scales `s` (Q4_K's with
/// its sub-blocks' `sc`), by the variant (`variants`: SSE2, AVX2, AVX-512)
/// of the widest instruction set that both this CPU and `widest` (the
/// plan's: 0 SSE2, 1 AVX2, 2 AVX-512) allow and that has code for P
/// columns. The compiler passes A and C with unit-stride rows and V, S, SC
/// contiguous (tfm-cpu-lower-quantized-matmuls).
void runBlockMatmul(const Variant (&variants)[3], int widest,
                    MemRef<float, 3> *a, MemRef<int8_t, 4> *v,
                    const uint16_t *s, const uint8_t *sc, MemRef<float, 3> *c,
                    int64_t j0, int64_t j1) {
  static const int host = __builtin_cpu_supports("avx512f")   ? 2
                          : __builtin_cpu_supports("avx2") &&
                                  __builtin_cpu_supports("fma") &&
                                  __builtin_cpu_supports("f16c")
                              ? 1
                              : 0;
  int64_t panel = v->sizes[3];
  int64_t k = a->sizes[1] * a->sizes[2];
  auto args = std::make_tuple(a->data(), v->data(), s, sc, c->data(),
                              a->strides[0], c->strides[0], a->sizes[0], k,
                              panel, j0, j1);
  for (int isa = std::min(widest, host); isa >= 0; --isa)
    if (std::apply(variants[isa], args))
      return;
  std::abort(); // tfm-cpu-lower-quantized-matmuls calls it for 8, 16, 32.
}

using Int8Variant = bool (*)(const int8_t *, const float *, const int32_t *,
                             const int8_t *, const uint16_t *, const uint8_t *,
                             float *, int64_t, int64_t, int64_t, int64_t,
                             int64_t, int64_t, int64_t, int64_t);
using QuantizeVariant = void (*)(const float *, int64_t, const float *,
                                 int64_t, int64_t, int64_t, int8_t *, float *,
                                 int32_t *);

/// Whether Linux lets this process use AMX tile data (asked once; the
/// compiler asks too when it plans tiles for the host: CpuTarget.cpp).
bool amxTilesGranted() {
#if defined(__linux__) && defined(__x86_64__)
  // ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA (asm/prctl.h, Linux 5.16+).
  static const bool granted = syscall(SYS_arch_prctl, 0x1023, 18) == 0;
  return granted;
#else
  return false;
#endif
}

/// The widest int8 instruction set (0 SSE2, 1 AVX2, 2 AVX-512 VNNI, 3
/// AMX-INT8 tiles) both this CPU and `widest` (the plan's) allow. The tile
/// permission is asked for only by a plan of tiles (it is irreversible for
/// the process, as the compiler's: CpuTarget.cpp).
int int8Isa(int widest) {
  static const int host =
      __builtin_cpu_supports("avx512vnni") &&
              __builtin_cpu_supports("avx512bw") &&
              __builtin_cpu_supports("avx512f")
          ? 2
      : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
              __builtin_cpu_supports("f16c")
          ? 1
          : 0;
  static const bool tileCpu = host == 2 &&
                              __builtin_cpu_supports("amx-tile") &&
                              __builtin_cpu_supports("amx-int8");
  if (widest >= 3 && tileCpu && amxTilesGranted())
    return 3;
  return std::min(widest, host);
}

/// With TFM_REPORT_KERNELS set in the environment, says on stderr, once
/// per instruction set, that an int8 matmul ran on it: how a test sees
/// which variant the CPU took (test/numerics/q8_0.test).
void reportInt8Isa(int isa) {
  static const bool report = std::getenv("TFM_REPORT_KERNELS") != nullptr;
  static std::atomic<bool> reported[4];
  if (!report || reported[isa].exchange(true))
    return;
  static const char *const names[4] = {"sse2", "avx2", "avx512 (VNNI)",
                                       "amx (AMX-INT8 tiles)"};
  std::fprintf(stderr, "tfm kernels: an int8 matmul ran on %s\n",
               names[isa]);
}

/// A [M, K/32, 32] quantized with its blocks' largest magnitudes AMAX
/// [M, K/32] into Q [M, K], D and SUM [M, K/32] (contiguous).
void runQuantizeRows(int widest, MemRef<float, 3> *a, MemRef<float, 2> *amax,
                     MemRef<int8_t, 2> *q, MemRef<float, 2> *d,
                     MemRef<int32_t, 2> *sum) {
  // AMX's rows are AVX-512's.
  static constexpr QuantizeVariant variants[4] = {
      quantizeRowsSse2, quantizeRowsAvx2, quantizeRowsAvx512,
      quantizeRowsAvx512};
  variants[int8Isa(widest)](a->data(), a->strides[0], amax->data(),
                            amax->strides[0], a->sizes[0],
                            a->sizes[1] * a->sizes[2], q->data(), d->data(),
                            sum->data());
}

/// Panels [j0, j1) of C[M, J, P] += the int8 matmul of the quantized rows
/// Q [M, K], D, SUM [M, K/32] and the Q8_0, Q4_0 or Q4_K weights V[J, K/32,
/// G, P, 4], `s` (and Q4_K's `sc`), by the widest variant (SSE2, AVX2,
/// AVX-512 VNNI, AMX) that both this CPU and `widest` allow and that has
/// code for P columns.
void runInt8BlockMatmul(const Int8Variant (&variants)[4], int widest,
                        MemRef<int8_t, 2> *q, MemRef<float, 2> *d,
                        MemRef<int32_t, 2> *sum, MemRef<int8_t, 5> *v,
                        const uint16_t *s, const uint8_t *sc,
                        MemRef<float, 3> *c, int64_t j0, int64_t j1,
                        int64_t decodeVectors, int64_t prefetch) {
  int64_t panel = v->sizes[3];
  auto args =
      std::make_tuple(q->data(), d->data(), sum->data(), v->data(), s, sc,
                      c->data(), c->strides[0], q->sizes[0], q->sizes[1], panel,
                      j0, j1, decodeVectors, prefetch);
  for (int isa = int8Isa(widest); isa >= 0; --isa)
    if (std::apply(variants[isa], args)) {
      reportInt8Isa(isa);
      return;
    }
  std::abort(); // The SSE2 variant takes any panel.
}

// Each format's variants, widest last: SSE2, AVX2, AVX-512 (VNNI) and,
// for the int8 ones, AMX-INT8 tiles.
#define TFM_VARIANTS(NAME) {NAME##Sse2, NAME##Avx2, NAME##Avx512}
#define TFM_INT8_VARIANTS(NAME)                                                \
  {NAME##Sse2, NAME##Avx2, NAME##Avx512, NAME##Amx}
constexpr Int8Variant kQ8_0Int8Variants[4] = TFM_INT8_VARIANTS(q8_0Int8Matmul);
constexpr Int8Variant kQ4_0Int8Variants[4] = TFM_INT8_VARIANTS(q4_0Int8Matmul);
constexpr Int8Variant kQ4_KInt8Variants[4] = TFM_INT8_VARIANTS(q4_kInt8Matmul);
constexpr Int8Variant kQ5_KInt8Variants[4] = TFM_INT8_VARIANTS(q5_kInt8Matmul);
constexpr Int8Variant kQ6_KInt8Variants[4] = TFM_INT8_VARIANTS(q6_kInt8Matmul);

constexpr Variant kQ8_0Variants[3] = TFM_VARIANTS(q8_0Matmul);
constexpr Variant kQ4_0Variants[3] = TFM_VARIANTS(q4_0Matmul);
constexpr Variant kQ4_KVariants[3] = TFM_VARIANTS(q4_kMatmul);
constexpr Variant kQ5_KVariants[3] = TFM_VARIANTS(q5_kMatmul);
constexpr Variant kQ6_KVariants[3] = TFM_VARIANTS(q6_kMatmul);
#undef TFM_INT8_VARIANTS
#undef TFM_VARIANTS
} // namespace

#define TFM_BLOCK_MATMUL(NAME, VARIANTS, WIDEST)                               \
  extern "C" void NAME(MemRef<float, 3> *a, MemRef<int8_t, 4> *v,             \
                       MemRef<uint16_t, 3> *s, MemRef<float, 3> *c,           \
                       int64_t j0, int64_t j1) {                               \
    runBlockMatmul(VARIANTS, WIDEST, a, v, s->data(), nullptr, c, j0, j1);     \
  }
TFM_BLOCK_MATMUL(_mlir_ciface_tfm_q8_0_matmul_sse2, kQ8_0Variants, 0)
TFM_BLOCK_MATMUL(_mlir_ciface_tfm_q8_0_matmul_avx2, kQ8_0Variants, 1)
TFM_BLOCK_MATMUL(_mlir_ciface_tfm_q8_0_matmul_avx512, kQ8_0Variants, 2)
TFM_BLOCK_MATMUL(_mlir_ciface_tfm_q4_0_matmul_sse2, kQ4_0Variants, 0)
TFM_BLOCK_MATMUL(_mlir_ciface_tfm_q4_0_matmul_avx2, kQ4_0Variants, 1)
TFM_BLOCK_MATMUL(_mlir_ciface_tfm_q4_0_matmul_avx512, kQ4_0Variants, 2)
#undef TFM_BLOCK_MATMUL

/// The K formats': S and SC of rank RANK (Q4_K, Q5_K: [J, K/256, 2, P] and
/// [J, K/32, 2, P]; Q6_K: [J, K/256, P] and [J, K/16, P]; Kernels.h).
#define TFM_K_MATMUL(NAME, VARIANTS, RANK, WIDEST)                             \
  extern "C" void NAME(MemRef<float, 3> *a, MemRef<int8_t, 4> *v,             \
                       MemRef<uint16_t, RANK> *s, MemRef<uint8_t, RANK> *sc,  \
                       MemRef<float, 3> *c, int64_t j0, int64_t j1) {          \
    runBlockMatmul(VARIANTS, WIDEST, a, v, s->data(), sc->data(), c, j0, j1);  \
  }
TFM_K_MATMUL(_mlir_ciface_tfm_q4_k_matmul_sse2, kQ4_KVariants, 4, 0)
TFM_K_MATMUL(_mlir_ciface_tfm_q4_k_matmul_avx2, kQ4_KVariants, 4, 1)
TFM_K_MATMUL(_mlir_ciface_tfm_q4_k_matmul_avx512, kQ4_KVariants, 4, 2)
TFM_K_MATMUL(_mlir_ciface_tfm_q5_k_matmul_sse2, kQ5_KVariants, 4, 0)
TFM_K_MATMUL(_mlir_ciface_tfm_q5_k_matmul_avx2, kQ5_KVariants, 4, 1)
TFM_K_MATMUL(_mlir_ciface_tfm_q5_k_matmul_avx512, kQ5_KVariants, 4, 2)
TFM_K_MATMUL(_mlir_ciface_tfm_q6_k_matmul_sse2, kQ6_KVariants, 3, 0)
TFM_K_MATMUL(_mlir_ciface_tfm_q6_k_matmul_avx2, kQ6_KVariants, 3, 1)
TFM_K_MATMUL(_mlir_ciface_tfm_q6_k_matmul_avx512, kQ6_KVariants, 3, 2)
#undef TFM_K_MATMUL

#define TFM_QUANTIZE_ROWS(NAME, WIDEST)                                        \
  extern "C" void NAME(MemRef<float, 3> *a, MemRef<float, 2> *amax,           \
                       MemRef<int8_t, 2> *q, MemRef<float, 2> *d,             \
                       MemRef<int32_t, 2> *sum) {                             \
    runQuantizeRows(WIDEST, a, amax, q, d, sum);                               \
  }
TFM_QUANTIZE_ROWS(_mlir_ciface_tfm_int8_quantize_rows_sse2, 0)
TFM_QUANTIZE_ROWS(_mlir_ciface_tfm_int8_quantize_rows_avx2, 1)
TFM_QUANTIZE_ROWS(_mlir_ciface_tfm_int8_quantize_rows_avx512, 2)
TFM_QUANTIZE_ROWS(_mlir_ciface_tfm_int8_quantize_rows_amx, 3)
#undef TFM_QUANTIZE_ROWS

#define TFM_INT8_BLOCK_MATMUL(NAME, VARIANTS, WIDEST)                          \
  extern "C" void NAME(                                                        \
      MemRef<int8_t, 2> *q, MemRef<float, 2> *d, MemRef<int32_t, 2> *sum,      \
      MemRef<int8_t, 5> *v, MemRef<uint16_t, 3> *s, MemRef<float, 3> *c,       \
      int64_t j0, int64_t j1, int64_t decodeVectors, int64_t prefetch) {       \
    runInt8BlockMatmul(VARIANTS, WIDEST, q, d, sum, v, s->data(), nullptr, c,  \
                       j0, j1, decodeVectors, prefetch);                       \
  }
TFM_INT8_BLOCK_MATMUL(_mlir_ciface_tfm_q8_0_int8_matmul_sse2, kQ8_0Int8Variants, 0)
TFM_INT8_BLOCK_MATMUL(_mlir_ciface_tfm_q8_0_int8_matmul_avx2, kQ8_0Int8Variants, 1)
TFM_INT8_BLOCK_MATMUL(_mlir_ciface_tfm_q8_0_int8_matmul_avx512, kQ8_0Int8Variants, 2)
TFM_INT8_BLOCK_MATMUL(_mlir_ciface_tfm_q8_0_int8_matmul_amx, kQ8_0Int8Variants, 3)
TFM_INT8_BLOCK_MATMUL(_mlir_ciface_tfm_q4_0_int8_matmul_sse2, kQ4_0Int8Variants, 0)
TFM_INT8_BLOCK_MATMUL(_mlir_ciface_tfm_q4_0_int8_matmul_avx2, kQ4_0Int8Variants, 1)
TFM_INT8_BLOCK_MATMUL(_mlir_ciface_tfm_q4_0_int8_matmul_avx512, kQ4_0Int8Variants, 2)
TFM_INT8_BLOCK_MATMUL(_mlir_ciface_tfm_q4_0_int8_matmul_amx, kQ4_0Int8Variants, 3)
#undef TFM_INT8_BLOCK_MATMUL

#define TFM_K_INT8_MATMUL(NAME, VARIANTS, RANK, WIDEST)                        \
  extern "C" void NAME(MemRef<int8_t, 2> *q, MemRef<float, 2> *d,              \
                       MemRef<int32_t, 2> *sum, MemRef<int8_t, 5> *v,          \
                       MemRef<uint16_t, RANK> *s, MemRef<uint8_t, RANK> *sc,   \
                       MemRef<float, 3> *c, int64_t j0, int64_t j1,            \
                       int64_t decodeVectors, int64_t prefetch) {              \
    runInt8BlockMatmul(VARIANTS, WIDEST, q, d, sum, v, s->data(), sc->data(),  \
                       c, j0, j1, decodeVectors, prefetch);                    \
  }
TFM_K_INT8_MATMUL(_mlir_ciface_tfm_q4_k_int8_matmul_sse2, kQ4_KInt8Variants, 4, 0)
TFM_K_INT8_MATMUL(_mlir_ciface_tfm_q4_k_int8_matmul_avx2, kQ4_KInt8Variants, 4, 1)
TFM_K_INT8_MATMUL(_mlir_ciface_tfm_q4_k_int8_matmul_avx512, kQ4_KInt8Variants, 4, 2)
TFM_K_INT8_MATMUL(_mlir_ciface_tfm_q4_k_int8_matmul_amx, kQ4_KInt8Variants, 4, 3)
TFM_K_INT8_MATMUL(_mlir_ciface_tfm_q5_k_int8_matmul_sse2, kQ5_KInt8Variants, 4, 0)
TFM_K_INT8_MATMUL(_mlir_ciface_tfm_q5_k_int8_matmul_avx2, kQ5_KInt8Variants, 4, 1)
TFM_K_INT8_MATMUL(_mlir_ciface_tfm_q5_k_int8_matmul_avx512, kQ5_KInt8Variants, 4, 2)
TFM_K_INT8_MATMUL(_mlir_ciface_tfm_q5_k_int8_matmul_amx, kQ5_KInt8Variants, 4, 3)
TFM_K_INT8_MATMUL(_mlir_ciface_tfm_q6_k_int8_matmul_sse2, kQ6_KInt8Variants, 3, 0)
TFM_K_INT8_MATMUL(_mlir_ciface_tfm_q6_k_int8_matmul_avx2, kQ6_KInt8Variants, 3, 1)
TFM_K_INT8_MATMUL(_mlir_ciface_tfm_q6_k_int8_matmul_avx512, kQ6_KInt8Variants, 3, 2)
TFM_K_INT8_MATMUL(_mlir_ciface_tfm_q6_k_int8_matmul_amx, kQ6_KInt8Variants, 3, 3)
#undef TFM_K_INT8_MATMUL

llvm::ArrayRef<mlir::tfm::runtime::KernelSymbol>
mlir::tfm::runtime::getKernelSymbols() {
#define TFM_SYMBOL(NAME) {#NAME, reinterpret_cast<void *>(&NAME)}
  // clang-format off
  static const KernelSymbol symbols[] = {
      TFM_SYMBOL(_mlir_ciface_tfm_q8_0_matmul_sse2),
      TFM_SYMBOL(_mlir_ciface_tfm_q8_0_int8_matmul_sse2),
      TFM_SYMBOL(_mlir_ciface_tfm_q8_0_matmul_avx2),
      TFM_SYMBOL(_mlir_ciface_tfm_q8_0_int8_matmul_avx2),
      TFM_SYMBOL(_mlir_ciface_tfm_q8_0_matmul_avx512),
      TFM_SYMBOL(_mlir_ciface_tfm_q8_0_int8_matmul_avx512),
      TFM_SYMBOL(_mlir_ciface_tfm_q8_0_int8_matmul_amx),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_0_matmul_sse2),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_0_int8_matmul_sse2),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_0_matmul_avx2),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_0_int8_matmul_avx2),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_0_matmul_avx512),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_0_int8_matmul_avx512),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_0_int8_matmul_amx),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_k_matmul_sse2),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_k_int8_matmul_sse2),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_k_matmul_avx2),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_k_int8_matmul_avx2),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_k_matmul_avx512),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_k_int8_matmul_avx512),
      TFM_SYMBOL(_mlir_ciface_tfm_q4_k_int8_matmul_amx),
      TFM_SYMBOL(_mlir_ciface_tfm_q5_k_matmul_sse2),
      TFM_SYMBOL(_mlir_ciface_tfm_q5_k_int8_matmul_sse2),
      TFM_SYMBOL(_mlir_ciface_tfm_q5_k_matmul_avx2),
      TFM_SYMBOL(_mlir_ciface_tfm_q5_k_int8_matmul_avx2),
      TFM_SYMBOL(_mlir_ciface_tfm_q5_k_matmul_avx512),
      TFM_SYMBOL(_mlir_ciface_tfm_q5_k_int8_matmul_avx512),
      TFM_SYMBOL(_mlir_ciface_tfm_q5_k_int8_matmul_amx),
      TFM_SYMBOL(_mlir_ciface_tfm_q6_k_matmul_sse2),
      TFM_SYMBOL(_mlir_ciface_tfm_q6_k_int8_matmul_sse2),
      TFM_SYMBOL(_mlir_ciface_tfm_q6_k_matmul_avx2),
      TFM_SYMBOL(_mlir_ciface_tfm_q6_k_int8_matmul_avx2),
      TFM_SYMBOL(_mlir_ciface_tfm_q6_k_matmul_avx512),
      TFM_SYMBOL(_mlir_ciface_tfm_q6_k_int8_matmul_avx512),
      TFM_SYMBOL(_mlir_ciface_tfm_q6_k_int8_matmul_amx),
      TFM_SYMBOL(_mlir_ciface_tfm_int8_quantize_rows_sse2),
      TFM_SYMBOL(_mlir_ciface_tfm_int8_quantize_rows_avx2),
      TFM_SYMBOL(_mlir_ciface_tfm_int8_quantize_rows_avx512),
      TFM_SYMBOL(_mlir_ciface_tfm_int8_quantize_rows_amx),
  };
  // clang-format on
#undef TFM_SYMBOL
  return symbols;
}

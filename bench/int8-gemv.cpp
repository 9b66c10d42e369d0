// One core's decode GEMV on the int8 micro-kernel (lib/Runtime/Kernels/
// Int8BlockMatmul.h) alone, over the Q4_0 and Q8_0 panels of TinyLlama's 22
// layers (q+k+v, o, gate+up, down), and the Q6_K tensors of its Q4_K_M
// file, in huge pages, as the runner binds them:
// how close the kernel streams to the read ceiling of read-bandwidth.c,
// without the rest of a decode step (bench/README.md, "int8-gemv.cpp").
// The kernel's Avx512Vnni variant on 32-column panels, or with
// -DINT8_GEMV_AVX2 (and AVX2 flags only) its Avx2 variant.
//
//   clang++-22 -O3 -std=c++20 -mavx512f -mavx512bw -mavx512vl -mavx512vnni \
//       -mfma -mf16c -Ilib/Runtime/Kernels bench/int8-gemv.cpp -o /tmp/int8-gemv
//   clang++-22 -O3 -std=c++20 -mavx2 -mfma -mf16c -DINT8_GEMV_AVX2 \
//       -Ilib/Runtime/Kernels bench/int8-gemv.cpp -o /tmp/int8-gemv-avx2
//   /tmp/int8-gemv [DECODE_VECTORS [PREFETCH [PREFETCH_Q8]]]
// DECODE_VECTORS: the plan's int8_decode_vectors (8 or 4; AVX2 takes 4);
// PREFETCH and PREFETCH_Q8: its int8_prefetch_packed (Q4_0, Q6_K) and
// int8_prefetch_bytewise (Q8_0) in bytes, 2048 if not given.
#include "Int8BlockMatmul.h"

#include "timing.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <sys/mman.h>

using namespace tfm::kernels;

namespace {
constexpr int64_t kShapes[][2] = {{2560, 2048}, {2048, 2048}, {11264, 2048},
                                  {2048, 5632}};
constexpr int kLayers = 22, kPanel = 32;
#ifdef INT8_GEMV_AVX2
using Isa = Avx2;
#else
using Isa = Avx512Vnni;
#endif
constexpr int kV = kPanel / Isa::kLanes;

struct Matrix {
  int64_t n, k;
  int8_t *values;
  uint16_t *scales;
};

/// Times `step(x, c)`, one decode step's GEMVs over `bytes` of weights
/// against one quantized row x of up to K = 5632 into c (up to 32000
/// columns): prints the median ms of 9 passes and GB/s.
template <class Step>
void timeSteps(const char *name, size_t bytes, Step step) {
  std::vector<int8_t> q(5632);
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = int8_t(i * 37);
  std::vector<float> d(5632 / 32, 0.01f), c(32000);
  std::vector<int32_t> sum(5632 / 32, 3);
  Int8Rows x{q.data(), d.data(), sum.data()};
  double times[9];
  for (double &time : times) {
    double start = benchNow();
    step(x, c.data());
    time = benchNow() - start;
  }
  double median = benchMedian(times, 9);
  std::printf("%s: %.1f MB, %.2f ms, %.2f GB/s\n", name, bytes / 1e6,
              median * 1e3, bytes / median / 1e9);
}

/// Runs one format over every layer: the median ms of 9 passes and GB/s.
template <WeightFormat Fm>
void measure(const char *name, int valueBits, int64_t decodeVectors,
             int64_t prefetch) {
  size_t bytes = 0;
  for (auto &s : kShapes)
    bytes += size_t(s[0]) * s[1] * valueBits / 8 + s[0] * (s[1] / 32) * 2;
  bytes *= kLayers;
  char *arena = static_cast<char *>(aligned_alloc(1 << 21, bytes + 4096));
  madvise(arena, bytes, MADV_HUGEPAGE);
  std::vector<Matrix> matrices;
  char *at = arena;
  for (int l = 0; l < kLayers; ++l)
    for (auto &s : kShapes) {
      Matrix m{s[0], s[1], reinterpret_cast<int8_t *>(at), nullptr};
      int64_t valueBytes = m.n * m.k * valueBits / 8;
      for (int64_t i = 0; i < valueBytes; ++i)
        m.values[i] = int8_t(i * 2654435761u >> 13);
      m.scales = reinterpret_cast<uint16_t *>(at + valueBytes);
      for (int64_t i = 0; i < m.n * (m.k / 32); ++i)
        m.scales[i] = 0x2000; // a normal f16
      at += valueBytes + m.n * (m.k / 32) * 2;
      matrices.push_back(m);
    }
  timeSteps(name, bytes, [&](const Int8Rows &x, float *c) {
    for (const Matrix &m : matrices)
      Int8BlockMatmul<Isa, kV, Fm>::run(x, m.values, m.scales, nullptr, c,
                                        m.n, 1, m.k, 0, m.n / kPanel,
                                        decodeVectors, prefetch);
  });
  free(arena);
}

/// Q6_K in its 6-bit layout over the tensors a Q4_K_M file holds so: the
/// 11 `ffn_down` and 11 `attn_v` of half the layers and the LM head, with
/// their super-blocks' d (f16) and the scales of their 16s (bytes).
void measureQ6K(int64_t decodeVectors, int64_t prefetch) {
  constexpr int64_t kQ6Shapes[][3] = {
      {2048, 5632, 11}, {256, 2048, 11}, {32000, 2048, 1}};
  struct Q6Matrix {
    int64_t n, k;
    int8_t *values;
    uint16_t *super;
    uint8_t *scales;
  };
  auto partBytes = [](int64_t n, int64_t k) {
    return std::array<int64_t, 3>{n * k * 6 / 8, n * (k / 256) * 2,
                                  n * (k / 16)};
  };
  size_t bytes = 0;
  for (auto &s : kQ6Shapes)
    for (int64_t part : partBytes(s[0], s[1]))
      bytes += s[2] * part;
  char *arena = static_cast<char *>(aligned_alloc(1 << 21, bytes + 4096));
  madvise(arena, bytes, MADV_HUGEPAGE);
  std::vector<Q6Matrix> matrices;
  char *at = arena;
  for (auto &s : kQ6Shapes)
    for (int l = 0; l < s[2]; ++l) {
      auto [values, super, scales] = partBytes(s[0], s[1]);
      Q6Matrix m{s[0], s[1], reinterpret_cast<int8_t *>(at),
                 reinterpret_cast<uint16_t *>(at + values),
                 reinterpret_cast<uint8_t *>(at + values + super)};
      for (int64_t i = 0; i < values; ++i)
        m.values[i] = int8_t(i * 2654435761u >> 13);
      for (int64_t i = 0; i < super / 2; ++i)
        m.super[i] = 0x2000;
      for (int64_t i = 0; i < scales; ++i)
        m.scales[i] = uint8_t(i * 7 % 50);
      at += values + super + scales;
      matrices.push_back(m);
    }
  timeSteps("q6_k", bytes, [&](const Int8Rows &x, float *c) {
    for (const Q6Matrix &m : matrices)
      Int8BlockMatmul<Isa, kV, WeightFormat::Q6_K>::run(
          x, m.values, m.super, m.scales, c, m.n, 1, m.k, 0, m.n / kPanel,
          decodeVectors, prefetch);
  });
  free(arena);
}
} // namespace

int main(int argc, char **argv) {
  int64_t decodeVectors = argc > 1 ? std::atoll(argv[1]) : 8;
  int64_t packed = argc > 2 ? std::atoll(argv[2]) : 2048;
  int64_t bytewise = argc > 3 ? std::atoll(argv[3]) : 2048;
  measure<WeightFormat::Q4_0>("q4_0", 4, decodeVectors, packed);
  measure<WeightFormat::Q8_0>("q8_0", 8, decodeVectors, bytewise);
  measureQ6K(decodeVectors, packed);
}

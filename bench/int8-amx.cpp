// The int8 prefill kernels of every quantized format side by side: AVX-512
// VNNI (Int8BlockMatmul.h) against AMX-INT8 tiles (Int8BlockMatmulAmx.cpp),
// as tfm's built kernel library has them, on the same random M x K
// activations (quantized per block of 32) and N packed columns. Checks that
// both give the same floats, bit for bit, and times them interleaved
// (bench/README.md, "int8-amx.cpp"). An AMX-INT8 host: elsewhere the AMX
// entry points are not reached by tfm and this stops.
//
//   clang++-22 -O2 -std=c++20 -Ilib/Runtime/Kernels bench/int8-amx.cpp \
//       build/lib/Runtime/Kernels/libtfm_kernels.a -o /tmp/int8-amx
//   /tmp/int8-amx [M K N [PASSES]]      # default 128 2048 2048 9
#include "Kernels.h"

#include "timing.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

using namespace tfm::kernels;

namespace {
using Kernel = bool (*)(const int8_t *, const float *, const int32_t *,
                        const int8_t *, const uint16_t *, const uint8_t *,
                        float *, int64_t, int64_t, int64_t, int64_t, int64_t,
                        int64_t, int64_t, int64_t);

struct Format {
  const char *name;
  Kernel vnni, amx;
  int64_t panel;       // tfm's AVX-512 VNNI panel for the format
  int storedBits;      // bits a K step: 8, 4 (nibbles), 6 (Q6_K's layout)
  int valueBits;       // the byte formats' value range; 0: any byte
  bool signedSubScale; // Q6_K's sub-block scales are int8
};

const Format kFormats[] = {
    {"q8_0", q8_0Int8MatmulAvx512, q8_0Int8MatmulAmx, 32, 8, 0, false},
    {"q4_0", q4_0Int8MatmulAvx512, q4_0Int8MatmulAmx, 64, 4, 0, false},
    {"q4_k", q4_kInt8MatmulAvx512, q4_kInt8MatmulAmx, 64, 4, 0, false},
    {"q5_k", q5_kInt8MatmulAvx512, q5_kInt8MatmulAmx, 32, 8, 5, false},
    {"q6_k", q6_kInt8MatmulAvx512, q6_kInt8MatmulAmx, 32, 6, 0, true},
};
} // namespace

int main(int argc, char **argv) {
  int64_t m = argc > 1 ? atoll(argv[1]) : 128;
  int64_t k = argc > 2 ? atoll(argv[2]) : 2048;
  int64_t n = argc > 3 ? atoll(argv[3]) : 2048;
  int passes = argc > 4 ? atoi(argv[4]) : 9;
  if (m < 1 || k % 256 || n % 64 || passes < 1) {
    fprintf(stderr, "M >= 1, K a multiple of 256, N of 64\n");
    return 1;
  }
  if (!__builtin_cpu_supports("amx-int8") ||
      syscall(SYS_arch_prctl, 0x1023, 18) != 0) {
    fprintf(stderr, "no AMX-INT8 tiles here\n");
    return 1;
  }
  std::mt19937 random(1);
  int64_t blocks = k / 32;
  std::vector<int8_t> q(m * k);
  std::vector<float> d(m * blocks);
  std::vector<int32_t> sum(m * blocks);
  for (int8_t &x : q)
    x = int8_t(int(random() % 255) - 127);
  for (int64_t at = 0; at < m * blocks; ++at) {
    d[at] = float(random() % 1000 + 1) * 1e-4f;
    int32_t total = 0;
    for (int t = 0; t < 32; ++t)
      total += q[at * 32 + t];
    sum[at] = total;
  }
  printf("M %lld, K %lld, N %lld: median of %d passes (ms), VNNI / AMX\n",
         (long long)m, (long long)k, (long long)n, passes);
  for (const Format &f : kFormats) {
    int64_t panels = n / f.panel;
    std::vector<int8_t> v(n * k * f.storedBits / 8);
    for (int8_t &x : v)
      x = int8_t(f.valueBits ? random() % (1u << f.valueBits) : random());
    // Scales: f16 in [2^-7, 2^-6) (bits 0x2000-0x2fff); more than any
    // layout reads.
    std::vector<uint16_t> s(n * k / 16);
    for (uint16_t &x : s)
      x = uint16_t(0x2000 + random() % 0x1000);
    std::vector<uint8_t> sc(n * k / 16);
    for (uint8_t &x : sc)
      x = uint8_t(f.signedSubScale ? random() % 256 : random() % 64);
    std::vector<float> c0(m * n), c1;
    for (float &x : c0)
      x = float(random() % 100) * 0.01f;
    c1 = c0;
    auto run = [&](Kernel kernel, std::vector<float> &c) {
      double start = benchNow();
      if (!kernel(q.data(), d.data(), sum.data(), v.data(), s.data(),
                  sc.data(), c.data(), n, m, k, f.panel, 0, panels,
                  /*decodeVectors=*/8, /*prefetch=*/2048)) {
        fprintf(stderr, "%s: a kernel has no code for this panel\n", f.name);
        exit(1);
      }
      return (benchNow() - start) * 1e3;
    };
    run(f.vnni, c0);
    run(f.amx, c1);
    if (std::memcmp(c0.data(), c1.data(), c0.size() * sizeof(float))) {
      printf("%s: the results differ\n", f.name);
      return 1;
    }
    std::vector<double> vnni, amx;
    for (int p = 0; p < passes; ++p) {
      vnni.push_back(run(f.vnni, c0));
      amx.push_back(run(f.amx, c1));
    }
    if (std::memcmp(c0.data(), c1.data(), c0.size() * sizeof(float))) {
      printf("%s: the results differ\n", f.name);
      return 1;
    }
    double a = benchMedian(vnni.data(), passes),
           b = benchMedian(amx.data(), passes);
    printf("%s: %.2f / %.2f ms (x%.2f), same floats\n", f.name, a, b, a / b);
  }
  return 0;
}

// Q4_0's decode GEMV over the same bytes in several packed layouts
// (bench/README.md, "llamacpp/"): panels of P columns, NP of them
// streamed at once, each block's f16 scales in a stream of their own (as
// tfm packs them: S[J, K/32, P] beside V) or right after the block's
// values ([J, K/32, 16 P + 2 P] bytes), over the Q4_0 panels of
// TinyLlama's 22 layers in huge pages, one core. A standalone kernel in
// the shape of Int8BlockMatmul.h's AVX-512 VNNI decode tile (eight
// accumulators: 4 panels of 32 columns, 2 of 64 or 1 of 128), not tfm's
// code: which layout the packing should take.
//
//   clang++-22 -O3 -std=c++20 -march=native bench/q4-scale-layout.cpp -o /tmp/q4-scale-layout
//   /tmp/q4-scale-layout          # -DPF=0|1024|4096: the prefetch distance
#include <immintrin.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include <sys/mman.h>
#include <algorithm>
#include <time.h>
static double now(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
constexpr int64_t kShapes[][2] = {{2560, 2048}, {2048, 2048}, {11264, 2048}, {2048, 5632}};
constexpr int kLayers = 22;
#ifndef PF
#define PF 2048
#endif
// layout: IL=0 values [J][B][512] then scales [J][B][32] f16 separately; IL=1 [J][B][512+64]
template <int P, int NP, bool IL>
static void gemv(const int8_t* q, const float* d, const int32_t* sum, const int8_t* v, const uint16_t* s, float* c, int64_t n, int64_t k) {
  int64_t blocks = k / 32, J = n / P;
  constexpr int64_t vb = IL ? 18 * P : 16 * P; constexpr int NV = P / 16;
  for (int64_t j = 0; j < J; j += NP) {
    __m512 acc[NP][NV];
    for (int p = 0; p < NP; ++p) for (int i = 0; i < NV; ++i) acc[p][i] = _mm512_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
      __m512i sm[NP][NV];
      for (int p = 0; p < NP; ++p) for (int i = 0; i < NV; ++i) sm[p][i] = _mm512_setzero_si512();
      const int8_t* qa = q + b * 32;
      for (int u = 0; u < 4; ++u) {
        int32_t lo, hi; memcpy(&lo, qa + 4*u, 4); memcpy(&hi, qa + 16 + 4*u, 4);
        __m512i a = _mm512_set1_epi32(lo), ah = _mm512_set1_epi32(hi);
        for (int p = 0; p < NP; ++p) {
          const int8_t* w0 = v + ((j + p) * blocks + b) * vb + u * 4 * P;
          for (int i = 0; i < NV; ++i) {
            const int8_t* at = w0 + i * 64;
            if (PF) __builtin_prefetch(at + PF);
            __m512i w = _mm512_loadu_si512(at);
            __m512i l = _mm512_and_si512(w, _mm512_set1_epi8(15));
            __m512i h = _mm512_and_si512(_mm512_srli_epi16(w, 4), _mm512_set1_epi8(15));
            sm[p][i] = _mm512_dpbusd_epi32(sm[p][i], l, a);
            sm[p][i] = _mm512_dpbusd_epi32(sm[p][i], h, ah);
          }
        }
      }
      float da = d[b]; int32_t off = 8 * sum[b];
      for (int p = 0; p < NP; ++p) {
        const uint16_t* sp = IL ? (const uint16_t*)(v + ((j + p) * blocks + b) * vb + 16 * P) : s + ((j + p) * blocks + b) * P;
        if (IL && PF) __builtin_prefetch((const char*)sp + PF);
        for (int i = 0; i < NV; ++i) {
          __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(sp + i * 16)));
          __m512 sc = _mm512_mul_ps(dw, _mm512_set1_ps(da));
          acc[p][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(sm[p][i], _mm512_set1_epi32(off))), sc, acc[p][i]);
        }
      }
    }
    for (int p = 0; p < NP; ++p) for (int i = 0; i < NV; ++i) _mm512_storeu_ps(c + (j + p) * P + i * 16, acc[p][i]);
  }
}
struct M { int64_t n, k; int8_t* v; uint16_t* s; };
template <int P, int NP, bool IL> double run(std::vector<M>& ms, const int8_t* q, const float* d, const int32_t* sum, float* c) {
  double t[9];
  for (double& x : t) { double s0 = now(); for (auto& m : ms) gemv<P, NP, IL>(q, d, sum, m.v, m.s, c, m.n, m.k); x = now() - s0; }
  std::sort(t, t + 9); return t[4];
}
int main() {
  size_t bytes = 0;
  for (auto& s : kShapes) bytes += s[0] * s[1] / 2 + s[0] * (s[1] / 32) * 2;
  bytes *= kLayers;
  char* arena = (char*)aligned_alloc(1 << 21, (bytes + (1<<21)) & ~size_t((1<<21)-1));
  madvise(arena, bytes, MADV_HUGEPAGE);
  for (size_t i = 0; i < bytes; ++i) arena[i] = char(i * 2654435761u >> 13);
  std::vector<M> ms; char* at = arena;
  for (int l = 0; l < kLayers; ++l) for (auto& s : kShapes) {
    M m{s[0], s[1], (int8_t*)at, nullptr}; int64_t vbytes = m.n * m.k / 2;
    m.s = (uint16_t*)(at + vbytes);
    at += vbytes + m.n * (m.k / 32) * 2; ms.push_back(m);
  }
  // The bytes are arbitrary: the timing does not depend on the values.
  std::vector<int8_t> q(5632); for (size_t i = 0; i < q.size(); ++i) q[i] = int8_t(i * 37);
  std::vector<float> d(5632 / 32, 0.01f), c(11264); std::vector<int32_t> sum(5632 / 32, 3);
  for (int rep = 0; rep < 5; ++rep) {
#define R(P,NP,IL) bytes / run<P,NP,IL>(ms,q.data(),d.data(),sum.data(),c.data()) / 1e9
    printf("P32 NP4 sep %.2f | P64 NP2 sep %.2f | P32 NP4 il %.2f | P64 NP2 il %.2f | P128 NP1 sep %.2f\n",
      R(32,4,false), R(64,2,false), R(32,4,true), R(64,2,true), R(128,1,false));
  }
}

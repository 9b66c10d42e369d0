// One core's f32 FMA peak: 12 independent AVX-512 (or AVX2) accumulator
// chains of vfmadd231ps, enough to cover the FMA latency on both FMA ports.
// The ceiling any f32 GEMM on this CPU works against (bench/README.md).
//   cc -O3 -march=native bench/fma-peak.c -o /tmp/fma-peak && /tmp/fma-peak
// Run one copy per core at once (`/tmp/fma-peak & /tmp/fma-peak; wait`) for
// the machine's peak.
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define ADD _mm512_add_ps
#define STORE _mm512_storeu_ps
#elif defined(__FMA__)
typedef __m256 vec;
#define LANES 8
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define ADD _mm256_add_ps
#define STORE _mm256_storeu_ps
#else
#error "needs AVX-512 or AVX2 with FMA (-march=native)"
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
  vec acc[12];
  vec b = SET1(1.0000001f), c = SET1(1e-7f);
  for (int i = 0; i < 12; i++)
    acc[i] = SET1((float)i);
  const long n = 200000000;
  double start = now();
  for (long i = 0; i < n; i++)
#pragma GCC unroll 12
    for (int j = 0; j < 12; j++)
      acc[j] = FMA(acc[j], b, c);
  double seconds = now() - start;
  vec sum = acc[0];
  for (int i = 1; i < 12; i++)
    sum = ADD(sum, acc[i]);
  float lanes[LANES];
  STORE(lanes, sum);
  printf("%.1f GFLOP/s per core (%d-lane FMA; checksum %g)\n",
         n * 12.0 * LANES * 2 / seconds / 1e9, LANES, lanes[0]);
  return 0;
}

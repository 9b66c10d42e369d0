// One core's f32 decode GEMV over packed weight panels, with and without a
// software prefetch: what a decode step's projections could read at, against
// what the generated code reads at (bench/README.md, "gemv-stream.c"). The
// weights of TinyLlama's 22 layers (q+k+v, o, gate+up, down; 3.9 GB f32) in
// panels of kPanel columns [J, K, kPanel], as tfm-cpu-pack-weights lays them
// out (64: the AVX-512 plan's register_cols), are multiplied by one row,
// `panels` panels streamed at once (the plan's gemv_panels), each K step's
// 256 bytes of a panel prefetched `distance` bytes ahead (0: none, as tfm's
// generated GEMV today). Median of 5 passes.
//
//   clang-22 -O2 -march=native bench/gemv-stream.c -o /tmp/gemv-stream
//   /tmp/gemv-stream            # every panels x distance pair
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "timing.h"

typedef float v16 __attribute__((vector_size(64)));

/// Columns of a panel: four vectors of 16.
enum { kPanel = 64, kVectors = kPanel / 16 };

/// c[panel j] = a . w's panels [j, j + panels), K steps of kPanel columns;
/// inlined with constant `panels` and `distance`, so that the accumulators
/// stay in registers.
static inline __attribute__((always_inline)) void
gemv(const float *a, const float *w, float *c, long k, long count, int panels,
     long distance) {
  for (long j = 0; j < count; j += panels) {
    v16 acc[4][kVectors] = {{{0}}};
    for (long t = 0; t < k; ++t) {
      v16 x = {0};
      x += a[t];
      for (int p = 0; p < panels; ++p) {
        const float *at = w + ((j + p) * k + t) * kPanel;
        for (int v = 0; v < kVectors; ++v) {
          if (distance)
            __builtin_prefetch((const char *)(at + 16 * v) + distance);
          v16 b;
          memcpy(&b, at + 16 * v, 64);
          acc[p][v] += x * b;
        }
      }
    }
    for (int p = 0; p < panels; ++p)
      for (int v = 0; v < kVectors; ++v)
        memcpy(c + (j + p) * kPanel + 16 * v, &acc[p][v], 64);
  }
}

static const long shapes[][2] = {{2560, 2048}, {2048, 2048}, {11264, 2048},
                                 {2048, 5632}};
enum { kLayers = 22 };

static double pass(const char *arena, const float *a, float *c, int panels,
                   long distance) {
  double start = benchNow();
  const char *p = arena;
  for (int l = 0; l < kLayers; ++l)
    for (int s = 0; s < 4; ++s) {
      long n = shapes[s][0], k = shapes[s][1];
#define CASE(P, D)                                                             \
  if (panels == P && distance == D)                                            \
    gemv(a, (const float *)p, c, k, n / kPanel, P, D);
      CASE(1, 0) CASE(1, 512) CASE(1, 1024) CASE(1, 2048)
      CASE(2, 0) CASE(2, 512) CASE(2, 1024) CASE(2, 2048)
      CASE(4, 0) CASE(4, 512) CASE(4, 1024) CASE(4, 2048)
#undef CASE
      p += n * k * 4;
    }
  return benchNow() - start;
}

int main(void) {
  size_t bytes = 0;
  for (int s = 0; s < 4; ++s)
    bytes += (size_t)shapes[s][0] * shapes[s][1] * 4 * kLayers;
  char *arena = aligned_alloc(1 << 21, bytes);
  if (!arena)
    return 1;
  // Huge pages, as the runner binds weights (docs/design.md).
  madvise(arena, bytes, MADV_HUGEPAGE);
  // 0x3c3c3c3c is a normal float (0.0115): denormal weights would take the
  // FMA's slow path and measure that instead.
  memset(arena, 0x3c, bytes);
  static float a[5632], c[11264];
  for (int i = 0; i < 5632; ++i)
    a[i] = 0.001f;
  const int panelCounts[] = {1, 2, 4};
  const long distances[] = {0, 512, 1024, 2048};
  printf("%.2f GB of f32 panels, one thread\n", bytes / 1e9);
  for (int pi = 0; pi < 3; ++pi)
    for (int di = 0; di < 4; ++di) {
      double times[5];
      for (int r = 0; r < 5; ++r)
        times[r] = pass(arena, a, c, panelCounts[pi], distances[di]);
      double median = benchMedian(times, 5);
      printf("panels %d, prefetch %4ld B ahead: %6.1f ms, %5.2f GB/s\n",
             panelCounts[pi], distances[di], median * 1e3, bytes / median / 1e9);
    }
  double check = 0;
  for (int i = 0; i < 11264; ++i)
    check += c[i];
  return check == 0; // keeps the sums live
}

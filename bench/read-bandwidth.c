// One core's read bandwidth from memory, by how many sequential streams it
// reads at once: the ceiling of a decode step, which reads every weight
// once (bench/README.md, "read-bandwidth.c"). A 1 GiB buffer is split into
// S equal parts read side by side, 64 bytes of each in turn; the median of
// 5 passes is printed per S.
//
//   clang -O2 -march=native bench/read-bandwidth.c -o /tmp/read-bandwidth
//   /tmp/read-bandwidth
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "timing.h"

typedef int64_t v8 __attribute__((vector_size(64)));

/// Reads `streams` parts of `part` lines side by side; inlined with a
/// constant `streams`, so that the sums stay in registers.
static inline __attribute__((always_inline)) int64_t
readStreams(const v8 *buffer, size_t part, int streams) {
  v8 sums[16] = {0};
  for (size_t i = 0; i < part; ++i)
    for (int s = 0; s < streams; ++s)
      sums[s] += buffer[s * part + i];
  int64_t total = 0;
  for (int s = 0; s < streams; ++s)
    total += sums[s][0];
  return total;
}

int main(void) {
  const size_t bytes = (size_t)1 << 30;
  v8 *buffer = aligned_alloc(1 << 21, bytes);
  if (!buffer)
    return 1;
  // Huge pages, as the runner binds weights (docs/design.md): on base pages
  // each stream would also pay a TLB miss every 4 KiB.
  madvise(buffer, bytes, MADV_HUGEPAGE);
  memset(buffer, 1, bytes);
  const size_t lines = bytes / sizeof(v8);
  volatile int64_t sink = 0;
  for (int streams = 1; streams <= 16; streams *= 2) {
    size_t part = lines / streams;
    double times[5];
    for (int pass = 0; pass < 5; ++pass) {
      double start = benchNow();
      switch (streams) {
      case 1: sink += readStreams(buffer, part, 1); break;
      case 2: sink += readStreams(buffer, part, 2); break;
      case 4: sink += readStreams(buffer, part, 4); break;
      case 8: sink += readStreams(buffer, part, 8); break;
      default: sink += readStreams(buffer, part, 16); break;
      }
      times[pass] = benchNow() - start;
    }
    printf("%2d stream(s): %.1f GB/s\n", streams,
           (double)(part * streams * sizeof(v8)) / benchMedian(times, 5) / 1e9);
  }
  free(buffer);
  return (int)(sink & 0);
}

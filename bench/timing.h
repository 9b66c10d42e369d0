// Timing for the single-file benchmarks here (read-bandwidth.c,
// gemv-stream.c, int8-gemv.cpp): a monotonic clock and the median of a
// pass's repetitions. Included from C and C++ alike.
#ifndef TFM_BENCH_TIMING_H
#define TFM_BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

/// Seconds on the monotonic clock.
static inline double benchNow(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static inline int benchCompare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/// The median of `count` times, which it sorts in place.
static inline double benchMedian(double *times, int count) {
  qsort(times, count, sizeof(double), benchCompare);
  return times[count / 2];
}

#endif // TFM_BENCH_TIMING_H

//===- BufferPool.h - the compiled code's heap, reused across calls -*- C++ -*-===//
//
// Compiled tfm code allocates its temporaries with malloc and frees them after
// their last use (bufferization's deallocation pipeline), so within a call
// memory is already reused by liveness. Across calls, glibc hands the large
// buffers back to the kernel and the next call page-faults every one of them
// in again (measured: a GPT-2-small block at S=512 spent ~20% of its time in
// page faults and zeroing fresh pages). The runner resolves the JIT's malloc,
// calloc, aligned_alloc and free to this pool instead: buffers of at least
// kPooledBytes are kept, by exact size, for the next allocation of that size,
// so a second call of an entry allocates nothing from the system. The pool
// holds at most the peak of live temporaries of the calls made so far (each
// size keeps as many buffers as were live at once). Thread-safe: flash
// attention's parallel iterations allocate their tiles concurrently.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_BUFFERPOOL_H
#define TFM_RUNTIME_BUFFERPOOL_H

#include <cstddef>
#include <cstdint>

namespace mlir::tfm::runtime {

/// Smallest request kept by the pool; smaller ones go to the system malloc,
/// whose small-object arenas are already reused without page faults.
inline constexpr size_t kPooledBytes = 64 * 1024;

void *poolMalloc(size_t size);
void *poolCalloc(size_t count, size_t size);
void *poolAlignedAlloc(size_t alignment, size_t size);
void poolFree(void *pointer);

struct BufferPoolStats {
  /// Bytes of pooled buffers in use now, and the most ever in use at once.
  uint64_t liveBytes = 0, peakLiveBytes = 0;
  /// Bytes held by the pool (in use or cached), and allocations served from
  /// the cache rather than the system.
  uint64_t heldBytes = 0, reused = 0, fresh = 0;
};
BufferPoolStats getBufferPoolStats();

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_BUFFERPOOL_H

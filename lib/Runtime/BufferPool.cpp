//===- BufferPool.cpp - the compiled code's heap, reused across calls -----===//
#include "tfm/Runtime/BufferPool.h"

#include <algorithm>
#include <cstdlib>
#include <malloc.h>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

using namespace mlir::tfm::runtime;

namespace {
/// Pooled buffers are 64-byte aligned: what bufferization asks for.
constexpr size_t kAlignment = 64;

struct Pool {
  std::mutex mutex;
  /// Free buffers by (rounded) size.
  std::unordered_map<uint64_t, std::vector<void *>> cached;
  /// Pooled buffers in use, with their size: poolFree tells pooled buffers
  /// from the system allocator's by this table, never by reading memory.
  std::unordered_map<void *, uint64_t> live;
  BufferPoolStats stats;
};

Pool &pool() {
  static Pool *instance = new Pool; // Never destroyed: JIT code may outlive.
  return *instance;
}

/// Rounds pooled sizes up to 4 KiB so that near-equal requests share buffers.
uint64_t roundSize(size_t size) {
  return (uint64_t(size) + 4095) & ~uint64_t(4095);
}

void noteLive(Pool &p, void *buffer, uint64_t size) {
  p.live.emplace(buffer, size);
  p.stats.liveBytes += size;
  p.stats.peakLiveBytes = std::max(p.stats.peakLiveBytes, p.stats.liveBytes);
}
} // namespace

void *mlir::tfm::runtime::poolMalloc(size_t size) {
  if (size < kPooledBytes)
    return std::malloc(size);
  uint64_t rounded = roundSize(size);
  Pool &p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.cached.find(rounded);
    if (it != p.cached.end() && !it->second.empty()) {
      void *buffer = it->second.back();
      it->second.pop_back();
      noteLive(p, buffer, rounded);
      ++p.stats.reused;
      return buffer;
    }
  }
  void *buffer = std::aligned_alloc(kAlignment, rounded);
  if (!buffer)
    return nullptr;
  std::lock_guard<std::mutex> lock(p.mutex);
  noteLive(p, buffer, rounded);
  p.stats.heldBytes += rounded;
  ++p.stats.fresh;
  return buffer;
}

void *mlir::tfm::runtime::poolCalloc(size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes))
    return nullptr;
  if (bytes < kPooledBytes)
    return std::calloc(count, size);
  void *buffer = poolMalloc(bytes);
  if (buffer)
    std::memset(buffer, 0, bytes);
  return buffer;
}

void *mlir::tfm::runtime::poolAlignedAlloc(size_t alignment, size_t size) {
  if (size >= kPooledBytes && alignment <= kAlignment)
    return poolMalloc(size);
  // aligned_alloc wants a size that is a multiple of the alignment.
  size_t bytes = (size + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, bytes);
}

void mlir::tfm::runtime::poolFree(void *pointer) {
  if (!pointer)
    return;
  // Small buffers never come from the pool: free them without the lock
  // (flash attention's threads free a few per key tile).
  if (malloc_usable_size(pointer) < kPooledBytes) {
    std::free(pointer);
    return;
  }
  Pool &p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.live.find(pointer);
    if (it != p.live.end()) {
      p.stats.liveBytes -= it->second;
      p.cached[it->second].push_back(pointer);
      p.live.erase(it);
      return;
    }
  }
  std::free(pointer);
}

BufferPoolStats mlir::tfm::runtime::getBufferPoolStats() {
  Pool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.stats;
}

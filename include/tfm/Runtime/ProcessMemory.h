//===- ProcessMemory.h - what the process holds in memory -------*- C++ -*-===//
//
// The resident memory of this process as Linux reports it in
// /proc/self/status, split into anonymous pages (the heap, buffers the
// engine allocates: packed or converted weights, KV caches, temporaries) and
// file-backed pages (the text and read-only data of the shared libraries,
// libLLVM and libMLIR above all, and the pages of memory-mapped checkpoints
// that parameters are bound to in place). Comparing the anonymous part with
// what the engine allocated on purpose shows what else it holds.
//
// And the means to give memory back: glibc keeps freed heap memory (the
// compiler's, the conversion buffers of binding) for reuse instead of
// returning it to the kernel, unless asked to.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_PROCESSMEMORY_H
#define TFM_RUNTIME_PROCESSMEMORY_H

#include <cstdint>
#include <optional>

namespace mlir::tfm::runtime {

/// Bytes of this process's memory (VmRSS = RssAnon + RssFile + RssShmem).
struct ProcessMemory {
  uint64_t resident = 0, anonymous = 0, fileBacked = 0, shared = 0;
  /// The most ever resident at once (VmHWM).
  uint64_t peak = 0;
};

/// Reads /proc/self/status; nullopt where it is not there (not Linux) or
/// lacks a field.
std::optional<ProcessMemory> readProcessMemory();

/// Returns the heap's free memory to the kernel (glibc's malloc_trim, which
/// also releases free pages inside the heap and every thread's arena): after
/// work that freed much, such as compiling, whose memory the process would
/// otherwise keep resident for its lifetime. A no-op elsewhere.
void releaseFreeHeapMemory();

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_PROCESSMEMORY_H

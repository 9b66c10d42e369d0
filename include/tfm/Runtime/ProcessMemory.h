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
// returning it to the kernel, unless asked to; and the compiler's code
// (libLLVM's and libMLIR's text and read-only data, about 100 MiB touched by
// one compile or even a compiled-code cache hit) stays mapped into the
// process's resident set after the last compile, though generation never
// runs it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_PROCESSMEMORY_H
#define TFM_RUNTIME_PROCESSMEMORY_H

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace mlir::tfm::runtime {

/// Bytes of this process's memory (VmRSS = RssAnon + RssFile + RssShmem).
struct ProcessMemory {
  uint64_t resident = 0, anonymous = 0, fileBacked = 0, shared = 0;
  /// The most ever resident at once (VmHWM).
  uint64_t peak = 0;
  /// Of `anonymous`, the bytes in transparent huge pages (smaps_rollup's
  /// AnonHugePages: the bound weights, docs/design.md); nullopt where the
  /// kernel does not report it.
  std::optional<uint64_t> anonymousHugePages;
};

/// Reads /proc/self/status (and smaps_rollup for the huge pages); nullopt
/// where it is not there (not Linux) or lacks a field.
std::optional<ProcessMemory> readProcessMemory();

/// Returns the heap's free memory to the kernel (glibc's malloc_trim, which
/// also releases free pages inside the heap and every thread's arena): after
/// work that freed much, such as compiling, whose memory the process would
/// otherwise keep resident for its lifetime. A no-op elsewhere.
void releaseFreeHeapMemory();

/// Drops from the resident set the pages of the shared libraries whose file
/// name starts with one of `libraryPrefixes` (e.g. "libLLVM", "libMLIR")
/// that are still exactly the file's contents: the mappings that are not
/// writable and hold no copied-on-write page, resident or swapped out
/// (smaps `Anonymous: 0 kB` and `Swap: 0 kB`).
/// madvise(MADV_DONTNEED) unmaps them; they stay in the page cache and fault
/// back in, unchanged, if the code runs again (the next compile). Mappings
/// written by the dynamic loader (relocated data) are left alone. Returns the
/// bytes that were resident in the released mappings; 0 where there is
/// nothing to release (static builds) or not Linux.
uint64_t releaseSharedLibraryPages(
    std::initializer_list<const char *> libraryPrefixes);

/// releaseSharedLibraryPages for the compiler (libLLVM, libMLIR), after the
/// last compile of a run. Remembers the total for reportReleasedCodeBytes.
void releaseCompilerCodePages();

/// Bytes releaseCompilerCodePages has dropped from the resident set so far.
uint64_t getReleasedCompilerCodeBytes();

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_PROCESSMEMORY_H

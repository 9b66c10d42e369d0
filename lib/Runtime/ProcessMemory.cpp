//===- ProcessMemory.cpp - what the process holds in memory ---------------===//
#include "tfm/Runtime/ProcessMemory.h"

#include "llvm/Support/MemoryBuffer.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <atomic>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

using namespace mlir::tfm::runtime;

std::optional<ProcessMemory> mlir::tfm::runtime::readProcessMemory() {
  // /proc files report size 0: read them as streams.
  auto status = llvm::MemoryBuffer::getFileAsStream("/proc/self/status");
  if (!status)
    return std::nullopt;
  llvm::StringRef text = (*status)->getBuffer();
  bool complete = true;
  // "Key:   123 kB" lines.
  auto field = [&](llvm::StringRef key) -> uint64_t {
    size_t at = text.find(("\n" + key + ":").str());
    unsigned long long kib = 0;
    if (at == llvm::StringRef::npos ||
        text.drop_front(at + key.size() + 2).ltrim().consumeInteger(10, kib)) {
      complete = false;
      return 0;
    }
    return uint64_t(kib) * 1024;
  };
  ProcessMemory memory;
  memory.resident = field("VmRSS");
  memory.peak = field("VmHWM");
  memory.anonymous = field("RssAnon");
  memory.fileBacked = field("RssFile");
  memory.shared = field("RssShmem");
  if (!complete)
    return std::nullopt;
  if (auto rollup =
          llvm::MemoryBuffer::getFileAsStream("/proc/self/smaps_rollup")) {
    text = (*rollup)->getBuffer();
    uint64_t huge = field("AnonHugePages");
    if (complete)
      memory.anonymousHugePages = huge;
  }
  return memory;
}

void mlir::tfm::runtime::releaseFreeHeapMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

#if defined(__linux__)

uint64_t mlir::tfm::runtime::releaseSharedLibraryPages(
    std::initializer_list<const char *> libraryPrefixes) {
  auto smaps = llvm::MemoryBuffer::getFileAsStream("/proc/self/smaps");
  if (!smaps)
    return 0;
  struct Mapping {
    uintptr_t start = 0, end = 0;
    bool candidate = false;
    uint64_t resident = 0, anonymous = ~uint64_t(0), swapped = ~uint64_t(0);
  };
  std::vector<Mapping> releasable;
  Mapping current;
  auto finish = [&] {
    // No copied-on-write page, resident (Anonymous) or swapped out (Swap):
    // dropping one would bring back the file's unrelocated bytes.
    if (current.candidate && current.anonymous == 0 && current.swapped == 0 &&
        current.resident)
      releasable.push_back(current);
    current = Mapping();
  };
  llvm::StringRef text = (*smaps)->getBuffer();
  while (!text.empty()) {
    llvm::StringRef line;
    std::tie(line, text) = text.split('\n');
    // A mapping's header: "start-end perms offset dev inode [path]"; its
    // fields: "Key:   N kB".
    llvm::StringRef first = line.split(' ').first;
    unsigned long long start, end;
    char perms[5] = {0};
    int pathAt = -1;
    if (first.contains('-') && !first.ends_with(":") &&
        std::sscanf(line.str().c_str(), "%llx-%llx %4s %*s %*s %*s %n",
                    &start, &end, perms, &pathAt) >= 3) {
      finish();
      current.start = start;
      current.end = end;
      llvm::StringRef path =
          pathAt > 0 ? line.drop_front(pathAt).trim() : llvm::StringRef();
      llvm::StringRef name = path.rsplit('/').second.empty()
                                 ? path
                                 : path.rsplit('/').second;
      bool named = false;
      for (const char *prefix : libraryPrefixes)
        named |= name.starts_with(prefix);
      // Not writable, private: what the file holds, never written.
      current.candidate = named && perms[1] != 'w' && perms[3] == 'p';
      continue;
    }
    unsigned long long kib = 0;
    if (line.consume_front("Rss:") && !line.ltrim().consumeInteger(10, kib))
      current.resident = uint64_t(kib) * 1024;
    else if (line.consume_front("Anonymous:") &&
             !line.ltrim().consumeInteger(10, kib))
      current.anonymous = uint64_t(kib) * 1024;
    else if (line.consume_front("Swap:") &&
             !line.ltrim().consumeInteger(10, kib))
      current.swapped = uint64_t(kib) * 1024;
  }
  finish();
  uint64_t released = 0;
  for (const Mapping &m : releasable)
    if (madvise(reinterpret_cast<void *>(m.start), m.end - m.start,
                MADV_DONTNEED) == 0)
      released += m.resident;
  return released;
}
#else
uint64_t mlir::tfm::runtime::releaseSharedLibraryPages(
    std::initializer_list<const char *>) {
  return 0;
}
#endif

static std::atomic<uint64_t> releasedCompilerCodeBytes{0};

void mlir::tfm::runtime::releaseCompilerCodePages() {
  releasedCompilerCodeBytes += releaseSharedLibraryPages({"libLLVM", "libMLIR"});
}

uint64_t mlir::tfm::runtime::getReleasedCompilerCodeBytes() {
  return releasedCompilerCodeBytes;
}

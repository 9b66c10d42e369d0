//===- ProcessMemory.cpp - what the process holds in memory ---------------===//
#include "tfm/Runtime/ProcessMemory.h"

#include "llvm/Support/MemoryBuffer.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

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
  return memory;
}

void mlir::tfm::runtime::releaseFreeHeapMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

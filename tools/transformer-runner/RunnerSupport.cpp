//===- RunnerSupport.cpp - how transformer-runner reports -----------------===//
#include "RunnerSupport.h"

#include "tfm/Runtime/Mpi.h"
#include "tfm/Runtime/Nccl.h"
#include "tfm/Runtime/Npy.h"
#include "tfm/Runtime/ProcessMemory.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <vector>

using namespace mlir::tfm;
using namespace mlir::tfm::runner;
using namespace mlir::tfm::runtime;

static void (*failHook)(int) = nullptr;

void runner::setFailHook(void (*hook)(int)) { failHook = hook; }

void runner::fail(const llvm::Twine &message) {
  llvm::outs().flush();
  llvm::errs() << "transformer-runner: error: " << message << "\n";
  if (failHook)
    failHook(1);
  std::exit(1);
}

void runner::warn(const llvm::Twine &message) {
  llvm::errs() << "transformer-runner: warning: " << message << "\n";
}

void runner::reportResult(const EntryResult &result, const char *data,
                          unsigned printCount) {
  uint64_t count = *getNumBytes(result.shape, 1);
  llvm::outs() << result.name << (result.isKVCache ? " (kv cache)" : "")
               << ": " << formatShape(result.shape) << " "
               << getDTypeName(result.dtype) << " [";
  for (uint64_t i = 0, e = std::min<uint64_t>(count, printCount); i < e; ++i)
    llvm::outs() << (i ? ", " : "")
                 << llvm::format("%.6g", loadAsDouble(data, result.dtype, i));
  llvm::outs() << (count > printCount ? ", ...]" : "]") << "\n";
}

void runner::writeResult(const EntryResult &result, const char *data,
                         llvm::StringRef path) {
  if (result.dtype != DType::F16 && result.dtype != DType::BF16) {
    if (llvm::Error err = writeNpy(path, result.dtype, result.shape, data))
      fail(llvm::toString(std::move(err)));
    return;
  }
  uint64_t count = *getNumBytes(result.shape, 1);
  std::vector<float> widened(count);
  convertElements(data, result.dtype, widened.data(), DType::F32, count);
  if (llvm::Error err =
          writeNpy(path, DType::F32, result.shape, widened.data()))
    fail(llvm::toString(std::move(err)));
}

void runner::printResidentMemory(const MemoryBudget &budget) {
  std::optional<ProcessMemory> memory = readProcessMemory();
  if (!memory)
    return;
  constexpr double MiB = 1024 * 1024;
  llvm::outs() << llvm::format(
      "memory: resident %.1f MiB (anonymous %.1f, file-backed %.1f), peak "
      "%.1f MiB\n",
      memory->resident / MiB, memory->anonymous / MiB, memory->fileBacked / MiB,
      memory->peak / MiB);
  if (memory->anonymousHugePages)
    llvm::outs() << llvm::format(
        "memory: %.1f MiB of the anonymous pages in transparent huge pages\n",
        *memory->anonymousHugePages / MiB);
  if (uint64_t released = getReleasedCompilerCodeBytes())
    llvm::outs() << llvm::format(
        "memory: %.1f MiB of compiler code (libLLVM, libMLIR) released from "
        "the resident set after compiling\n",
        released / MiB);
  // What the run holds on purpose. The anonymous pages are the engine's
  // buffers and the process's own heap; the file-backed ones the shared
  // libraries' pages (libLLVM, libMLIR) and weights used in place from a
  // checkpoint's mapping.
  uint64_t total = budget.getTotal();
  if (!total)
    return;
  // Each rank binds its slices: what rank 0 holds, exactly.
  if (const MpiWorld *world = getMpiWorld()) {
    // MPI's sums on the CPU, NCCL's on the GPU.
    CollectiveStats sums = getCollectiveStats();
    const char *library = "MPI";
    CollectiveStats gpuSums;
    tfmNcclGetStats(&gpuSums.calls, &gpuSums.bytes, &gpuSums.milliseconds);
    if (gpuSums.calls) {
      sums = gpuSums;
      library = "NCCL";
    }
    llvm::outs() << "tensor parallel: rank " << world->rank << " of "
                 << world->size << " binds " << budget.weights
                 << " bytes of weights\n";
    llvm::outs() << llvm::format(
        "tensor parallel: %llu %s all-reduces of %.1f MiB in all took %.1f ms "
        "(waiting for the other ranks included)\n",
        (unsigned long long)sums.calls, library, sums.bytes / MiB,
        sums.milliseconds);
  }
  llvm::outs() << llvm::format(
      "memory budget: %.1f MiB (weights %.1f + KV caches %.1f + workspace "
      "%.1f + inputs and results %.1f); resident %.2f x budget\n",
      total / MiB, budget.weights / MiB, budget.kvCaches / MiB,
      budget.workspace / MiB, budget.buffers / MiB,
      double(memory->resident) / double(total));
}

//===- RunnerSupport.h - how transformer-runner reports ---------*- C++ -*-===//
//
// The runner's side of the engine (tfm/Engine): errors become one
// `transformer-runner: error: ...` line and exit code 1, warnings one
// `transformer-runner: warning: ...` line; results are printed and written.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TRANSFORMER_RUNNER_RUNNERSUPPORT_H
#define TFM_TOOLS_TRANSFORMER_RUNNER_RUNNERSUPPORT_H

#include "tfm/Engine/Binding.h"

namespace mlir::tfm::runner {
using namespace mlir::tfm::engine;

/// Reports one `transformer-runner: error: ...` line and exits with code 1:
/// bad input never crashes the runner.
[[noreturn]] void fail(const llvm::Twine &message);
/// Called by fail() with the exit code before it exits (a tensor-parallel
/// rank ends the whole job: runtime::abortMpiWorld).
void setFailHook(void (*hook)(int));
/// One `transformer-runner: warning: ...` line on stderr.
void warn(const llvm::Twine &message);

template <typename T> T check(llvm::Expected<T> value) {
  if (!value)
    fail(llvm::toString(value.takeError()));
  return std::move(*value);
}
inline void check(llvm::Error error) {
  if (error)
    fail(llvm::toString(std::move(error)));
}

/// Prints "NAME: SHAPE TYPE [v0, v1, ...]" with the first `count` values.
void reportResult(const runtime::EntryResult &result, const char *data,
                  unsigned count);
/// Writes a result as .npy (f16/bf16 widened to f32).
void writeResult(const runtime::EntryResult &result, const char *data,
                 llvm::StringRef path);

/// Prints the process's current resident memory (VmRSS) split into
/// anonymous pages (the runner's buffers and heap) and file-backed ones (the
/// shared libraries, weights used in place from a checkpoint's mapping), and
/// its peak (VmHWM); then, unless it is empty, `budget`, what the run holds
/// on purpose, and the ratio of the two.
void printResidentMemory(const MemoryBudget &budget);

} // namespace mlir::tfm::runner

#endif // TFM_TOOLS_TRANSFORMER_RUNNER_RUNNERSUPPORT_H

//===- InputChecks.h - refusing hostile input before any work ---*- C++ -*-===//
//
// The runner's checks of everything a user hands it, each run before the
// work it protects (tfm/Runtime/Limits.h has the limits):
// - model text: a regular file of bounded size and nesting, before parsing;
// - output paths: writable, not a directory, not one of the inputs
//   (compared by device and inode), before parsing or compiling;
// - --shared-libs: every library exists, before compiling;
// - index and id inputs: within the range the IR gives them
//   (tfm/Runtime/EntryResources.h), before the call;
// - memory: weights, inputs, caches, results and workspace against the
//   machine's memory or --max-memory, before allocating.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TRANSFORMER_RUNNER_INPUTCHECKS_H
#define TFM_TOOLS_TRANSFORMER_RUNNER_INPUTCHECKS_H

#include "RunnerSupport.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace mlir::tfm::runner {

/// Reads MLIR text (or bytecode) for the parser, refusing what would crash
/// or exhaust it.
std::unique_ptr<llvm::MemoryBuffer> readModelText(llvm::StringRef path);

/// One file the user named: the option and the path.
struct NamedPath {
  std::string flag;
  std::string path;
};

/// Fails unless every output can be written and none is an input or
/// another output.
void checkOutputPaths(llvm::ArrayRef<NamedPath> outputs,
                      llvm::ArrayRef<NamedPath> inputs);

/// Fails on a --shared-libs entry that is not a readable file.
void checkSharedLibs(llvm::ArrayRef<std::string> libs);

/// Fails on an index or integer input outside its range.
void checkInputRanges(const runtime::EntrySignature &sig,
                      const std::vector<BoundArgument> &bound);

/// The limit checkMemory compares with: `spec` (--max-memory, e.g. "8G"),
/// or the machine's memory when empty.
void setMemoryLimit(llvm::StringRef spec);
/// --max-memory, when given.
std::optional<uint64_t> getMemoryLimit();
/// Fails when running `sigs` together needs more memory than the limit.
void checkMemory(ModuleOp module,
                 llvm::ArrayRef<const runtime::EntrySignature *> sigs);

} // namespace mlir::tfm::runner

#endif // TFM_TOOLS_TRANSFORMER_RUNNER_INPUTCHECKS_H

//===- InputChecks.cpp - refusing hostile input before any work -----------===//
#include "InputChecks.h"

#include "tfm/Runtime/EntryResources.h"
#include "tfm/Runtime/Limits.h"
#include "tfm/Runtime/OutputFile.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>

using namespace mlir;
using namespace mlir::tfm::runner;
using namespace mlir::tfm::runtime;

std::unique_ptr<llvm::MemoryBuffer>
mlir::tfm::runner::readModelText(llvm::StringRef path) {
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      check(readInputFile(path, kMaxTextFileBytes, /*isText=*/true));
  // Bytecode ("ML\xefR") is binary and not scanned; text is bounded before
  // the recursive parser sees it.
  if (!buffer->getBuffer().starts_with("ML\xef\x52"))
    if (llvm::Error err = checkTextNesting(buffer->getBuffer(),
                                           TextSyntax::Mlir, kMaxMlirDepth,
                                           path))
      fail(llvm::toString(std::move(err)));
  return buffer;
}

void mlir::tfm::runner::checkOutputPaths(llvm::ArrayRef<NamedPath> outputs,
                                         llvm::ArrayRef<NamedPath> inputs) {
  for (auto [i, out] : llvm::enumerate(outputs)) {
    if (llvm::Error err = checkOutputPath(out.path, out.flag))
      fail(llvm::toString(std::move(err)));
    // Overwriting an input (the mapped weights!) while it is read would
    // corrupt the run and the file.
    for (const NamedPath &in : inputs)
      if (!in.path.empty() && isSameFile(out.path, in.path))
        fail(llvm::formatv("{0} {1}: is the input {2} {3}; refusing to "
                           "overwrite an input",
                           out.flag, out.path, in.flag, in.path));
    for (const NamedPath &other : outputs.take_front(i))
      if (other.path == out.path || isSameFile(out.path, other.path))
        fail(llvm::formatv("{0} {1}: also written by {2}", out.flag, out.path,
                           other.flag));
  }
}

void mlir::tfm::runner::checkSharedLibs(llvm::ArrayRef<std::string> libs) {
  for (const std::string &lib : libs)
    if (llvm::Error err = checkInputFile(lib, kMaxDataFileBytes))
      fail("--shared-libs: " + llvm::toString(std::move(err)));
}

void mlir::tfm::runner::checkInputRanges(
    const EntrySignature &sig, const std::vector<BoundArgument> &bound) {
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    if (!arg.range)
      continue;
    const InputRange &r = *arg.range;
    if (r.max < r.min)
      fail(llvm::formatv("input '{0}' ({1}): no value is valid: {2}", arg.name,
                         describeArgument(sig, i), r.why));
    if (arg.kind == EntryArgument::Kind::Index) {
      int64_t v = bound[i].index;
      if (v < r.min || v > r.max)
        fail(llvm::formatv("input '{0}' = {1}: outside [{2}, {3}]: {4}",
                           arg.name, v, r.min, r.max, r.why));
      continue;
    }
    uint64_t count = *getNumBytes(arg.shape, 1);
    if (auto bad = findOutOfRange(r, arg.dtype, bound[i].data, count))
      fail(llvm::formatv("input '{0}': element {1} is {2}, outside [{3}, "
                         "{4}]: {5}",
                         arg.name, bad->first, bad->second, r.min, r.max,
                         r.why));
  }
}

static std::optional<uint64_t> memoryLimit;
static bool memoryLimitGiven = false;

void mlir::tfm::runner::setMemoryLimit(llvm::StringRef spec) {
  if (spec.empty())
    return;
  memoryLimit = parseByteCount(spec);
  if (!memoryLimit || *memoryLimit == 0)
    fail(llvm::formatv("--max-memory '{0}': expected a positive byte count "
                       "with an optional K, M, G or T suffix",
                       spec));
  memoryLimitGiven = true;
}

void mlir::tfm::runner::checkMemory(
    ModuleOp module, llvm::ArrayRef<const EntrySignature *> sigs) {
  check(checkMemoryFits(module, sigs, getMemoryLimit()));
}

std::optional<uint64_t> mlir::tfm::runner::getMemoryLimit() {
  return memoryLimitGiven ? memoryLimit : std::nullopt;
}

//===- RunnerSupport.h - binding and calling compiled entries ---*- C++ -*-===//
//
// What both modes of transformer-runner (a tfm .mlir file, a Hugging Face
// config.json) share: error reporting, host buffers, binding `tfm.param`
// arguments to weights, and the argument frame of one compiled entry laid out
// for its `_mlir_ciface_` wrapper (see tfm/Pipelines/Pipelines.h).
//
// Deliberately free of MLIR's heavy headers: the TUs that include it stay
// quick to compile.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TRANSFORMER_RUNNER_RUNNERSUPPORT_H
#define TFM_TOOLS_TRANSFORMER_RUNNER_RUNNERSUPPORT_H

#include "tfm/Runtime/EntrySignature.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm::runtime {
class SafeTensorsFile;
} // namespace mlir::tfm::runtime

namespace mlir::tfm::runner {

/// Reports one `transformer-runner: error: ...` line and exits with code 1:
/// bad input never crashes the runner.
[[noreturn]] void fail(const llvm::Twine &message);
/// One `transformer-runner: warning: ...` line on stderr.
void warn(const llvm::Twine &message);

template <typename T> T check(llvm::Expected<T> value) {
  if (!value)
    fail(llvm::toString(value.takeError()));
  return std::move(*value);
}

using Clock = std::chrono::steady_clock;
double millisecondsSince(Clock::time_point start);

/// A zero-initialised, 64-byte aligned host buffer.
class AlignedBuffer {
public:
  explicit AlignedBuffer(uint64_t numBytes);
  char *get() const { return data.get(); }

private:
  struct Free {
    void operator()(char *p) const;
  };
  std::unique_ptr<char, Free> data;
};

/// Where one argument's value lives.
struct BoundArgument {
  void *data = nullptr;                   // tensors
  std::shared_ptr<AlignedBuffer> storage; // when the runner owns the data
  int64_t index = 0;                      // index arguments
  bool bound = false;
};

/// "f32 2x4x8".
std::string describe(runtime::DType dtype, llvm::ArrayRef<int64_t> shape);
/// "argument #3 of @forward, f32 64".
std::string describeArgument(const runtime::EntrySignature &sig, size_t i);

/// Where `tfm.param` values come from: a weights file, or deterministic
/// random values when `randomSeed` is set.
struct WeightSource {
  const runtime::SafeTensorsFile *file = nullptr;
  std::optional<uint64_t> randomSeed;
  /// Prepended to every parameter name to find its tensor in `file` (GPT-2
  /// checkpoints saved from GPT2LMHeadModel say "transformer.h.0...").
  std::string namePrefix;
};

/// Binds every `tfm.param` argument of `sig`: checks presence, dtype and
/// shape against the file (errors name the tensor), concatenates fused
/// parameters, and passes aligned tensors without a copy. Arguments of the
/// same name share one buffer through `shared`, so entries compiled together
/// (prefill and decode) hold one copy of each fused weight.
void bindParameters(const runtime::EntrySignature &sig,
                    const WeightSource &weights,
                    std::vector<BoundArgument> &bound,
                    llvm::StringMap<BoundArgument> &shared);

/// The words of a `StridedMemRefType` descriptor for a dense row-major
/// buffer of `shape` at `data`.
std::vector<int64_t> makeDescriptor(void *data, llvm::ArrayRef<int64_t> shape);

/// The memory of one call of a compiled entry: its bound arguments, one
/// buffer per non-cache result, and the packed argument array its
/// `_mlir_ciface_` wrapper takes (a descriptor pointer per tensor, the i64
/// itself per index, then one descriptor per non-cache result). Cache results
/// alias their cache arguments, updated in place. Not copyable: the packed
/// array points into the frame.
class CallFrame {
public:
  CallFrame(const runtime::EntrySignature &sig,
            std::vector<BoundArgument> bound);
  CallFrame(const CallFrame &) = delete;
  CallFrame &operator=(const CallFrame &) = delete;

  const runtime::EntrySignature &getSignature() const { return sig; }
  void **getPackedArguments() { return packed.data(); }
  /// The value of index argument `i`, read at every call.
  int64_t &getIndex(size_t i) { return bound[i].index; }
  char *getArgumentData(size_t i) {
    return static_cast<char *>(bound[i].data);
  }
  char *getResultData(size_t i) { return results[i]; }

private:
  const runtime::EntrySignature &sig;
  std::vector<BoundArgument> bound;
  std::vector<std::unique_ptr<AlignedBuffer>> resultStorage;
  std::vector<char *> results;
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void *> descriptorPointers;
  llvm::SmallVector<void *> packed;
};

/// Prints "NAME: SHAPE TYPE [v0, v1, ...]" with the first `count` values.
void reportResult(const runtime::EntryResult &result, const char *data,
                  unsigned count);
/// Writes a result as .npy (f16/bf16 widened to f32).
void writeResult(const runtime::EntryResult &result, const char *data,
                 llvm::StringRef path);

/// Prints the process's peak and current resident memory (VmHWM, VmRSS),
/// to compare with the weights, KV caches and temporaries it holds.
void printResidentMemory();

} // namespace mlir::tfm::runner

#endif // TFM_TOOLS_TRANSFORMER_RUNNER_RUNNERSUPPORT_H

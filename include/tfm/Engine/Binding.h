//===- Binding.h - binding and calling compiled entries ---------*- C++ -*-===//
//
// What every user of the engine (transformer-runner's two modes, the C API)
// shares: host buffers, binding `tfm.param` arguments to weights, and the
// argument frame of one compiled entry laid out for its `_mlir_ciface_`
// wrapper (see tfm/Pipelines/Pipelines.h). Errors are returned, never
// printed: the runner prints them, the C API hands them to its caller.
//
// Deliberately free of MLIR's heavy headers: the TUs that include it stay
// quick to compile.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_ENGINE_BINDING_H
#define TFM_ENGINE_BINDING_H

#include "tfm/Runtime/EntrySignature.h"
#include "tfm/Runtime/Error.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm::runtime {
class Checkpoint;
} // namespace mlir::tfm::runtime

namespace mlir::tfm::engine {

using runtime::makeError;

/// Receives the engine's warnings (one line each, without a prefix).
using WarningHandler = std::function<void(const llvm::Twine &)>;

using Clock = std::chrono::steady_clock;
double millisecondsSince(Clock::time_point start);

/// A zero-initialised, 64-byte aligned host buffer. Large ones (weights, KV
/// caches, logits) are pages mapped for the buffer alone: freeing one gives
/// its memory back to the kernel at once, where the malloc heap would keep
/// the hole, and pages never written (a KV cache's positions not yet
/// reached) take no memory.
class AlignedBuffer {
public:
  /// Fails (naming the size) when the memory is not there.
  static llvm::Expected<std::unique_ptr<AlignedBuffer>>
  allocate(uint64_t numBytes);
  /// A mapping that starts at a 2 MiB boundary, advised as transparent huge
  /// pages and reserved without committing swap: the bound weights' arena
  /// (Binding.cpp), whose pages are all written and then streamed on every
  /// call. Pages never written take no memory.
  static llvm::Expected<std::unique_ptr<AlignedBuffer>>
  allocateHugePages(uint64_t numBytes);
  /// The memory of `whole` from `offset` on, holding `whole` alive.
  static std::unique_ptr<AlignedBuffer>
  slice(std::shared_ptr<AlignedBuffer> whole, uint64_t offset);
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  char *get() const { return data; }

private:
  AlignedBuffer() = default;
  char *data = nullptr;
  /// Non-zero for a mapped buffer: the bytes mapped.
  uint64_t mappedBytes = 0;
  /// A slice's buffer, which owns its memory.
  std::shared_ptr<AlignedBuffer> whole;
};

/// Where one argument's value lives.
struct BoundArgument {
  void *data = nullptr;                   // tensors
  std::shared_ptr<AlignedBuffer> storage; // when the runner owns the data
  uint64_t numBytes = 0;                  // tensors: the bytes at `data`
  int64_t index = 0;                      // index arguments
  bool bound = false;
};

/// The memory a run holds on purpose, to compare with what the process has
/// resident (tfm/Runtime/ProcessMemory.h).
struct MemoryBudget {
  /// The parameters as bound, each buffer once: packed or converted copies,
  /// and tensors used in place from a checkpoint's mapping.
  uint64_t weights = 0;
  /// KV caches as allocated (their pages become resident as positions fill).
  uint64_t kvCaches = 0;
  /// The compiled entries' temporaries as planned: the largest of the
  /// ledger's peaks of live activations (tfm/Dialect/Tfm/Transforms/Ledger.h,
  /// what the CPU pipeline's workspace plan needs at least).
  uint64_t workspace = 0;
  /// Input and result buffers (token ids, logits).
  uint64_t buffers = 0;

  uint64_t getTotal() const { return weights + kvCaches + workspace + buffers; }
};

/// The bytes of the distinct buffers of `arguments` (by name, as
/// bindParameters shares them), each buffer counted once.
uint64_t getDistinctBytes(const llvm::StringMap<BoundArgument> &arguments);
/// The bytes of one call frame's input and non-cache result tensors.
uint64_t getBufferBytes(const runtime::EntrySignature &sig);

/// "f32 2x4x8".
std::string describe(runtime::DType dtype, llvm::ArrayRef<int64_t> shape);
/// "argument #3 of @forward, f32 64".
std::string describeArgument(const runtime::EntrySignature &sig, size_t i);

/// Where `tfm.param` values come from: a checkpoint (one or more
/// .safetensors files), or deterministic random values when `randomSeed` is
/// set.
struct WeightSource {
  const runtime::Checkpoint *checkpoint = nullptr;
  std::optional<uint64_t> randomSeed;
  /// Prepended to every parameter name to find its tensor in `checkpoint`
  /// (GPT-2 checkpoints saved from GPT2LMHeadModel say "transformer.h.0...").
  std::string namePrefix;
  /// Whether a float tensor of another float type than its parameter (a bf16
  /// or f16 checkpoint of an f32 model, an f32 one of a bf16 model) is
  /// converted once, when bound (runtime::isFloatConversion: narrowing rounds
  /// to nearest even). Off, such a tensor is an error: a .mlir model declares
  /// the types of its weight file.
  bool convertFloats = false;
  /// The rank whose slices tensor-parallel parameters (tfm.param_shard) are
  /// bound as.
  int64_t rank = 0;
};

/// Binds every `tfm.param` argument of `sig`: checks presence, dtype and
/// shape against the checkpoint (errors name the file and the tensor),
/// converts float types when `weights.convertFloats` allows it, concatenates
/// fused parameters, and passes aligned tensors of the parameter's type
/// without a copy. Arguments of the
/// same name share one buffer through `shared`, so entries compiled together
/// (prefill and decode) hold one copy of each fused weight.
llvm::Error bindParameters(const runtime::EntrySignature &sig,
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
  /// Fails when the results' buffers cannot be allocated.
  static llvm::Expected<std::unique_ptr<CallFrame>>
  create(const runtime::EntrySignature &sig, std::vector<BoundArgument> bound);
  CallFrame(const CallFrame &) = delete;
  CallFrame &operator=(const CallFrame &) = delete;

  const runtime::EntrySignature &getSignature() const { return sig; }
  void **getPackedArguments() { return packed.data(); }
  /// The value of index argument `i`, read at every call.
  int64_t &getIndex(size_t i) { return bound[i].index; }
  char *getArgumentData(size_t i) { return static_cast<char *>(bound[i].data); }
  char *getResultData(size_t i) { return results[i]; }

private:
  CallFrame(const runtime::EntrySignature &sig,
            std::vector<BoundArgument> bound)
      : sig(sig), bound(std::move(bound)) {}

  const runtime::EntrySignature &sig;
  std::vector<BoundArgument> bound;
  std::vector<std::unique_ptr<AlignedBuffer>> resultStorage;
  std::vector<char *> results;
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void *> descriptorPointers;
  llvm::SmallVector<void *> packed;
};

/// Element `i` of a buffer of `dtype` as a double (printing, conversion).
double loadAsDouble(const char *data, runtime::DType dtype, uint64_t i);

} // namespace mlir::tfm::engine

#endif // TFM_ENGINE_BINDING_H

//===- EntryResources.h - what an entry's inputs may be and cost -*- C++ -*-===//
//
// Run-time bounds and memory of an entry function, read from its tfm-level
// IR before lowering, so that a runner refuses bad input on the host, before
// the (slow) compile and the call:
//
// - Ranges: an input that reaches an op which indexes memory with it gets
//   that op's bound: token ids of `tfm.embedding` lie in [0, V); the offset
//   of `tfm.position_embedding` in [0, P - S]; the position of
//   `tfm.kv_cache_write` in [0, S_max - rows]; the offset of
//   `tfm.attention` in [0, Skv - S]. Uses through other ops (arithmetic on
//   an index first) are not followed: the lowering clamps every such index
//   into its buffer (tfm-to-linalg), so no value reaches memory out of
//   bounds, but only a direct input gets an error instead of a clamp.
//   Expert ids never come from input: tfm.moe routes with its own top-k.
// - Memory: weights, inputs, KV caches and results at their byte sizes,
//   plus the largest intermediate tensor of the entry as the workspace
//   estimate; every byte count is overflow-checked.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_ENTRYRESOURCES_H
#define TFM_RUNTIME_ENTRYRESOURCES_H

#include "tfm/Runtime/EntrySignature.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace mlir {
class ModuleOp;
namespace tfm::runtime {

/// Fills `range` of every input and index argument of `sig` (the entry
/// `sig.function` of `module`) that the IR bounds. Runs on tfm-level IR,
/// before any pass lowers the ops it reads.
void deriveInputRanges(ModuleOp module, EntrySignature &sig);

/// Copies the ranges of `from` to the inputs of the same name in `to` (the
/// signature again after passes that change parameters, such as Q/K/V
/// fusion; inputs keep their names).
void copyInputRanges(const EntrySignature &from, EntrySignature &to);

/// The first value of an integer input outside `range`: its element index
/// and value. `data` holds `count` elements of `dtype` (I32 or I64).
std::optional<std::pair<uint64_t, int64_t>>
findOutOfRange(const InputRange &range, DType dtype, const void *data,
               uint64_t count);

struct MemoryEstimate {
  uint64_t weights = 0, inputs = 0, caches = 0, results = 0, workspace = 0;
  uint64_t total = 0;
};

/// The memory of running the entries `sigs` of `module` together (weights
/// of one name counted once). Errors name a tensor whose byte count
/// overflows 64 bits.
llvm::Expected<MemoryEstimate>
estimateMemory(ModuleOp module, llvm::ArrayRef<const EntrySignature *> sigs);

/// Fails, naming the parts, when running `sigs` together needs more memory
/// than `limit` (--max-memory), or than the machine has when it is unset.
llvm::Error checkMemoryFits(ModuleOp module,
                            llvm::ArrayRef<const EntrySignature *> sigs,
                            std::optional<uint64_t> limit);

} // namespace tfm::runtime
} // namespace mlir

#endif // TFM_RUNTIME_ENTRYRESOURCES_H

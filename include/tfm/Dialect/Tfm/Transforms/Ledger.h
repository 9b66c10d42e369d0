//===- Ledger.h - the model ledger's accounting ------------------*- C++ -*-===//
//
// What each tfm op of a function costs: parameters, FLOPs, weight and
// activation bytes, KV cache per token, grouped by the sublayer the op belongs
// to. `--tfm-print-ledger` prints this; other passes (memory reports) can
// reuse the numbers without reparsing its output.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_DIALECT_TFM_TRANSFORMS_LEDGER_H
#define TFM_DIALECT_TFM_TRANSFORMS_LEDGER_H

#include "tfm/Dialect/Tfm/Transforms/FlashAttentionTiles.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <optional>
#include <string>

namespace mlir::tfm {

/// Where an op's cost is booked. Norms are always `Norm`; other ops inside a
/// residual sublayer take the sublayer's kind.
enum class LedgerCategory { Embedding, Norm, Attention, MLP, MoE, LMHead, Other };
inline constexpr unsigned kNumLedgerCategories = 7;
llvm::StringRef stringifyLedgerCategory(LedgerCategory category);

/// Assigns a category to every tfm op of `function` (non-tfm ops are absent).
/// A sublayer is found structurally (Sublayer.h: for each `tfm.residual_add`,
/// the ops in the backward slice of its branch operand but not of its
/// residual operand) and booked under its kind, MLP when it has none.
llvm::DenseMap<Operation *, LedgerCategory>
classifyLedgerOps(Operation *function);

/// One `tfm.param` operand of an op.
struct LedgerWeight {
  Value value;
  llvm::StringRef name;
  RankedTensorType type;
  /// The projection's `in -> out` sizes for weights of linear/lm_head, whose
  /// stored shape depends on the layout; unset for everything else.
  std::optional<std::pair<int64_t, int64_t>> inOut;
};

/// The ledger entry of one tfm op.
/// Scratch memory an attention needs beyond its inputs and output, in the
/// naive form (--tfm-to-linalg: the f32 score matrix and the probabilities,
/// 2 x B*Hq*S*S_kv) and in the flash form (--tfm-flash-attention: one
/// query tile's f32 scores, probabilities, running statistics and
/// accumulator, plus padded copies of q/k/v/out when the lengths are not
/// multiples of the tiles).
struct AttentionScratch {
  int64_t naiveBytes = 0, flashBytes = 0;
};

/// Tile sizes the flash estimate assumes (the pass's and pipeline's defaults).
struct LedgerOptions {
  int64_t flashQueryTile = kDefaultFlashQueryTile;
  int64_t flashKeyTile = kDefaultFlashKeyTile;
};

AttentionScratch estimateAttentionScratch(Operation *attention,
                                          const LedgerOptions &options);

struct LedgerRow {
  Operation *op;
  /// The op's `loc("name")` if it has one, else its op name.
  std::string label;
  LedgerCategory category;
  llvm::SmallVector<LedgerWeight, 2> weights;
  int64_t params = 0, flops = 0, weightBytes = 0, activationBytes = 0,
          kvCacheBytesPerToken = 0;
  /// Bytes this rank sends for the op (collectives of a tensor-parallel
  /// module), and the tokens its tensor covers (B * S).
  int64_t communicationBytes = 0, communicationTokens = 0;
  /// Set on tfm.attention rows.
  std::optional<AttentionScratch> scratch;
};

/// Sums over a set of rows; a parameter tensor is booked once, under the
/// category of its first user.
struct LedgerTotals {
  int64_t ops = 0, params = 0, flops = 0, weightBytes = 0,
          activationBytes = 0, kvCacheBytesPerToken = 0;
  /// Bytes each rank sends per evaluation, and per token.
  int64_t communicationBytes = 0, communicationBytesPerToken = 0;
  int64_t collectives = 0;
};

/// A parameter tensor read by more than one op (tied embeddings).
struct LedgerSharedParam {
  LedgerWeight weight;
  /// Indices into `FunctionLedger::rows`, the first one carrying the cost.
  llvm::SmallVector<unsigned, 2> users;
};

struct FunctionLedger {
  llvm::SmallVector<LedgerRow> rows;
  std::array<LedgerTotals, kNumLedgerCategories> byCategory;
  LedgerTotals total;
  llvm::SmallVector<LedgerSharedParam> shared;
  /// The largest attention scratch of the function (attentions run one
  /// after another, so the peak is a maximum, not a sum).
  AttentionScratch peakScratch;
  /// The most bytes of tfm op results alive at once, each from its op to
  /// its last use, in program order: what a liveness plan of the
  /// temporaries needs at least (the CPU pipeline's tfm-plan-workspace).
  /// Results the function returns (logits, updated KV caches) belong to the
  /// caller and are not counted.
  int64_t peakLiveActivationBytes = 0;
};

/// Bytes of a static tensor type (sub-byte element types round up).
int64_t getTensorBytes(RankedTensorType type);

/// The ledger of `function`, rows in program order. Empty when it holds no
/// tfm op.
FunctionLedger computeLedger(Operation *function,
                             const LedgerOptions &options = {});

/// Prints the ledger of every function of `module` that holds tfm ops as one
/// JSON array (what `--tfm-print-ledger=format=json` prints).
void printLedgerJson(llvm::raw_ostream &os, Operation *module,
                     const LedgerOptions &options = {});

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_TRANSFORMS_LEDGER_H

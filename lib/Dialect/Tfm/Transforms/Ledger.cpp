//===- Ledger.cpp - the model ledger's accounting -------------------------===//
//
// Per-op costs come from the op types (parameters, activation bytes) and the
// LedgerOpInterface (FLOPs, KV cache). The category of an op comes from the
// residual structure of the function, so that e.g. a linear is booked under
// attention or MLP without relying on names.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/Tfm/Transforms/Ledger.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/Sublayer.h"

#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfm;

StringRef mlir::tfm::stringifyLedgerCategory(LedgerCategory category) {
  switch (category) {
  case LedgerCategory::Embedding:
    return "embedding";
  case LedgerCategory::Norm:
    return "norm";
  case LedgerCategory::Attention:
    return "attention";
  case LedgerCategory::MLP:
    return "mlp";
  case LedgerCategory::MoE:
    return "moe";
  case LedgerCategory::LMHead:
    return "lm_head";
  case LedgerCategory::Other:
    return "other";
  }
  llvm_unreachable("unknown ledger category");
}

int64_t mlir::tfm::getTensorBytes(RankedTensorType type) {
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return 0;
  return multiplyCounts({type.getNumElements(),
                         int64_t(llvm::divideCeil(type.getElementTypeBitWidth(),
                                                  8))});
}

/// A parameter's bytes in the weight file's element type (tfm.param_dtype),
/// which may differ from the type it is computed in.
static int64_t getWeightBytes(Value param, RankedTensorType type) {
  Type stored = getParamStorageElementType(param);
  if (!type || !type.hasStaticShape() || !stored.isIntOrFloat())
    return 0;
  // Quantized (tfm.param_quant): the bytes of its blocks.
  if (WeightQuantAttr quant = getParamQuant(param))
    return multiplyCounts({type.getNumElements() / quant.getBlockSize(),
                           quant.getBlockBytes()});
  return multiplyCounts(
      {type.getNumElements(),
       int64_t(llvm::divideCeil(stored.getIntOrFloatBitWidth(), 8))});
}

static bool isTfmOp(Operation *op) { return isa<TfmDialect>(op->getDialect()); }

/// The category an op has wherever it appears, if any.
static std::optional<LedgerCategory> getIntrinsicCategory(Operation *op) {
  if (isa<EmbeddingOp, PositionEmbeddingOp>(op))
    return LedgerCategory::Embedding;
  if (isa<LayerNormOp, RMSNormOp>(op))
    return LedgerCategory::Norm;
  if (isa<LMHeadOp>(op))
    return LedgerCategory::LMHead;
  return std::nullopt;
}

llvm::DenseMap<Operation *, LedgerCategory>
mlir::tfm::classifyLedgerOps(Operation *function) {
  llvm::DenseMap<Operation *, LedgerCategory> categories;
  SmallVector<ResidualAddOp> residuals;
  function->walk([&](ResidualAddOp op) { residuals.push_back(op); });

  for (ResidualAddOp add : residuals) {
    SmallVector<Operation *> sublayer = getSublayerOps(add);
    SublayerKind sublayerKind = classifySublayer(sublayer);
    // A residual branch with neither attention, MoE nor an activation is
    // booked as MLP (e.g. a bare projection).
    LedgerCategory kind = sublayerKind == SublayerKind::Attention
                              ? LedgerCategory::Attention
                          : sublayerKind == SublayerKind::MoE
                              ? LedgerCategory::MoE
                              : LedgerCategory::MLP;
    // An op reachable from two sublayers (unusual sharing) stays with the
    // first one in program order.
    for (Operation *op : sublayer)
      if (isTfmOp(op))
        categories.try_emplace(op, getIntrinsicCategory(op).value_or(kind));
  }

  function->walk([&](Operation *op) {
    if (!isTfmOp(op) || categories.contains(op))
      return;
    LedgerCategory category = LedgerCategory::Other;
    if (auto intrinsic = getIntrinsicCategory(op))
      category = *intrinsic;
    else if (isa<AttentionOp>(op))
      category = LedgerCategory::Attention;
    else if (isa<MoEOp>(op))
      category = LedgerCategory::MoE;
    categories[op] = category;
  });
  return categories;
}

/// `loc("name")`; for a fused location (e.g. the one GEMM --tfm-fuse-qkv
/// makes of three projections) its names with their common dotted prefix
/// factored out, `a.b.{q_proj,k_proj,v_proj}`; else the op name.
static std::string getLabel(Operation *op) {
  Location loc = op->getLoc();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    SmallVector<StringRef> names;
    for (Location part : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(part))
        names.push_back(name.getName().strref());
    if (names.size() == 1)
      return names.front().str();
    if (!names.empty()) {
      // The longest prefix ending in '.' that every name shares.
      StringRef prefix = names.front();
      for (StringRef n : names)
        while (!n.starts_with(prefix))
          prefix = prefix.drop_back();
      prefix = prefix.take_front(prefix.rfind('.') + 1);
      std::string label = prefix.str() + "{";
      for (auto [i, n] : llvm::enumerate(names))
        label += (i ? "," : "") + n.drop_front(prefix.size()).str();
      return label + "}";
    }
  }
  return op->getName().getStringRef().str();
}

/// The `in -> out` sizes of a projection weight, whatever its layout.
static std::optional<std::pair<int64_t, int64_t>> getInOut(Operation *op,
                                                           Value operand) {
  if (auto linear = dyn_cast<LinearOp>(op); linear && operand == linear.getWeight())
    return std::make_pair(linear.getInFeatures(), linear.getOutFeatures());
  if (auto head = dyn_cast<LMHeadOp>(op); head && operand == head.getWeight()) {
    auto w = cast<RankedTensorType>(operand.getType());
    bool outIn = head.getLayout() == WeightLayout::out_in;
    return std::make_pair(w.getDimSize(outIn ? 1 : 0),
                          w.getDimSize(outIn ? 0 : 1));
  }
  return std::nullopt;
}

AttentionScratch
mlir::tfm::estimateAttentionScratch(Operation *op,
                                    const LedgerOptions &options) {
  auto attention = cast<AttentionOp>(op);
  auto q = cast<RankedTensorType>(attention.getQuery().getType());
  auto k = cast<RankedTensorType>(attention.getKey().getType());
  auto v = cast<RankedTensorType>(attention.getValue().getType());
  int64_t batch = q.getDimSize(0), heads = q.getDimSize(1),
          seq = q.getDimSize(2), dh = q.getDimSize(3),
          kvHeads = k.getDimSize(1), kvSeq = k.getDimSize(2),
          dv = v.getDimSize(3), elem = q.getElementTypeBitWidth() / 8;
  constexpr int64_t f32 = 4;
  AttentionScratch scratch;
  scratch.naiveBytes = multiplyCounts({2, batch, heads, seq, kvSeq, f32});

  int64_t group = heads / kvHeads;
  int64_t tq = std::min(options.flashQueryTile, seq);
  int64_t tk = std::min(options.flashKeyTile, kvSeq);
  // Scores and probabilities of one tile; m, l, tile max and correction per
  // row; the accumulator and the output tile; with a half-precision value
  // type, the probabilities rounded to it for P V too (held as f32).
  int64_t roundedTiles = v.getElementTypeBitWidth() < 32 ? 1 : 0;
  int64_t tile = ((2 + roundedTiles) * group * tq * tk + 4 * group * tq +
                  2 * group * tq * dv) *
                 f32;
  int64_t paddedSeq = llvm::divideCeil(seq, tq) * tq;
  int64_t paddedKvSeq = llvm::divideCeil(kvSeq, tk) * tk;
  int64_t padding = 0;
  if (paddedSeq != seq)
    padding = addCounts(
        padding, multiplyCounts({batch, heads, paddedSeq, dh + dv, elem}));
  if (paddedKvSeq != kvSeq)
    padding = addCounts(
        padding, multiplyCounts({batch, kvHeads, paddedKvSeq, dh + dv, elem}));
  scratch.flashBytes = addCounts(tile, padding);
  return scratch;
}

static LedgerRow makeRow(Operation *op, LedgerCategory category,
                         const LedgerOptions &options) {
  LedgerRow row;
  row.op = op;
  row.label = getLabel(op);
  row.category = category;
  for (Value operand : op->getOperands()) {
    StringRef name = getParamName(operand);
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (name.empty() || !type || !type.hasStaticShape())
      continue;
    row.weights.push_back({operand, name, type, getInOut(op, operand)});
    row.params = addCounts(row.params, type.getNumElements());
    row.weightBytes =
        addCounts(row.weightBytes, getWeightBytes(operand, type));
  }
  for (Type type : op->getResultTypes())
    row.activationBytes = addCounts(
        row.activationBytes, getTensorBytes(dyn_cast<RankedTensorType>(type)));
  if (auto ledger = dyn_cast<LedgerOpInterface>(op)) {
    row.flops = ledger.getFlopCount();
    row.kvCacheBytesPerToken = ledger.getKVCacheBytesPerToken();
    row.communicationBytes = ledger.getCommunicationBytes();
    if (row.communicationBytes) {
      // Every dimension but the features: the tokens the sum covers.
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      row.communicationTokens = 1;
      for (int64_t dim : type.getShape().drop_back())
        row.communicationTokens *= dim;
    }
  }
  if (isa<AttentionOp>(op))
    row.scratch = estimateAttentionScratch(op, options);
  return row;
}

/// The most bytes of `rows`' results alive at once. A result lives from its
/// op to the last op that uses it (ops nested in regions count at their
/// ancestor in the row's block); returned results (used by the block's
/// terminator) are the caller's.
static int64_t computePeakLiveBytes(ArrayRef<LedgerRow> rows) {
  // Bytes born at each row and dying after each row.
  SmallVector<int64_t> born(rows.size()), dies(rows.size());
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [index, row] : llvm::enumerate(rows))
    position[row.op] = index;
  for (auto [index, row] : llvm::enumerate(rows)) {
    Block *block = row.op->getBlock();
    for (Value result : row.op->getResults()) {
      int64_t bytes = getTensorBytes(dyn_cast<RankedTensorType>(result.getType()));
      if (!bytes)
        continue;
      unsigned last = index;
      bool returned = false;
      for (Operation *user : result.getUsers()) {
        Operation *top = block->findAncestorOpInBlock(*user);
        if (!top || top->hasTrait<OpTrait::IsTerminator>()) {
          returned = true;
          break;
        }
        // Users that are not ledger rows (arith, tensor ops) end the result's
        // life at the next row.
        auto it = position.find(top);
        last = std::max<unsigned>(last, it != position.end() ? it->second : index);
      }
      if (returned)
        continue;
      born[index] = addCounts(born[index], bytes);
      dies[last] = addCounts(dies[last], bytes);
    }
  }
  // Once a sum saturates, the peak is the maximum (and stays there).
  int64_t live = 0, peak = 0;
  for (unsigned i = 0; i < rows.size(); ++i) {
    live = addCounts(live, born[i]);
    peak = std::max(peak, live);
    if (peak == std::numeric_limits<int64_t>::max())
      break;
    live -= dies[i];
  }
  return peak;
}

FunctionLedger mlir::tfm::computeLedger(Operation *function,
                                        const LedgerOptions &options) {
  FunctionLedger ledger;
  llvm::DenseMap<Operation *, LedgerCategory> categories =
      classifyLedgerOps(function);
  function->walk([&](Operation *op) {
    auto it = categories.find(op);
    if (it != categories.end())
      ledger.rows.push_back(makeRow(op, it->second, options));
  });

  // Parameters are booked at their first user; later users are recorded so
  // that the shared tensor can be reported.
  llvm::DenseMap<Value, unsigned> firstUser, sharedIndex;
  for (auto [index, row] : llvm::enumerate(ledger.rows)) {
    if (row.scratch) {
      ledger.peakScratch.naiveBytes =
          std::max(ledger.peakScratch.naiveBytes, row.scratch->naiveBytes);
      ledger.peakScratch.flashBytes =
          std::max(ledger.peakScratch.flashBytes, row.scratch->flashBytes);
    }
    LedgerTotals &category = ledger.byCategory[unsigned(row.category)];
    for (LedgerTotals *t : {&category, &ledger.total}) {
      t->ops += 1;
      t->flops = addCounts(t->flops, row.flops);
      t->activationBytes = addCounts(t->activationBytes, row.activationBytes);
      t->kvCacheBytesPerToken =
          addCounts(t->kvCacheBytesPerToken, row.kvCacheBytesPerToken);
      if (row.communicationBytes) {
        t->collectives += 1;
        t->communicationBytes =
            addCounts(t->communicationBytes, row.communicationBytes);
        t->communicationBytesPerToken =
            addCounts(t->communicationBytesPerToken,
                      row.communicationBytes /
                          std::max<int64_t>(row.communicationTokens, 1));
      }
    }
    for (const LedgerWeight &weight : row.weights) {
      auto [first, isFirstUse] = firstUser.try_emplace(weight.value, index);
      if (isFirstUse) {
        for (LedgerTotals *t : {&category, &ledger.total}) {
          t->params = addCounts(t->params, weight.type.getNumElements());
          t->weightBytes = addCounts(
              t->weightBytes, getWeightBytes(weight.value, weight.type));
        }
        continue;
      }
      if (first->second == index)
        continue; // One op reading a tensor twice is still one user.
      auto [shared, isNew] =
          sharedIndex.try_emplace(weight.value, ledger.shared.size());
      if (isNew)
        ledger.shared.push_back({weight, {first->second}});
      SmallVector<unsigned, 2> &users = ledger.shared[shared->second].users;
      if (users.back() != index)
        users.push_back(index);
    }
  }
  ledger.peakLiveActivationBytes = computePeakLiveBytes(ledger.rows);
  return ledger;
}

//===- TensorParallel.cpp - attention and MLP blocks split over ranks -----===//
//
// tfm-tensor-parallel: rewrites a module into the model one rank runs (see
// the pass description in Passes.td and docs/design.md, "Tensor
// parallelism").
//
// A block is found from its core (an attention, an MLP activation) by
// following data edges through the ops that work per head or per feature,
// up to the projections that feed it (column-parallel) and the projection
// it feeds (row-parallel). Each value inside gets a shard count along its
// head axis ([B, H, S, dh]) or feature axis ([B, S, F]): the number of
// blocks its extent is divided into. Counts start at the cores (query heads
// and features by the ranks; key/value heads by min(Hkv, ranks)) and spread
// through the ops that keep them; the types shrink by them.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMTENSORPARALLEL
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// The operands of a per-head or per-feature op that carry sharded data
/// (not its norm scale, positions or offsets); empty for other ops.
SmallVector<OpOperand *> getDataOperands(Operation *op) {
  auto operands = [&](std::initializer_list<unsigned> indices) {
    SmallVector<OpOperand *> result;
    for (unsigned i : indices)
      result.push_back(&op->getOpOperand(i));
    return result;
  };
  if (isa<SplitOp, SplitHeadsOp, MergeHeadsOp, RoPEOp, GeluOp, SiluOp,
          ReluOp>(op))
    return operands({0});
  // A norm over one head's dh (Qwen3's q_norm): per head. A norm over the
  // features of every head (OLMo2's) needs them all.
  if (isa<RMSNormOp, LayerNormOp>(op) &&
      cast<RankedTensorType>(op->getOperand(0).getType()).getRank() == 4)
    return operands({0});
  if (isa<SwiGLUOp, GeGLUOp, KVCacheWriteOp>(op))
    return operands({0, 1});
  if (isa<AttentionOp>(op))
    return operands({0, 1, 2});
  return {};
}

/// A tfm.split into consecutive pieces (not interleaved groups): each piece
/// is divided on its own, so its input has no single shard count.
bool isPieceSplit(Operation *op) {
  auto split = dyn_cast<SplitOp>(op);
  return split && split.getGroups() == 1;
}

/// The value a piece split divides, or null.
bool isPieceSplitInput(Value v) {
  return llvm::any_of(v.getUsers(), isPieceSplit);
}

/// The axis a value's shards divide: heads of [B, H, S, dh], else the last.
int64_t getShardAxis(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getRank() == 4 ? 1 : type.getRank() - 1;
}

/// One attention or MLP block and how it is divided.
struct Block {
  llvm::SetVector<Operation *> ops; // per-head / per-feature ops
  llvm::SetVector<Operation *> columns, rows;
  llvm::SetVector<Value> values; // every sharded value, KV cache args too
  DenseMap<Value, int64_t> shards;
};

class Partitioner {
public:
  Partitioner(func::FuncOp func, int64_t ranks) : func(func), ranks(ranks) {}

  /// Partitions every block of the function; fails (with an error) only on
  /// a size that does not divide.
  LogicalResult run();

private:
  /// Grows the block around `core`; false when it reaches an op it cannot
  /// divide (the block stays replicated).
  bool grow(Operation *core, Block &block);
  /// Assigns shard counts; fails with an error on a size that does not
  /// divide, returns false (no error) on a structure it cannot divide.
  FailureOr<bool> assignShards(Block &block);
  LogicalResult rewrite(Block &block);
  LogicalResult divideExperts(MoEOp moe);
  LogicalResult holdExperts(MoEOp moe);
  LogicalResult divideVocabulary(LMHeadOp head);
  LogicalResult divideEmbedding(EmbeddingOp embedding);
  LogicalResult shardParameter(Value weight, Operation *user, int64_t axis,
                               ArrayRef<int64_t> pieces,
                               ArrayRef<int64_t> counts);

  func::FuncOp func;
  int64_t ranks;
  DenseSet<Operation *> claimed;
};

bool Partitioner::grow(Operation *core, Block &block) {
  SmallVector<Operation *> worklist{core};
  block.ops.insert(core);
  auto reachValue = [&](Value v) { block.values.insert(v); };
  // Every sharded value's users must be block ops reading it as data, a
  // row-parallel projection's input, or (KV caches) the return.
  auto visitUsers = [&](Value v) {
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (llvm::is_contained(getDataOperands(user), &use)) {
        if (block.ops.insert(user))
          worklist.push_back(user);
        continue;
      }
      if (auto linear = dyn_cast<LinearOp>(user);
          linear && &use == &linear.getInputMutable()) {
        block.rows.insert(user);
        continue;
      }
      if (isa<func::ReturnOp>(user) && v.getDefiningOp<KVCacheWriteOp>())
        continue;
      return false;
    }
    return true;
  };
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (claimed.contains(op))
      return false;
    for (OpOperand *operand : getDataOperands(op)) {
      Value v = operand->get();
      reachValue(v);
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (!func.getArgAttr(arg.getArgNumber(), kKVCacheAttrName) ||
            !visitUsers(v))
          return false;
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (isa<LinearOp>(def)) {
        if (block.columns.insert(def) && !visitUsers(v))
          return false;
        continue;
      }
      if (getDataOperands(def).empty())
        return false;
      if (block.ops.insert(def))
        worklist.push_back(def);
    }
    for (Value result : op->getResults()) {
      reachValue(result);
      if (!visitUsers(result))
        return false;
    }
  }
  // A projection both feeding and fed by the block would be both kinds.
  for (Operation *row : block.rows)
    if (block.columns.contains(row))
      return false;
  return !block.rows.empty() && !block.columns.empty();
}

FailureOr<bool> Partitioner::assignShards(Block &block) {
  DenseMap<Value, int64_t> &shards = block.shards;
  bool conflict = false;
  auto set = [&](Value v, int64_t count) {
    auto [it, inserted] = shards.try_emplace(v, count);
    if (!inserted && it->second != count)
      conflict = true;
    return inserted;
  };
  // The cores.
  for (Operation *op : block.ops) {
    if (auto attention = dyn_cast<AttentionOp>(op)) {
      int64_t hq = cast<RankedTensorType>(attention.getQuery().getType())
                       .getDimSize(1);
      int64_t hkv =
          cast<RankedTensorType>(attention.getKey().getType()).getDimSize(1);
      if (hq % ranks)
        return attention.emitError()
               << "tfm-tensor-parallel: " << hq
               << " query heads cannot be divided over " << ranks << " ranks";
      int64_t kvCount = hkv % ranks == 0 ? ranks : hkv;
      if (hkv % ranks && ranks % hkv)
        return attention.emitError()
               << "tfm-tensor-parallel: " << hkv
               << " key/value heads can be neither divided over " << ranks
               << " ranks nor replicated on them (one of the two numbers must "
                  "divide the other)";
      set(attention.getQuery(), ranks);
      set(attention.getKey(), kvCount);
      set(attention.getValue(), kvCount);
      set(attention.getResult(), ranks);
    } else if (isa<GeluOp, SiluOp, ReluOp, SwiGLUOp, GeGLUOp>(op)) {
      int64_t width =
          cast<RankedTensorType>(op->getResult(0).getType()).getShape().back();
      if (width % ranks)
        return op->emitError() << "tfm-tensor-parallel: an MLP width of "
                               << width << " cannot be divided over " << ranks
                               << " ranks";
      for (OpOperand *operand : getDataOperands(op))
        set(operand->get(), ranks);
      set(op->getResult(0), ranks);
    }
  }
  // Spread through the ops that keep a value's division.
  for (bool changed = true; changed && !conflict;) {
    changed = false;
    for (Operation *op : block.ops) {
      if (isPieceSplit(op))
        continue; // Each piece keeps its own count.
      SmallVector<Value> tied;
      for (OpOperand *operand : getDataOperands(op))
        tied.push_back(operand->get());
      tied.append(op->result_begin(), op->result_end());
      if (isa<AttentionOp>(op))
        continue; // Set above; query and key counts may differ.
      std::optional<int64_t> count;
      for (Value v : tied)
        if (auto it = shards.find(v); it != shards.end())
          count = it->second;
      if (!count)
        continue;
      for (Value v : tied)
        changed |= set(v, *count);
    }
  }
  if (conflict)
    return false;
  for (Value v : block.values) {
    if (isPieceSplitInput(v))
      continue;
    auto it = shards.find(v);
    if (it == shards.end())
      return false;
    int64_t extent =
        cast<RankedTensorType>(v.getType()).getDimSize(getShardAxis(v));
    if (extent % it->second)
      return emitError(v.getLoc())
             << "tfm-tensor-parallel: an extent of " << extent
             << " cannot be divided into " << it->second << " blocks";
  }
  // A row-parallel projection contracts features every rank holds a
  // different slice of.
  for (Operation *row : block.rows)
    if (shards.lookup(cast<LinearOp>(row).getInput()) != ranks)
      return false;
  return true;
}

LogicalResult Partitioner::shardParameter(Value weight, Operation *user,
                                          int64_t axis,
                                          ArrayRef<int64_t> pieces,
                                          ArrayRef<int64_t> counts) {
  auto arg = dyn_cast<BlockArgument>(weight);
  if (!arg || arg.getOwner()->getParentOp() != func ||
      !func.getArgAttr(arg.getArgNumber(), kParamAttrName))
    return user->emitError()
           << "tfm-tensor-parallel: the weights of a divided projection must "
              "be tfm.param arguments";
  if (func.getArgAttr(arg.getArgNumber(), kParamPartsAttrName))
    return user->emitError()
           << "tfm-tensor-parallel: parameter '" << getParamName(arg)
           << "' is fused from several tensors (run tfm-tensor-parallel "
              "before tfm-fuse-qkv)";
  auto shard = ShardAttr::get(func.getContext(), axis, pieces, counts);
  if (auto existing = func.getArgAttr(arg.getArgNumber(), kParamShardAttrName))
    return success(existing == shard);
  if (!llvm::hasSingleElement(arg.getUses()))
    return user->emitError()
           << "tfm-tensor-parallel: parameter '" << getParamName(arg)
           << "' is read by other ops than the projection it divides";
  auto type = cast<RankedTensorType>(arg.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = shard.getSliceExtent();
  arg.setType(type.clone(shape));
  func.setArgAttr(arg.getArgNumber(), kParamShardAttrName, shard);
  return success();
}

LogicalResult Partitioner::rewrite(Block &block) {
  // Values shrink along their shard axis.
  for (Value v : block.values) {
    if (isPieceSplitInput(v))
      continue;
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[getShardAxis(v)] /= block.shards.lookup(v);
    v.setType(type.clone(shape));
  }
  for (Operation *op : block.ops) {
    if (auto split = dyn_cast<SplitHeadsOp>(op))
      split.setNumHeads(
          cast<RankedTensorType>(split.getResult().getType()).getDimSize(1));
    if (auto split = dyn_cast<SplitOp>(op); split && split.getGroups() > 1) {
      int64_t count = block.shards.lookup(split.getResult(0));
      if (split.getGroups() % count)
        return split.emitError() << "tfm-tensor-parallel: " << split.getGroups()
                                 << " groups cannot be divided into " << count
                                 << " blocks";
      split.setGroups(split.getGroups() / count);
    }
  }
  // Column-parallel projections: their output features, piece by piece
  // where a tfm.split divides them (interleaved groups are whole heads, so
  // one contiguous piece).
  for (Operation *op : block.columns) {
    auto linear = cast<LinearOp>(op);
    Value out = linear.getResult();
    SmallVector<int64_t> pieces, counts;
    Operation *user = *out.getUsers().begin();
    if (isPieceSplit(user)) {
      // The pieces' types are already the rank's slices.
      int64_t slice = 0;
      for (Value piece : user->getResults()) {
        int64_t count = block.shards.lookup(piece);
        int64_t extent =
            cast<RankedTensorType>(piece.getType()).getShape().back();
        pieces.push_back(extent * count);
        counts.push_back(count);
        slice += extent;
      }
      auto type = cast<RankedTensorType>(out.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape.back() = slice;
      out.setType(type.clone(shape));
    } else {
      pieces.push_back(linear.getOutFeatures());
      counts.push_back(block.shards.lookup(out));
    }
    int64_t outAxis = linear.getLayout() == WeightLayout::out_in ? 0 : 1;
    if (failed(shardParameter(linear.getWeight(), linear, outAxis, pieces,
                              counts)))
      return failure();
    if (Value bias = linear.getBias())
      if (failed(shardParameter(bias, linear, 0, pieces, counts)))
        return failure();
  }
  // Row-parallel projections: each rank's features, then the sum.
  for (Operation *op : block.rows) {
    auto linear = cast<LinearOp>(op);
    int64_t inAxis = linear.getLayout() == WeightLayout::out_in ? 1 : 0;
    int64_t in = cast<RankedTensorType>(linear.getWeight().getType())
                     .getDimSize(inAxis);
    if (failed(shardParameter(linear.getWeight(), linear, inAxis, {in},
                              {ranks})))
      return failure();
    OpBuilder b(linear);
    b.setInsertionPointAfter(linear);
    Value bias = linear.getBias();
    if (bias)
      linear.getBiasMutable().clear();
    auto reduce = AllReduceOp::create(b, linear.getLoc(),
                                      linear.getResult().getType(),
                                      linear.getResult(), bias);
    linear.getResult().replaceAllUsesExcept(reduce.getResult(), reduce);
  }
  return success();
}

/// A mixture of experts whose experts the ranks divide is expert-parallel:
/// rank r holds whole experts [r E/N, (r + 1) E/N) and computes what the
/// tokens routed to them add; the router, replicated, routes every token
/// alike on every rank. Otherwise (fewer experts than ranks, or a count
/// they do not divide) each expert is divided inside, as a dense MLP is:
/// each rank holds `m / ranks` of each expert's intermediate features (its
/// gate and up rows, its down columns). Either way the ranks' partial
/// outputs are summed.
LogicalResult Partitioner::divideExperts(MoEOp moe) {
  if (moe.getNumExperts() % ranks == 0 && !moe.getFirstExpert()) {
    if (failed(holdExperts(moe)))
      return failure();
  } else {
    int64_t width = moe.getIntermediateSize();
    if (width % ranks)
      return moe.emitError() << "tfm-tensor-parallel: " << moe.getNumExperts()
                             << " experts cannot be divided over " << ranks
                             << " ranks, nor an expert width of " << width;
    for (int64_t e = 0, n = moe.getNumExperts(); e < n; ++e)
      if (failed(
              shardParameter(moe.getExpertGate(e), moe, 0, {width}, {ranks})) ||
          failed(
              shardParameter(moe.getExpertUp(e), moe, 0, {width}, {ranks})) ||
          failed(
              shardParameter(moe.getExpertDown(e), moe, 1, {width}, {ranks})))
        return failure();
  }
  OpBuilder b(moe);
  b.setInsertionPointAfter(moe);
  auto reduce = AllReduceOp::create(b, moe.getLoc(), moe.getResult().getType(),
                                    moe.getResult(), Value());
  moe.getResult().replaceAllUsesExcept(reduce.getResult(), reduce);
  return success();
}

/// Expert parallelism: the op keeps the operands of its first E/N experts,
/// each now naming, per rank, the tensors of that rank's expert in the same
/// place (tfm.param_rank_names: one compiled module serves every rank),
/// and reads its first expert's routing from tfm.rank * E/N; the other
/// experts' arguments are dropped from the signature.
LogicalResult Partitioner::holdExperts(MoEOp moe) {
  int64_t held = moe.getNumExperts() / ranks;
  SmallVector<BlockArgument> args;
  for (Value weight : moe.getExpertWeights()) {
    auto arg = dyn_cast<BlockArgument>(weight);
    if (!arg || arg.getOwner()->getParentOp() != func ||
        !func.getArgAttr(arg.getArgNumber(), kParamAttrName) ||
        func.getArgAttr(arg.getArgNumber(), kParamPartsAttrName) ||
        !llvm::hasSingleElement(arg.getUses()))
      return moe.emitError()
             << "tfm-tensor-parallel: the experts of a divided tfm.moe must "
                "be tfm.param arguments that it alone reads";
    args.push_back(arg);
  }
  MLIRContext *ctx = func.getContext();
  // Held expert e's weights are, at rank r, expert r * held + e's.
  for (int64_t slot = 0; slot < 3 * held; ++slot) {
    SmallVector<Attribute> names;
    for (int64_t rank = 0; rank < ranks; ++rank)
      names.push_back(func.getArgAttr(
          args[3 * held * rank + slot].getArgNumber(), kParamAttrName));
    func.setArgAttr(args[slot].getArgNumber(), kParamRankNamesAttrName,
                    ArrayAttr::get(ctx, names));
  }
  OpBuilder b(moe);
  Location loc = moe.getLoc();
  SmallVector<Value> kept(ArrayRef<BlockArgument>(args).take_front(3 * held));
  moe.getExpertWeightsMutable().assign(kept);
  moe.getFirstExpertMutable().assign(
      arith::MulIOp::create(b, loc, RankOp::create(b, loc),
                            arith::ConstantIndexOp::create(b, loc, held)));
  llvm::BitVector dropped(func.getNumArguments());
  for (BlockArgument arg : ArrayRef<BlockArgument>(args).drop_front(3 * held))
    dropped.set(arg.getArgNumber());
  return func.eraseArguments(dropped);
}

/// The LM head is divided over the vocabulary: each rank computes the
/// logits of `V / ranks` tokens, and an all-gather puts them side by side.
/// A vocabulary the ranks do not divide, or a head tied to the embedding
/// (whose gather reads the whole table), stays whole on every rank.
LogicalResult Partitioner::divideVocabulary(LMHeadOp head) {
  auto weight = dyn_cast<BlockArgument>(head.getWeight());
  int64_t vocabAxis = head.getLayout() == WeightLayout::out_in ? 0 : 1;
  auto type = cast<RankedTensorType>(head.getWeight().getType());
  int64_t vocab = type.getDimSize(vocabAxis);
  if (!weight || !llvm::hasSingleElement(weight.getUses()) || vocab % ranks)
    return success();
  if (failed(shardParameter(weight, head, vocabAxis, {vocab}, {ranks})))
    return failure();
  Value logits = head.getResult();
  auto whole = cast<RankedTensorType>(logits.getType());
  SmallVector<int64_t> shape(whole.getShape());
  shape.back() /= ranks;
  logits.setType(whole.clone(shape));
  OpBuilder b(head);
  b.setInsertionPointAfter(head);
  auto gather = AllGatherOp::create(b, head.getLoc(), whole, logits);
  logits.replaceAllUsesExcept(gather.getResult(), gather);
  return success();
}

/// The embedding table is divided over the vocabulary too: each rank holds
/// `V / ranks` rows from `rank * V / ranks` and gathers the ids in them
/// (zero rows for the others), and an all-reduce sums the ranks' rows into
/// the whole lookup (exact: every other rank adds zeros). A table the ranks
/// do not divide, or one tied to the LM head (read twice), stays whole.
LogicalResult Partitioner::divideEmbedding(EmbeddingOp embedding) {
  auto table = dyn_cast<BlockArgument>(embedding.getTable());
  int64_t vocab =
      cast<RankedTensorType>(embedding.getTable().getType()).getDimSize(0);
  if (!table || table.getOwner()->getParentOp() != func ||
      !func.getArgAttr(table.getArgNumber(), kParamAttrName) ||
      func.getArgAttr(table.getArgNumber(), kParamPartsAttrName) ||
      !llvm::hasSingleElement(table.getUses()) || vocab % ranks ||
      embedding.getFirstRow())
    return success();
  if (failed(shardParameter(table, embedding, 0, {vocab}, {ranks})))
    return failure();
  OpBuilder b(embedding);
  Location loc = embedding.getLoc();
  Value firstRow = arith::MulIOp::create(
      b, loc, RankOp::create(b, loc),
      arith::ConstantIndexOp::create(b, loc, vocab / ranks));
  embedding.getFirstRowMutable().assign(firstRow);
  b.setInsertionPointAfter(embedding);
  Value rows = embedding.getResult();
  auto reduce =
      AllReduceOp::create(b, loc, rows.getType(), rows, Value());
  rows.replaceAllUsesExcept(reduce.getResult(), reduce);
  return success();
}

LogicalResult Partitioner::run() {
  if (func.isExternal())
    return success();
  SmallVector<EmbeddingOp> embeddings;
  func.walk([&](EmbeddingOp embedding) { embeddings.push_back(embedding); });
  for (EmbeddingOp embedding : embeddings)
    if (failed(divideEmbedding(embedding)))
      return failure();
  SmallVector<LMHeadOp> heads;
  func.walk([&](LMHeadOp head) { heads.push_back(head); });
  for (LMHeadOp head : heads)
    if (failed(divideVocabulary(head)))
      return failure();
  SmallVector<MoEOp> mixtures;
  func.walk([&](MoEOp moe) { mixtures.push_back(moe); });
  for (MoEOp moe : mixtures)
    if (failed(divideExperts(moe)))
      return failure();
  SmallVector<Operation *> cores;
  func.walk([&](Operation *op) {
    if (isa<AttentionOp, GeluOp, SiluOp, ReluOp, SwiGLUOp, GeGLUOp>(op))
      cores.push_back(op);
  });
  for (Operation *core : cores) {
    if (claimed.contains(core))
      continue;
    Block block;
    bool divisible = grow(core, block);
    for (Operation *op : block.ops)
      claimed.insert(op);
    if (!divisible)
      continue;
    FailureOr<bool> assigned = assignShards(block);
    if (failed(assigned))
      return failure();
    if (*assigned && failed(rewrite(block)))
      return failure();
  }
  // Argument and result types follow the values.
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  func.setType(FunctionType::get(func.getContext(),
                                 func.getBody().getArgumentTypes(),
                                 ret.getOperandTypes()));
  return success();
}

struct TensorParallelPass
    : public tfm::impl::TfmTensorParallelBase<TensorParallelPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ranks < 1) {
      module.emitError() << "tfm-tensor-parallel: ranks must be at least 1, "
                            "got "
                         << static_cast<int64_t>(ranks);
      return signalPassFailure();
    }
    if (ranks == 1)
      return;
    // A module partitioned before (a .mlir saved after this pass) is run as
    // it is by as many ranks.
    if (auto existing =
            module->getAttrOfType<IntegerAttr>(kTensorParallelAttrName);
        existing && existing.getInt() == ranks)
      return;
    if (module->hasAttr(kTensorParallelAttrName)) {
      module.emitError() << "tfm-tensor-parallel: the module is already "
                            "partitioned ("
                         << module->getAttr(kTensorParallelAttrName) << ")";
      return signalPassFailure();
    }
    module->setAttr(kTensorParallelAttrName,
                    IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                     ranks));
    for (auto func : module.getOps<func::FuncOp>())
      if (failed(Partitioner(func, ranks).run()))
        return signalPassFailure();
  }
};
} // namespace

//===- FuseQKV.cpp - one GEMM for the Q, K and V projections --------------===//
//
// Three projections of one input cost three passes over that input and three
// small GEMMs; one GEMM against the concatenated weight reads the input once
// and gives the matmul kernel a wider N. The concatenation must not run on
// every forward call, so the fused weight becomes a new parameter argument
// that names its parts: whoever binds weights (transformer-runner)
// concatenates them once. This changes the function signature, which is why
// this is a module pass over functions rather than a local rewrite pattern.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/StoredFormats.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFUSEQKV
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// The projection that produced an attention operand: look through the
/// shape-only and position-only ops between the linear and the attention,
/// and through a KV cache write to the keys or values it writes (a prefill
/// or decode step's attention reads the cache).
LinearOp findProjection(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto rope = dyn_cast<RoPEOp>(def))
      v = rope.getInput();
    else if (auto split = dyn_cast<SplitHeadsOp>(def))
      v = split.getInput();
    else if (auto write = dyn_cast<KVCacheWriteOp>(def))
      v = write.getUpdate();
    else
      return dyn_cast<LinearOp>(def);
  }
  return nullptr;
}

/// Q, K and V projections that can become one GEMM.
struct QKVGroup {
  std::array<LinearOp, 3> projections;
};

bool isParameter(Value v) {
  return isa<BlockArgument>(v) && !getParamName(v).empty();
}

/// The rank's slice a parameter is (tfm.param_shard of a tensor-parallel
/// module), or null.
ShardAttr getShard(Value v) {
  auto arg = cast<BlockArgument>(v);
  auto fn = cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return fn.getArgAttrOfType<ShardAttr>(arg.getArgNumber(),
                                        kParamShardAttrName);
}

/// Whether `parts` can be concatenated along `axis` into one parameter:
/// whole tensors, or every one a rank's slice of one piece cut along that
/// axis (a column-parallel projection's), so that the fused parameter is a
/// slice of the concatenation with the parts as its pieces.
bool areConcatenable(ArrayRef<Value> parts, int64_t axis) {
  int sharded = 0;
  for (Value part : parts)
    if (ShardAttr shard = getShard(part)) {
      if (shard.getAxis() != axis || shard.getPieces().size() != 1)
        return false;
      ++sharded;
    }
  return sharded == 0 || sharded == int(parts.size());
}

std::optional<QKVGroup> matchGroup(AttentionOp attention,
                                   const StoredFormats &stored) {
  QKVGroup group{{findProjection(attention.getQuery()),
                  findProjection(attention.getKey()),
                  findProjection(attention.getValue())}};
  auto [q, k, v] = group.projections;
  if (!q || !k || !v || q == k || k == v || q == v)
    return std::nullopt;
  for (LinearOp p : group.projections) {
    if (p.getInput() != q.getInput() || p.getLayout() != q.getLayout() ||
        cast<RankedTensorType>(p.getWeight().getType()).getElementType() !=
            cast<RankedTensorType>(q.getWeight().getType()).getElementType() ||
        bool(p.getBias()) != bool(q.getBias()) ||
        p->getBlock() != q->getBlock() || !isParameter(p.getWeight()) ||
        (p.getBias() && !isParameter(p.getBias())))
      return std::nullopt;
  }
  // One fused parameter is held in one format: parts the file stores
  // differently stay apart, each bound as stored.
  auto storedFormat = [&](LinearOp p) -> std::optional<QuantFormat> {
    auto it = stored.find(getParamName(p.getWeight()));
    if (it == stored.end())
      return std::nullopt;
    return it->second;
  };
  if (storedFormat(k) != storedFormat(q) || storedFormat(v) != storedFormat(q))
    return std::nullopt;
  int64_t axis = q.getLayout() == WeightLayout::in_out ? 1 : 0;
  if (!areConcatenable({q.getWeight(), k.getWeight(), v.getWeight()}, axis) ||
      (q.getBias() &&
       !areConcatenable({q.getBias(), k.getBias(), v.getBias()}, 0)))
    return std::nullopt;
  return group;
}

/// Appends a parameter argument to `fn` standing for the concatenation of
/// `parts` along `axis`, and returns it.
Value addConcatenatedParameter(func::FuncOp fn, ArrayRef<Value> parts,
                               int64_t axis, Location loc) {
  auto first = cast<RankedTensorType>(parts.front().getType());
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  SmallVector<Attribute> names;
  SmallVector<int64_t> pieces, counts;
  std::string label = "concat(";
  for (Value part : parts) {
    shape[axis] += cast<RankedTensorType>(part.getType()).getDimSize(axis);
    StringRef name = getParamName(part);
    names.push_back(StringAttr::get(fn.getContext(), name));
    label += (names.size() > 1 ? ", " : "") + name.str();
    if (ShardAttr shard = getShard(part)) {
      pieces.push_back(shard.getPieces().front());
      counts.push_back(shard.getShards().front());
    }
  }
  label += ")";
  Builder b(fn.getContext());
  NamedAttrList attrs;
  attrs.set(kParamAttrName, b.getStringAttr(label));
  attrs.set(kParamPartsAttrName, b.getArrayAttr(names));
  attrs.set(kParamConcatAxisAttrName, b.getI64IntegerAttr(axis));
  // Rank slices of the parts: the rank's slice of their concatenation,
  // each part one piece of it.
  if (!pieces.empty())
    attrs.set(kParamShardAttrName,
              ShardAttr::get(fn.getContext(), axis, pieces, counts));
  unsigned index = fn.getNumArguments();
  if (failed(fn.insertArgument(
          index, RankedTensorType::get(shape, first.getElementType()),
          attrs.getDictionary(fn.getContext()), loc)))
    return nullptr;
  return fn.getArgument(index);
}

LogicalResult fuse(func::FuncOp fn, const QKVGroup &group) {
  auto [q, k, v] = group.projections;
  // Insert before the first of the three so the fused result dominates all
  // their uses.
  Operation *first = q;
  for (LinearOp p : group.projections)
    if (p->isBeforeInBlock(first))
      first = p;

  // in_out weights are [d, out]: concatenate columns; out_in are [out, d].
  int64_t axis = q.getLayout() == WeightLayout::in_out ? 1 : 0;
  Location loc = FusedLoc::get(fn.getContext(),
                               {q.getLoc(), k.getLoc(), v.getLoc()});
  Value weight = addConcatenatedParameter(
      fn, {q.getWeight(), k.getWeight(), v.getWeight()}, axis, loc);
  Value bias;
  if (q.getBias())
    bias = addConcatenatedParameter(fn, {q.getBias(), k.getBias(), v.getBias()},
                                    0, loc);
  if (!weight || (q.getBias() && !bias))
    return failure();

  OpBuilder builder(first);
  auto inType = cast<RankedTensorType>(q.getInput().getType());
  SmallVector<int64_t> outShape(inType.getShape());
  outShape.back() = q.getOutFeatures() + k.getOutFeatures() +
                    v.getOutFeatures();
  auto fused = LinearOp::create(
      builder, loc, RankedTensorType::get(outShape, inType.getElementType()),
      q.getInput(), weight, bias, q.getLayoutAttr());
  auto split = SplitOp::create(
      builder, loc,
      TypeRange{q.getType(), k.getType(), v.getType()}, fused.getResult());
  for (auto [i, piece] : llvm::enumerate(split.getResults())) {
    LinearOp p = group.projections[i];
    p.getResult().replaceAllUsesWith(piece);
    p->erase();
  }
  return success();
}

struct FuseQKVPass : public tfm::impl::TfmFuseQKVBase<FuseQKVPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<StoredFormats> formats =
        parseStoredFormats(stored, getOperation(), "tfm-fuse-qkv");
    if (failed(formats))
      return signalPassFailure();
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      SmallVector<QKVGroup> groups;
      DenseSet<Operation *> claimed; // A projection joins one group at most.
      fn.walk([&](AttentionOp attention) {
        auto group = matchGroup(attention, *formats);
        if (!group || llvm::any_of(group->projections, [&](LinearOp p) {
              return claimed.contains(p);
            }))
          return;
        for (LinearOp p : group->projections)
          claimed.insert(p);
        groups.push_back(*group);
      });
      // The fused projections' own parameters, before fusing erases them.
      SetVector<BlockArgument> replaced;
      for (const QKVGroup &group : groups)
        for (LinearOp p : group.projections)
          for (Value param : {p.getWeight(), p.getBias()})
            if (param)
              replaced.insert(cast<BlockArgument>(param));

      for (const QKVGroup &group : groups)
        if (failed(fuse(fn, group)))
          return signalPassFailure();

      // Drop those of them nothing else reads.
      llvm::BitVector unused(fn.getNumArguments());
      for (BlockArgument arg : replaced)
        if (arg.use_empty())
          unused.set(arg.getArgNumber());
      if (failed(fn.eraseArguments(unused)))
        return signalPassFailure();
    }
  }
};

} // namespace

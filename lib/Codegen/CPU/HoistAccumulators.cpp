//===- HoistAccumulators.cpp - register tiles' accumulators out of K loops ===//
//
// hoistAccumulators (TilingUtils.h): the register tile's accumulators leave
// the K loop as loop-carried vectors. MLIR's hoistLoopInvariantSubsets does
// this for any subset op, proving each hoisted pair disjoint from every
// other subset op on the tensor with ValueBounds (Presburger) queries: on
// AVX2, whose 4 x 24 tile is 12 reads and 12 writes of 8 lanes, those
// queries took 1.5 s of the 12-layer GPT-2's prefill compile. The register
// tiles' transfers are simpler than the general case -- the same
// loop-invariant indices for a read and its write, rows and columns apart
// by constants -- so they are proven disjoint here by comparing constant
// offsets of one base; anything else still goes to hoistLoopInvariantSubsets.
//
//===----------------------------------------------------------------------===//
#include "TilingUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SubsetOpInterface.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

using namespace mlir;

namespace {
/// An index as a base value plus a constant; no base for a constant.
struct Offset {
  Value base;
  int64_t constant = 0;
};

/// One read of the loop-carried tensor and the write at the same place.
struct AccumulatorPair {
  vector::TransferReadOp read;
  vector::TransferWriteOp write;
};
} // namespace

/// `v` as base + constant through constants and one-operand affine.apply
/// ops of the form `x + c` (what unrolling a register tile into vectors
/// emits for its rows' and columns' offsets).
static Offset decompose(Value v) {
  int64_t constant = 0;
  while (true) {
    if (std::optional<int64_t> c = getConstantIntValue(v))
      return {Value(), constant + *c};
    auto apply = v.getDefiningOp<affine::AffineApplyOp>();
    if (!apply || apply->getNumOperands() != 1)
      return {v, constant};
    auto sum = dyn_cast<AffineBinaryOpExpr>(apply.getAffineMap().getResult(0));
    if (!sum || sum.getKind() != AffineExprKind::Add)
      return {v, constant};
    AffineExpr term = sum.getLHS(), addend = sum.getRHS();
    if (isa<AffineConstantExpr>(term))
      std::swap(term, addend);
    auto c = dyn_cast<AffineConstantExpr>(addend);
    if (!c || !isa<AffineDimExpr, AffineSymbolExpr>(term))
      return {v, constant};
    constant += c.getValue();
    v = apply->getOperand(0);
  }
}

/// How far the box `write` writes reaches in tensor dimension `d`: the
/// vector's size in the dimensions it spans (a minor identity map: the
/// innermost ones), 1 in the others.
static int64_t extent(vector::TransferWriteOp write, int64_t d) {
  VectorType type = write.getVectorType();
  int64_t vectorDim = d - (int64_t(write.getIndices().size()) - type.getRank());
  return vectorDim < 0 ? 1 : type.getDimSize(vectorDim);
}

/// Whether the boxes `a` and `b` write are provably apart: in some
/// dimension their offsets share a base and differ by at least the extent
/// of the box that starts first.
static bool provablyDisjoint(vector::TransferWriteOp a,
                             vector::TransferWriteOp b) {
  for (int64_t d = 0, rank = a.getIndices().size(); d < rank; ++d) {
    Offset x = decompose(a.getIndices()[d]), y = decompose(b.getIndices()[d]);
    if (x.base == y.base && (x.constant + extent(a, d) <= y.constant ||
                             y.constant + extent(b, d) <= x.constant))
      return true;
  }
  return false;
}

/// A transfer that can leave `loop`: a whole vector in bounds, no mask, a
/// minor identity map, every operand but the tensor defined outside.
template <typename Transfer>
static bool isHoistable(Transfer op, scf::ForOp loop) {
  if (op.getMask() || op.getVectorType().isScalable() ||
      !op.getPermutationMap().isMinorIdentity() ||
      llvm::any_of(op.getInBoundsValues(), [](bool b) { return !b; }))
    return false;
  return llvm::all_of(op->getOpOperands(), [&](OpOperand &operand) {
    return operand.get() == op.getBase() ||
           (std::is_same_v<Transfer, vector::TransferWriteOp> &&
            operand.getOperandNumber() == 0) ||
           loop.isDefinedOutsideOfLoop(operand.get());
  });
}

/// Puts `op` in the first pair whose transfer of the other kind (`partner`)
/// is at the same place and whose `slot` is free, or in a pair of its own.
template <typename Transfer, typename Partner>
static void pairUp(SmallVectorImpl<AccumulatorPair> &pairs, Transfer op,
                   Transfer AccumulatorPair::*slot,
                   Partner AccumulatorPair::*partner) {
  auto pair = llvm::find_if(pairs, [&](AccumulatorPair p) {
    Partner other = p.*partner;
    return !(p.*slot) && other.getVectorType() == op.getVectorType() &&
           other.getIndices() == op.getIndices();
  });
  if (pair != pairs.end()) {
    (*pair).*slot = op;
    return;
  }
  AccumulatorPair fresh;
  fresh.*slot = op;
  pairs.push_back(fresh);
}

/// The accumulator pairs of `iterArg`, whose tensor flows to the yield
/// through writes and loops that pass it on unchanged, every other use a
/// read; none when that does not hold, when a read or write has no partner
/// or when any two writes may overlap. The pairs come in the order
/// hoistLoopInvariantSubsets would hoist them (each where its first
/// transfer is met, walking each value's uses in use-list order), so that
/// both give the same IR where every loop-carried tensor of the loop
/// matches.
static std::optional<SmallVector<AccumulatorPair>>
matchAccumulators(scf::ForOp loop, BlockArgument iterArg) {
  SmallVector<AccumulatorPair> pairs;
  SmallVector<vector::TransferWriteOp> writes;
  // Where each value of the chain comes: after how many writes.
  DenseMap<Value, unsigned> position;
  Value value = iterArg;
  Operation *yield = loop.getBody()->getTerminator();
  while (true) {
    position[value] = writes.size();
    Value next;
    bool yielded = false;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto read = dyn_cast<vector::TransferReadOp>(user)) {
        if (!isHoistable(read, loop))
          return std::nullopt;
        pairUp(pairs, read, &AccumulatorPair::read, &AccumulatorPair::write);
        continue;
      }
      if (next || yielded)
        return std::nullopt;
      if (user == yield) {
        if (use.getOperandNumber() != iterArg.getArgNumber() - 1)
          return std::nullopt;
        yielded = true;
        continue;
      }
      if (auto write = dyn_cast<vector::TransferWriteOp>(user)) {
        if (&use != &write.getBaseMutable() || !isHoistable(write, loop))
          return std::nullopt;
        pairUp(pairs, write, &AccumulatorPair::write, &AccumulatorPair::read);
        writes.push_back(write);
        next = write.getResult();
        continue;
      }
      // A nested loop that passes the tensor on untouched.
      auto nested = dyn_cast<scf::ForOp>(user);
      if (!nested || use.getOperandNumber() < nested.getNumControlOperands())
        return std::nullopt;
      BlockArgument inner = nested.getTiedLoopRegionIterArg(&use);
      OpOperand *innerYield = nested.getTiedLoopYieldedValue(inner);
      if (!inner.hasOneUse() || &*inner.getUses().begin() != innerYield)
        return std::nullopt;
      next = nested.getTiedLoopResult(&use);
    }
    if (yielded)
      break;
    if (!next)
      return std::nullopt;
    value = next;
  }
  if (pairs.empty())
    return std::nullopt;
  for (AccumulatorPair pair : pairs) {
    // Each read is of the tensor as it was before its write.
    if (!pair.read || !pair.write ||
        position.lookup(pair.read.getBase()) >
            position.lookup(pair.write.getBase()))
      return std::nullopt;
  }
  for (auto [i, write] : llvm::enumerate(writes))
    for (vector::TransferWriteOp other : ArrayRef(writes).take_front(i))
      if (!provablyDisjoint(write, other))
        return std::nullopt;
  return pairs;
}

/// Hoists `pairs` of the loop's iterArg: the reads before the loop, on its
/// init, as new loop-carried vectors in the pairs' order; the writes after
/// it, on its result, the last pair's first (where hoisting the pairs one
/// by one puts them).
static scf::ForOp hoist(RewriterBase &rewriter, scf::ForOp loop,
                        unsigned iterArgIndex,
                        ArrayRef<AccumulatorPair> pairs) {
  Value init = loop.getInitArgs()[iterArgIndex];
  SmallVector<Value> inits, yields;
  for (AccumulatorPair pair : pairs) {
    rewriter.moveOpBefore(pair.read, loop);
    rewriter.modifyOpInPlace(pair.read,
                             [&] { pair.read.getBaseMutable().assign(init); });
    inits.push_back(pair.read.getResult());
    yields.push_back(pair.write.getValueToStore());
  }
  // The chain inside the loop no longer writes.
  for (AccumulatorPair pair : pairs)
    rewriter.replaceAllUsesWith(pair.write.getResult(), pair.write.getBase());
  FailureOr<LoopLikeOpInterface> grownLoop =
      cast<LoopLikeOpInterface>(loop.getOperation())
          .replaceWithAdditionalYields(
              rewriter, inits, /*replaceInitOperandUsesInLoop=*/true,
              [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                return yields;
              });
  assert(succeeded(grownLoop) && "an scf.for always takes more iter_args");
  auto grown = cast<scf::ForOp>(grownLoop->getOperation());
  Value result = grown.getResult(iterArgIndex);
  SmallVector<OpOperand *> laterUses;
  for (OpOperand &use : result.getUses())
    laterUses.push_back(&use);
  unsigned first = grown.getNumResults() - pairs.size();
  Operation *after = grown;
  Value written = result;
  for (unsigned i = pairs.size(); i-- > 0;) {
    vector::TransferWriteOp write = pairs[i].write;
    rewriter.moveOpAfter(write, after);
    rewriter.modifyOpInPlace(write, [&] {
      write.getValueToStoreMutable().assign(grown.getResult(first + i));
      write.getBaseMutable().assign(written);
    });
    after = write;
    written = write.getResult();
  }
  for (OpOperand *use : laterUses)
    rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(written); });
  return grown;
}

/// Whether a subset op of `loop`'s own body (its nested loops' are never
/// hoisted out of it) has all its indices defined outside the loop: only
/// such a subset can be hoisted. hoistLoopInvariantSubsets would otherwise
/// prove every pair disjoint from every subset op of the nested loops too
/// before finding that the pair's indices vary -- the cost of an outer
/// loop over register tiles whose K loops were already done.
static bool mayHoistSubsets(scf::ForOp loop) {
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (!isa<SubsetOpInterface>(op))
      continue;
    if (llvm::all_of(op.getOperands(), [&](Value v) {
          return !v.getType().isIndex() || loop.isDefinedOutsideOfLoop(v);
        }))
      return true;
  }
  return false;
}

void mlir::tfm::codegen::hoistAccumulators(RewriterBase &rewriter,
                                           scf::ForOp loop) {
  bool unmatched = false;
  for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
    BlockArgument iterArg = loop.getRegionIterArgs()[i];
    if (!isa<RankedTensorType>(iterArg.getType()))
      continue;
    std::optional<SmallVector<AccumulatorPair>> pairs =
        matchAccumulators(loop, iterArg);
    if (pairs)
      loop = hoist(rewriter, loop, i, *pairs);
    else
      unmatched = true;
  }
  // Any other shape of subset ops: the general (and slower) hoisting.
  if (unmatched && mayHoistSubsets(loop))
    hoistLoopInvariantSubsets(rewriter,
                              cast<LoopLikeOpInterface>(loop.getOperation()));
}

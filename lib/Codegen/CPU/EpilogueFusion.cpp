//===- EpilogueFusion.cpp - elementwise epilogues in a contraction's tiles ===//
//
// Part of tfm-tile-and-vectorize-contractions. A projection lowers to a
// contraction followed by elementwise generics over its result -- the bias
// add, GELU, SiLU, SwiGLU's product, the residual add -- each of which, left
// alone, is one more trip through memory over the whole [M, N] output. They
// are instead applied to each cache block of the contraction right after its
// K loop, while the block is still in L1/L2:
//
//  1. formEpilogue: the consumers rarely read the contraction's result
//     directly. The output of a packed contraction is [M, N/nr, nr],
//     collapsed to [M, N'] and sliced to [M, N] when the weights were padded;
//     tfm's ops see it expanded back to [B, S, N]. Each elementwise consumer
//     of such a view is rewritten over the contraction's own output space
//     (its operands reshaped, and padded once when the columns were: a bias
//     becomes [N/nr, nr]), and fused (upstream elementwise fusion) with the
//     consumers already moved there. The result is one generic whose
//     iteration space is exactly the contraction's parallel loops and which
//     reads the contraction's result through the identity map.
//  2. The tiling in RegisterTiles.cpp then tiles that
//     epilogue as the root -- remainder splits and the (parallel)
//     cache-block loop -- and fuses the contraction and its zero fill into
//     each tile as producers
//     (fuseContractionInto, upstream's TilingInterface slice fusion), so a
//     cache block is: zero the block, accumulate over K, apply the epilogue,
//     store. The accumulator is the output block itself: no temporary.
//
//===----------------------------------------------------------------------===//
#include "TilingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::codegen;

namespace {
/// A value that reads the output `root` of a contraction through views that
/// keep its columns innermost: reshapes that leave the innermost dimension
/// alone and slices of a prefix of the columns (padded weights). With
/// `panels`, the root is [lead..., J, R] and column n is (n / R, n % R).
/// Element [i..., n] of the view is then root[delinearize(i...), n].
struct OutputView {
  Value root;
  bool panels = false;
};
} // namespace

static bool isColumnPrefixSlice(tensor::ExtractSliceOp slice) {
  RankedTensorType source = slice.getSourceType();
  RankedTensorType result = slice.getResultType();
  if (source.getRank() != result.getRank() || !slice.hasUnitStride() ||
      !source.hasStaticShape() || !result.hasStaticShape())
    return false;
  for (OpFoldResult offset : slice.getMixedOffsets())
    if (!isConstantIntValue(offset, 0))
      return false;
  return source.getShape().drop_back() == result.getShape().drop_back();
}

static OutputView traceOutputView(Value value) {
  OutputView view{value};
  while (Operation *def = view.root.getDefiningOp()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
      if (!isColumnPrefixSlice(slice))
        break;
      view.root = slice.getSource();
      continue;
    }
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
      if (expand.getReassociationIndices().back().size() != 1)
        break;
      view.root = expand.getSrc();
      continue;
    }
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
      size_t last = collapse.getReassociationIndices().back().size();
      if (last == 1) {
        view.root = collapse.getSrc();
        continue;
      }
      // The panels of a packed output, merged into columns: the root is
      // right behind (views before this one would change the column order).
      if (last == 2) {
        view.root = collapse.getSrc();
        view.panels = true;
      }
      break;
    }
    break;
  }
  return view;
}

/// Whether `op` is an elementwise consumer that can be moved into the output
/// space of a contraction it reads through `use`.
static bool isElementwiseEpilogue(linalg::GenericOp op, OpOperand &use) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      op.getNumDpsInits() != 1 || op.getNumLoops() == 0 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !op.isDpsInput(&use) || !op.getMatchingIndexingMap(&use).isIdentity() ||
      !op.getIndexingMapMatchingResult(op->getResult(0)).isIdentity() ||
      op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
    return false;
  // Loop indices and gathers would mean something else in the new space.
  bool indexed = false;
  op.getRegion().walk([&](Operation *nested) {
    if (isa<linalg::IndexOp, tensor::ExtractOp>(nested))
      indexed = true;
  });
  return !indexed;
}

namespace {
/// Builds the operands of an epilogue moved into a contraction's output
/// space [lead..., cols] (cols = [J, R] with panels), from a consumer over
/// [vLead..., N].
struct OutputSpace {
  RankedTensorType rootType;
  bool panels;
  unsigned leadRank;   // dimensions of `root` before the columns
  int64_t rows;        // product of the lead dimensions
  int64_t cols;        // J * R with panels, else the innermost extent

  unsigned numLoops() const { return leadRank + (panels ? 2 : 1); }
  ArrayRef<int64_t> leadShape() const {
    return rootType.getShape().take_front(leadRank);
  }
};
} // namespace

/// `value` with dimensions [first, first + count) merged into one.
static Value collapseRun(OpBuilder &b, Location loc, Value value,
                         unsigned first, unsigned count) {
  auto type = cast<RankedTensorType>(value.getType());
  if (count == 1)
    return value;
  SmallVector<ReassociationIndices> groups;
  for (unsigned d = 0; d < type.getRank();) {
    if (d == first) {
      ReassociationIndices group;
      for (unsigned i = 0; i < count; ++i)
        group.push_back(d + i);
      groups.push_back(group);
      d += count;
    } else {
      groups.push_back({int64_t(d++)});
    }
  }
  return tensor::CollapseShapeOp::create(b, loc, value, groups);
}

/// `value` with dimension `dim` split into `shape`.
static Value expandDim(OpBuilder &b, Location loc, Value value, unsigned dim,
                       ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (shape.size() == 1)
    return value;
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> newShape;
  for (unsigned d = 0; d < type.getRank(); ++d) {
    ReassociationIndices group;
    if (d == dim) {
      for (int64_t size : shape) {
        group.push_back(newShape.size());
        newShape.push_back(size);
      }
    } else {
      group.push_back(newShape.size());
      newShape.push_back(type.getDimSize(d));
    }
    groups.push_back(group);
  }
  return tensor::ExpandShapeOp::create(
      b, loc, type.clone(newShape), value, groups);
}

/// The operand `value`, read by the consumer through `map` over its loops
/// [vLead..., n], rewritten for the output space; sets `newMap`.
static FailureOr<Value> moveOperand(OpBuilder &b, Location loc, Value value,
                                    AffineMap map, unsigned vLeadRank,
                                    const OutputSpace &space,
                                    AffineMap &newMap) {
  MLIRContext *ctx = b.getContext();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type) {
    newMap = AffineMap::get(space.numLoops(), 0, {}, ctx);
    return value;
  }
  if (!map.isProjectedPermutation() || !type.hasStaticShape())
    return failure();
  // The consumer's leading loops must be read together, in order, as one run
  // of dimensions (or not at all: a broadcast over rows); the column loop,
  // if read, innermost.
  std::optional<unsigned> leadStart, colPos;
  unsigned leadSeen = 0;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    unsigned d = cast<AffineDimExpr>(map.getResult(r)).getPosition();
    if (d == vLeadRank) {
      colPos = r;
      continue;
    }
    if (leadSeen == 0)
      leadStart = r;
    if (d != leadSeen || r != *leadStart + leadSeen)
      return failure();
    ++leadSeen;
  }
  if (leadSeen != 0 && leadSeen != vLeadRank)
    return failure();
  if (colPos && *colPos != map.getNumResults() - 1)
    return failure();

  SmallVector<AffineExpr> results;
  if (leadSeen) {
    value = collapseRun(b, loc, value, *leadStart, leadSeen);
    value = expandDim(b, loc, value, *leadStart, space.leadShape());
    for (unsigned i = 0; i < space.leadRank; ++i)
      results.push_back(getAffineDimExpr(i, ctx));
  }
  if (colPos) {
    auto colType = cast<RankedTensorType>(value.getType());
    unsigned last = colType.getRank() - 1;
    int64_t n = colType.getDimSize(last);
    if (n > space.cols)
      return failure();
    if (n < space.cols) {
      // Padded columns are computed and sliced off: pad once (for a bias,
      // N floats; a row operand is the one case that copies).
      SmallVector<OpFoldResult> low(colType.getRank(), b.getIndexAttr(0));
      SmallVector<OpFoldResult> high(low);
      high.back() = b.getIndexAttr(space.cols - n);
      SmallVector<int64_t> padded(colType.getShape());
      padded.back() = space.cols;
      Value zero = arith::ConstantOp::create(
          b, loc, b.getZeroAttr(colType.getElementType()));
      value = tensor::PadOp::create(b, loc, colType.clone(padded), value, low,
                                    high, zero);
    }
    if (space.panels) {
      int64_t r = space.rootType.getShape().back();
      value = expandDim(b, loc, value, last, {space.cols / r, r});
      results.push_back(getAffineDimExpr(space.leadRank, ctx));
      results.push_back(getAffineDimExpr(space.leadRank + 1, ctx));
    } else {
      results.push_back(getAffineDimExpr(space.leadRank, ctx));
    }
  }
  newMap = AffineMap::get(space.numLoops(), 0, results, ctx);
  return value;
}

/// Rewrites the elementwise `consumer`, which reads `root` through the view
/// at `use`, as a generic over `root`'s own shape; the consumer's result is
/// replaced by the matching view of the new generic's result.
static FailureOr<linalg::GenericOp>
moveIntoOutputSpace(RewriterBase &rewriter, linalg::GenericOp consumer,
                    OpOperand &use, const OutputView &view) {
  auto rootType = cast<RankedTensorType>(view.root.getType());
  auto vType = cast<RankedTensorType>(use.get().getType());
  OutputSpace space{rootType, view.panels,
                    unsigned(rootType.getRank() - (view.panels ? 2 : 1)), 1,
                    1};
  if (space.leadRank == 0 || vType.getRank() < 2)
    return failure();
  for (int64_t size : space.leadShape())
    space.rows *= size;
  for (int64_t size : rootType.getShape().drop_front(space.leadRank))
    space.cols *= size;
  unsigned vLeadRank = vType.getRank() - 1;

  Location loc = consumer.getLoc();
  rewriter.setInsertionPoint(consumer);
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    if (input == &use) {
      inputs.push_back(view.root);
      maps.push_back(AffineMap::getMultiDimIdentityMap(space.numLoops(), ctx));
      continue;
    }
    AffineMap map = consumer.getMatchingIndexingMap(input);
    // Another view of an output of the same shape (the up projection's,
    // for SwiGLU's product): read that output directly.
    if (map.isIdentity()) {
      OutputView other = traceOutputView(input->get());
      if (other.root.getType() == rootType && other.panels == view.panels &&
          other.root != input->get()) {
        inputs.push_back(other.root);
        maps.push_back(
            AffineMap::getMultiDimIdentityMap(space.numLoops(), ctx));
        continue;
      }
    }
    AffineMap newMap;
    FailureOr<Value> moved = moveOperand(rewriter, loc, input->get(), map,
                                         vLeadRank, space, newMap);
    if (failed(moved))
      return failure();
    inputs.push_back(*moved);
    maps.push_back(newMap);
  }
  Type elementType =
      cast<ShapedType>(consumer.getResultTypes()[0]).getElementType();
  Value init = tensor::EmptyOp::create(rewriter, loc, rootType.getShape(),
                                       elementType);
  maps.push_back(AffineMap::getMultiDimIdentityMap(space.numLoops(), ctx));
  SmallVector<utils::IteratorType> iterators(space.numLoops(),
                                             utils::IteratorType::parallel);
  auto moved = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      iterators);
  rewriter.cloneRegionBefore(consumer.getRegion(), moved.getRegion(),
                             moved.getRegion().begin());

  // Back to the consumer's view: columns merged, padding sliced off, rows
  // reshaped to the consumer's leading dimensions.
  Value result = moved.getResult(0);
  if (view.panels)
    result = collapseRun(rewriter, loc, result, space.leadRank, 2);
  int64_t n = vType.getShape().back();
  if (n < space.cols) {
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<int64_t> sizes(type.getShape());
    sizes.back() = n;
    SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(type.getRank(), rewriter.getIndexAttr(1));
    result = tensor::ExtractSliceOp::create(
        rewriter, loc, type.clone(sizes), result, offsets,
        getAsIndexOpFoldResult(ctx, sizes), strides);
  }
  if (space.leadShape() != vType.getShape().drop_back()) {
    result = collapseRun(rewriter, loc, result, 0, space.leadRank);
    result = expandDim(rewriter, loc, result, 0, vType.getShape().drop_back());
  }
  if (result.getType() != consumer.getResult(0).getType())
    return failure();
  rewriter.replaceOp(consumer, result);
  return moved;
}

/// Whether the parallel loops of `op` come first and its result is written
/// through the identity map over them: an epilogue over the result's shape
/// is then an op over exactly those loops.
static bool hasLeadingParallelOutput(linalg::LinalgOp op) {
  if (op->getNumResults() != 1 || op.getNumDpsInits() != 1)
    return false;
  unsigned parallel = op.getNumParallelLoops();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  for (unsigned i = 0; i < iters.size(); ++i)
    if ((iters[i] == utils::IteratorType::parallel) != (i < parallel))
      return false;
  AffineMap out = op.getIndexingMapMatchingResult(op->getResult(0));
  return out == AffineMap::getMultiDimIdentityMap(op.getNumLoops(),
                                                  op.getContext())
                    .getMajorSubMap(parallel);
}

/// Erases the views that led from an output to a consumer now replaced.
static void eraseDeadViews(RewriterBase &rewriter, Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
             tensor::ExtractSliceOp>(def) ||
        !def->use_empty())
      return;
    value = def->getOperand(0);
    rewriter.eraseOp(def);
  }
}

linalg::GenericOp codegen::formEpilogue(RewriterBase &rewriter,
                                        linalg::LinalgOp contraction) {
  if (!hasLeadingParallelOutput(contraction))
    return nullptr;
  linalg::GenericOp epilogue;
  Value current = contraction->getResult(0);
  while (true) {
    // The single consumer of `current`, through single-use views.
    Value value = current;
    OpOperand *use = nullptr;
    while (value.hasOneUse()) {
      use = &*value.getUses().begin();
      Operation *user = use->getOwner();
      if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
               tensor::ExtractSliceOp>(user))
        break;
      value = user->getResult(0);
      use = nullptr;
    }
    if (!use)
      break;
    // A consumer in a loop the contraction is not in would have the
    // contraction fused into (and recomputed in) every iteration.
    auto consumer = dyn_cast<linalg::GenericOp>(use->getOwner());
    if (!consumer || consumer->getBlock() != contraction->getBlock() ||
        !isElementwiseEpilogue(consumer, *use))
      break;
    OutputView view = traceOutputView(use->get());
    if (view.root != current)
      break;
    Value viewed = use->get();
    FailureOr<linalg::GenericOp> moved =
        moveIntoOutputSpace(rewriter, consumer, *use, view);
    if (failed(moved))
      break;
    eraseDeadViews(rewriter, viewed);
    if (!epilogue) {
      epilogue = *moved;
    } else {
      // One generic for the whole epilogue (upstream elementwise fusion).
      OpOperand *fused = nullptr;
      for (OpOperand *input : moved->getDpsInputOperands())
        if (input->get() == epilogue->getResult(0))
          fused = input;
      if (!fused || !linalg::areElementwiseOpsFusable(fused))
        break;
      FailureOr<linalg::ElementwiseOpFusionResult> result =
          linalg::fuseElementwiseOps(rewriter, fused);
      if (failed(result))
        break;
      // Where the consumer was: before the views of its result.
      rewriter.moveOpBefore(result->fusedOp, *moved);
      for (auto [original, replacement] : result->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      rewriter.eraseOp(*moved);
      if (epilogue->use_empty())
        rewriter.eraseOp(epilogue);
      epilogue = cast<linalg::GenericOp>(result->fusedOp);
    }
    current = epilogue->getResult(0);
  }
  return epilogue;
}

/// Replaces the slice `slice` of `producer`'s result by the producer computed
/// on that slice only; returns the tiled producer.
static Operation *fuseProducerOfSlice(RewriterBase &rewriter,
                                      tensor::ExtractSliceOp slice,
                                      OpResult producer) {
  rewriter.setInsertionPoint(slice);
  FailureOr<TilingResult> tiled =
      tensor::replaceExtractSliceWithTiledProducer(rewriter, slice, producer);
  if (failed(tiled) || tiled->tiledOps.size() != 1 ||
      tiled->tiledValues.size() != 1)
    return nullptr;
  rewriter.replaceOp(slice, tiled->tiledValues);
  return tiled->tiledOps.front();
}

linalg::LinalgOp codegen::fuseContractionInto(RewriterBase &rewriter,
                                              linalg::LinalgOp consumer,
                                              linalg::LinalgOp contraction) {
  OpResult result = contraction->getResult(0);
  tensor::ExtractSliceOp slice;
  for (OpOperand *input : consumer.getDpsInputOperands())
    if (auto s = input->get().getDefiningOp<tensor::ExtractSliceOp>();
        s && s.getSource() == result)
      slice = s;
  if (!slice)
    return nullptr;
  auto tiled = dyn_cast_or_null<linalg::LinalgOp>(
      fuseProducerOfSlice(rewriter, slice, result));
  if (!tiled)
    return nullptr;
  // The zero fill of the accumulator goes with it, on the same slice.
  OpOperand *init = tiled.getDpsInitOperand(0);
  if (auto initSlice = init->get().getDefiningOp<tensor::ExtractSliceOp>())
    if (auto fill = initSlice.getSource().getDefiningOp<linalg::FillOp>())
      fuseProducerOfSlice(rewriter, initSlice, fill->getResult(0));
  if (contraction->use_empty()) {
    Value oldInit = contraction.getDpsInitOperand(0)->get();
    rewriter.eraseOp(contraction);
    if (auto fill = oldInit.getDefiningOp<linalg::FillOp>();
        fill && fill->use_empty())
      rewriter.eraseOp(fill);
  }
  return tiled;
}

void codegen::accumulateInOutput(RewriterBase &rewriter,
                                 linalg::LinalgOp consumer,
                                 linalg::LinalgOp contraction) {
  // The block's accumulator is the epilogue's output block: the fill zeroes
  // it, the K loop accumulates in it, and the epilogue, made to read the
  // accumulator as its own output operand, overwrites each element in place.
  // Read as a separate input instead, the block would alias an operand the
  // epilogue's (row by row, vectorised) loop still reads while it writes, and
  // bufferization would give the accumulator a buffer of its own.
  auto epilogue = dyn_cast<linalg::GenericOp>(consumer.getOperation());
  auto fill =
      contraction.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  Value acc = contraction->getResult(0);
  Value out = consumer.getDpsInitOperand(0)->get();
  if (!epilogue || !fill || !fill->hasOneUse() ||
      acc.getType() != out.getType())
    return;
  // The output block (a slice of the loop's shared output at the loop's
  // indices, usually taken right before the epilogue) must exist before the
  // fill writes into it.
  DominanceInfo dominance;
  Operation *outDef = out.getDefiningOp();
  bool moveOut = !dominance.properlyDominates(out, fill);
  if (moveOut) {
    if (!isa<tensor::ExtractSliceOp, tensor::EmptyOp>(outDef) ||
        outDef->getBlock() != fill->getBlock())
      return;
    for (Value operand : outDef->getOperands())
      if (!dominance.properlyDominates(operand, fill))
        return;
  }
  OpOperand *accInput = nullptr;
  for (OpOperand *input : epilogue.getDpsInputOperands())
    if (input->get() == acc && !accInput)
      accInput = input;
  if (!accInput ||
      epilogue.getMatchingIndexingMap(accInput) !=
          epilogue.getIndexingMapMatchingResult(epilogue->getResult(0)))
    return;

  if (moveOut)
    rewriter.moveOpBefore(outDef, fill);
  rewriter.modifyOpInPlace(
      fill, [&] { fill.getDpsInitOperand(0)->set(out); });

  unsigned accIndex = accInput->getOperandNumber();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    if (input == accInput)
      continue;
    inputs.push_back(input->get());
    maps.push_back(epilogue.getMatchingIndexingMap(input));
  }
  maps.push_back(epilogue.getIndexingMapMatchingResult(epilogue->getResult(0)));
  rewriter.setInsertionPoint(epilogue);
  auto inPlace = linalg::GenericOp::create(
      rewriter, epilogue.getLoc(), epilogue->getResultTypes(), inputs,
      ValueRange{acc}, maps, epilogue.getIteratorTypesArray());
  rewriter.inlineRegionBefore(epilogue.getRegion(), inPlace.getRegion(),
                              inPlace.getRegion().end());
  Block &body = inPlace.getRegion().front();
  rewriter.replaceAllUsesWith(body.getArgument(accIndex), body.getArguments().back());
  body.eraseArgument(accIndex);
  rewriter.replaceOp(epilogue, inPlace->getResults());
}

//===- RegisterTiles.cpp - cache blocks and register tiles ----------------===//
//
// Part of tfm-tile-and-vectorize-contractions (the pass is in
// TileAndVectorizeContractions.cpp): the register-tiled form of a GEMM.
// tileAndVectorizeAnySize splits M and N where the register tile does not
// divide them (and M where cache blocks would come out far too small);
// tileAndVectorizeExact tiles each piece into cache blocks (parallel ones
// shared among threads, the zero fill or the epilogue fused into each
// block), K blocks and `rows x cols` register tiles, packs rows of A into
// panels where that pays, and vectorises each register tile (bf16 pairs:
// Bf16PairForm.cpp). After vectorisation, splitNonPowerOfTwoTiles unrolls
// register tiles whose N is not a power of two into one contraction per
// row and vector. Apart from the plan so that the loop structure of the
// micro-kernel reads as a whole.
//
//===----------------------------------------------------------------------===//
#include "TileAndVectorizeContractions.h"
#include "TilingUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/bit.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::codegen;

/// tile() for the cache blocks of a contraction, with the zero fill of its
/// accumulator fused into each block (upstream tile-and-fuse through the
/// loop's destination): each block is zeroed right before its K loop instead
/// of the whole output in a pass of its own.
static FailureOr<linalg::LinalgOp> tileWithFill(RewriterBase &rewriter,
                                                linalg::LinalgOp op,
                                                ArrayRef<int64_t> sizes,
                                                bool parallel) {
  if (llvm::all_of(sizes, [](int64_t s) { return s == 0; }) ||
      !op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>())
    return tile(rewriter, op, sizes, parallel);
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  if (parallel)
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn(
      [](tensor::ExtractSliceOp, OpResult producer, bool)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (!isa<linalg::FillOp>(producer.getOwner()))
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTileAndFuseResult> tiled =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return tile(rewriter, op, sizes, parallel);
  auto result =
      dyn_cast<linalg::LinalgOp>(tiled->tiledAndFusedOps.front());
  for (OpResult value : op->getResults())
    if (Value replacement = tiled->replacements.lookup(value))
      rewriter.replaceAllUsesWith(value, replacement);
  if (op->use_empty())
    rewriter.eraseOp(op);
  if (!result)
    return failure();
  return result;
}

/// Fewest cache blocks a contraction on threads is split into, so that the
/// threads get equal shares (with 2 to 8 threads, at most one block apart).
static constexpr int64_t kMinParallelBlocks = 16;

/// Fewest register-tile column groups (B panels) a row of A must be read for
/// before packing A pays: the pack is one pass over A.
static constexpr int64_t kMinPanelsToPackA = 8;

/// The views equal to `aValue`, a [M, K] (or, K pairs, [M, K/2, 2]) view of
/// an activation that each projection took on its own: the same collapse of
/// one tensor, and the same expansion of such collapses.
static SmallVector<Value> equalViews(Value aValue) {
  SmallVector<Value> views = {aValue};
  auto expand = aValue.getDefiningOp<tensor::ExpandShapeOp>();
  Value collapsed = expand ? expand.getSrc() : aValue;
  auto collapse = collapsed.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse)
    return views;
  for (Operation *sibling : collapse.getSrc().getUsers()) {
    auto other = dyn_cast<tensor::CollapseShapeOp>(sibling);
    if (!other || other == collapse || other.getType() != collapse.getType() ||
        other.getReassociationIndices() != collapse.getReassociationIndices())
      continue;
    if (!expand) {
      views.push_back(other.getResult());
      continue;
    }
    for (Operation *user : other->getUsers())
      if (auto otherExpand = dyn_cast<tensor::ExpandShapeOp>(user);
          otherExpand && otherExpand.getType() == expand.getType() &&
          otherExpand.getReassociationIndices() ==
              expand.getReassociationIndices())
        views.push_back(otherExpand.getResult());
  }
  return views;
}

/// Whether `op` only widens its bf16/f16 input `input` to f32 (its body's
/// block argument has no other use than `arith.extf`s to f32): a
/// half-precision GEMM on FMAs, which can read that operand in f32 instead
/// (readWidened).
static bool onlyWidens(linalg::LinalgOp op, unsigned input) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic)
    return false;
  Type element = getElementTypeOrSelf(op.getDpsInputOperand(input)->get());
  if (!element.isBF16() && !element.isF16())
    return false;
  BlockArgument arg = generic.getBody()->getArgument(input);
  return !arg.use_empty() && llvm::all_of(arg.getUsers(), [](Operation *user) {
    auto ext = dyn_cast<arith::ExtFOp>(user);
    return ext && ext.getType().isF32();
  });
}

/// Points `generic`'s input `input` at `value` (with `map`): when `value`
/// holds f32 where the input held bf16/f16, the body reads the f32 as it
/// is, its extensions dropped -- only where the body does nothing else with
/// the input (onlyWidens); false, and `generic` unchanged, otherwise.
static bool readWidened(RewriterBase &rewriter, linalg::GenericOp generic,
                        unsigned input, Value value, AffineMap map) {
  BlockArgument arg = generic.getBody()->getArgument(input);
  Type element = getElementTypeOrSelf(value);
  bool widened = arg.getType() != element;
  if (widened &&
      !onlyWidens(cast<linalg::LinalgOp>(generic.getOperation()), input))
    return false;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  maps[input] = map;
  rewriter.modifyOpInPlace(generic, [&] {
    generic->setOperand(input, value);
    generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    if (widened)
      arg.setType(element);
  });
  if (widened)
    for (Operation *ext : SmallVector<Operation *>(arg.getUsers()))
      rewriter.replaceOp(ext, arg);
  return true;
}

/// A generic that writes `input`, read through `inputMap`, widened to f32
/// into `init` (read whole).
static Value createWidening(RewriterBase &rewriter, Location loc, Value input,
                            Value init, AffineMap inputMap) {
  unsigned rank = inputMap.getNumDims();
  SmallVector<AffineMap> maps{
      inputMap, AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Type f32 = getElementTypeOrSelf(init);
  return linalg::GenericOp::create(
             rewriter, loc, init.getType(), ValueRange{input}, ValueRange{init},
             maps, iterators,
             [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
               Value wide = arith::ExtFOp::create(b, bodyLoc, f32, args[0]);
               linalg::YieldOp::create(b, bodyLoc, wide);
             })
      .getResult(0);
}

/// Points `generic`'s input `input`, a static bf16/f16 tensor the body only
/// widens (onlyWidens), at a widened f32 copy of it made right before
/// `generic`; nothing is made otherwise.
static void readWidenedCopy(RewriterBase &rewriter, linalg::GenericOp generic,
                            unsigned input) {
  Value value = generic.getDpsInputOperand(input)->get();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() ||
      !onlyWidens(cast<linalg::LinalgOp>(generic.getOperation()), input))
    return;
  rewriter.setInsertionPoint(generic);
  Location loc = generic.getLoc();
  Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                       rewriter.getF32Type());
  Value wide = createWidening(
      rewriter, loc, value, init,
      AffineMap::getMultiDimIdentityMap(type.getRank(), rewriter.getContext()));
  readWidened(rewriter, generic, input, wide,
              generic.getIndexingMapsArray()[input]);
}

/// Reads A in f32 when `op` only widens it and A is not packed in f32
/// (packRowsOfA packs only As that enough tiles read, of rank 2): one
/// widened copy of A, before `op`, so that a register tile broadcasts its
/// rows' f32 elements from memory as in an f32 GEMM instead of widening a
/// column of A in a register of its own (the f32 plan counts no such
/// register: AVX2's 4 x 24 would spill).
static void widenA(RewriterBase &rewriter, linalg::LinalgOp op,
                   const ContractionPlan &plan) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      generic && !plan.pairs)
    readWidenedCopy(rewriter, generic, 1 - plan.bInput);
}

/// The pack of `expanded` ([M / rows, rows, K(, 2)]) into `init`'s panels
/// ([M / rows, K, rows(, 2)], `permutation` of the former): a transpose, or,
/// where `init` is f32 and `expanded` is not, one generic that transposes
/// and widens.
static Value createRowPanelPack(RewriterBase &rewriter, Location loc,
                                Value expanded, Value init,
                                ArrayRef<int64_t> permutation) {
  if (getElementTypeOrSelf(expanded) == getElementTypeOrSelf(init))
    return linalg::TransposeOp::create(rewriter, loc, expanded, init,
                                       permutation)
        .getResult()[0];
  MLIRContext *ctx = rewriter.getContext();
  auto rank = static_cast<unsigned>(permutation.size());
  // init[d0, ..., dn] = expanded[d(inverse permutation)].
  SmallVector<AffineExpr> inputExprs(rank);
  for (unsigned i = 0; i < rank; ++i)
    inputExprs[permutation[i]] = getAffineDimExpr(i, ctx);
  return createWidening(rewriter, loc, expanded, init,
                        AffineMap::get(rank, 0, inputExprs, ctx));
}

/// Whether `pack` is a row-panel pack (createRowPanelPack) by `permutation`
/// into `packedType`.
static bool isRowPanelPack(Operation *pack, ArrayRef<int64_t> permutation,
                           RankedTensorType packedType) {
  if (pack->getNumResults() != 1 || pack->getResult(0).getType() != packedType)
    return false;
  if (auto transpose = dyn_cast<linalg::TransposeOp>(pack))
    return transpose.getPermutation() == permutation;
  auto generic = dyn_cast<linalg::GenericOp>(pack);
  if (!generic || !isWideningTranspose(generic) ||
      generic.getNumLoops() != permutation.size())
    return false;
  AffineMap input = generic.getIndexingMapsArray().front();
  for (auto [i, p] : llvm::enumerate(permutation))
    if (dimPosition(input.getResult(p)) != i)
      return false;
  return true;
}

/// A pack of `aValue` into `packedType` panels (expanded to `expandedType`,
/// then transposed by `permutation`) made for another contraction, usable at
/// `op`: one that dominates it, or one whose fresh destination can move up to
/// it with the pack. Equal views (equalViews) are the same A. Null when there
/// is none.
static Value existingPackOfA(RewriterBase &rewriter, Operation *op,
                             Value aValue, RankedTensorType expandedType,
                             RankedTensorType packedType,
                             ArrayRef<int64_t> permutation) {
  DominanceInfo dominance;
  for (Value view : equalViews(aValue))
    for (Operation *user : view.getUsers()) {
      auto expand = dyn_cast<tensor::ExpandShapeOp>(user);
      if (!expand || expand.getResultType() != expandedType)
        continue;
      for (Operation *pack : expand->getUsers()) {
        if (!isRowPanelPack(pack, permutation, packedType))
          continue;
        if (dominance.properlyDominates(pack, op))
          return pack->getResult(0);
        auto init = cast<DestinationStyleOpInterface>(pack)
                        .getDpsInitOperand(0)
                        ->get()
                        .getDefiningOp<tensor::EmptyOp>();
        if (!init || !init->hasOneUse() ||
            !dominance.properlyDominates(view, op))
          continue;
        rewriter.moveOpBefore(expand, op);
        rewriter.moveOpBefore(init, op);
        rewriter.moveOpBefore(pack, op);
        return pack->getResult(0);
      }
    }
  return nullptr;
}

/// Packs the rows of A, the contraction's [M, K] operand, into `rows`-row
/// panels Ap[M / rows, K, rows] (Ap[p, k, i] = A[p * rows + i, k]) when A
/// is read by enough register tiles to repay the copy. A register tile then
/// reads its `rows` A elements of each K step from one place instead of from
/// `rows` rows K elements apart: one stream for the prefetcher and no
/// A-side TLB pressure, measured 10-20% on a 512x2048x5632 GEMM. With K
/// pairs A is [M, K/2, 2] and the panels Ap[M / rows, K/2, rows, 2], each
/// row's pair kept together. A bf16/f16 A that the contraction only widens
/// (onlyWidens) is packed widened, in f32: each K step of a register tile
/// then broadcasts each row's element straight from memory instead of
/// widening and shuffling it into place per row (AVX2 bf16: four shuffles
/// and a shift per K step of a 4 x 16 tile, on the port that also widens B). A
/// pack of the same A that dominates `op` is reused. Returns null when A is not
/// packed.
static Value packRowsOfA(RewriterBase &rewriter, linalg::LinalgOp op,
                         const ContractionPlan &plan, int64_t rows,
                         int64_t cols) {
  unsigned a = 1 - plan.bInput;
  AffineMap aMap = op.getIndexingMapsArray()[a];
  Value aValue = op.getDpsInputOperand(a)->get();
  auto aType = dyn_cast<RankedTensorType>(aValue.getType());
  int64_t rank = plan.pairs ? 3 : 2;
  if (rows < 2 || !aType || aType.getRank() != rank ||
      aMap.getNumResults() != rank || dimPosition(aMap.getResult(0)) != plan.m ||
      dimPosition(aMap.getResult(1)) != plan.k ||
      (plan.pairs && dimPosition(aMap.getResult(2)) != plan.pair))
    return nullptr;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t m = ranges[plan.m], k = ranges[plan.k];
  if (m % rows != 0 || aType.getDimSize(0) != m || aType.getDimSize(1) != k)
    return nullptr;
  int64_t outputs = 1;
  for (auto [i, iter] : llvm::enumerate(op.getIteratorTypesArray()))
    if (iter == utils::IteratorType::parallel && i != plan.m)
      outputs *= ranges[i];
  if (outputs / cols < kMinPanelsToPackA)
    return nullptr;
  // [M / rows, rows, K(, 2)] -> [M / rows, K, rows(, 2)].
  SmallVector<int64_t> expandedShape{m / rows, rows, k}, packedShape{m / rows, k,
                                                                     rows};
  SmallVector<int64_t> permutation{0, 2, 1};
  SmallVector<ReassociationIndices> reassociation{{0, 1}, {2}};
  if (plan.pairs) {
    expandedShape.push_back(2);
    packedShape.push_back(2);
    permutation.push_back(3);
    reassociation.push_back({3});
  }
  // Contractions of one A (a gate and an up projection, unfused Q/K/V)
  // share the panels of the first.
  auto expandedType =
      RankedTensorType::get(expandedShape, aType.getElementType());
  Type packedElement = !plan.pairs && onlyWidens(op, a)
                           ? rewriter.getF32Type()
                           : aType.getElementType();
  auto packedType = RankedTensorType::get(packedShape, packedElement);
  if (Value shared = existingPackOfA(rewriter, op, aValue, expandedType,
                                     packedType, permutation))
    return shared;
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value expanded = tensor::ExpandShapeOp::create(rewriter, loc, expandedType,
                                                 aValue, reassociation);
  Value init =
      tensor::EmptyOp::create(rewriter, loc, packedShape, packedElement);
  return createRowPanelPack(rewriter, loc, expanded, init, permutation);
}

/// Points the register tile `tile`'s A operand, a [rows, Kt] slice of
/// `aValue` (through the slices of each tiling level), at the same elements
/// of `packedA`: Ap[m / rows, k : k + Kt, 0 : rows], read as [Kt, rows]
/// (with K pairs, [rows, Kt, 2] read as [Kt, rows, 2]).
static void readPackedA(RewriterBase &rewriter, linalg::GenericOp tile,
                        const ContractionPlan &plan, Value aValue,
                        Value packedA, int64_t rows) {
  unsigned a = 1 - plan.bInput;
  Value slice = tile.getDpsInputOperand(a)->get();
  auto sliceType = cast<RankedTensorType>(slice.getType());
  // [rows, Kt], or with K pairs [rows, Kt, 2] (the pairs whole).
  int64_t rank = plan.pairs ? 3 : 2;
  if (sliceType.getRank() != rank || sliceType.getDimSize(0) != rows ||
      (plan.pairs && sliceType.getDimSize(2) != 2))
    return;
  // Offsets of the slice in A: the sum over the chain of slices.
  SmallVector<SmallVector<OpFoldResult>> chain;
  Value v = slice;
  while (v != aValue) {
    auto extract = v.getDefiningOp<tensor::ExtractSliceOp>();
    if (!extract || extract.getSourceType().getRank() != rank ||
        extract.getType().getRank() != rank || !extract.hasUnitStride())
      return;
    chain.push_back(extract.getMixedOffsets());
    v = extract.getSource();
  }
  rewriter.setInsertionPoint(tile);
  Location loc = tile.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  auto sum = [&](unsigned dim, int64_t divisor) -> OpFoldResult {
    SmallVector<OpFoldResult> terms;
    AffineExpr expr = getAffineConstantExpr(0, ctx);
    for (auto &offsets : chain) {
      expr = expr + getAffineSymbolExpr(terms.size(), ctx);
      terms.push_back(offsets[dim]);
    }
    return affine::makeComposedFoldedAffineApply(
        rewriter, loc, expr.floorDiv(divisor), terms);
  };
  OpFoldResult panel = sum(0, rows), depth = sum(1, 1);
  int64_t kt = sliceType.getDimSize(1);
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  SmallVector<int64_t> packedShape{kt, rows};
  SmallVector<OpFoldResult> offsets{panel, depth, zero},
      sizes{one, rewriter.getIndexAttr(kt), rewriter.getIndexAttr(rows)};
  if (plan.pairs) {
    packedShape.push_back(2);
    offsets.push_back(zero);
    sizes.push_back(rewriter.getIndexAttr(2));
  }
  Type packedElement = getElementTypeOrSelf(packedA);
  auto packedType = RankedTensorType::get(packedShape, packedElement);
  Value packedSlice = tensor::ExtractSliceOp::create(
      rewriter, loc, packedType, packedA, offsets, sizes,
      SmallVector<OpFoldResult>(rank + 1, one));
  // A[m, k(, t)] read as Ap[k, m(, t)].
  SmallVector<AffineMap> maps = tile.getIndexingMapsArray();
  SmallVector<AffineExpr> results(maps[a].getResults());
  std::swap(results[0], results[1]);
  readWidened(rewriter, tile, a, packedSlice,
              AffineMap::get(maps[a].getNumDims(), 0, results, ctx));
}

/// Fewest register tiles of rows that read one K block of B before widening
/// that block of a bf16/f16 B to f32 pays (widenBlockOfB).
static constexpr int64_t kMinRowTilesToWidenB = 4;

/// Widens the K block of B that `blocked` (a contraction inside its cache
/// block and K block loops) reads from bf16/f16 to f32 once, into a buffer
/// of the thread, when at least kMinRowTilesToWidenB register tiles of
/// `rows` rows read it: each of them then loads f32 vectors as an f32 GEMM
/// does, instead of widening every B vector of every K step again (AVX2
/// bf16: a shuffle and a shift per vector, on the ports of the FMAs).
static void widenBlockOfB(RewriterBase &rewriter, linalg::LinalgOp blocked,
                          const ContractionPlan &plan, int64_t rows) {
  auto generic = dyn_cast<linalg::GenericOp>(blocked.getOperation());
  if (!generic || plan.pairs || rows < 2 || !onlyWidens(blocked, plan.bInput) ||
      blocked.getStaticLoopRanges()[plan.m] / rows < kMinRowTilesToWidenB)
    return;
  readWidenedCopy(rewriter, generic, plan.bInput);
}

/// Tiles `op`, whose M and N extents are multiples of `rows` and `cols`, into
/// cache blocks and `rows x cols` register tiles, and vectorises the latter.
/// The cache blocks of a contraction outside parallel loops are iterations
/// of one scf.forall over M, N and the batch loops (threads share the blocks); the
/// K blocks and register tiles are scf.for loops inside.
///
/// The loop over B's panels (a packed weight's J: parallel, in B and C, not
/// in A) of a GEMM of one-row register tiles, if any: such a tile reads
/// `gemv_panels` of them at once (the plan's reason is in CpuTarget.cpp).
static std::optional<unsigned>
gemvPanelLoop(linalg::LinalgOp op, const ContractionPlan &plan, int64_t rows) {
  if (rows != 1)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  for (unsigned i = 0; i < ranges.size(); ++i)
    if (i != plan.m && i != plan.n && i != plan.k &&
        iters[i] == utils::IteratorType::parallel &&
        maps[plan.bInput].isFunctionOfDim(i) && maps[2].isFunctionOfDim(i) &&
        !maps[1 - plan.bInput].isFunctionOfDim(i))
      return i;
  return std::nullopt;
}

/// With an `epilogue` (formEpilogue), the epilogue is the op tiled into cache
/// blocks and `op` is fused into each block: the block's K loops run, then the
/// epilogue, on the block while it is in cache.
static void tileAndVectorizeExact(RewriterBase &rewriter, linalg::LinalgOp op,
                                  const ContractionPlan &plan,
                                  const ContractionTiling &tiling,
                                  int64_t rows, int64_t cols,
                                  linalg::GenericOp epilogue) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Value aValue = op.getDpsInputOperand(1 - plan.bInput)->get();
  Value packedA = packRowsOfA(rewriter, op, plan, rows, cols);
  if (!packedA && rows > 1)
    widenA(rewriter, op, plan);
  // Cache blocks: every loop but M, N and K is tiled by 1.
  SmallVector<int64_t> block(ranges.size(), 1), reg(ranges.size(), 0);
  block[plan.m] = blockSize(ranges[plan.m], rows, tiling.blockRows);
  block[plan.n] = blockSize(ranges[plan.n], cols, tiling.blockCols);
  // A K without a usable divisor is not blocked at all: a tiny K block would
  // reload the accumulators every few steps. With K pairs, `k` counts pairs
  // and each pair stays whole: the K block is sized by the bytes of its B
  // micro-panel in L1, so a block of bf16 pairs holds twice the K steps of
  // an f32 one (512x2048x5632 on one thread, interleaved runs: 400 against
  // 389 GFLOP/s, median of three, for as many pairs as f32 steps).
  int64_t blockDepth = tiling.blockDepth;
  int64_t depth = largestDivisor(ranges[plan.k], blockDepth);
  block[plan.k] = depth * 4 >= std::min(blockDepth, ranges[plan.k])
                      ? depth
                      : ranges[plan.k];
  if (plan.pairs)
    block[plan.pair] = ranges[plan.pair];
  std::optional<unsigned> panels = gemvPanelLoop(op, plan, rows);
  if (panels)
    block[*panels] = largestDivisor(ranges[*panels], tiling.gemvPanels);
  // Enough parallel blocks to share among threads: halve the N block, then
  // the M block, until there are kMinParallelBlocks (or the register tile).
  // A one-row tile's panels are halved (down to two) only while the blocks
  // are too few and odd (docs/design.md, the GEMV item).
  bool parallel = worthThreads(op, kMinParallelMacs);
  auto parallelBlocks = [&] {
    int64_t count = 1;
    for (unsigned i = 0; i < ranges.size(); ++i)
      if (i != plan.k)
        count *= ranges[i] / block[i];
    return count;
  };
  while (parallel && parallelBlocks() < kMinParallelBlocks) {
    if (block[plan.n] > cols)
      block[plan.n] = blockSize(ranges[plan.n], cols, block[plan.n] / 2);
    else if (block[plan.m] > rows)
      block[plan.m] = blockSize(ranges[plan.m], rows, block[plan.m] / 2);
    else if (panels && block[*panels] > 2 && parallelBlocks() % 2)
      block[*panels] = largestDivisor(ranges[*panels], block[*panels] / 2);
    else
      break;
  }
  for (auto [size, range] : llvm::zip(block, ranges))
    if (size == range)
      size = 0;
  reg[plan.m] = rows == (block[plan.m] ? block[plan.m] : ranges[plan.m]) ? 0 : rows;
  reg[plan.n] = cols == (block[plan.n] ? block[plan.n] : ranges[plan.n]) ? 0 : cols;
  reg[plan.k] = (block[plan.k] ? block[plan.k] : ranges[plan.k]) == 1 ? 0 : 1;

  // Parallel blocks first (M, N, batch), then the K blocks inside.
  SmallVector<int64_t> parallelBlock(block), depthBlock(block.size(), 0);
  parallelBlock[plan.k] = 0;
  depthBlock[plan.k] = block[plan.k];
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  for (unsigned i = 0; i < iters.size(); ++i)
    if (iters[i] == utils::IteratorType::reduction && i != plan.k) {
      depthBlock[i] = parallelBlock[i];
      parallelBlock[i] = 0;
    }
  FailureOr<linalg::LinalgOp> blocked = failure();
  if (epilogue) {
    // The epilogue's loops are the contraction's parallel loops.
    SmallVector<int64_t> epilogueBlock(
        ArrayRef(parallelBlock).take_front(epilogue.getNumLoops()));
    FailureOr<linalg::LinalgOp> epilogueTile = tile(
        rewriter, cast<linalg::LinalgOp>(epilogue.getOperation()),
        epilogueBlock, parallel);
    if (succeeded(epilogueTile)) {
      linalg::LinalgOp fused =
          fuseContractionInto(rewriter, *epilogueTile, op);
      // A single block: the epilogue reads the contraction as it is.
      if (!fused && llvm::is_contained((*epilogueTile)->getOperands(),
                                       op->getResult(0)))
        fused = op;
      if (fused) {
        accumulateInOutput(rewriter, *epilogueTile, fused);
        blocked = fused;
      }
    }
  }
  if (failed(blocked))
    blocked = tileWithFill(rewriter, op, parallelBlock, parallel);
  if (failed(blocked))
    return;
  blocked = tile(rewriter, *blocked, depthBlock);
  if (failed(blocked))
    return;
  widenBlockOfB(rewriter, *blocked, plan, rows);
  FailureOr<linalg::LinalgOp> registerTile = tile(rewriter, *blocked, reg);
  if (failed(registerTile))
    return;
  if (packedA)
    if (auto generic = dyn_cast<linalg::GenericOp>(registerTile->getOperation()))
      readPackedA(rewriter, generic, plan, aValue, packedA, rows);
  if (plan.pairs)
    if (auto generic = dyn_cast<linalg::GenericOp>(registerTile->getOperation()))
      if (succeeded(vectorizeAsPairDots(rewriter, generic, plan)))
        return;
  vectorizeInPlace(rewriter, *registerTile);
}

/// Rows of the register tile for M rows: the planned `rows` if they divide
/// M, else a divisor of M down to the plan's `minRows` (the policy's
/// shortest tile that still covers the FMA latency, 6 -> 4), else the
/// planned rows with a remainder tile.
static int64_t registerRowsFor(int64_t m, int64_t rows, int64_t minRows) {
  if (m <= rows)
    return m;
  for (int64_t r = rows; r >= minRows && r > 1; --r)
    if (m % r == 0)
      return r;
  return rows;
}

/// Columns of the register tile for N columns: the planned `cols` where they
/// divide N (a packed weight's panel always); for planned columns of three
/// vectors (AVX2's 24) that do not, two vectors if those divide N
/// (attention's 64-key tiles: 16, not 24 and a strip of 16); else the
/// planned columns and a remainder strip, and for N below them the largest
/// power of two that fits.
static int64_t registerColsFor(int64_t n, int64_t cols) {
  if (n < cols)
    return int64_t(llvm::bit_floor(uint64_t(n)));
  if (n % cols == 0 || llvm::has_single_bit(uint64_t(cols)))
    return cols;
  int64_t vector = cols & -cols;
  for (int64_t c = cols - vector; c >= 2 * vector; c -= vector)
    if (n % c == 0)
      return c;
  return cols;
}

/// Splits `op` (or, with an epilogue, the epilogue, with `op` fused into
/// each piece) along `dim` at the largest multiple of `size`, and tiles the
/// pieces. Returns false when `size` divides the extent: nothing was done.
static bool splitAndTile(RewriterBase &rewriter, linalg::LinalgOp op,
                         const ContractionPlan &plan,
                         const ContractionTiling &tiling,
                         linalg::GenericOp epilogue, unsigned dim,
                         int64_t size) {
  if (!epilogue) {
    auto [bulk, rest] = splitOffRemainder(rewriter, op, dim, size);
    if (!bulk || !rest)
      return !bulk;
    tileAndVectorizeAnySize(rewriter, bulk, plan, tiling, nullptr);
    tileAndVectorizeAnySize(rewriter, rest, plan, tiling, nullptr);
    return true;
  }
  auto [bulk, rest] = splitOffRemainder(
      rewriter, cast<linalg::LinalgOp>(epilogue.getOperation()), dim, size);
  if (!bulk || !rest)
    return !bulk;
  // Should a piece not take the contraction, the contraction stays whole
  // (tiled alone) and the pieces read its result.
  for (linalg::LinalgOp piece : {bulk, rest}) {
    linalg::LinalgOp fused = fuseContractionInto(rewriter, piece, op);
    if (!fused) {
      tileAndVectorizeAnySize(rewriter, op, plan, tiling, nullptr);
      return true;
    }
    tileAndVectorizeAnySize(rewriter, fused, plan, tiling,
                            cast<linalg::GenericOp>(piece.getOperation()));
  }
  return true;
}

void codegen::tileAndVectorizeAnySize(RewriterBase &rewriter,
                                      linalg::LinalgOp op,
                                      const ContractionPlan &plan,
                                      const ContractionTiling &tiling,
                                      linalg::GenericOp epilogue) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t rows = registerRowsFor(ranges[plan.m], tiling.registerRows,
                                 tiling.minRegisterRows);
  if (splitAndTile(rewriter, op, plan, tiling, epilogue, plan.m, rows))
    return;
  int64_t cols = registerColsFor(ranges[plan.n], tiling.registerCols);
  if (splitAndTile(rewriter, op, plan, tiling, epilogue, plan.n, cols))
    return;
  // Cache blocks must divide the extent; when its only divisors are far
  // below the planned block (M = 516 = 43 x 12 with 6-row tiles: 12-row
  // blocks, B streamed 43 times), the bulk takes full blocks and the rest
  // a block of its own.
  int64_t fullRows = std::max(rows, tiling.blockRows / rows * rows);
  if (ranges[plan.m] > fullRows &&
      blockSize(ranges[plan.m], rows, tiling.blockRows) * 2 < fullRows &&
      splitAndTile(rewriter, op, plan, tiling, epilogue, plan.m, fullRows))
    return;
  tileAndVectorizeExact(rewriter, op, plan, tiling, rows, cols, epilogue);
}

/// The iteration dimension of a contraction with iteration `bounds` and
/// result map `result` that the result's innermost dimension walks (N of a
/// register tile), where that extent is not a power of two.
static std::optional<unsigned> nonPowerOfTwoN(AffineMap result,
                                              ArrayRef<int64_t> bounds) {
  if (result.getNumResults() == 0)
    return std::nullopt;
  std::optional<unsigned> n = dimPosition(result.getResults().back());
  if (!n || bounds[*n] <= 1 || llvm::has_single_bit(uint64_t(bounds[*n])))
    return std::nullopt;
  return n;
}

LogicalResult codegen::splitNonPowerOfTwoTiles(func::FuncOp func) {
  // The pieces each op is unrolled to ride on the op as a discardable
  // attribute, not in a map of op pointers, which an op created while
  // rewriting could reuse; the unrolled pieces carry their own shape.
  constexpr llvm::StringLiteral kPieces = "tfm.register_pieces";
  MLIRContext *ctx = func.getContext();
  bool any = false;
  auto mark = [&](Operation *op, ArrayRef<int64_t> shape, unsigned dim) {
    SmallVector<int64_t> piece(shape.size(), 1);
    piece[dim] = shape[dim] & -shape[dim];
    op->setAttr(kPieces, DenseI64ArrayAttr::get(ctx, piece));
    any = true;
  };
  // A transfer or extension: its vector's innermost dimension is N.
  auto markVector = [&](Operation *op, VectorType type) {
    mark(op, type.getShape(), type.getRank() - 1);
  };
  func.walk([&](vector::ContractionOp contract) {
    SmallVector<int64_t> bounds;
    contract.getIterationBounds(bounds);
    SmallVector<AffineMap> maps = contract.getIndexingMapsArray();
    std::optional<unsigned> n = nonPowerOfTwoN(maps.back(), bounds);
    if (!n)
      return;
    mark(contract, bounds, *n);
    // Operands (lhs, rhs, acc) whose innermost dimension is N, when read
    // for this contraction alone, through the extension of a bf16/f16 B.
    for (unsigned i = 0; i < 3; ++i) {
      std::optional<unsigned> last =
          maps[i].getNumResults() ? dimPosition(maps[i].getResults().back())
                                  : std::nullopt;
      if (last != n)
        continue;
      Value operand = contract->getOperand(i);
      auto ext = operand.getDefiningOp<arith::ExtFOp>();
      if (ext && ext->hasOneUse()) {
        markVector(ext, cast<VectorType>(ext.getType()));
        operand = ext.getIn();
      }
      auto read = operand.getDefiningOp<vector::TransferReadOp>();
      if (read && read->hasOneUse())
        markVector(read, read.getVectorType());
    }
    for (Operation *user : contract->getUsers())
      if (auto write = dyn_cast<vector::TransferWriteOp>(user))
        markVector(write, write.getVectorType());
  });
  if (!any)
    return success();
  RewritePatternSet patterns(ctx);
  vector::populateVectorUnrollPatterns(
      patterns,
      vector::UnrollVectorOptions().setNativeShapeFn(
          [&](Operation *op) -> std::optional<SmallVector<int64_t>> {
            auto piece = op->getAttrOfType<DenseI64ArrayAttr>(kPieces);
            if (!piece)
              return std::nullopt;
            return SmallVector<int64_t>(piece.asArrayRef());
          }));
  vector::ExtractStridedSliceOp::getCanonicalizationPatterns(patterns, ctx);
  vector::InsertStridedSliceOp::getCanonicalizationPatterns(patterns, ctx);
  LogicalResult unrolled = applyPatternsGreedily(func, std::move(patterns));
  func.walk([&](Operation *op) { op->removeAttr(kPieces); });
  if (failed(unrolled))
    return failure();
  // Each piece computes its row's and column's offsets anew: one value per
  // offset, so that a read and the write at the same place share indices
  // (the first K block's zero start matches them by value).
  IRRewriter rewriter(ctx);
  DominanceInfo dominance(func);
  eliminateCommonSubExpressions(rewriter, dominance, func);
  return success();
}

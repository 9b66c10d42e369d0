//===- Bf16PairForm.cpp - bf16 contractions in K pairs --------------------===//
//
// Part of tfm-tile-and-vectorize-contractions (the pass is in
// TileAndVectorizeContractions.cpp): the form of bf16 contractions on
// AVX512-BF16, whose K step is a pair of steps. vectorizeAsPairDots is the
// register tile of such a GEMM, one x86vector.avx512.dot (`vdpbf16ps`) per
// accumulator vector; pairSlicedB brings a bf16 contraction in a loop whose
// B is a slice of a tensor made outside it (attention's Q K^T and P V) into
// the K-pair form, reading a copy of that tensor made once in pairs. Apart
// because only bf16 on 512-bit targets takes this form, and it builds its
// vectors by hand instead of through the vectoriser.
//
//===----------------------------------------------------------------------===//
#include "TileAndVectorizeContractions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::codegen;

LogicalResult codegen::vectorizeAsPairDots(RewriterBase &rewriter,
                                           linalg::GenericOp tile,
                                           const ContractionPlan &plan) {
  SmallVector<int64_t> ranges = tile.getStaticLoopRanges();
  int64_t rows = ranges[plan.m], cols = ranges[plan.n];
  unsigned a = 1 - plan.bInput;
  SmallVector<AffineMap> maps = tile.getIndexingMapsArray();
  // Besides M, N and the pair, every loop has extent 1 but at most one over
  // B's panels (a one-row tile reading `gemv_panels` of them: B's outermost
  // dimension, in C between M and N, not in A).
  std::optional<unsigned> panelLoop;
  for (auto [i, range] : llvm::enumerate(ranges)) {
    if (i == plan.m || i == plan.n || i == plan.pair || range == 1)
      continue;
    if (panelLoop || maps[a].isFunctionOfDim(i) ||
        maps[plan.bInput].getNumResults() == 0 ||
        dimPosition(maps[plan.bInput].getResult(0)) != i)
      return failure();
    panelLoop = i;
  }
  int64_t panels = panelLoop ? ranges[*panelLoop] : 1;
  if (ranges[plan.pair] != 2)
    return failure();
  int64_t width = cols % 16 == 0 ? 16 : cols % 8 == 0 ? 8 : cols % 4 == 0 ? 4 : 0;
  if (!width)
    return failure();
  Value aTile = tile.getDpsInputOperand(a)->get();
  Value bTile = tile.getDpsInputOperand(plan.bInput)->get();
  Value cTile = tile.getDpsInitOperand(0)->get();
  auto aType = cast<RankedTensorType>(aTile.getType());
  auto bType = cast<RankedTensorType>(bTile.getType());
  auto cType = cast<RankedTensorType>(cTile.getType());
  // C's results: M before the panels before N, the others of extent 1.
  std::optional<unsigned> mPos, nPos, panelPos;
  for (auto [pos, e] : llvm::enumerate(maps[2].getResults())) {
    if (dimPosition(e) == plan.m)
      mPos = pos;
    if (dimPosition(e) == plan.n)
      nPos = pos;
    if (panelLoop && dimPosition(e) == panelLoop)
      panelPos = pos;
  }
  if (!mPos || !nPos || *mPos > *nPos || !cType.hasStaticShape() ||
      (panelLoop && (!panelPos || *panelPos < *mPos || *panelPos > *nPos)) ||
      cType.getNumElements() != rows * panels * cols ||
      bType.getNumElements() != panels * cols * 2)
    return failure();

  Location loc = tile.getLoc();
  rewriter.setInsertionPoint(tile);
  MLIRContext *ctx = rewriter.getContext();
  Type f32 = rewriter.getF32Type(), bf16 = rewriter.getBF16Type();
  Type i32 = rewriter.getI32Type();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };

  // The accumulators, as [rows, panels * cols].
  auto cVectorType = VectorType::get(cType.getShape(), f32);
  SmallVector<Value> cZeros(cType.getRank(), zero);
  Value acc = vector::TransferReadOp::create(
      rewriter, loc, cVectorType, cTile, cZeros,
      /*padding=*/std::nullopt,
      SmallVector<bool>(cType.getRank(), true));
  auto rowsType = VectorType::get({rows, panels * cols}, f32);
  acc = vector::ShapeCastOp::create(rewriter, loc, rowsType, acc);

  // B's pairs, `width` columns a vector: each panel's part of the tile is
  // contiguous (the panels are a K panel apart), as [panels, cols * 2].
  SmallVector<ReassociationIndices> bGroups;
  if (panelLoop)
    bGroups = {{0}, llvm::to_vector(llvm::seq<int64_t>(1, bType.getRank()))};
  else
    bGroups = {llvm::to_vector(llvm::seq<int64_t>(0, bType.getRank()))};
  Value bFlat = tensor::CollapseShapeOp::create(rewriter, loc, bTile, bGroups);
  auto pairsType = VectorType::get({2 * width}, bf16);
  SmallVector<Value> bVectors; // panel-major
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t v = 0; v < cols / width; ++v) {
      SmallVector<Value> at{index(2 * width * v)};
      if (panelLoop)
        at.insert(at.begin(), index(p));
      bVectors.push_back(vector::TransferReadOp::create(
          rewriter, loc, pairsType, bFlat, at, /*padding=*/std::nullopt,
          ArrayRef<bool>{true}));
    }

  // A's pair of row i: its innermost dimension at [.., i, .., 0].
  AffineMap aMap = maps[a];
  unsigned aRank = aType.getRank();
  AffineMap innermost =
      AffineMap::get(aRank, 0, getAffineDimExpr(aRank - 1, ctx), ctx);
  auto pairType = VectorType::get({2}, bf16);
  auto accType = VectorType::get({width}, f32);
  SmallVector<Value> newRows;
  for (int64_t i = 0; i < rows; ++i) {
    SmallVector<Value> aIndices;
    for (AffineExpr e : aMap.getResults())
      aIndices.push_back(dimPosition(e) == plan.m ? index(i) : zero);
    Value pair = vector::TransferReadOp::create(
        rewriter, loc, pairType, aTile, aIndices, /*padding=*/std::nullopt,
        innermost, ArrayRef<bool>{true});
    Value word = vector::BitCastOp::create(
        rewriter, loc, VectorType::get({1}, i32), pair);
    Value scalar = vector::ExtractOp::create(rewriter, loc, word,
                                             ArrayRef<int64_t>{0});
    Value words = vector::BroadcastOp::create(
        rewriter, loc, VectorType::get({width}, i32), scalar);
    Value aPairs = vector::BitCastOp::create(rewriter, loc, pairsType, words);
    Value row = vector::ExtractOp::create(rewriter, loc, acc,
                                          ArrayRef<int64_t>{i});
    for (int64_t v = 0; v < panels * cols / width; ++v) {
      Value part = vector::ExtractStridedSliceOp::create(
          rewriter, loc, row, ArrayRef<int64_t>{v * width},
          ArrayRef<int64_t>{width}, ArrayRef<int64_t>{1});
      Value sum = x86vector::DotBF16Op::create(rewriter, loc, accType, part,
                                               aPairs, bVectors[v]);
      row = vector::InsertStridedSliceOp::create(
          rewriter, loc, sum, row, ArrayRef<int64_t>{v * width},
          ArrayRef<int64_t>{1});
    }
    newRows.push_back(row);
  }
  Value result = ub::PoisonOp::create(rewriter, loc, rowsType);
  for (auto [i, row] : llvm::enumerate(newRows))
    result = vector::InsertOp::create(rewriter, loc, row, result,
                                      ArrayRef<int64_t>{int64_t(i)});
  result = vector::ShapeCastOp::create(rewriter, loc, cVectorType, result);
  Value written = vector::TransferWriteOp::create(
                      rewriter, loc, result, cTile, cZeros,
                      SmallVector<bool>(cType.getRank(), true))
                      .getResult();
  rewriter.replaceOp(tile, written);
  return success();
}

/// The innermost dimension of `value` split into [K/2, 2].
static Value splitInnermost(RewriterBase &rewriter, Location loc,
                            Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.back() /= 2;
  shape.push_back(2);
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i)
    groups.push_back({i});
  groups.back().push_back(type.getRank());
  return tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
      value, groups);
}

/// Whether the index `index` is provably a multiple of `divisor`: a constant,
/// a product with such a factor, a sum, difference, min or max of such
/// values, or the induction variable of an scf.for whose lower bound and
/// step are. `depth` bounds the walk; anything else is not known.
static bool isKnownMultipleOf(OpFoldResult index, int64_t divisor,
                              int depth = 8) {
  if (std::optional<int64_t> c = getConstantIntValue(index))
    return *c % divisor == 0;
  auto value = dyn_cast<Value>(index);
  if (!value || depth == 0)
    return false;
  auto known = [&](Value v) { return isKnownMultipleOf(v, divisor, depth - 1); };
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    return loop && arg == loop.getInductionVar() &&
           known(loop.getLowerBound()) && known(loop.getStep());
  }
  Operation *def = value.getDefiningOp();
  if (isa_and_nonnull<arith::MulIOp>(def))
    return known(def->getOperand(0)) || known(def->getOperand(1));
  if (isa_and_nonnull<arith::AddIOp, arith::SubIOp, arith::MinSIOp,
                      arith::MaxSIOp, arith::MinUIOp, arith::MaxUIOp>(def))
    return known(def->getOperand(0)) && known(def->getOperand(1));
  return false;
}

/// The f32 tensor that `value` rounds through bf16, where `value` is made by
/// a generic that only rounds each element of its one input to bf16 and
/// back (flash attention's probabilities, rounded for P V): its elements are
/// exact in bf16, so reading them as bf16 changes nothing. Null otherwise.
static Value roundedThroughBf16(Value value) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumResults() != 1 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return nullptr;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto ext = yield.getOperand(0).getDefiningOp<arith::ExtFOp>();
  if (!ext || !ext.getIn().getType().isBF16() || !ext.getType().isF32())
    return nullptr;
  auto trunc = ext.getIn().getDefiningOp<arith::TruncFOp>();
  if (!trunc || trunc.getIn() != body.getArgument(0) ||
      !trunc.getIn().getType().isF32())
    return nullptr;
  return generic.getDpsInputOperand(0)->get();
}

/// The copy of `whole`, a tensor T [.., K', N] of `func`'s body, into K
/// pairs [.., K'/2, N, 2] that pairSlicedB reads, made right after T (at the
/// start of `func` when T is an argument).
static Value copyIntoPairs(RewriterBase &rewriter, Location loc, Value whole,
                           func::FuncOp func) {
  auto wholeType = cast<RankedTensorType>(whole.getType());
  int64_t rank = wholeType.getRank();
  OpBuilder::InsertionGuard guard(rewriter);
  if (Operation *def = whole.getDefiningOp())
    rewriter.setInsertionPointAfter(def);
  else
    rewriter.setInsertionPointToStart(&func.getBody().front());
  // [.., K', N] -> [.., K'/2, 2, N] -> [.., K'/2, N, 2].
  SmallVector<int64_t> shape(wholeType.getShape());
  shape[rank - 2] /= 2;
  shape.insert(shape.begin() + rank - 1, 2);
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank - 2; ++i)
    groups.push_back({i});
  groups.push_back({rank - 2, rank - 1});
  groups.push_back({rank});
  Value expanded = tensor::ExpandShapeOp::create(
      rewriter, loc,
      RankedTensorType::get(shape, wholeType.getElementType()), whole,
      groups);
  SmallVector<int64_t> permutation =
      llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
  permutation.append({rank, rank - 1});
  SmallVector<int64_t> pairShape;
  for (int64_t p : permutation)
    pairShape.push_back(shape[p]);
  Value init = tensor::EmptyOp::create(rewriter, loc, pairShape,
                                       wholeType.getElementType());
  return linalg::TransposeOp::create(rewriter, loc, expanded, init,
                                     permutation)
      .getResult()[0];
}

linalg::GenericOp
codegen::pairSlicedB(RewriterBase &rewriter, linalg::GenericOp op,
                     const ContractionPlan &plan,
                     llvm::DenseMap<Value, Value> &pairCopies) {
  unsigned a = 1 - plan.bInput;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Value aValue = op.getDpsInputOperand(a)->get();
  Value bValue = op.getDpsInputOperand(plan.bInput)->get();
  auto aType = cast<RankedTensorType>(aValue.getType());
  auto bType = cast<RankedTensorType>(bValue.getType());
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  AffineMap bMap = maps[plan.bInput];
  Value roundedA =
      aType.getElementType().isF32() ? roundedThroughBf16(aValue) : nullptr;
  if ((!aType.getElementType().isBF16() && !roundedA) ||
      !bType.getElementType().isBF16() ||
      ranges[plan.k] % 2 != 0 || bType.getRank() != 2 ||
      dimPosition(maps[a].getResults().back()) != plan.k ||
      bMap.getNumResults() != 2 || dimPosition(bMap.getResult(0)) != plan.k ||
      dimPosition(bMap.getResult(1)) != plan.n ||
      llvm::count_if(op.getIteratorTypesArray(), [](utils::IteratorType t) {
        return t == utils::IteratorType::reduction;
      }) != 1)
    return nullptr;
  // B = T[.., 0 : K, n0 : n0 + N], unit strides, every other size 1.
  auto slice = bValue.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || !slice.hasUnitStride())
    return nullptr;
  Value whole = slice.getSource();
  auto wholeType = cast<RankedTensorType>(whole.getType());
  int64_t rank = wholeType.getRank();
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func || whole.getParentRegion() != &func.getBody() ||
      !wholeType.hasStaticShape() || rank < 2)
    return nullptr;
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets(),
                            sizes = slice.getMixedSizes();
  for (int64_t i = 0; i < rank - 2; ++i)
    if (getConstantIntValue(sizes[i]) != 1)
      return nullptr;
  // B's K rows start at an even row of T (a pair boundary) and T has whole
  // pairs.
  int64_t k = ranges[plan.k];
  OpFoldResult kOffset = offsets[rank - 2];
  if (!isKnownMultipleOf(kOffset, 2) ||
      getConstantIntValue(sizes[rank - 2]) != k ||
      wholeType.getDimSize(rank - 2) % 2 != 0 ||
      getConstantIntValue(sizes[rank - 1]) != bType.getDimSize(1))
    return nullptr;
  // The copy is one pass over all of T: worth it only when T's columns are
  // read by at least as many rows of A, over the parallel loops around (a
  // prompt's query tiles against its own keys), not when few rows meet a
  // long T (a decode step, or a prompt chunk, against a KV cache of
  // thousands of positions).
  // Rows: every parallel loop of A that B does not have (M, and the query
  // heads of a group), times the parallel loops around.
  int64_t rows = 1;
  for (auto [i, iter] : llvm::enumerate(op.getIteratorTypesArray()))
    if (iter == utils::IteratorType::parallel &&
        maps[a].isFunctionOfDim(i) && !bMap.isFunctionOfDim(i))
      rows *= ranges[i];
  for (auto forall = op->getParentOfType<scf::ForallOp>(); forall;
       forall = forall->getParentOfType<scf::ForallOp>()) {
    for (auto [lb, ub, step] :
         llvm::zip(forall.getStaticLowerBound(), forall.getStaticUpperBound(),
                   forall.getStaticStep()))
      if (!ShapedType::isDynamic(lb) && !ShapedType::isDynamic(ub) &&
          !ShapedType::isDynamic(step) && step > 0 && ub > lb)
        rows *= llvm::divideCeil(ub - lb, step);
  }
  if (rows < wholeType.getNumElements() / k)
    return nullptr;
  Location loc = op.getLoc();
  Value &pairs = pairCopies[whole];
  if (!pairs)
    pairs = copyIntoPairs(rewriter, loc, whole, func);
  rewriter.setInsertionPoint(op);
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  SmallVector<OpFoldResult> pairOffsets(offsets.begin(), offsets.end());
  SmallVector<OpFoldResult> pairSizes(sizes.begin(), sizes.end());
  pairOffsets[rank - 2] = affine::makeComposedFoldedAffineApply(
      rewriter, loc, getAffineDimExpr(0, rewriter.getContext()).floorDiv(2),
      {kOffset});
  pairSizes[rank - 2] = rewriter.getIndexAttr(k / 2);
  pairOffsets.push_back(zero);
  pairSizes.push_back(rewriter.getIndexAttr(2));
  Value bPairs = tensor::ExtractSliceOp::create(
      rewriter, loc,
      RankedTensorType::get({k / 2, bType.getDimSize(1), 2},
                            bType.getElementType()),
      pairs, pairOffsets, pairSizes, SmallVector<OpFoldResult>(rank + 1, one));
  MLIRContext *ctx = rewriter.getContext();
  unsigned numLoops = op.getNumLoops();
  AffineExpr t = getAffineDimExpr(numLoops, ctx);
  SmallVector<AffineExpr> aExprs(maps[a].getResults());
  aExprs.push_back(t);
  SmallVector<AffineMap> newMaps(3);
  newMaps[a] = AffineMap::get(numLoops + 1, 0, aExprs, ctx);
  newMaps[plan.bInput] = AffineMap::get(
      numLoops + 1, 0, {bMap.getResult(0), bMap.getResult(1), t}, ctx);
  newMaps[2] = AffineMap::get(numLoops + 1, 0, maps[2].getResults(), ctx);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.push_back(utils::IteratorType::reduction);
  SmallVector<Value> inputs(2);
  if (roundedA) {
    // The bf16 values the f32 A holds, rounded again from its source (the
    // same values: rounding to bf16 is idempotent).
    auto bf16Type = RankedTensorType::get(aType.getShape(),
                                          rewriter.getBF16Type());
    SmallVector<AffineMap> identity(
        2, rewriter.getMultiDimIdentityMap(aType.getRank()));
    aValue =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{bf16Type}, ValueRange{roundedA},
            ValueRange{tensor::EmptyOp::create(rewriter, loc, aType.getShape(),
                                               rewriter.getBF16Type())},
            identity,
            SmallVector<utils::IteratorType>(aType.getRank(),
                                             utils::IteratorType::parallel),
            [](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(
                  b, l,
                  arith::TruncFOp::create(b, l, b.getBF16Type(), args[0])
                      .getResult());
            })
            .getResult(0);
  }
  inputs[a] = splitInnermost(rewriter, loc, aValue);
  inputs[plan.bInput] = bPairs;
  auto paired = linalg::GenericOp::create(rewriter, loc, op.getResultTypes(),
                                          inputs, op.getDpsInits(), newMaps,
                                          iterators);
  rewriter.inlineRegionBefore(op.getRegion(), paired.getRegion(),
                              paired.getRegion().begin());
  if (roundedA) {
    // The body read A as f32: it now reads bf16 and extends it.
    Block &body = paired.getRegion().front();
    BlockArgument arg = body.getArgument(a);
    arg.setType(rewriter.getBF16Type());
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&body);
    auto extended =
        arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(), arg);
    rewriter.replaceAllUsesExcept(arg, extended.getResult(), extended);
  }
  paired->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.replaceOp(op, paired.getResults());
  return paired;
}

//===- TileAndVectorizeContractions.cpp - tiled, vectorised contractions -===//
//
// The pass of --tfm-cpu-pipeline that makes the contractions fast:
//
// tfm-tile-and-vectorize-contractions (tensors, before bufferization). Every
// f32 contraction -- linalg.matmul and its transposed-B form, the batch
// matmuls of attention, the Q K^T / P V generics of flash attention -- is
//   1. given a B operand whose innermost dimension is the output's vector
//      dimension N: a transposed B ([N, K], nn.Linear weights, K in Q K^T) is
//      transposed into a fresh tensor first, one pass over B, so that each
//      register tile reads rows of B with unit stride;
//   2. tiled into cache blocks (M, N, K) and, inside, register tiles of
//      `registerRows x registerCols` with a K step of 1;
//   3. vectorised into a vector.contract per register tile, whose accumulator
//      transfer pair is hoisted out of the K loop at tensor level (the loop
//      then carries the accumulator in registers: hoisting after
//      bufferization cannot prove that arguments do not alias);
//   4. followed, inside each cache block, by its elementwise epilogue: the
//      bias add, activation, gating product and residual add that consumed
//      the contraction's result are fused into one generic over the
//      contraction's output space and tiled as the root of the block loop,
//      the contraction and its zero fill fused into each block as producers
//      (EpilogueFusion.cpp). A block is zeroed, accumulated over K and
//      finished while it is in cache; no pass over the whole output is left.
// Tile sizes come from the op's `tfm.cpu_tiling` plan (tfm-cpu-configure,
// derived from the target CPU). Extents the register tile does not divide
// are split first: the bulk gets the full tile, the remainder a tile of its
// own size (rows) or the largest power-of-two width that fits (columns), so
// every tile has a static shape and an odd or prime extent costs only a thin
// strip, not the vector width of the whole op. Cache blocks divide what they
// tile; an extent whose divisors are all far below the planned block is split
// the same way, into full blocks and one smaller block.
//
// A bf16 GEMM whose weight tfm-cpu-pack-weights packed with its K pairs
// interleaved (`bf16_pairs`: AVX512-BF16) walks K two steps at a time: its
// register tile's K step is a pair, A's pair of each row broadcast as one
// 32-bit element, B's pairs of 16 columns loaded as one 64-byte vector, and
// each accumulator vector updated by one x86vector.avx512.dot (`vdpbf16ps`:
// acc += a0 b0 + a1 b1 per lane, the bf16 products exact in f32, inputs
// below the smallest normal bf16 read as zero): twice the multiply-adds of
// an f32 FMA per instruction. A bf16 contraction in a loop whose B is a
// [K, N] slice of a tensor made outside the loops (attention's Q K^T on key
// tiles of K^T, its P V on value tiles of V) takes the same form: that
// tensor is copied into K pairs once, before the loops, and each tile reads
// its slice of the copy.
//
// Fewer than 16 rows against a transposed B (a decode step's projections
// against [out, in] weights) take a second form instead: no copy of B; each
// output is a dot product of two unit-stride rows, accumulated as partial sums
// in a vector<dot-depth> over K and reduced once at the end (K remainders
// with narrower vectors, the last few elements as scalars).
//
// The tiling and vectorising helpers shared with tfm-vectorize-elementwise
// are in TilingUtils.cpp.
//
//===----------------------------------------------------------------------===//
#include "tfm/Pipelines/Passes.h"

#include "PipelinePasses.h"
#include "TilingUtils.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#include "llvm/ADT/bit.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMTILEANDVECTORIZECONTRACTIONS
#include "tfm/Pipelines/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::codegen;

//===----------------------------------------------------------------------===//
// Tiling plan
//===----------------------------------------------------------------------===//

/// The largest divisor of `n` that is at most `cap` (at least 1).
static int64_t largestDivisor(int64_t n, int64_t cap) {
  for (int64_t t = std::min(n, cap); t > 1; --t)
    if (n % t == 0)
      return t;
  return 1;
}

namespace {
/// Which loops of a contraction play M (rows of the register tile), N (its
/// vector dimension, the output's innermost) and K (the reduction walked one
/// step at a time), and which input is B (the one indexed by N).
struct ContractionPlan {
  unsigned m, n, k, bInput;
  bool transposeB;
  /// Few rows against a transposed B: dot products along K instead (see
  /// vectorizeAsDotProducts).
  bool dotProducts = false;
  /// bf16 with K pairs interleaved (`bf16_pairs`): `k` walks the pairs and
  /// `pair`, the innermost loop of A and B, the two steps of each.
  bool pairs = false;
  unsigned pair = 0;
};
} // namespace

/// Fewest output rows for which a transposed B is worth a transposing copy.
static constexpr int64_t kMinRowsToTransposeB = 16;


static std::optional<unsigned> dimPosition(AffineExpr e) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return d.getPosition();
  return std::nullopt;
}

/// Whether `op` is a bf16 GEMM in tfm-cpu-pack-weights' K-pair form: A and
/// B bf16, both with the same reduction loop of extent 2 innermost, B's
/// next-to-innermost the output's innermost (N). Returns that loop.
static std::optional<unsigned> pairLoop(linalg::LinalgOp op,
                                        ArrayRef<AffineMap> maps,
                                        const linalg::ContractionDimensions &dims,
                                        unsigned a, unsigned bInput,
                                        unsigned n) {
  auto isBf16 = [&](unsigned input) {
    return getElementTypeOrSelf(op.getDpsInputOperand(input)->get().getType())
        .isBF16();
  };
  AffineMap aMap = maps[a], bMap = maps[bInput];
  if (!isBf16(a) || !isBf16(bInput) || dims.k.size() != 2 ||
      aMap.getNumResults() < 2 || bMap.getNumResults() < 3)
    return std::nullopt;
  std::optional<unsigned> t = dimPosition(aMap.getResults().back());
  if (!t || dimPosition(bMap.getResults().back()) != t ||
      !llvm::is_contained(dims.k, *t) || op.getStaticLoopRanges()[*t] != 2 ||
      dimPosition(bMap.getResult(bMap.getNumResults() - 2)) != n)
    return std::nullopt;
  return t;
}

static FailureOr<ContractionPlan>
planContraction(linalg::LinalgOp op, const ContractionTiling &tiling) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.hasDynamicShape())
    return failure();
  // f32 accumulators; the operands f32, or bf16/f16 (a half-precision model),
  // extended to f32 as they are loaded into the register tile.
  if (!isF32Accumulation(op))
    return failure();
  if (!linalg::isaContractionOpInterface(op))
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation())
      return failure();
  AffineMap out = maps[2];
  if (out.getNumResults() == 0)
    return failure();

  ContractionPlan plan;
  std::optional<unsigned> n = dimPosition(out.getResults().back());
  if (!n || !llvm::is_contained(dims->n, *n))
    return failure();
  plan.n = *n;
  std::optional<unsigned> m;
  for (AffineExpr e : out.getResults())
    if (auto d = dimPosition(e); d && llvm::is_contained(dims->m, *d))
      m = d;
  if (!m)
    return failure();
  plan.m = *m;
  plan.bInput = maps[0].isFunctionOfDim(plan.n) ? 0 : 1;
  unsigned a = 1 - plan.bInput;
  if (maps[a].isFunctionOfDim(plan.n) || !maps[plan.bInput].isFunctionOfDim(plan.n))
    return failure();
  if (tiling.bf16Pairs)
    if (std::optional<unsigned> t =
            pairLoop(op, maps, *dims, a, plan.bInput, plan.n)) {
      plan.pairs = true;
      plan.pair = *t;
    }
  std::optional<unsigned> k;
  for (AffineExpr e : maps[a].getResults())
    if (auto d = dimPosition(e);
        d && llvm::is_contained(dims->k, *d) && !(plan.pairs && *d == plan.pair))
      k = d;
  if (!k)
    return failure();
  plan.k = *k;
  plan.transposeB =
      !plan.pairs &&
      dimPosition(maps[plan.bInput].getResults().back()) != plan.n;
  // Transposing B costs a strided pass over all of B; it pays back only over
  // enough rows. A decode step (one row against an [out, in] weight) keeps
  // the scalar loop, whose inner K loop already reads both operands with unit
  // stride: measured 1.9 ms against 14 ms with the transpose (1x768x3072).
  if (plan.transposeB) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t rows = 1;
    for (unsigned d : dims->m)
      rows *= ranges[d];
    if (rows < kMinRowsToTransposeB) {
      // Dot products need K innermost in both operands (unit-stride rows of
      // A and of B), a single reduction and enough depth for a vector.
      if (dims->k.size() != 1 ||
          dimPosition(maps[a].getResults().back()) != plan.k ||
          dimPosition(maps[plan.bInput].getResults().back()) != plan.k ||
          ranges[plan.k] < kMinDotDepth)
        return failure();
      plan.dotProducts = true;
    }
  }
  // The K step must be the innermost loop for the accumulator to stay in
  // registers: every contraction tfm emits lists its reductions last.
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  for (unsigned i = plan.k + 1; i < iters.size(); ++i)
    if (iters[i] != utils::IteratorType::reduction)
      return failure();
  return plan;
}

/// Makes N the innermost dimension of B by transposing B into a new tensor.
static void transposeB(RewriterBase &rewriter, linalg::GenericOp op,
                       const ContractionPlan &plan) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap bMap = maps[plan.bInput];
  Value b = op.getDpsInputOperand(plan.bInput)->get();
  auto bType = cast<RankedTensorType>(b.getType());
  unsigned rank = bMap.getNumResults(), nPos = 0;
  for (unsigned i = 0; i < rank; ++i)
    if (dimPosition(bMap.getResult(i)) == plan.n)
      nPos = i;
  SmallVector<int64_t> perm, shape;
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < rank; ++i)
    if (i != nPos)
      perm.push_back(i);
  perm.push_back(nPos);
  for (int64_t p : perm) {
    shape.push_back(bType.getDimSize(p));
    exprs.push_back(bMap.getResult(p));
  }
  maps[plan.bInput] =
      AffineMap::get(bMap.getNumDims(), 0, exprs, rewriter.getContext());
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value init =
      tensor::EmptyOp::create(rewriter, loc, shape, bType.getElementType());
  Value transposed =
      linalg::TransposeOp::create(rewriter, loc, b, init, perm).getResult()[0];
  rewriter.modifyOpInPlace(op, [&] {
    op->setOperand(plan.bInput, transposed);
    op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
}

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

/// Fewest multiply-adds for which a contraction runs on threads: below,
/// waking the other threads costs more than they save (decode steps of small
/// models are dozens of such GEMVs).
static constexpr int64_t kMinParallelMacs = int64_t(1) << 20;

/// Fewest cache blocks an outermost contraction is split into, so that the
/// threads get equal shares (with 2 to 8 threads, at most one block apart).
static constexpr int64_t kMinParallelBlocks = 16;

/// Few rows against a transposed B ([N, K], nn.Linear weights): each output
/// is a dot product of two unit-stride rows, so no transposing copy of B is
/// needed. Every parallel loop but N is tiled by 1 and N by `dotCols` (rows
/// of B sharing each load of A); the K loop then becomes partial sums.
static void vectorizeAsDotProducts(RewriterBase &rewriter,
                                   linalg::GenericOp op,
                                   const ContractionPlan &plan,
                                   const ContractionTiling &tiling) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> sizes(ranges.size(), 1);
  sizes[plan.n] = largestDivisor(ranges[plan.n], tiling.dotCols);
  sizes[plan.k] = 0;
  for (auto [size, range] : llvm::zip(sizes, ranges))
    if (size == range)
      size = 0;
  // The outputs of an outermost one are shared among threads.
  FailureOr<linalg::LinalgOp> tiledOp =
      tile(rewriter, cast<linalg::LinalgOp>(op.getOperation()), sizes,
           /*parallel=*/worthThreads(op, kMinParallelMacs));
  if (failed(tiledOp))
    return;
  vectorizeAsPartialSums(rewriter, *tiledOp, plan.k, tiling.dotDepth);
}

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

/// A pack of `aValue` into `expandedType` panels (transposed by
/// `permutation`) made for another contraction, usable at `op`: one that
/// dominates it, or one whose fresh destination can move up to it with the
/// pack. Equal views (equalViews) are the same A. Null when there is none.
static Value existingPackOfA(RewriterBase &rewriter, Operation *op,
                             Value aValue, RankedTensorType expandedType,
                             ArrayRef<int64_t> permutation) {
  DominanceInfo dominance;
  for (Value view : equalViews(aValue))
    for (Operation *user : view.getUsers()) {
      auto expand = dyn_cast<tensor::ExpandShapeOp>(user);
      if (!expand || expand.getResultType() != expandedType)
        continue;
      for (Operation *expandUser : expand->getUsers()) {
        auto pack = dyn_cast<linalg::TransposeOp>(expandUser);
        if (!pack || pack.getPermutation() != permutation)
          continue;
        if (dominance.properlyDominates(pack.getOperation(), op))
          return pack.getResult()[0];
        auto init = pack.getInit().getDefiningOp<tensor::EmptyOp>();
        if (!init || !init->hasOneUse() ||
            !dominance.properlyDominates(view, op))
          continue;
        rewriter.moveOpBefore(expand, op);
        rewriter.moveOpBefore(init, op);
        rewriter.moveOpBefore(pack, op);
        return pack.getResult()[0];
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
/// row's pair kept together. A pack of the same A that dominates `op` is
/// reused. Returns null when A is not packed.
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
  if (Value shared =
          existingPackOfA(rewriter, op, aValue, expandedType, permutation))
    return shared;
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value expanded = tensor::ExpandShapeOp::create(rewriter, loc, expandedType,
                                                 aValue, reassociation);
  Value init = tensor::EmptyOp::create(rewriter, loc, packedShape,
                                       aType.getElementType());
  return linalg::TransposeOp::create(rewriter, loc, expanded, init,
                                     permutation)
      .getResult()[0];
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
  auto packedType =
      RankedTensorType::get(packedShape, sliceType.getElementType());
  Value packedSlice = tensor::ExtractSliceOp::create(
      rewriter, loc, packedType, packedA, offsets, sizes,
      SmallVector<OpFoldResult>(rank + 1, one));
  // A[m, k(, t)] read as Ap[k, m(, t)].
  SmallVector<AffineMap> maps = tile.getIndexingMapsArray();
  SmallVector<AffineExpr> results(maps[a].getResults());
  std::swap(results[0], results[1]);
  maps[a] = AffineMap::get(maps[a].getNumDims(), 0, results, ctx);
  rewriter.modifyOpInPlace(tile, [&] {
    tile->setOperand(a, packedSlice);
    tile.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
}

/// The register tile `tile` of a K-pair GEMM (plan.pairs: one pair of K
/// steps, `rows` x `cols` outputs) as AVX512-BF16 pair dot products: per row,
/// A's bf16 pair read as one i32 and broadcast; per `width` columns, B's
/// pairs read as one vector<2 width x bf16>; each accumulator vector
/// updated by x86vector.avx512.dot. The accumulator is read and written
/// whole, as the vectoriser's tiles are, so that the pair is hoisted out of
/// the K loop alike. Fails (the tile is left as it is) on shapes it does not
/// cover: columns not a multiple of 4, or other loops not of extent 1.
static LogicalResult vectorizeAsPairDots(RewriterBase &rewriter,
                                         linalg::GenericOp tile,
                                         const ContractionPlan &plan) {
  SmallVector<int64_t> ranges = tile.getStaticLoopRanges();
  int64_t rows = ranges[plan.m], cols = ranges[plan.n];
  for (auto [i, range] : llvm::enumerate(ranges))
    if (i != plan.m && i != plan.n && i != plan.pair && range != 1)
      return failure();
  if (ranges[plan.pair] != 2)
    return failure();
  int64_t width = cols % 16 == 0 ? 16 : cols % 8 == 0 ? 8 : cols % 4 == 0 ? 4 : 0;
  if (!width)
    return failure();
  unsigned a = 1 - plan.bInput;
  SmallVector<AffineMap> maps = tile.getIndexingMapsArray();
  Value aTile = tile.getDpsInputOperand(a)->get();
  Value bTile = tile.getDpsInputOperand(plan.bInput)->get();
  Value cTile = tile.getDpsInitOperand(0)->get();
  auto aType = cast<RankedTensorType>(aTile.getType());
  auto bType = cast<RankedTensorType>(bTile.getType());
  auto cType = cast<RankedTensorType>(cTile.getType());
  // C's results: M before N, the others of extent 1.
  std::optional<unsigned> mPos, nPos;
  for (auto [pos, e] : llvm::enumerate(maps[2].getResults())) {
    if (dimPosition(e) == plan.m)
      mPos = pos;
    if (dimPosition(e) == plan.n)
      nPos = pos;
  }
  if (!mPos || !nPos || *mPos > *nPos || !cType.hasStaticShape() ||
      cType.getNumElements() != rows * cols ||
      bType.getNumElements() != cols * 2)
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

  // The accumulators, as [rows, cols].
  auto cVectorType = VectorType::get(cType.getShape(), f32);
  SmallVector<Value> cZeros(cType.getRank(), zero);
  Value acc = vector::TransferReadOp::create(
      rewriter, loc, cVectorType, cTile, cZeros,
      /*padding=*/std::nullopt,
      SmallVector<bool>(cType.getRank(), true));
  auto rowsType = VectorType::get({rows, cols}, f32);
  acc = vector::ShapeCastOp::create(rewriter, loc, rowsType, acc);

  // B's pairs, `width` columns a vector: the tile is contiguous.
  Value bFlat = tensor::CollapseShapeOp::create(
      rewriter, loc, bTile,
      ArrayRef<ReassociationIndices>{llvm::to_vector(
          llvm::seq<int64_t>(0, bType.getRank()))});
  auto pairsType = VectorType::get({2 * width}, bf16);
  SmallVector<Value> bVectors;
  for (int64_t v = 0; v < cols / width; ++v)
    bVectors.push_back(vector::TransferReadOp::create(
        rewriter, loc, pairsType, bFlat, ValueRange{index(2 * width * v)},
        /*padding=*/std::nullopt, ArrayRef<bool>{true}));

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
    for (int64_t v = 0; v < cols / width; ++v) {
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

/// Tiles `op`, whose M and N extents are multiples of `rows` and `cols`, into
/// cache blocks and `rows x cols` register tiles, and vectorises the latter.
/// The cache blocks of an outermost contraction are iterations of one
/// scf.forall over M, N and the batch loops (threads share the blocks); the
/// K blocks and register tiles are scf.for loops inside.
///
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
  // Enough parallel blocks to share among threads: halve the N block, then
  // the M block, until there are kMinParallelBlocks (or the register tile).
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

/// Any M and N at full register-tile size: the bulk of M (a multiple of the
/// tile rows) and of N (a multiple of the full vector width) gets the full
/// register tile; what is left over along M gets a tile of the remaining
/// rows, along N the largest power-of-two width that fits, recursively. So
/// V = 50257 runs 50256 columns at full width and one as a narrow strip.
static void tileAndVectorizeAnySize(RewriterBase &rewriter,
                                    linalg::LinalgOp op,
                                    const ContractionPlan &plan,
                                    const ContractionTiling &tiling,
                                    linalg::GenericOp epilogue);

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

/// Any M and N at full register-tile size: the bulk of M (a multiple of the
/// tile rows) and of N (a multiple of the full vector width) gets the full
/// register tile; what is left over along M gets a tile of the remaining
/// rows, along N the largest power-of-two width that fits, recursively. So
/// V = 50257 runs 50256 columns at full width and one as a narrow strip.
static void tileAndVectorizeAnySize(RewriterBase &rewriter,
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

/// A bf16 contraction inside loops whose B is a [K, N] slice of a tensor T
/// [.., K', N] made outside them, in the K-pair form: T copied once, where it
/// is made, into [.., K'/2, N, 2] (`pairCopies` holds the copies made so
/// far), B read as the matching slice of that copy, A's innermost (K)
/// dimension read as [K/2, 2], and a new innermost reduction loop t of extent
/// 2 (k = 2 q + t). Attention's Q K^T (each key tile a slice of K^T [B, H,
/// dh, S], K = K' = dh) and P V (each value tile rows [ks, ks + tk) of V [B,
/// H, S, dv], its K offset ks a multiple of the key tile) take this form.
/// The copy is one pass over T for all the tiles that read it, made only
/// where enough rows of A read T to repay it. An f32 A whose values were
/// rounded through bf16 (roundedThroughBf16) is read as bf16. Returns the
/// new op, or null where it does not apply.
static linalg::GenericOp
pairSlicedB(RewriterBase &rewriter, linalg::GenericOp op,
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
  if (!pairs) {
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
    pairs = linalg::TransposeOp::create(rewriter, loc, expanded, init,
                                        permutation)
                .getResult()[0];
  }
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

static void tileAndVectorize(RewriterBase &rewriter, linalg::LinalgOp op,
                             ContractionPlan plan,
                             const ContractionTiling &tiling,
                             llvm::DenseMap<Value, Value> &pairCopies) {
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::GenericOp> generic =
      isa<linalg::GenericOp>(op) ? cast<linalg::GenericOp>(op)
                                 : linalg::generalizeNamedOp(rewriter, op);
  if (failed(generic))
    return;
  if (plan.dotProducts)
    return vectorizeAsDotProducts(rewriter, *generic, plan, tiling);
  if (plan.transposeB)
    transposeB(rewriter, *generic, plan);
  else if (tiling.bf16Pairs && !plan.pairs)
    if (linalg::GenericOp paired =
            pairSlicedB(rewriter, *generic, plan, pairCopies)) {
      FailureOr<ContractionPlan> pairPlan = planContraction(paired, tiling);
      if (failed(pairPlan) || !pairPlan->pairs)
        return; // Left as a plain loop nest: not expected.
      generic = paired;
      plan = *pairPlan;
    }
  auto contraction = cast<linalg::LinalgOp>(generic->getOperation());
  // Elementwise consumers run on each cache block (EpilogueFusion.cpp).
  linalg::GenericOp epilogue = formEpilogue(rewriter, contraction);
  tileAndVectorizeAnySize(rewriter, contraction, plan, tiling, epilogue);
}

static void addCanonicalizationPatterns(MLIRContext *ctx,
                                        RewritePatternSet &patterns) {
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
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

/// A register tile whose N is not a power of two (AVX2's 4 x 24: three
/// vectors per row) split into one contraction per row and per power-of-two
/// piece of N (N's largest power-of-two divisor), with the reads of its B
/// row and accumulator and the write of its accumulator split to match,
/// before the accumulators are hoisted: the K loop then carries one value
/// per register, <8 x f32> each. Left whole, LLVM legalises <24 x f32> by
/// halving it into twelves and widening those (shuffles and half-register
/// inserts in the K loop), and pieces per N alone (all rows of one piece
/// first) keep every row's broadcast live at once: 17 registers for 16,
/// spills. Row by row, a broadcast dies after its row's three FMAs. Only
/// the operands indexed by N are split: A's column of rows stays whole.
static LogicalResult splitNonPowerOfTwoTiles(func::FuncOp func) {
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

//===----------------------------------------------------------------------===//
// Passes
//===----------------------------------------------------------------------===//

namespace {
struct TileAndVectorizeContractionsPass
    : public tfm::impl::TfmTileAndVectorizeContractionsBase<
          TileAndVectorizeContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    struct Work {
      linalg::LinalgOp op;
      ContractionPlan plan;
      ContractionTiling tiling;
    };
    // Zero fills behind the reshapes and paddings of packed outputs become
    // plain fills of the contraction's output shape, which the epilogue
    // tiling fuses into each block with the contraction.
    {
      RewritePatternSet patterns(ctx);
      linalg::FillOp::getCanonicalizationPatterns(patterns, ctx);
      tensor::EmptyOp::getCanonicalizationPatterns(patterns, ctx);
      tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }
    SmallVector<Work> work;
    func.walk([&](linalg::LinalgOp op) {
      // Only contractions tfm-cpu-configure planned.
      std::optional<ContractionTiling> tiling = tilingFromAttr(op);
      if (!tiling)
        return;
      // GEMMs planned for AMX tiles are tfm-cpu-amx-contractions'.
      if (matchAmxContraction(op))
        return;
      if (FailureOr<ContractionPlan> plan = planContraction(op, *tiling);
          succeeded(plan))
        work.push_back({op, *plan, *tiling});
    });
    if (work.empty())
      return;
    IRRewriter rewriter(ctx);
    // Pair copies of tensors that bf16 contractions in loops read slices of.
    llvm::DenseMap<Value, Value> pairCopies;
    for (Work &w : work)
      tileAndVectorize(rewriter, w.op, w.plan, w.tiling, pairCopies);

    // The vectoriser emits broadcasting reads, a multiply and a
    // multi_reduction over the (unit) K step: fold them back into one
    // vector.contract (A as [rows x 1], B as [1 x cols]) that lowers to an
    // outer product. Done before the canonicalizer, which would otherwise
    // fold the unit reduction away into a shape_cast. As in the transform
    // dialect's vectorize_children_and_apply_patterns.
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateVectorReductionToContractPatterns(patterns);
      vector::populateSinkVectorOpsPatterns(patterns);
      vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
      vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
      tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }
    // What is left of multi_reductions are the final sums of dot products
    // (vectorizeAsPartialSums): one vector.reduction per output. Those may
    // reassociate -- the partial sums already did -- so LLVM adds the lanes as
    // a tree instead of one by one.
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerReduction);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
      func.walk([&](vector::ReductionOp reduction) {
        reduction.setFastmathAttr(arith::FastMathFlagsAttr::get(
            ctx, reduction.getFastmath() | arith::FastMathFlags::reassoc));
      });
    }
    if (failed(splitNonPowerOfTwoTiles(func)))
      return signalPassFailure();
    // Read and write the accumulator straight from the loop-carried tensor,
    // so the pair is a loop-invariant subset of the K loop...
    RewritePatternSet patterns(ctx);
    tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
    addCanonicalizationPatterns(ctx, patterns);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
    // ...and hoist it, innermost loops first, so the accumulator lives in
    // vector registers across the K loop.
    SmallVector<scf::ForOp> loops;
    func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    // Index arithmetic first: a split register tile addresses its rows
    // past the first through affine.apply ops inside the K loop, which the
    // subset hoisting would otherwise take for loop-variant.
    // Only loops that read or write one of their loop-carried tensors
    // through vector transfers carry accumulators: proving the slices of
    // the loops around them disjoint (ValueBounds, pairwise) found nothing
    // to hoist and took seconds on a 12-layer model with AVX2's split
    // 4 x 24 tiles.
    auto transfersIterArg = [](scf::ForOp loop) {
      return llvm::any_of(loop.getRegionIterArgs(), [&](BlockArgument arg) {
        return llvm::any_of(arg.getUsers(), [](Operation *user) {
          return isa<vector::TransferReadOp, vector::TransferWriteOp>(user);
        });
      });
    };
    for (scf::ForOp loop : loops) {
      auto loopLike = cast<LoopLikeOpInterface>(loop.getOperation());
      moveLoopInvariantCode(loopLike);
      if (transfersIterArg(loop))
        hoistLoopInvariantSubsets(rewriter, loopLike);
    }
    startFirstKBlockFromZero(rewriter, func);
    // The plan is spent; contractions left untiled (other element types)
    // keep no stale attribute. Those for AMX tiles keep theirs, for
    // tfm-cpu-amx-contractions after bufferization.
    func.walk([](Operation *op) {
      if (!matchAmxContraction(op))
        op->removeAttr(kCpuTilingAttrName);
    });
  }
};
} // namespace

//===- ContractionPlanning.cpp - which form each contraction takes --------===//
//
// Part of tfm-tile-and-vectorize-contractions (the pass is in
// TileAndVectorizeContractions.cpp). Reads each contraction's loops against
// its `tfm.cpu_tiling` plan -- which loops play M, N and K, which input is
// B, whether B must be transposed, whether few rows take dot products, and
// whether a bf16 GEMM walks K in pairs (planContraction) -- and hands it to
// its form (tileAndVectorize): the dot-product form, which needs no
// register tiles, is here; B copied into K pairs in Bf16PairForm.cpp; cache
// blocks and register tiles in RegisterTiles.cpp. Apart from those so that
// the decisions read in one place, without the IR each form builds.
//
//===----------------------------------------------------------------------===//
#include "TileAndVectorizeContractions.h"
#include "TilingUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::codegen;

//===----------------------------------------------------------------------===//
// Tiling plan
//===----------------------------------------------------------------------===//

int64_t codegen::largestDivisor(int64_t n, int64_t cap) {
  for (int64_t t = std::min(n, cap); t > 1; --t)
    if (n % t == 0)
      return t;
  return 1;
}

/// Fewest output rows for which a transposed B is worth a transposing copy.
static constexpr int64_t kMinRowsToTransposeB = 16;

std::optional<unsigned> codegen::dimPosition(AffineExpr e) {
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
FailureOr<ContractionPlan>
codegen::planContraction(linalg::LinalgOp op,
                         const ContractionTiling &tiling) {
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

void codegen::tileAndVectorize(RewriterBase &rewriter, linalg::LinalgOp op,
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

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
// This file holds the pass: it collects the planned contractions, hands each
// to its form and, once all are vectorised, folds the register tiles into
// vector.contract ops and hoists their accumulators out of the K loops. The
// plan and the choice of form are in ContractionPlanning.cpp, cache blocks
// and register tiles in RegisterTiles.cpp, the bf16 K-pair form in
// Bf16PairForm.cpp (what these share: TileAndVectorizeContractions.h), the
// epilogues in EpilogueFusion.cpp and the first K block in FirstKBlock.cpp.
// The tiling and vectorising helpers shared with tfm-vectorize-elementwise
// are in TilingUtils.cpp.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "CpuPlan.h"
#include "TileAndVectorizeContractions.h"
#include "TilingUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMTILEANDVECTORIZECONTRACTIONS
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::codegen;

static void addCanonicalizationPatterns(MLIRContext *ctx,
                                        RewritePatternSet &patterns) {
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
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
    // 4 x 24 tiles. The accumulators themselves are proven apart by their
    // constant offsets (HoistAccumulators.cpp).
    auto transfersIterArg = [](scf::ForOp loop) {
      return llvm::any_of(loop.getRegionIterArgs(), [&](BlockArgument arg) {
        return llvm::any_of(arg.getUsers(), [](Operation *user) {
          return isa<vector::TransferReadOp, vector::TransferWriteOp>(user);
        });
      });
    };
    for (scf::ForOp loop : loops) {
      moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
      if (transfersIterArg(loop))
        hoistAccumulators(rewriter, loop);
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

//===- CpuCodegen.cpp - tiled, vectorised contractions for the host CPU ---===//
//
// Two passes of --tfm-cpu-pipeline that make the contractions fast:
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
//      bufferization cannot prove that arguments do not alias).
// Tile sizes are divisors of the static extents (powers of two for the
// vector width), never more than the configured sizes, so every tile has a static shape and no padding, peeling
// or masking is needed: a prime extent just gets a narrower tile.
//
// tfm-lower-vectors (buffers): vector.contract -> outer products -> vector.fma,
// n-D transfers -> 1-D loads/stores, the rest of the vector dialect to the
// 1-D form convert-vector-to-llvm emits as SIMD instructions.
//
//===----------------------------------------------------------------------===//
#include "PipelinePasses.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

using namespace mlir;
using namespace mlir::tfm;

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

/// The largest power of two that divides `n` and is at most `cap`. Vector
/// widths that are not powers of two (48, 96) legalise badly in LLVM: a 4x48
/// register tile measured 15 times slower than 4x64.
static int64_t largestPowerOfTwoDivisor(int64_t n, int64_t cap) {
  int64_t t = 1;
  while (t * 2 <= cap && n % (t * 2) == 0)
    t *= 2;
  return t;
}

/// The largest multiple of `inner` that divides `n` and is at most
/// max(cap, inner); `inner` divides `n`.
static int64_t blockSize(int64_t n, int64_t inner, int64_t cap) {
  for (int64_t t = std::max(cap, inner) / inner * inner; t > inner; t -= inner)
    if (n % t == 0)
      return t;
  return inner;
}

namespace {
/// Which loops of a contraction play M (rows of the register tile), N (its
/// vector dimension, the output's innermost) and K (the reduction walked one
/// step at a time), and which input is B (the one indexed by N).
struct ContractionPlan {
  unsigned m, n, k, bInput;
  bool transposeB;
};
} // namespace

/// Fewest output rows for which a transposed B is worth a transposing copy.
static constexpr int64_t kMinRowsToTransposeB = 16;

static std::optional<unsigned> dimPosition(AffineExpr e) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return d.getPosition();
  return std::nullopt;
}

static FailureOr<ContractionPlan> planContraction(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.hasDynamicShape())
    return failure();
  // Mixed-precision contractions keep the scalar loops: they are rare on the
  // CPU path and the register tile below is tuned for f32.
  for (Value v : op->getOperands())
    if (!getElementTypeOrSelf(v.getType()).isF32())
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
  std::optional<unsigned> k;
  for (AffineExpr e : maps[a].getResults())
    if (auto d = dimPosition(e); d && llvm::is_contained(dims->k, *d))
      k = d;
  if (!k)
    return failure();
  plan.k = *k;
  plan.transposeB = dimPosition(maps[plan.bInput].getResults().back()) != plan.n;
  // Transposing B costs a strided pass over all of B; it pays back only over
  // enough rows. A decode step (one row against an [out, in] weight) keeps
  // the scalar loop, whose inner K loop already reads both operands with unit
  // stride: measured 1.9 ms against 14 ms with the transpose (1x768x3072).
  if (plan.transposeB) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t rows = 1;
    for (unsigned d : dims->m)
      rows *= ranges[d];
    if (rows < kMinRowsToTransposeB)
      return failure();
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

/// Tiles `op` with `sizes` (0: not tiled) and returns the tiled op.
static FailureOr<linalg::LinalgOp> tile(RewriterBase &rewriter,
                                        linalg::LinalgOp op,
                                        ArrayRef<int64_t> sizes) {
  if (llvm::all_of(sizes, [](int64_t s) { return s == 0; }))
    return op;
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled) || tiled->tiledOps.size() != 1)
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  auto result = dyn_cast<linalg::LinalgOp>(tiled->tiledOps.front());
  if (!result)
    return failure();
  return result;
}

static void tileAndVectorize(RewriterBase &rewriter, linalg::LinalgOp op,
                             const ContractionPlan &plan,
                             const ContractionTiling &tiling) {
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::GenericOp> generic =
      isa<linalg::GenericOp>(op) ? cast<linalg::GenericOp>(op)
                                 : linalg::generalizeNamedOp(rewriter, op);
  if (failed(generic))
    return;
  if (plan.transposeB)
    transposeB(rewriter, *generic, plan);

  SmallVector<int64_t> ranges = generic->getStaticLoopRanges();
  int64_t rows = largestDivisor(ranges[plan.m], tiling.registerRows);
  int64_t cols = largestPowerOfTwoDivisor(ranges[plan.n], tiling.registerCols);
  // Cache blocks: every loop but M, N and K is tiled by 1.
  SmallVector<int64_t> block(ranges.size(), 1), reg(ranges.size(), 0);
  block[plan.m] = blockSize(ranges[plan.m], rows, tiling.blockRows);
  block[plan.n] = blockSize(ranges[plan.n], cols, tiling.blockCols);
  block[plan.k] = largestDivisor(ranges[plan.k], tiling.blockDepth);
  for (auto [size, range] : llvm::zip(block, ranges))
    if (size == range)
      size = 0;
  reg[plan.m] = rows == (block[plan.m] ? block[plan.m] : ranges[plan.m]) ? 0 : rows;
  reg[plan.n] = cols == (block[plan.n] ? block[plan.n] : ranges[plan.n]) ? 0 : cols;
  reg[plan.k] = (block[plan.k] ? block[plan.k] : ranges[plan.k]) == 1 ? 0 : 1;

  FailureOr<linalg::LinalgOp> blocked =
      tile(rewriter, cast<linalg::LinalgOp>(generic->getOperation()), block);
  if (failed(blocked))
    return;
  FailureOr<linalg::LinalgOp> registerTile = tile(rewriter, *blocked, reg);
  if (failed(registerTile))
    return;
  rewriter.setInsertionPoint(*registerTile);
  FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
      rewriter, *registerTile, /*inputVectorSizes=*/{},
      /*inputScalableVecDims=*/{}, /*vectorizeNDExtract=*/false,
      /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/false);
  if (succeeded(vectorized))
    rewriter.replaceOp(*registerTile, vectorized->replacements);
}

static void addCanonicalizationPatterns(MLIRContext *ctx,
                                        RewritePatternSet &patterns) {
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
}

namespace {
/// acc + a * b on vectors -> vector.fma(a, b, acc). A register tile with a K
/// step of 1 vectorises to exactly this (the unit-K vector.contract folds to
/// a multiply and an add), and LLVM does not fuse a separate fmul and fadd
/// without fast-math flags. The fused form rounds once instead of twice.
struct FuseMulAddIntoFMA : OpRewritePattern<arith::AddFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::AddFOp add,
                                PatternRewriter &rewriter) const override {
    if (!isa<VectorType>(add.getType()))
      return failure();
    for (unsigned i = 0; i < 2; ++i) {
      auto mul = add->getOperand(i).getDefiningOp<arith::MulFOp>();
      if (!mul || !mul->hasOneUse())
        continue;
      rewriter.replaceOpWithNewOp<vector::FMAOp>(
          add, mul.getLhs(), mul.getRhs(), add->getOperand(1 - i));
      return success();
    }
    return failure();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Passes
//===----------------------------------------------------------------------===//

namespace {
struct TileAndVectorizeContractionsPass
    : public PassWrapper<TileAndVectorizeContractionsPass,
                         OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TileAndVectorizeContractionsPass)
  explicit TileAndVectorizeContractionsPass(const ContractionTiling &tiling)
      : tiling(tiling) {}
  StringRef getArgument() const final {
    return "tfm-tile-and-vectorize-contractions";
  }
  StringRef getDescription() const final {
    return "Tiles f32 contractions into cache blocks and register tiles and "
           "vectorises the register tiles";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<affine::AffineDialect, arith::ArithDialect,
                    linalg::LinalgDialect, scf::SCFDialect,
                    tensor::TensorDialect, vector::VectorDialect>();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<std::pair<linalg::LinalgOp, ContractionPlan>> work;
    func.walk([&](linalg::LinalgOp op) {
      if (FailureOr<ContractionPlan> plan = planContraction(op);
          succeeded(plan))
        work.push_back({op, *plan});
    });
    if (work.empty())
      return;
    IRRewriter rewriter(ctx);
    for (auto &[op, plan] : work)
      tileAndVectorize(rewriter, op, plan, tiling);

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
    for (scf::ForOp loop : loops)
      hoistLoopInvariantSubsets(
          rewriter, cast<LoopLikeOpInterface>(loop.getOperation()));
  }

  ContractionTiling tiling;
};

struct LowerVectorsPass
    : public PassWrapper<LowerVectorsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerVectorsPass)
  StringRef getArgument() const final { return "tfm-lower-vectors"; }
  StringRef getDescription() const final {
    return "Lowers vector contractions to vector.fma and n-D transfers to 1-D "
           "loads and stores";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<affine::AffineDialect, arith::ArithDialect,
                    memref::MemRefDialect, scf::SCFDialect,
                    vector::VectorDialect>();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    auto apply = [&](function_ref<void(RewritePatternSet &)> populate) {
      RewritePatternSet patterns(ctx);
      populate(patterns);
      return applyPatternsGreedily(func, std::move(patterns));
    };
    // Contractions become one outer product per K step, each a vector.fma
    // per row of the register tile.
    if (failed(apply([](RewritePatternSet &p) {
          p.add<FuseMulAddIntoFMA>(p.getContext());
          vector::populateCastAwayVectorLeadingOneDimPatterns(p);
          vector::populateVectorContractLoweringPatterns(
              p, vector::VectorContractLowering::OuterProduct);
          vector::populateVectorTransferPermutationMapLoweringPatterns(p);
          vector::populateVectorMultiReductionLoweringPatterns(
              p, vector::VectorMultiReductionLowering::InnerParallel);
          vector::populateVectorOuterProductLoweringPatterns(p);
        })))
      return signalPassFailure();
    // n-D transfers unrolled into 1-D ones.
    if (failed(apply([](RewritePatternSet &p) {
          populateVectorToSCFConversionPatterns(
              p, VectorTransferToSCFOptions().enableFullUnroll().setTargetRank(
                     1));
        })))
      return signalPassFailure();
    if (failed(apply([](RewritePatternSet &p) {
          vector::populateVectorTransferLoweringPatterns(p,
                                                         /*maxTransferRank=*/1);
          vector::populateVectorTransferPermutationMapLoweringPatterns(p);
          vector::populateVectorShapeCastLoweringPatterns(p);
          vector::populateVectorTransposeLoweringPatterns(
              p, vector::VectorTransposeLowering::Shuffle1D);
          vector::populateVectorBroadcastLoweringPatterns(p);
          vector::populateVectorOuterProductLoweringPatterns(p);
        })))
      return signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass>
mlir::tfm::createTileAndVectorizeContractionsPass(const ContractionTiling &t) {
  return std::make_unique<TileAndVectorizeContractionsPass>(t);
}

std::unique_ptr<Pass> mlir::tfm::createLowerVectorsPass() {
  return std::make_unique<LowerVectorsPass>();
}

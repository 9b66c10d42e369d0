//===- TilingUtils.cpp - tiling and vectorising helpers of the CPU codegen ===//
//
// The helpers TilingUtils.h declares for the contraction code generator,
// the elementwise and reduction vectoriser and the weight packer; their
// contracts are documented there.
//
//===----------------------------------------------------------------------===//
#include "TilingUtils.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace mlir::tfm;

int64_t codegen::blockSize(int64_t n, int64_t inner, int64_t cap) {
  for (int64_t t = std::max(cap, inner) / inner * inner; t > inner; t -= inner)
    if (n % t == 0)
      return t;
  return inner;
}

FailureOr<linalg::LinalgOp> codegen::tile(RewriterBase &rewriter,
                                          linalg::LinalgOp op,
                                          ArrayRef<int64_t> sizes,
                                          bool parallel) {
  if (llvm::all_of(sizes, [](int64_t s) { return s == 0; }))
    return op;
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  if (parallel)
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
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

std::pair<linalg::LinalgOp, linalg::LinalgOp>
codegen::splitOffRemainder(RewriterBase &rewriter, linalg::LinalgOp op,
                           unsigned dim, int64_t tileSize) {
  int64_t extent = op.getStaticLoopRanges()[dim];
  int64_t bulk = extent / tileSize * tileSize;
  if (bulk == extent || bulk == 0)
    return {op, nullptr};
  rewriter.setInsertionPoint(op);
  auto [head, tail] =
      linalg::splitOp(rewriter, cast<TilingInterface>(op.getOperation()), dim,
                      rewriter.getIndexAttr(bulk));
  return {dyn_cast_or_null<linalg::LinalgOp>(head.getOperation()),
          dyn_cast_or_null<linalg::LinalgOp>(tail.getOperation())};
}

bool codegen::worthThreads(linalg::LinalgOp op, int64_t minWork) {
  int64_t work = 1;
  for (int64_t range : op.getStaticLoopRanges())
    work = range > 0 && work <= (int64_t(1) << 40) / range ? work * range
                                                           : work;
  return work >= minWork && isOutsideParallelLoops(op);
}

bool codegen::isF32Accumulation(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 ||
      !getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()).isF32())
    return false;
  return llvm::all_of(op.getDpsInputOperands(), [](OpOperand *input) {
    Type type = getElementTypeOrSelf(input->get().getType());
    return type.isF32() || type.isBF16() || type.isF16();
  });
}

// Nested parallel loops would only add fork costs: only an op outside every
// parallel loop may make its outermost tile loop the parallel one. An op in
// a sequential loop may: the MoE lowering's expert GEMMs, inside the loop
// over experts, would otherwise run on one thread (two threads made a
// Mixtral's f32 prefill 10% faster, not 2x).
bool codegen::isOutsideParallelLoops(Operation *op) {
  return !op->getParentOfType<scf::ForallOp>() &&
         !op->getParentOfType<scf::ParallelOp>();
}

bool codegen::isWideningTranspose(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return false;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!maps[0].isPermutation() || !maps[1].isIdentity())
    return false;
  Block &body = *op.getBody();
  auto ext = dyn_cast<arith::ExtFOp>(body.front());
  return ext && ext.getIn() == body.getArgument(0) &&
         body.getOperations().size() == 2 &&
         body.getTerminator()->getOperand(0) == ext.getResult();
}

void codegen::vectorizeInPlace(RewriterBase &rewriter, Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp)
    return;
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
      rewriter, op, /*inputVectorSizes=*/{},
      /*inputScalableVecDims=*/{}, /*vectorizeNDExtract=*/false,
      /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/false);
  if (succeeded(vectorized))
    rewriter.replaceOp(op, vectorized->replacements);
}

/// Whether every result of `op` is reduced by one combiner with a neutral
/// element (add, mul, max, ...): what partial sums start from. A body such as
/// `acc - x * w` has none and keeps its scalar loop.
static bool hasNeutralCombiners(linalg::LinalgOp op) {
  for (unsigned i = 0, e = op.getNumDpsInits(); i < e; ++i) {
    SmallVector<Operation *, 4> combiners;
    if (!matchReduction(op.getRegionOutputArgs(), i, combiners) ||
        combiners.size() != 1 || !arith::getNeutralElement(combiners.front()))
      return false;
  }
  return true;
}

// A vector<width> accumulator per output walks K `width` elements at a time
// (loaded with unit stride from both operands), then one reduction per
// output. A K that `width` does not divide is split: the remainder goes
// through the same scheme with a narrower width, and what is left under
// kMinDotDepth stays a scalar loop.
void codegen::vectorizeAsPartialSums(RewriterBase &rewriter,
                                     linalg::LinalgOp op, unsigned k,
                                     int64_t depth) {
  if (!hasNeutralCombiners(op))
    return;
  int64_t extent = op.getStaticLoopRanges()[k];
  int64_t width = int64_t(llvm::bit_floor(uint64_t(std::min(depth, extent))));
  if (width < kMinDotDepth)
    return;
  int64_t head = extent / width * width;
  TilingInterface body = cast<TilingInterface>(op.getOperation()), tail;
  if (head < extent) {
    rewriter.setInsertionPoint(op);
    std::tie(body, tail) = linalg::splitOp(rewriter, body, k,
                                           rewriter.getIndexAttr(head));
    if (!body)
      return;
  }
  auto partial = dyn_cast<PartialReductionOpInterface>(body.getOperation());
  if (!partial)
    return;
  SmallVector<OpFoldResult> sizes(op.getNumLoops(), rewriter.getIndexAttr(0));
  sizes[k] = rewriter.getIndexAttr(width);
  rewriter.setInsertionPoint(body);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileReductionUsingScf(rewriter, partial, sizes);
  if (failed(tiled))
    return;
  rewriter.replaceOp(body, tiled->replacements);
  // The identity fill, the accumulating body and the final reduction are all
  // vectorised, so the partial-sum tensor folds away into registers.
  for (Value init : tiled->initialValues)
    vectorizeInPlace(rewriter, init.getDefiningOp());
  for (Operation *tiledOp : tiled->tiledOps)
    vectorizeInPlace(rewriter, tiledOp);
  for (Operation *merge : tiled->mergeOps)
    vectorizeInPlace(rewriter, merge);
  if (auto rest = dyn_cast_or_null<linalg::LinalgOp>(tail.getOperation()))
    vectorizeAsPartialSums(rewriter, rest, k, extent - head);
}

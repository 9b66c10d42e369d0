//===- LowerVectors.cpp - vector dialect to 1-D SIMD form for the CPU -----===//
//
// tfm-lower-vectors (buffers): vector.contract -> outer products -> vector.fma,
// n-D transfers -> 1-D loads/stores, the rest of the vector dialect to the
// 1-D form convert-vector-to-llvm emits as SIMD instructions.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "CpuPlan.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMLOWERVECTORS
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

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

namespace {
/// Multi-reductions along the innermost dimension (a softmax row's max and
/// sum over a flash-attention key tile, the last step of a norm's partial
/// sums) become one vector.reduction per row. The InnerParallel lowering used
/// for everything else would move that dimension outermost and combine its
/// elements one at a time: a chain of 64 scalar maxima per row of a key
/// tile, which was half the time of GPT-2's attention. A vector.reduction
/// reduces whole registers, then the lanes as a tree; reassociating is exact
/// for max/min and, for sums, the order the partial sums already chose.
static LogicalResult lowerInnermostReductions(func::FuncOp func) {
  SmallVector<Operation *> rowReductions;
  func.walk([&](vector::MultiDimReductionOp op) {
    SmallVector<bool> mask = op.getReductionMask();
    if (!mask.empty() && mask.back() &&
        op.getSourceVectorType().getShape().back() > 1)
      rowReductions.push_back(op);
  });
  if (rowReductions.empty())
    return success();
  llvm::DenseSet<Operation *> earlier;
  func.walk([&](vector::ReductionOp op) { earlier.insert(op); });
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  vector::populateVectorMultiReductionLoweringPatterns(
      patterns, vector::VectorMultiReductionLowering::InnerReduction);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  if (failed(applyOpPatternsGreedily(rowReductions, std::move(patterns),
                                     config)))
    return failure();
  func.walk([&](vector::ReductionOp reduction) {
    if (!earlier.contains(reduction))
      reduction.setFastmathAttr(arith::FastMathFlagsAttr::get(
          ctx, reduction.getFastmath() | arith::FastMathFlags::reassoc));
  });
  return success();
}

struct LowerVectorsPass
    : public tfm::impl::TfmLowerVectorsBase<LowerVectorsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    auto apply = [&](function_ref<void(RewritePatternSet &)> populate) {
      RewritePatternSet patterns(ctx);
      populate(patterns);
      return applyPatternsGreedily(func, std::move(patterns));
    };
    if (failed(lowerInnermostReductions(func)))
      return signalPassFailure();
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

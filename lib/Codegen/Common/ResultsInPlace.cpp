//===- ResultsInPlace.cpp - results computed in the caller's buffer -------===//
//
// After the results of --tfm-cpu-pipeline's entries became out-parameters
// (tfm-results-in-place): a result computed in a buffer of another shape (a
// [M, N] GEMM output returned as [1, M, N]) is computed in the caller's
// buffer, reshaped, instead of being copied into it at the end.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/Common/Passes.h"

#include "tfm/Dialect/Tfm/IR/TfmAttrNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMRESULTSINPLACE
#include "tfm/Codegen/Common/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// memref.copy (reshape (alloc)) -> out-parameter, the alloc read and written
/// only before the copy: the alloc becomes the inverse reshape of the
/// out-parameter and the copy goes. buffer-results-to-out-params does this
/// (hoist-static-allocs) only for a result that is the alloc itself; every
/// tfm projection's result is a reshape of one (the GEMM works on
/// [tokens, features]), and an LM head's copy is a pass over all logits.
struct ReshapedResultInPlace : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    auto target = dyn_cast<BlockArgument>(copy.getTarget());
    auto targetType = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (!target || !targetType || !targetType.getLayout().isIdentity() ||
        !target.hasOneUse() || !target.getOwner()->isEntryBlock() ||
        !isa<func::FuncOp>(target.getOwner()->getParentOp()))
      return failure();
    // The reshapes from the buffer to the copied value (a packed GEMM's
    // [M, N/nr, nr] -> [M, N] -> [1, M, N]), each read only by the next.
    SmallVector<Operation *> reshapes;
    Value source = copy.getSource();
    while (auto *def = source.getDefiningOp()) {
      if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def) ||
          !def->hasOneUse())
        break;
      reshapes.push_back(def);
      source = def->getOperand(0);
    }
    auto alloc = source.getDefiningOp<memref::AllocOp>();
    if (reshapes.empty() || !alloc || alloc->getBlock() != copy->getBlock() ||
        !alloc.getType().hasStaticShape())
      return failure();
    // Nothing may touch the buffer after the copy but its deallocation.
    SmallVector<Operation *> deallocs;
    for (Operation *user : alloc->getUsers()) {
      if (isa<memref::DeallocOp>(user)) {
        deallocs.push_back(user);
        continue;
      }
      Operation *ancestor = copy->getBlock()->findAncestorOpInBlock(*user);
      if (user != reshapes.back() &&
          (!ancestor || !ancestor->isBeforeInBlock(copy)))
        return failure();
    }
    // The out-parameter viewed in the buffer's shape: the reshapes undone,
    // last first.
    rewriter.setInsertionPoint(alloc);
    Value view = target;
    SmallVector<Operation *> created;
    for (Operation *reshape : reshapes) {
      if (auto expand = dyn_cast<memref::ExpandShapeOp>(reshape)) {
        view = memref::CollapseShapeOp::create(
            rewriter, alloc.getLoc(), view, expand.getReassociationIndices());
      } else {
        auto collapse = cast<memref::CollapseShapeOp>(reshape);
        view = memref::ExpandShapeOp::create(
            rewriter, alloc.getLoc(), collapse.getSrcType().getShape(), view,
            collapse.getReassociationIndices());
      }
      created.push_back(view.getDefiningOp());
      if (view.getType() != reshape->getOperand(0).getType()) {
        for (Operation *op : llvm::reverse(created))
          rewriter.eraseOp(op);
        return failure();
      }
    }
    rewriter.eraseOp(copy);
    for (Operation *reshape : reshapes)
      rewriter.eraseOp(reshape);
    for (Operation *dealloc : deallocs)
      rewriter.eraseOp(dealloc);
    rewriter.replaceOp(alloc, view);
    return success();
  }
};

struct ResultsInPlacePass
    : public tfm::impl::TfmResultsInPlaceBase<ResultsInPlacePass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ReshapedResultInPlace>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

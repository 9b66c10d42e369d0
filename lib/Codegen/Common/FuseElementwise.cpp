//===- FuseElementwise.cpp - producer fusion that never recomputes --------===//
//
// Upstream's --linalg-fuse-elementwise-ops fuses any single-use producer into
// its consumer generic. When the consumer is a contraction that reads the
// producer's result through a map without one of its loops (the A operand of
// a matmul does not depend on the output column n), the fused producer runs
// once per iteration of that loop: a GELU fused into the down projection
// evaluated tanh d times per element, and the contraction, no longer a plain
// multiply-add, also lost its vectorised code. This pass fuses a producer
// only where the consumer reads each produced element exactly once: the
// operand's indexing map is a permutation of the consumer's loops.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/Common/Passes.h"

#include "tfm/Dialect/Tfm/IR/TfmAttrNames.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFUSEELEMENTWISE
#include "tfm/Codegen/Common/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct FuseElementwisePass
    : public tfm::impl::TfmFuseElementwiseBase<FuseElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer || !producer->hasOneUse())
        return false;
      auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
      return consumer &&
             consumer.getMatchingIndexingMap(fused).isPermutation();
    };
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

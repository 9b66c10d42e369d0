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
#include "PipelinePasses.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {
struct FuseElementwisePass
    : public PassWrapper<FuseElementwisePass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseElementwisePass)
  StringRef getArgument() const final { return "tfm-fuse-elementwise"; }
  StringRef getDescription() const final {
    return "Fuses linalg producers into consumers that read each produced "
           "element once (no recomputation inside contractions)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<affine::AffineDialect, linalg::LinalgDialect,
                    tensor::TensorDialect>();
  }
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

std::unique_ptr<Pass> mlir::tfm::createFuseElementwisePass() {
  return std::make_unique<FuseElementwisePass>();
}

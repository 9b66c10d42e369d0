//===- SequentialSmallForalls.cpp - keep threads for loops worth them -----===//
//
// tfm-sequential-small-foralls (buffers, before the OpenMP conversion): an
// scf.forall with fewer than kMinParallelIterations iterations becomes an
// scf.for. Waking the other threads for two iterations (flash attention of a
// decode step of a model with two key/value heads, say) costs more than the
// iterations themselves; the GEMM and elementwise code generators already
// decide from their work whether to emit a forall at all, flash attention's
// tile loop cannot (its key loop's length is dynamic).
//
//===----------------------------------------------------------------------===//
#include "PipelinePasses.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

/// Fewest iterations for which an scf.forall runs on threads.
static constexpr int64_t kMinParallelIterations = 4;

/// The forall's iteration count, when static.
static std::optional<int64_t> tripCount(scf::ForallOp forall) {
  int64_t count = 1;
  for (auto [lb, ub, step] :
       llvm::zip(forall.getMixedLowerBound(), forall.getMixedUpperBound(),
                 forall.getMixedStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0)
      return std::nullopt;
    count *= std::max<int64_t>(0, (*u - *l + *s - 1) / *s);
  }
  return count;
}

namespace {
struct SequentialSmallForallsPass
    : public PassWrapper<SequentialSmallForallsPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SequentialSmallForallsPass)
  StringRef getArgument() const final {
    return "tfm-sequential-small-foralls";
  }
  StringRef getDescription() const final {
    return "Turns scf.forall loops of fewer than 4 iterations into scf.for";
  }
  void runOnOperation() override {
    SmallVector<scf::ForallOp> small;
    getOperation()->walk([&](scf::ForallOp forall) {
      std::optional<int64_t> count = tripCount(forall);
      if (count && *count < kMinParallelIterations)
        small.push_back(forall);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp forall : small) {
      rewriter.setInsertionPoint(forall);
      if (failed(scf::forallToForLoop(rewriter, forall)))
        return signalPassFailure();
    }
  }
};
} // namespace

std::unique_ptr<Pass> mlir::tfm::createSequentialSmallForallsPass() {
  return std::make_unique<SequentialSmallForallsPass>();
}

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
#include "tfm/Codegen/CPU/Passes.h"

#include "CpuPlan.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMSEQUENTIALSMALLFORALLS
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

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
    : public tfm::impl::TfmSequentialSmallForallsBase<SequentialSmallForallsPass> {
  using Base::Base;
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

//===- ApproximateMath.cpp - inline polynomial math for the CPU ------------===//
//
// tfm-approximate-math: replaces the f32 transcendental functions tfm's
// lowerings emit (tanh in GELU's tanh form, erf in its exact form, exp in
// softmax, SiLU and the online softmax, log where used) by upstream MLIR's
// polynomial approximations, on scalars and vectors alike. Calls into libm
// (`tanhf`, `erff`, `expf`) are opaque to LLVM's loop vectoriser and cost a
// call per element; the inline polynomials vectorise (measured: GELU over
// 512x3072 elements ~7x faster). The approximations' errors are bounded and
// tested against libm in test/Pipelines/approximate-math-accuracy.mlir:
// absolute error <= 1e-6 for tanh on [-10, 10] and erf on [-6, 6], relative
// error <= 1e-6 for exp on [-87, 88] (measured maxima 2.4e-7, 2.4e-7 and
// 1.2e-7: about 2 ulp); far inside the 1e-4/1e-3 tolerance the numerics
// tests hold whole models to.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "CpuPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMAPPROXIMATEMATH
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

/// Whether the CPU the enclosing module is planned for (tfm.cpu_target,
/// from tfm-cpu-configure) has FMA; true without a plan (the host's code).
static bool targetHasFma(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  auto target =
      module ? module->getAttrOfType<DictionaryAttr>(tfm::kCpuTargetAttrName)
             : DictionaryAttr();
  auto fma = target ? target.getAs<BoolAttr>("fma") : BoolAttr();
  return !fma || fma.getValue();
}

namespace {
struct ApproximateMathPass
    : public tfm::impl::TfmApproximateMathBase<ApproximateMathPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // The functions tfm's lowerings emit. Not rsqrt: LLVM lowers it to
    // sqrt + divide, exact and already vectorisable.
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) {
          return llvm::is_contained(
              {math::TanhOp::getOperationName(), math::ErfOp::getOperationName(),
               math::ExpOp::getOperationName(),
               math::ExpM1Op::getOperationName(),
               math::LogOp::getOperationName(),
               math::Log1pOp::getOperationName(),
               math::Log2Op::getOperationName()},
              name);
        });
    // The polynomials are written with math.fma. A target without FMA
    // (cpu=x86-64, sandybridge) would get one libm `fmaf` call per lane
    // for it (an exact fused multiply-add): there they are a multiply and
    // an add instead, as the contractions' vector.fma become there.
    if (!targetHasFma(getOperation()))
      math::populateExpansionPatterns(patterns, {"fma"});
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

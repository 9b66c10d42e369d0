//===- QuantizeWeights.cpp - projection weights held quantized ------------===//
//
// tfm-quantize-weights: marks the weight parameters of tfm.linear and
// tfm.lm_head with tfm.param_quant (see the pass description in
// Passes.td and docs/design.md, "Quantized weights").
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMQUANTIZEWEIGHTS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

/// The weight operand of a projection that reads `use`, and its layout.
static std::optional<WeightLayout> getProjectionLayout(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto linear = dyn_cast<LinearOp>(user))
    if (&use == &linear.getWeightMutable())
      return linear.getLayout();
  if (auto head = dyn_cast<LMHeadOp>(user))
    if (&use == &head.getWeightMutable())
      return head.getLayout();
  return std::nullopt;
}

/// Marks `func`'s quantizable weights; fails on a weight of a type the
/// format cannot hold.
static LogicalResult quantizeWeights(func::FuncOp func, QuantFormat format) {
  if (func.isExternal())
    return success();
  Builder b(func.getContext());
  for (BlockArgument arg : func.getArguments()) {
    if (!func.getArgAttr(arg.getArgNumber(), kParamAttrName) || arg.use_empty())
      continue;
    std::optional<WeightLayout> layout;
    bool projectionsOnly = llvm::all_of(arg.getUses(), [&](OpOperand &use) {
      std::optional<WeightLayout> own = getProjectionLayout(use);
      if (!own || (layout && *layout != *own))
        return false;
      layout = own;
      return true;
    });
    if (!projectionsOnly)
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    if (!type.getElementType().isF32())
      return emitError(arg.getLoc())
             << "tfm-quantize-weights: parameter '" << getParamName(arg)
             << "' is " << type
             << "; " << stringifyQuantFormat(format)
             << " weights are read with f32 activations (quantize an f32 "
                "model: --dtype f32)";
    int64_t k = type.getDimSize(*layout == WeightLayout::out_in ? 1 : 0);
    if (k % 32 != 0)
      continue;
    func.setArgAttr(arg.getArgNumber(), kParamQuantAttrName,
                    WeightQuantAttr::get(func.getContext(), format,
                                         *layout == WeightLayout::out_in));
  }
  return success();
}

namespace {
struct QuantizeWeightsPass
    : public tfm::impl::TfmQuantizeWeightsBase<QuantizeWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    std::optional<QuantFormat> format = symbolizeQuantFormat(scheme);
    if (!format) {
      getOperation().emitError()
          << "tfm-quantize-weights: unknown scheme '" << scheme
          << "' (supported: q8_0, q4_0)";
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(quantizeWeights(func, *format)))
        return signalPassFailure();
  }
};
} // namespace

//===- QuantizeWeights.cpp - projection weights held quantized ------------===//
//
// tfm-quantize-weights: marks the weight parameters of tfm.linear,
// tfm.lm_head and tfm.moe's experts with tfm.param_quant (see the pass
// description in Passes.td and docs/design.md, "Quantized weights").
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/StoredFormats.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMQUANTIZEWEIGHTS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

/// The layout of the weight `use` reads: a projection's weight, or an
/// embedding's table, whose rows are blocks along K as an out_in LM head's
/// are (a tied table is one weight for both).
static std::optional<WeightLayout> getQuantizableLayout(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto embedding = dyn_cast<EmbeddingOp>(user))
    if (&use == &embedding.getTableMutable())
      return WeightLayout::out_in;
  if (auto linear = dyn_cast<LinearOp>(user))
    if (&use == &linear.getWeightMutable())
      return linear.getLayout();
  if (auto head = dyn_cast<LMHeadOp>(user))
    if (&use == &head.getWeightMutable())
      return head.getLayout();
  // An expert's gate, up and down weights are nn.Linear's [out, in].
  if (auto moe = dyn_cast<MoEOp>(user))
    if (llvm::any_of(moe.getExpertWeightsMutable(),
                     [&](OpOperand &expert) { return &expert == &use; }))
      return WeightLayout::out_in;
  return std::nullopt;
}

/// The format `stored` gives parameter `arg` (by its name, or all its
/// fused parts' one format), if any.
static std::optional<QuantFormat> getStoredFormat(func::FuncOp func,
                                                  BlockArgument arg,
                                                  const StoredFormats &stored) {
  if (stored.empty())
    return std::nullopt;
  SmallVector<StringRef> names;
  if (auto parts = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                                    kParamPartsAttrName)) {
    for (Attribute part : parts)
      if (auto name = dyn_cast<StringAttr>(part))
        names.push_back(name.getValue());
  } else {
    names.push_back(getParamName(arg));
  }
  std::optional<QuantFormat> format;
  for (StringRef name : names) {
    auto it = stored.find(name);
    if (it == stored.end() || (format && *format != it->second))
      return std::nullopt;
    format = it->second;
  }
  return format;
}

/// Marks `func`'s quantizable weights in `format` (none: only the stored
/// ones); fails on a weight of a type the format cannot hold.
static LogicalResult quantizeWeights(func::FuncOp func,
                                     std::optional<QuantFormat> scheme,
                                     const StoredFormats &stored) {
  if (func.isExternal())
    return success();
  Builder b(func.getContext());
  for (BlockArgument arg : func.getArguments()) {
    if (!func.getArgAttr(arg.getArgNumber(), kParamAttrName) || arg.use_empty())
      continue;
    std::optional<WeightLayout> layout;
    bool quantizable = llvm::all_of(arg.getUses(), [&](OpOperand &use) {
      std::optional<WeightLayout> own = getQuantizableLayout(use);
      if (!own || (layout && *layout != *own))
        return false;
      layout = own;
      return true;
    });
    if (!quantizable)
      continue;
    std::optional<QuantFormat> format = getStoredFormat(func, arg, stored);
    if (!format)
      format = scheme;
    if (!format)
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    if (!type.getElementType().isF32())
      return emitError(arg.getLoc())
             << "tfm-quantize-weights: parameter '" << getParamName(arg)
             << "' is " << type
             << "; " << stringifyQuantFormat(*format)
             << " weights are read with f32 activations (quantize an f32 "
                "model: --dtype f32)";
    int64_t k = type.getDimSize(*layout == WeightLayout::out_in ? 1 : 0);
    auto quant = WeightQuantAttr::get(func.getContext(), *format,
                                      *layout == WeightLayout::out_in);
    // A K the format's blocks do not divide stays f32.
    if (k % quant.getBlockSize() != 0)
      continue;
    func.setArgAttr(arg.getArgNumber(), kParamQuantAttrName, quant);
  }
  return success();
}

namespace {
struct QuantizeWeightsPass
    : public tfm::impl::TfmQuantizeWeightsBase<QuantizeWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    std::optional<QuantFormat> format = symbolizeQuantFormat(scheme);
    if (!format && scheme != "none") {
      getOperation().emitError()
          << "tfm-quantize-weights: unknown scheme '" << scheme
          << "' (supported: q8_0, q4_0, q4_k, q5_k, q6_k, none)";
      return signalPassFailure();
    }
    FailureOr<StoredFormats> storedFormats =
        parseStoredFormats(stored, getOperation(), "tfm-quantize-weights");
    if (failed(storedFormats))
      return signalPassFailure();
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(quantizeWeights(func, format, *storedFormats)))
        return signalPassFailure();
  }
};
} // namespace

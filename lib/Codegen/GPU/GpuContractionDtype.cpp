//===- GpuContractionDtype.cpp - f32 matmuls with f16 operands ------------===//
//
// --tfm-gpu-contraction-dtype: see Passes.td.
//
//===----------------------------------------------------------------------===//
#include "GpuMatmulKernels.h"
#include "tfm/Codegen/GPU/Passes.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUCONTRACTIONDTYPE
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// The f16 argument that replaces the per-call rounding of the f32
/// parameter `weight`: created once per parameter, after it, with its
/// attributes and `tfm.param_rounded` (the runner binds the weight rounded
/// to f16 once). Null if `weight` is no parameter of `func`'s entry block.
BlockArgument getRoundedParameter(func::FuncOp func, Value weight,
                                  llvm::DenseMap<Value, BlockArgument> &made) {
  auto arg = dyn_cast<BlockArgument>(weight);
  if (!arg || arg.getOwner() != &func.getBody().front() ||
      !func.getArgAttr(arg.getArgNumber(), tfm::kParamAttrName))
    return nullptr;
  BlockArgument &rounded = made[arg];
  if (rounded)
    return rounded;
  Builder b(func.getContext());
  unsigned index = arg.getArgNumber();
  SmallVector<NamedAttribute> attrs;
  if (DictionaryAttr dict = func.getArgAttrDict(index))
    llvm::append_range(attrs, dict.getValue());
  attrs.push_back(b.getNamedAttr(tfm::kParamRoundedAttrName, b.getUnitAttr()));
  auto type = cast<RankedTensorType>(arg.getType());
  // Right after the f32 argument, so that argument numbers stay as written
  // once it is erased.
  if (failed(func.insertArgument(
          index + 1, RankedTensorType::get(type.getShape(), b.getF16Type()),
          b.getDictionaryAttr(attrs), arg.getLoc())))
    return nullptr;
  rounded = func.getArgument(index + 1);
  return rounded;
}

struct GpuContractionDtypePass
    : public tfm::impl::TfmGpuContractionDtypeBase<GpuContractionDtypePass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      if (!func.isExternal())
        narrowMatmuls(func);
    });
  }

  void narrowMatmuls(func::FuncOp func) {
    SmallVector<linalg::MatmulOp> matmuls;
    func.walk([&](linalg::MatmulOp matmul) {
      if (!matmul.hasPureTensorSemantics())
        return;
      auto isStaticF32 = [](Value v) {
        auto type = dyn_cast<RankedTensorType>(v.getType());
        return type && type.hasStaticShape() && type.getElementType().isF32();
      };
      if (llvm::all_of(matmul.getDpsInputs(), isStaticF32) &&
          isStaticF32(matmul.getDpsInits()[0]))
        matmuls.push_back(matmul);
    });
    llvm::DenseMap<Value, BlockArgument> rounded;
    for (linalg::MatmulOp matmul : matmuls) {
      OpBuilder b(matmul);
      Location loc = matmul.getLoc();
      SmallVector<Value> inputs;
      for (Value input : matmul.getDpsInputs()) {
        // A weight parameter is rounded once when bound, not on every call.
        if (BlockArgument param = getRoundedParameter(func, input, rounded))
          inputs.push_back(param);
        else
          inputs.push_back(tfm::gpu_kernels::truncateToF16(b, loc, input));
      }
      // A new matmul: its body extends the f16 operands to f32.
      SmallVector<NamedAttribute> attrs;
      if (Attribute maps = matmul->getAttr("indexing_maps"))
        attrs.push_back(b.getNamedAttr("indexing_maps", maps));
      auto narrow = linalg::MatmulOp::create(
          b, loc, matmul->getResultTypes(), inputs, matmul.getDpsInits(),
          attrs);
      matmul->replaceAllUsesWith(narrow->getResults());
      matmul.erase();
    }
    // f32 parameters nothing reads any more leave the signature (a tied
    // embedding's table stays for its gathers).
    llvm::BitVector unused(func.getNumArguments());
    for (auto &[original, narrow] : rounded)
      if (original.use_empty())
        unused.set(cast<BlockArgument>(original).getArgNumber());
    if (failed(func.eraseArguments(unused)))
      signalPassFailure();
  }
};
} // namespace

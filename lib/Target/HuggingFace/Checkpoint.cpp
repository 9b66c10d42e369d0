//===- Checkpoint.cpp - Hugging Face checkpoints and imported models ------===//
#include "tfm/Target/HuggingFace/Checkpoint.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Runtime/SafeTensorsCheckpoint.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::runtime;

std::string hf::getCheckpointNamePrefix(const ModelConfig &config,
                                        const SafeTensorsCheckpoint &file) {
  if (config.family == ModelFamily::GPT2 && !file.lookup("wte.weight") &&
      file.lookup("transformer.wte.weight"))
    return "transformer.";
  return "";
}

/// The MLIR type of a float dtype; null for the others.
static FloatType getFloatType(MLIRContext *context, DType dtype) {
  Builder b(context);
  switch (dtype) {
  case DType::F64: return b.getF64Type();
  case DType::F32: return b.getF32Type();
  case DType::F16: return b.getF16Type();
  case DType::BF16: return b.getBF16Type();
  default: return nullptr;
  }
}

void hf::annotateParamDTypes(ModuleOp module,
                             const SafeTensorsCheckpoint &checkpoint,
                             llvm::StringRef namePrefix) {
  MLIRContext *context = module.getContext();
  module.walk([&](func::FuncOp fn) {
    for (BlockArgument arg : fn.getArguments()) {
      auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  kParamAttrName);
      if (!name)
        continue;
      const TensorView *view =
          checkpoint.lookup((namePrefix + name.getValue()).str());
      FloatType stored = view ? getFloatType(context, view->dtype) : nullptr;
      if (!stored || stored == getElementTypeOrSelf(arg.getType()))
        continue;
      fn.setArgAttr(arg.getArgNumber(), kParamDTypeAttrName,
                    TypeAttr::get(stored));
    }
  });
}

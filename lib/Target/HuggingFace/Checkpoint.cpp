//===- Checkpoint.cpp - Hugging Face checkpoints and imported models ------===//
#include "tfm/Target/HuggingFace/Checkpoint.h"

#include "Families/Families.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Runtime/Checkpoint.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::runtime;
using namespace mlir::tfm::hf;

std::string hf::getCheckpointNamePrefix(const ModelConfig &config,
                                        const Checkpoint &file) {
  const FamilyInfo &family = getFamily(config.family);
  if (family.wrapperPrefix.empty() || file.lookup(family.prefixProbe))
    return "";
  std::string wrapped = (family.wrapperPrefix + family.prefixProbe).str();
  return file.lookup(wrapped) ? family.wrapperPrefix.str() : "";
}

llvm::Error hf::readFusedExperts(const ModelConfig &config,
                                 runtime::Checkpoint &checkpoint) {
  const FamilyInfo &family = getFamily(config.family);
  if (family.experts.module.empty())
    return llvm::Error::success();
  return checkpoint.addFusedExperts(family.experts);
}

bool hf::isIgnoredTensor(llvm::StringRef name, llvm::StringRef prefix,
                         const ModelConfig &config) {
  if (config.tieWordEmbeddings && name == "lm_head.weight")
    return true;
  if (name.ends_with(".rotary_emb.inv_freq"))
    return true;
  const FamilyInfo &family = getFamily(config.family);
  return family.isIgnoredTensor &&
         family.isIgnoredTensor(name, prefix, config);
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
                             const Checkpoint &checkpoint,
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

//===- StripFrontendArgAttributes.cpp - llvm.func args LLVM understands ---===//
//
// --tfm-strip-frontend-arg-attributes: see Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/Common/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMSTRIPFRONTENDARGATTRIBUTES
#include "tfm/Codegen/Common/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// `attrs` without the attributes outside the `llvm.` namespace, or null
/// when nothing is left.
DictionaryAttr keepLLVMAttributes(DictionaryAttr attrs) {
  if (!attrs)
    return attrs;
  SmallVector<NamedAttribute> kept;
  for (NamedAttribute attr : attrs)
    if (attr.getName().strref().starts_with("llvm."))
      kept.push_back(attr);
  if (kept.size() == attrs.size())
    return attrs;
  return kept.empty() ? DictionaryAttr()
                      : DictionaryAttr::get(attrs.getContext(), kept);
}

/// The same list with each dictionary filtered, or null when none remains.
ArrayAttr keepLLVMAttributes(ArrayAttr dicts) {
  if (!dicts)
    return dicts;
  SmallVector<Attribute> filtered;
  bool any = false;
  for (Attribute attr : dicts) {
    DictionaryAttr kept = keepLLVMAttributes(cast<DictionaryAttr>(attr));
    any |= kept && !kept.empty();
    filtered.push_back(kept ? Attribute(kept)
                            : DictionaryAttr::get(dicts.getContext()));
  }
  return any ? ArrayAttr::get(dicts.getContext(), filtered) : ArrayAttr();
}

struct StripFrontendArgAttributesPass
    : public tfm::impl::TfmStripFrontendArgAttributesBase<
          StripFrontendArgAttributesPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().walk([](LLVM::LLVMFuncOp func) {
      func.setArgAttrsAttr(keepLLVMAttributes(func.getArgAttrsAttr()));
      func.setResAttrsAttr(keepLLVMAttributes(func.getResAttrsAttr()));
    });
  }
};
} // namespace

//===- DeduplicateOutlinedFunctions.cpp - one copy of each loop nest ------===//
//
// --tfm-deduplicate-outlined-functions: see Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "CpuPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMDEDUPLICATEOUTLINEDFUNCTIONS
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// The text that decides whether two outlined functions are the same: the
/// function printed in generic form under a fixed name. Locations are not
/// printed (no debug info), so layers at different source lines still match.
std::string getBodyKey(func::FuncOp func) {
  StringAttr name = func.getSymNameAttr();
  func.setSymName("tfm_dedup_key");
  std::string key;
  llvm::raw_string_ostream os(key);
  func->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  func.setSymNameAttr(name);
  return key;
}

struct DeduplicateOutlinedFunctionsPass
    : public tfm::impl::TfmDeduplicateOutlinedFunctionsBase<
          DeduplicateOutlinedFunctionsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<func::FuncOp> firstWithKey;
    DenseMap<StringAttr, FlatSymbolRefAttr> replacement;
    SmallVector<func::FuncOp> duplicates;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func->hasAttr(tfm::kOutlinedLoopNestAttr))
        continue;
      auto [it, inserted] = firstWithKey.try_emplace(getBodyKey(func), func);
      if (inserted)
        continue;
      replacement[func.getSymNameAttr()] =
          FlatSymbolRefAttr::get(it->second.getSymNameAttr());
      duplicates.push_back(func);
    }
    if (duplicates.empty())
      return;
    // Outlined functions are only ever called directly (their symbols are
    // private and never taken as values), so retargeting the calls is all.
    module.walk([&](func::CallOp call) {
      auto it = replacement.find(call.getCalleeAttr().getAttr());
      if (it != replacement.end())
        call.setCalleeAttr(it->second);
    });
    for (func::FuncOp func : duplicates)
      func.erase();
  }
};
} // namespace

//===- GpuMergeKernelModules.cpp - one gpu.module for all kernels ---------===//
//
// --tfm-gpu-merge-kernel-modules: see Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUMERGEKERNELMODULES
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct GpuMergeKernelModulesPass
    : public tfm::impl::TfmGpuMergeKernelModulesBase<
          GpuMergeKernelModulesPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> sources(module.getOps<gpu::GPUModuleOp>());
    if (sources.size() < 2)
      return;
    OpBuilder b(sources.front());
    auto merged = gpu::GPUModuleOp::create(b, sources.front().getLoc(), name);
    merged->setDiscardableAttrs(
        sources.front()->getDiscardableAttrDictionary());
    if (auto targets = sources.front().getTargetsAttr())
      merged.setTargetsAttr(targets);
    SymbolTable mergedSymbols(merged);

    // Kernel (module, function) -> new reference.
    DenseMap<std::pair<StringAttr, StringAttr>, SymbolRefAttr> renamed;
    for (gpu::GPUModuleOp source : sources) {
      for (Operation &op :
           llvm::make_early_inc_range(*source.getBody())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        auto func = dyn_cast<gpu::GPUFuncOp>(op);
        if (func && func.isKernel()) {
          // Module names are unique in the parent: so are the new names.
          StringAttr newName = source.getSymNameAttr();
          renamed[{source.getSymNameAttr(), func.getNameAttr()}] =
              SymbolRefAttr::get(merged.getSymNameAttr(),
                                 FlatSymbolRefAttr::get(newName));
          SymbolTable::setSymbolName(func, newName);
        } else if (symbol && mergedSymbols.lookup(symbol.getNameAttr())) {
          op.emitOpError("clashes with a symbol of the same name in another "
                         "kernel module");
          return signalPassFailure();
        }
        op.moveBefore(merged.getBody(), merged.getBody()->end());
        if (symbol)
          mergedSymbols.insert(&op);
      }
      source.erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find({launch.getKernelModuleName(),
                              launch.getKernelName()});
      if (it != renamed.end())
        launch.setKernelAttr(it->second);
    });
  }
};
} // namespace

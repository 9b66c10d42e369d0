//===- CpuPipeline.cpp - tfm -> LLVM dialect for the host CPU -------------===//
//
// --tfm-cpu-pipeline: tfm -> linalg on tensors -> fused -> bufferized with
// identity layouts and results as out-parameters -> loops -> LLVM dialect,
// following the calling convention documented in tfm/Pipelines/Pipelines.h.
//
//===----------------------------------------------------------------------===//
#include "tfm/Pipelines/Pipelines.h"

#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
/// Fixes the ABI of the public entry points before bufferization: every
/// public function gets `llvm.emit_c_interface` (the `_mlir_ciface_` wrapper
/// the runner calls), and its tensor arguments are marked not writable so
/// that bufferization never reuses a caller's input (a weight, the hidden
/// state) as scratch space.
struct PrepareCpuAbiPass
    : public PassWrapper<PrepareCpuAbiPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrepareCpuAbiPass)
  StringRef getArgument() const final { return "tfm-prepare-cpu-abi"; }
  StringRef getDescription() const final {
    return "Marks public functions for the C interface and their tensor "
           "arguments read-only";
  }
  void runOnOperation() override {
    OpBuilder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    b.getUnitAttr());
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
        if (isa<TensorType>(type))
          func.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                          b.getBoolAttr(false));
    }
  }
};
} // namespace

void mlir::tfm::buildTfmCpuPipeline(OpPassManager &pm,
                                    const CpuPipelineOptions &options) {
  // tfm -> linalg on tensors.
  if (options.verifyContracts)
    pm.addPass(createTfmVerifyContracts());
  pm.addPass(createConvertTfmToLinalg());
  pm.addPass(createCanonicalizerPass());
  // Producer/consumer fusion of generics; the upstream control only fuses a
  // producer with a single use, so nothing is recomputed.
  pm.addPass(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());

  // Bufferize: identity layouts at function boundaries, results as trailing
  // out-parameters the caller allocates.
  pm.addPass(std::make_unique<PrepareCpuAbiPass>());
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.unknownTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  // Write results straight into the caller's buffer instead of copying.
  outParams.hoistStaticAllocs = true;
  // The entry points are public: their signatures are the calling convention.
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertBufferizationToMemRefPass());

  // Loops, then the LLVM dialect. expand-strided-metadata must precede
  // lower-affine (it emits affine.apply), or casts are left unresolved.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tfm::registerTfmPipelines() {
  PassPipelineRegistration<CpuPipelineOptions>(
      "tfm-cpu-pipeline",
      "Lowers a tfm module to the LLVM dialect for the host CPU (C interface, "
      "results as out-parameters)",
      buildTfmCpuPipeline);
}

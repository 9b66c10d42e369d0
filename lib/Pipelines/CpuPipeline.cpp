//===- CpuPipeline.cpp - tfm -> LLVM dialect for the host CPU -------------===//
//
// --tfm-cpu-pipeline: tfm (Q/K/V fused, attention in flash form) -> linalg on
// tensors -> fused -> contractions tiled and vectorised -> bufferized with
// identity layouts, KV caches in place and results as out-parameters ->
// vectors lowered, the rest as loops -> LLVM dialect, following the calling
// convention documented in tfm/Pipelines/Pipelines.h.
//
//===----------------------------------------------------------------------===//
#include "tfm/Pipelines/Pipelines.h"

#include "PipelinePasses.h"

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

void mlir::tfm::buildTfmCpuPipeline(OpPassManager &pm,
                                    const CpuPipelineOptions &options) {
  // tfm -> linalg on tensors (CommonStages.cpp).
  TfmToLinalgStageOptions common;
  common.verifyContracts = options.verifyContracts;
  common.fuseQKV = options.fuseQKV;
  common.flashAttention = options.flashAttention;
  common.flashQueryTile = options.flashQueryTile;
  common.flashKeyTile = options.flashKeyTile;
  common.flashCausalSkip = options.flashCausalSkip;
  buildTfmToLinalgStage(pm, common);
  if (options.vectorize) {
    ContractionTiling tiling;
    tiling.registerRows = options.registerRows;
    tiling.registerCols = options.registerCols;
    tiling.blockRows = options.blockRows;
    tiling.blockCols = options.blockCols;
    tiling.blockDepth = options.blockDepth;
    tiling.dotCols = options.dotCols;
    tiling.dotDepth = options.dotDepth;
    pm.addNestedPass<func::FuncOp>(
        createTileAndVectorizeContractionsPass(tiling));
    pm.addPass(createCanonicalizerPass());
  }

  // Bufferize with the calling convention (CommonStages.cpp).
  buildCallingConventionStage(pm);

  // Vectors to 1-D SIMD form, the remaining linalg ops to loops, then the
  // LLVM dialect. expand-strided-metadata must precede lower-affine (it emits
  // affine.apply), or casts are left unresolved.
  pm.addNestedPass<func::FuncOp>(createLowerVectorsPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  if (options.outlineLoops)
    pm.addPass(createOutlineLoopNestsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.vectorContractLowering =
      vector::VectorContractLowering::OuterProduct;
  vectorToLLVM.vectorTransposeLowering =
      vector::VectorTransposeLowering::Shuffle1D;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  // Vector code reads with ub.poison paddings.
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (options.outlineLoops)
    pm.addPass(createFinalizeOutlinedLoopsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tfm::registerCpuPipelinePasses() {
  registerPass([] { return createPrepareCpuAbiPass(); });
  registerPass([] { return createDropKVCacheResultsPass(); });
  registerPass([] { return createFuseElementwisePass(); });
  registerPass(
      [] { return createTileAndVectorizeContractionsPass(ContractionTiling()); });
  registerPass([] { return createLowerVectorsPass(); });
  registerPass([] { return createOutlineLoopNestsPass(); });
  registerPass([] { return createFinalizeOutlinedLoopsPass(); });
}

void mlir::tfm::registerTfmPipelines() {
  registerCpuPipelinePasses();
  PassPipelineRegistration<CpuPipelineOptions>(
      "tfm-cpu-pipeline",
      "Lowers a tfm module to the LLVM dialect for the host CPU (C interface, "
      "results as out-parameters)",
      buildTfmCpuPipeline);
  registerGpuPipeline();
}

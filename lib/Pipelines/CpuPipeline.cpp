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

#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Codegen/CPU/Passes.h"
#include "tfm/Codegen/Common/Passes.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::tfm::buildTfmCpuSignatureStage(OpPassManager &pm,
                                          const CpuPipelineOptions &options) {
  // tfm -> linalg on tensors (CommonStages.cpp); quantized weights marked
  // on the tfm ops, after Q/K/V fusion.
  const PipelineDebugOptions &debug = options.debug;
  TfmToLinalgStageOptions common = getTfmToLinalgStageOptions(options);
  common.quantizeStored.assign(options.quantizeStored.begin(),
                               options.quantizeStored.end());
  if (!options.quantize.empty() || !options.quantizeStored.empty()) {
    TfmQuantizeWeightsOptions quantize;
    quantize.scheme = options.quantize.empty() ? std::string("none")
                                               : std::string(options.quantize);
    quantize.stored.assign(options.quantizeStored.begin(),
                           options.quantizeStored.end());
    common.beforeLowering = [quantize](OpPassManager &nested) {
      nested.addPass(createTfmQuantizeWeights(quantize));
    };
  }
  buildTfmToLinalgStage(pm, common);
  if (!debug.vectorize)
    return;
  TfmCpuConfigureOptions configure;
  configure.cpu = options.cpu;
  configure.tiling = options.tiling;
  configure.amx = options.amx;
  configure.bf16Dot = options.bf16Dot;
  configure.int8Dot = options.int8Dot;
  pm.addPass(createTfmCpuConfigure(configure));
  // Weights in panel layout: changes the signature (see Pipelines.h).
  if (options.packWeights) {
    pm.addPass(createTfmCpuPackWeights());
    // The weights of AMX GEMMs as their tiles' bf16 parts, split when
    // bound: the FMA path of the other choices reads f32 panels.
    if (options.amx && debug.amxChoice == "tiles" && options.amxSplitWeights)
      pm.addPass(createTfmCpuSplitAmxWeights());
  }
}

void mlir::tfm::buildTfmCpuCodegenStage(OpPassManager &pm,
                                        const CpuPipelineOptions &options) {
  const PipelineDebugOptions &debug = options.debug;
  if (debug.vectorize) {
    pm.addNestedPass<func::FuncOp>(createTfmTileAndVectorizeContractions());
    if (debug.vectorizeElementwise)
      pm.addPass(createTfmVectorizeElementwise());
    pm.addPass(createCanonicalizerPass());
  }

  // Identical layers give identical tiled nests: each in a function of
  // tensors, one copy kept, so bufferization analyses one layer's nests
  // whatever the depth (its analysis grows faster than linearly).
  if (debug.outlineLoops) {
    TfmOutlineLoopNestsOptions onTensors;
    onTensors.tensors = true;
    pm.addPass(createTfmOutlineLoopNests(onTensors));
    pm.addPass(createTfmDeduplicateOutlinedFunctions());
  }

  // Bufferize with the calling convention (CommonStages.cpp).
  // GEMMs planned for AMX tiles get their code on buffers, where tiles are
  // loaded and stored (CpuAmxContractions.cpp).
  buildCallingConventionStage(
      pm, /*resultsInPlace=*/true, options.planWorkspace,
      [&](OpPassManager &nested) {
        // Quantized weights' GEMMs as calls of their micro-kernel.
        if (debug.vectorize && options.packWeights)
          nested.addPass(createTfmCpuLowerQuantizedMatmuls());
        if (debug.vectorize && options.amx) {
          TfmCpuAmxContractionsOptions amx;
          amx.parallel = options.parallel;
          amx.choice = debug.amxChoice;
          nested.addPass(createTfmCpuAmxContractions(amx));
        }
      });
  // A tensor-parallel model's sums as MPI calls (after deallocation: see
  // the pass).
  pm.addPass(createTfmCollectivesToMPI());
  // Each loop nest (and each linalg op left for loops) in a function of its
  // own; identical layers give identical nests, compiled once from here on.
  if (debug.outlineLoops) {
    pm.addPass(createTfmOutlineLoopNests());
    pm.addPass(createTfmDeduplicateOutlinedFunctions());
  }
  // Independent tiles (scf.forall: GEMM cache blocks, flash attention's
  // batch x head group x query tile) become OpenMP worksharing loops, or
  // sequential loops without threads.
  if (options.parallel) {
    pm.addPass(createTfmSequentialSmallForalls());
    pm.addPass(createForallToParallelLoopPass());
    pm.addPass(createConvertSCFToOpenMPPass());
    if (options.dynamicSchedule)
      pm.addPass(createTfmScheduleBlockLoops());
  } else {
    pm.addPass(createForallToForLoopPass());
  }
  // Per-iteration scratch as one stack slot per thread, not a malloc and a
  // free per tile.
  pm.addPass(createTfmHoistLoopScratch());
  if (options.parallel)
    pm.addPass(createTfmInlineAllocaScopes());

  // Vectors to 1-D SIMD form, the remaining linalg ops to loops, then the
  // LLVM dialect. expand-strided-metadata must precede lower-affine (it emits
  // affine.apply), or casts are left unresolved.
  pm.addNestedPass<func::FuncOp>(createTfmLowerVectors());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.vectorContractLowering =
      vector::VectorContractLowering::OuterProduct;
  vectorToLLVM.vectorTransposeLowering =
      vector::VectorTransposeLowering::Shuffle1D;
  // amx.tile_* to the tile intrinsics (code of tfm-cpu-amx-contractions).
  vectorToLLVM.amx = options.amx;
  // x86vector.avx512.dot to vdpbf16ps (the bf16 pair dot products of
  // tfm-tile-and-vectorize-contractions).
  vectorToLLVM.x86Vector = true;
  // Inline, vectorisable tanh/erf/exp instead of libm calls.
  pm.addPass(createTfmApproximateMath());
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  // Vector code reads with ub.poison paddings.
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (options.parallel)
    pm.addPass(createConvertOpenMPToLLVMPass());
  // mpi.allreduce and friends (tfm-collectives-to-mpi loaded the dialect).
  ConvertToLLVMPassOptions mpiToLLVM;
  mpiToLLVM.filterDialects = {"mpi"};
  pm.addPass(createConvertToLLVMPass(mpiToLLVM));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (debug.outlineLoops)
    pm.addPass(createTfmFinalizeOutlinedLoops());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tfm::buildTfmCpuPipeline(OpPassManager &pm,
                                    const CpuPipelineOptions &options) {
  buildTfmCpuSignatureStage(pm, options);
  buildTfmCpuCodegenStage(pm, options);
}

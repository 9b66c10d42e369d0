//===- CommonStages.cpp - target-neutral stages of the tfm pipelines ------===//
//
// The stages that `--tfm-cpu-pipeline` and `--tfm-gpu-pipeline` share:
// tfm -> fused linalg on tensors, and the calling-convention stage that
// bufferizes with identity layouts, updates KV caches in place and turns
// results into out-parameters (tfm/Pipelines/Pipelines.h).
//
//===----------------------------------------------------------------------===//
#include "tfm/Pipelines/Pipelines.h"

#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Codegen/Common/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tfm;

llvm::ArrayRef<OptionGroupField<PipelineDebugOptions>>
PipelineDebugOptions::getFields() {
  using T = PipelineDebugOptions;
  static const OptionGroupField<T> fields[] = {
      {"flash-causal-skip", &T::flashCausalSkip,
       "skip key tiles wholly in a causal query tile's future (0: visit and "
       "mask them, to measure the skip)"},
      {"vectorize", &T::vectorize,
       "CPU: tile and vectorise f32 contractions (0: scalar loops over "
       "unpacked weights, for comparison)"},
      {"vectorize-elementwise", &T::vectorizeElementwise,
       "CPU: vectorise the non-contraction ops too (elementwise along the "
       "innermost loop, row reductions as partial sums)"},
      {"amx-choice", &T::amxChoice,
       "CPU with amx: per block of a GEMM's columns, `tiles` (always: the "
       "same bits on every run and thread count), `measured` (each thread "
       "times tiles and FMA and takes the cheaper; the last bits then vary "
       "with the load) or `fma`"},
      {"outline-loops", &T::outlineLoops,
       "CPU: outline each top-level loop nest of a function with many into "
       "a no-inline function (LLVM compile time)"},
      {"warpgroup-mma-overlap", &T::warpgroupMmaOverlap,
       "GPU: wgmma kernels keep a K tile's wgmmas in flight while the next "
       "tile's are issued (0: each waits for all but itself)"},
  };
  return fields;
}

llvm::StringRef PipelineDebugOptions::getHelp() {
  static const std::string help =
      "Switches for measuring the code generator, name=value,...: " +
      describe();
  return help;
}

void mlir::tfm::buildTfmToLinalgStage(OpPassManager &pm,
                                      const TfmToLinalgStageOptions &options) {
  // The rank's model first: everything after sees its shapes.
  if (options.tensorParallel > 1) {
    TfmTensorParallelOptions parallel;
    parallel.ranks = options.tensorParallel;
    pm.addPass(createTfmTensorParallel(parallel));
  }
  if (options.verifyContracts)
    pm.addPass(createTfmVerifyContracts());
  if (options.fuseQKV) {
    TfmFuseQKVOptions fuse;
    fuse.stored.assign(options.quantizeStored.begin(),
                       options.quantizeStored.end());
    pm.addPass(createTfmFuseQKV(fuse));
  }
  if (options.beforeLowering)
    options.beforeLowering(pm);
  if (options.flashAttention) {
    TfmFlashAttentionOptions flash;
    flash.queryTile = options.flashQueryTile;
    flash.keyTile = options.flashKeyTile;
    flash.causalSkip = options.flashCausalSkip;
    flash.decodeMinKeys = options.flashDecodeMinKeys;
    pm.addPass(createTfmFlashAttention(flash));
  }
  pm.addPass(createConvertTfmToLinalg());
  pm.addPass(createCanonicalizerPass());
  // Producer/consumer fusion of generics where nothing is recomputed (not
  // into contractions: see FuseElementwise.cpp).
  pm.addPass(createTfmFuseElementwise());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tfm::buildCallingConventionStage(
    OpPassManager &pm, bool resultsInPlace, bool planWorkspace,
    llvm::function_ref<void(OpPassManager &)> onBuffers) {
  // Bufferize: identity layouts at function boundaries, results as trailing
  // out-parameters the caller allocates.
  pm.addPass(createTfmPrepareAbi());
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(createTfmBufferize());
  // KV caches were written in place: their results are the cache arguments.
  pm.addPass(createTfmDropKVCacheResults());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  // Write results straight into the caller's buffer instead of copying.
  outParams.hoistStaticAllocs = true;
  // The entry points are public: their signatures are the calling convention.
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // Results reshaped from a local buffer are computed in the caller's.
  if (resultsInPlace)
    pm.addPass(createTfmResultsInPlace());
  if (onBuffers)
    onBuffers(pm);
  // Before deallocation: it then frees one workspace, not every temporary.
  if (planWorkspace)
    pm.addNestedPass<func::FuncOp>(createTfmPlanWorkspace());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
}

//===- GpuPipeline.cpp - tfm -> NVIDIA GPU kernels + host code ------------===//
//
// --tfm-gpu-pipeline: the target-neutral stage and the calling-convention
// stage shared with the CPU pipeline (CommonStages.cpp), then GPU codegen:
// host buffers to device memory, every linalg op a kernel, and upstream
// gpu::buildLowerToNVVMPassPipeline for device code (cubin/PTX embedded in a
// gpu.binary) and host code (LLVM dialect calling the mgpu* functions of
// libtfm_cuda_runtime.so). The calling convention is documented in
// tfm/Pipelines/Pipelines.h.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/GPU/Passes.h"
#include "tfm/Conversion/Passes.h"
#include "tfm/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"

#include <cstdlib>

using namespace mlir;

/// The NVVM target finds libdevice (math functions) and ptxas through
/// $CUDA_HOME; without libdevice, `math.exp` stays a call to `__nv_expf` and
/// ptxas fails on the unresolved symbol. An explicit `cuda-home` wins, else a
/// set $CUDA_HOME, else the default toolkit location when it exists.
static void configureCudaHome(StringRef cudaHome) {
  if (!cudaHome.empty()) {
    ::setenv("CUDA_HOME", cudaHome.str().c_str(), /*overwrite=*/1);
    return;
  }
  const char *defaultHome = "/usr/local/cuda";
  if (!std::getenv("CUDA_HOME") && llvm::sys::fs::is_directory(defaultHome))
    ::setenv("CUDA_HOME", defaultHome, /*overwrite=*/0);
}

void mlir::tfm::buildTfmGpuSignatureStage(OpPassManager &pm,
                                          const GpuPipelineOptions &options) {
  TfmToLinalgStageOptions common = getTfmToLinalgStageOptions(options);
  // Attention as one kernel each, while it is still tfm.attention (f16
  // tensor cores: only with dtype=f16; dtype=f32 stays exact).
  if (options.flashKernel && options.dtype == "f16")
    common.beforeLowering = [](OpPassManager &nested) {
      nested.addPass(createTfmGpuFlashAttention());
    };
  buildTfmToLinalgStage(pm, common);
  // f16 matmul operands; weight parameters become f16 arguments (bound
  // rounded once), which is why this stage changes the signature.
  if (options.dtype == "f16")
    pm.addPass(createTfmGpuContractionDtype());
}

void mlir::tfm::buildTfmGpuCodegenStage(OpPassManager &pm,
                                        const GpuPipelineOptions &options) {
  configureCudaHome(options.cudaHome);
  // Temporaries in one workspace: one device allocation per call instead of
  // one per temporary, and no allocation between launches to break the
  // stream-ordered chain of gpu-async-region.
  buildCallingConventionStage(pm, /*resultsInPlace=*/false,
                              options.planWorkspace);
  // A tensor-parallel module's sums as NCCL calls (the placed slice of an
  // all-gather becomes device memory and kernels below).
  if (options.tensorParallel > 1)
    pm.addPass(createTfmCollectivesToNCCL());

  // Host code keeps only metadata, index arithmetic and control flow; every
  // access to a buffer's contents moves into a kernel.
  TfmGpuDeviceBuffersOptions deviceBuffers;
  deviceBuffers.async = options.asyncLaunches;
  pm.addNestedPass<func::FuncOp>(createTfmGpuDeviceBuffers(deviceBuffers));
  if (options.flashKernel && options.dtype == "f16")
    pm.addPass(createTfmGpuFlashAttentionKernels());
  // Each f16 matmul's kernel, chosen once from the chip and its shape
  // (#tfm.gpu_kernel): sm_90a's TMA + wgmma, else mma.sync, else for
  // decode's matmuls of one row per sequence split-K kernels that read the
  // weight once, coalesced. The kernel passes build what was chosen.
  TfmGpuConfigureOptions configure;
  configure.chip = options.chip;
  configure.tensorCores = options.tensorCores;
  configure.warpgroupMma = options.warpgroupMma;
  configure.matvec = options.matvec;
  pm.addPass(createTfmGpuConfigure(configure));
  TfmGpuWarpgroupMatmulOptions wgmma;
  wgmma.overlap = options.debug.getValue().warpgroupMmaOverlap;
  pm.addPass(createTfmGpuWarpgroupMatmul(wgmma));
  pm.addPass(createTfmGpuTensorCoreMatmul());
  TfmGpuMatvecOptions matvec;
  matvec.async = options.asyncLaunches;
  pm.addPass(createTfmGpuMatvec(matvec));
  if (options.rowReductions)
    pm.addNestedPass<func::FuncOp>(createTfmGpuRowReductions());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  TfmGpuLaunchLoopsOptions launch;
  launch.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createTfmGpuLaunchLoops(launch));
  // Fold static trip counts to constants first: outlining sinks constants
  // into kernels instead of passing them as arguments.
  pm.addPass(createCanonicalizerPass());
  // Canonicalization hoists the constants of launch bodies to the function
  // entry; outlining would pass them as kernel arguments (no constant
  // folding in the kernel): sink them back first.
  pm.addNestedPass<func::FuncOp>(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // One PTX/cubin for all kernels instead of one each (compile and load
  // time).
  pm.addPass(createTfmGpuMergeKernelModules());
  // Inside the outlined kernels: 16x8x16 vector.contract -> ldmatrix +
  // mma.sync (a no-op for the SIMT kernels).
  pm.addNestedPass<gpu::GPUModuleOp>(createTfmGpuLowerContractions());
  // Launches, allocations and copies in one stream-ordered chain per host
  // function instead of a stream and a synchronisation per launch. The host
  // functions of the kernels (matmul, matvec, attention launchers) are
  // inlined first: each would end its own chain with a synchronisation, and
  // a GPT-2 decode step calls about 60 of them.
  if (options.asyncLaunches) {
    pm.addPass(createInlinerPass());
    pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = options.optLevel;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void mlir::tfm::buildTfmGpuPipeline(OpPassManager &pm,
                                    const GpuPipelineOptions &options) {
  buildTfmGpuSignatureStage(pm, options);
  buildTfmGpuCodegenStage(pm, options);
}

void mlir::tfm::registerGpuPipeline() {
  PassPipelineRegistration<GpuPipelineOptions>(
      "tfm-gpu-pipeline",
      "Lowers a tfm module to NVIDIA GPU kernels (embedded cubin/PTX) and "
      "host code in the LLVM dialect that launches them (C interface, "
      "device-memory arguments, results as out-parameters)",
      buildTfmGpuPipeline);
}

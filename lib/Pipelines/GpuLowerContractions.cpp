//===- GpuLowerContractions.cpp - vector.contract kernels to mma.sync -----===//
//
// --tfm-gpu-lower-contractions: see Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tfm/Pipelines/Passes.h"

#include "mlir/Conversion/VectorToGPU/VectorToGPU.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPULOWERCONTRACTIONS
#include "tfm/Pipelines/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct GpuLowerContractionsPass
    : public tfm::impl::TfmGpuLowerContractionsBase<GpuLowerContractionsPass> {
  void runOnOperation() override {
    OpPassManager pipeline(gpu::GPUFuncOp::getOperationName());
    pipeline.addPass(createConvertVectorToGPUPass(/*useNvGpu=*/true));
    pipeline.addPass(createCanonicalizerPass());
    pipeline.addPass(createCSEPass());
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>()) {
      bool hasContraction =
          kernel
              .walk([](vector::ContractionOp) {
                return WalkResult::interrupt();
              })
              .wasInterrupted();
      if (hasContraction && failed(runPipeline(pipeline, kernel)))
        return signalPassFailure();
    }
  }
};
} // namespace

//===- GpuLowerContractions.cpp - vector.contract kernels to mma.sync -----===//
//
// --tfm-gpu-lower-contractions: see Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/GPU/Passes.h"

#include "mlir/Conversion/VectorToGPU/VectorToGPU.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPULOWERCONTRACTIONS
#include "tfm/Codegen/GPU/Passes.h.inc"
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
      // The flash-attention kernels (tfm-gpu-flash-attention-kernels): with
      // only `.maxntid 128` ptxas caps them at 128 registers and spills for
      // head_dim 128; `.minnctapersm 1` lets it use what it needs.
      if (kernel.getName().starts_with("tfm_flash_attention_"))
        kernel->setAttr("nvvm.minctasm",
                        IntegerAttr::get(IntegerType::get(&getContext(), 32),
                                         1));
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

//===- GpuConfigure.cpp - choose each GPU matmul's kernel ------------------===//
//
// tfm-gpu-configure, the policy half of GPU code generation: see its
// description in tfm/Codegen/GPU/Passes.td and #tfm.gpu_kernel in
// tfm/Dialect/Tfm/IR/TfmAttrs.td. What each kernel can take is the kernel's
// own plan function (GpuMatmulKernels.h); this pass only orders them.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/GPU/Passes.h"

#include "GpuMatmulKernels.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUCONFIGURE
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
struct GpuConfigurePass
    : public tfm::impl::TfmGpuConfigureBase<GpuConfigurePass> {
  using Base::Base;

  /// The first kernel the options allow and `f16` suits, in the order of
  /// preference: wgmma (sm_90a), mma.sync, matvec.
  std::optional<gpu_kernels::KernelPlan>
  choose(const gpu_kernels::F16Matmul &f16) {
    if (tensorCores && warpgroupMma && chip == "sm_90a")
      if (auto plan = gpu_kernels::planWarpgroupMatmul(f16, wgmmaStages))
        return plan;
    if (tensorCores)
      if (auto plan = gpu_kernels::planTensorCoreMatmul(f16))
        return plan;
    if (matvec)
      if (auto plan = gpu_kernels::planMatvec(f16))
        return plan;
    return std::nullopt;
  }

  void runOnOperation() override {
    if (wgmmaStages < 2 || wgmmaStages > 8) {
      getOperation().emitError()
          << "--tfm-gpu-configure: wgmma-stages must be in [2, 8], got "
          << int64_t(wgmmaStages);
      return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    getOperation().walk([&](linalg::MatmulOp matmul) {
      if (matmul->getParentOfType<gpu::LaunchOp>())
        return;
      std::optional<gpu_kernels::F16Matmul> f16 =
          gpu_kernels::matchF16Matmul(matmul);
      if (!f16)
        return;
      if (std::optional<gpu_kernels::KernelPlan> plan = choose(*f16))
        matmul->setAttr(kGpuKernelAttrName, plan->toAttr(ctx));
    });
  }
};
} // namespace

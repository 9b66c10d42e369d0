//===- GpuContractionDtype.cpp - f32 matmuls with f16 operands ------------===//
//
// --tfm-gpu-contraction-dtype: see Passes.td.
//
//===----------------------------------------------------------------------===//
#include "GpuMatmulKernels.h"
#include "tfm/Pipelines/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUCONTRACTIONDTYPE
#include "tfm/Pipelines/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct GpuContractionDtypePass
    : public tfm::impl::TfmGpuContractionDtypeBase<GpuContractionDtypePass> {
  void runOnOperation() override {
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp matmul) {
      if (!matmul.hasPureTensorSemantics())
        return;
      auto isStaticF32 = [](Value v) {
        auto type = dyn_cast<RankedTensorType>(v.getType());
        return type && type.hasStaticShape() && type.getElementType().isF32();
      };
      if (llvm::all_of(matmul.getDpsInputs(), isStaticF32) &&
          isStaticF32(matmul.getDpsInits()[0]))
        matmuls.push_back(matmul);
    });
    for (linalg::MatmulOp matmul : matmuls) {
      OpBuilder b(matmul);
      Location loc = matmul.getLoc();
      SmallVector<Value> inputs;
      for (Value input : matmul.getDpsInputs())
        inputs.push_back(tfm::gpu_kernels::truncateToF16(b, loc, input));
      // A new matmul: its body extends the f16 operands to f32.
      SmallVector<NamedAttribute> attrs;
      if (Attribute maps = matmul->getAttr("indexing_maps"))
        attrs.push_back(b.getNamedAttr("indexing_maps", maps));
      auto narrow = linalg::MatmulOp::create(
          b, loc, matmul->getResultTypes(), inputs, matmul.getDpsInits(),
          attrs);
      matmul->replaceAllUsesWith(narrow->getResults());
      matmul.erase();
    }
  }
};
} // namespace

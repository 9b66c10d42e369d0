//===- GpuDeviceBuffers.cpp - host buffers to GPU memory ------------------===//
//
// --tfm-gpu-device-buffers: see Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUDEVICEBUFFERS
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// `gpu.wait async`: a token with no dependencies.
Value startToken(OpBuilder &b, Location loc) {
  return gpu::WaitOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                             ValueRange())
      .getAsyncToken();
}

/// Blocks the host until `token` completes.
void waitFor(OpBuilder &b, Location loc, Value token) {
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

/// A device buffer of `type`: allocated synchronously, or, with `chained`,
/// a token-less `gpu.alloc` for gpu-async-region to make stream-ordered.
Value allocDevice(OpBuilder &b, Location loc, MemRefType type,
                  ValueRange dynamicSizes, bool chained = false) {
  if (chained)
    return gpu::AllocOp::create(b, loc, type, Type(), ValueRange(),
                                dynamicSizes, ValueRange(),
                                /*hostShared=*/false)
        .getMemref();
  Value start = startToken(b, loc);
  auto alloc = gpu::AllocOp::create(
      b, loc, type, b.getType<gpu::AsyncTokenType>(), ValueRange{start},
      dynamicSizes, ValueRange(), /*hostShared=*/false);
  waitFor(b, loc, alloc.getAsyncToken());
  return alloc.getMemref();
}

void deallocDevice(OpBuilder &b, Location loc, Value memref,
                   bool chained = false) {
  if (chained) {
    gpu::DeallocOp::create(b, loc, Type(), ValueRange(), memref);
    return;
  }
  Value start = startToken(b, loc);
  auto dealloc = gpu::DeallocOp::create(
      b, loc, b.getType<gpu::AsyncTokenType>(), ValueRange{start}, memref);
  waitFor(b, loc, dealloc.getAsyncToken());
}

struct GpuDeviceBuffersPass
    : public tfm::impl::TfmGpuDeviceBuffersBase<GpuDeviceBuffersPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> hostOps;
    func->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp,
              memref::GetGlobalOp, memref::AllocaOp>(op))
        hostOps.push_back(op);
      return WalkResult::advance();
    });
    OpBuilder b(func.getContext());
    SmallVector<Value> constants;
    for (Operation *op : hostOps) {
      b.setInsertionPoint(op);
      Location loc = op->getLoc();
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        Value buffer = allocDevice(b, loc, alloc.getType(),
                                   alloc.getDynamicSizes(), async);
        alloc.replaceAllUsesWith(buffer);
        alloc.erase();
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        deallocDevice(b, loc, dealloc.getMemref(), async);
        dealloc.erase();
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        linalg::CopyOp::create(b, loc, copy.getSource(), copy.getTarget());
        copy.erase();
      } else if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
        // The global lives in host memory: copy it to the device on every
        // call (constants are small: masks and tables).
        b.setInsertionPointAfter(global);
        Value buffer = allocDevice(b, loc, global.getType(), ValueRange());
        Value start = startToken(b, loc);
        auto copy = gpu::MemcpyOp::create(
            b, loc, b.getType<gpu::AsyncTokenType>(), ValueRange{start},
            buffer, global.getResult());
        waitFor(b, loc, copy.getAsyncToken());
        global.getResult().replaceAllUsesExcept(buffer, copy);
        constants.push_back(buffer);
      } else {
        op->emitOpError("in host code: a GPU function may only allocate "
                        "device memory (memref.alloc)");
        return signalPassFailure();
      }
    }
    // Free the device copies of constants before every return.
    if (!constants.empty())
      func.walk([&](func::ReturnOp ret) {
        b.setInsertionPoint(ret);
        for (Value buffer : constants)
          deallocDevice(b, ret.getLoc(), buffer);
      });
  }
};
} // namespace

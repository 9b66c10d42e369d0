//===- CollectivesToNCCL.cpp - tfm collectives as NCCL calls --------------===//
//
// tfm-collectives-to-nccl (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "CollectiveBuffers.h"

#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Runtime/Nccl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCOLLECTIVESTONCCL
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

/// The runtime function `name` of type `type`, declared once in `module`.
/// Memref operands pass as pointers to their descriptors
/// (`_mlir_ciface_<name>`, tfm/Runtime/Nccl.h).
static func::FuncOp getRuntimeFunction(ModuleOp module, StringRef name,
                                       FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto function = func::FuncOp::create(b, module.getLoc(), name, type);
  function.setPrivate();
  function->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    b.getUnitAttr());
  return function;
}

namespace {
struct CollectivesToNCCLPass
    : public tfm::impl::TfmCollectivesToNCCLBase<CollectivesToNCCLPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> found = collectives::collectCollectives(module);
    MLIRContext *ctx = &getContext();
    auto flatType =
        MemRefType::get({ShapedType::kDynamic}, Float32Type::get(ctx));
    Type i64 = IntegerType::get(ctx, 64);
    for (Operation *op : found) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      auto rank = [&]() -> Value {
        func::FuncOp function =
            getRuntimeFunction(module, runtime::kNcclRankFunction,
                               FunctionType::get(ctx, {}, {i64}));
        Value value = func::CallOp::create(b, loc, function).getResult(0);
        return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
      };
      if (isa<RankOp>(op)) {
        op->getResult(0).replaceAllUsesWith(rank());
        op->erase();
        continue;
      }
      // Both buffers as memref<?xf32>: one runtime function for every
      // shape.
      auto sum = [&](Value source, Value target) {
        func::FuncOp function = getRuntimeFunction(
            module, runtime::kNcclAllReduceFunction,
            FunctionType::get(ctx, {flatType, flatType}, {}));
        auto flat = [&](Value buffer) -> Value {
          return memref::CastOp::create(b, loc, flatType,
                                        collectives::flatten(b, loc, buffer));
        };
        func::CallOp::create(b, loc, function,
                             ValueRange{flat(source), flat(target)});
      };
      if (auto reduce = dyn_cast<BufferAllReduceOp>(op)) {
        sum(reduce.getSource(), reduce.getTarget());
      } else {
        auto gather = cast<BufferAllGatherOp>(op);
        collectives::gatherAsSum(b, loc, gather.getSource(), gather.getTarget(),
                                 rank(), sum);
      }
      op->erase();
    }
  }
};
} // namespace

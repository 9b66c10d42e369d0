//===- BufferizableOpInterfaceImpl.cpp - bufferizing tfm collectives ------===//
//
// tfm.all_reduce (f32, without bias: what --tfm-to-linalg leaves) reads its
// input and writes a new buffer: tfm.buffer_all_reduce into a fresh
// allocation. The input is read where it lies when it is contiguous (MPI
// reads a contiguous buffer), else copied first.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/Tfm/Transforms/BufferizableOpInterfaceImpl.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::tfm;

namespace {
struct AllReduceOpInterface
    : public BufferizableOpInterface::ExternalModel<AllReduceOpInterface,
                                                    AllReduceOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto reduce = cast<AllReduceOp>(op);
    auto type = cast<RankedTensorType>(reduce.getResult().getType());
    if (reduce.getBias() || !type.getElementType().isF32())
      return op->emitOpError()
             << "bufferizes only as an f32 sum without bias (run "
                "--tfm-to-linalg first)";
    FailureOr<Value> source =
        getBuffer(rewriter, reduce.getInput(), options, state);
    if (failed(source))
      return failure();
    Location loc = op->getLoc();
    auto contiguous = MemRefType::get(type.getShape(), type.getElementType());
    Value input = *source;
    if (input.getType() != contiguous) {
      input = memref::AllocOp::create(rewriter, loc, contiguous);
      memref::CopyOp::create(rewriter, loc, *source, input);
    }
    Value target = memref::AllocOp::create(rewriter, loc, contiguous);
    BufferAllReduceOp::create(rewriter, loc, input, target);
    replaceOpWithBufferizedValues(rewriter, op, target);
    return success();
  }
};
} // namespace

void mlir::tfm::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TfmDialect *) {
    AllReduceOp::attachInterface<AllReduceOpInterface>(*ctx);
  });
}

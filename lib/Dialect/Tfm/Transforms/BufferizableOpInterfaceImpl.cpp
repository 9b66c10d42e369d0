//===- BufferizableOpInterfaceImpl.cpp - bufferizing tfm collectives ------===//
//
// tfm.all_reduce (f32, without bias: what --tfm-to-linalg leaves) and
// tfm.all_gather (f32) read their input and write a new buffer:
// tfm.buffer_all_reduce / tfm.buffer_all_gather into a fresh allocation. The input is read where it lies when it is contiguous (MPI
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
/// A collective that reads its one operand and writes a fresh f32 buffer
/// (`BufferOp`), the operand's buffer made contiguous first.
template <typename Op, typename BufferOp>
struct CollectiveOpInterface
    : public BufferizableOpInterface::ExternalModel<
          CollectiveOpInterface<Op, BufferOp>, Op> {
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
    auto collective = cast<Op>(op);
    auto inputType = cast<RankedTensorType>(collective.getInput().getType());
    auto type = cast<RankedTensorType>(collective.getResult().getType());
    if (op->getNumOperands() != 1 || !type.getElementType().isF32())
      return op->emitOpError()
             << "bufferizes only in f32 without bias (run --tfm-to-linalg "
                "first)";
    FailureOr<Value> source =
        getBuffer(rewriter, collective.getInput(), options, state);
    if (failed(source))
      return failure();
    Location loc = op->getLoc();
    auto contiguousInput =
        MemRefType::get(inputType.getShape(), inputType.getElementType());
    Value input = *source;
    if (input.getType() != contiguousInput) {
      input = memref::AllocOp::create(rewriter, loc, contiguousInput);
      memref::CopyOp::create(rewriter, loc, *source, input);
    }
    Value target = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
    BufferOp::create(rewriter, loc, input, target);
    replaceOpWithBufferizedValues(rewriter, op, target);
    return success();
  }
};
} // namespace

void mlir::tfm::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TfmDialect *) {
    AllReduceOp::attachInterface<
        CollectiveOpInterface<AllReduceOp, BufferAllReduceOp>>(*ctx);
    AllGatherOp::attachInterface<
        CollectiveOpInterface<AllGatherOp, BufferAllGatherOp>>(*ctx);
  });
}

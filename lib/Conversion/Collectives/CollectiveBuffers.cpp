//===- CollectiveBuffers.cpp - what both collective lowerings share -------===//
#include "CollectiveBuffers.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

SmallVector<Operation *> tfm::collectives::collectCollectives(ModuleOp module) {
  SmallVector<Operation *> collectives;
  module.walk([&](Operation *op) {
    if (isa<BufferAllReduceOp, BufferAllGatherOp, RankOp>(op))
      collectives.push_back(op);
  });
  return collectives;
}

Value tfm::collectives::flatten(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getRank() == 1)
    return buffer;
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return memref::CollapseShapeOp::create(b, loc, buffer,
                                         ArrayRef<ReassociationIndices>{all});
}

void tfm::collectives::gatherAsSum(
    OpBuilder &b, Location loc, Value slice, Value target, Value rank,
    const std::function<void(Value, Value)> &sum) {
  auto sliceType = cast<MemRefType>(slice.getType());
  auto type = cast<MemRefType>(target.getType());
  int64_t dims = type.getRank();
  Value placed = memref::AllocOp::create(b, loc, type);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  linalg::FillOp::create(b, loc, zero, placed);
  Value offset = arith::MulIOp::create(
      b, loc, rank,
      arith::ConstantIndexOp::create(b, loc, sliceType.getShape().back()));
  SmallVector<OpFoldResult> offsets(dims, b.getIndexAttr(0));
  offsets.back() = offset;
  SmallVector<OpFoldResult> sizes, strides(dims, b.getIndexAttr(1));
  for (int64_t dim : sliceType.getShape())
    sizes.push_back(b.getIndexAttr(dim));
  Value slot =
      memref::SubViewOp::create(b, loc, placed, offsets, sizes, strides);
  memref::CopyOp::create(b, loc, slice, slot);
  sum(placed, target);
  memref::DeallocOp::create(b, loc, placed);
}

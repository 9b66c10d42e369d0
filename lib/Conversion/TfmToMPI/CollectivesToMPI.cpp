//===- CollectivesToMPI.cpp - tfm collectives as mpi dialect ops ----------===//
//
// tfm-collectives-to-mpi (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCOLLECTIVESTOMPI
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// The DLTI key the mpi dialect's lowering reads to pick the MPI ABI.
constexpr llvm::StringLiteral kMpiImplementationKey = "MPI:Implementation";

struct CollectivesToMPIPass
    : public tfm::impl::TfmCollectivesToMPIBase<CollectivesToMPIPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> collectives;
    module.walk([&](Operation *op) {
      if (isa<BufferAllReduceOp, BufferAllGatherOp, RankOp>(op))
        collectives.push_back(op);
    });
    if (collectives.empty())
      return;
    MLIRContext *ctx = &getContext();
    for (Operation *op : collectives) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value comm = mpi::CommWorldOp::create(b, loc, mpi::CommType::get(ctx));
      if (auto rank = dyn_cast<RankOp>(op)) {
        Value index = arith::IndexCastOp::create(
            b, loc, b.getIndexType(),
            mpi::CommRankOp::create(b, loc, TypeRange{b.getI32Type()}, comm)
                .getRank());
        rank.getResult().replaceAllUsesWith(index);
        op->erase();
        continue;
      }
      // MLIR 22's mpi-to-llvm counts a buffer's elements from its first
      // dimension only: pass buffers as the 1-D buffers they are (identity
      // layouts, BufferizableOpInterfaceImpl.cpp).
      auto flatten = [&](Value buffer) -> Value {
        auto type = cast<MemRefType>(buffer.getType());
        if (type.getRank() == 1)
          return buffer;
        ReassociationIndices all;
        for (int64_t d = 0; d < type.getRank(); ++d)
          all.push_back(d);
        return memref::CollapseShapeOp::create(
            b, loc, buffer, ArrayRef<ReassociationIndices>{all});
      };
      auto sum = [&](Value source, Value target) {
        mpi::AllReduceOp::create(b, loc, TypeRange{}, flatten(source),
                                 flatten(target),
                                 mpi::MPI_ReductionOpEnum::MPI_SUM, comm);
      };
      if (auto reduce = dyn_cast<BufferAllReduceOp>(op)) {
        sum(reduce.getSource(), reduce.getTarget());
      } else {
        // No all-gather in the mpi dialect: each rank puts its slice, at
        // rank * n of the last dimension, into zeros, and the sum of those
        // is every slice in place (exact: the others add zeros).
        auto gather = cast<BufferAllGatherOp>(op);
        MemRefType sliceType = gather.getSource().getType();
        MemRefType type = gather.getTarget().getType();
        int64_t rank = type.getRank();
        Value placed = memref::AllocOp::create(b, loc, type);
        Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
        linalg::FillOp::create(b, loc, zero, placed);
        Value rankIndex = arith::IndexCastOp::create(
            b, loc, b.getIndexType(),
            mpi::CommRankOp::create(b, loc, TypeRange{b.getI32Type()}, comm)
                .getRank());
        Value offset = arith::MulIOp::create(
            b, loc, rankIndex,
            arith::ConstantIndexOp::create(b, loc,
                                           sliceType.getShape().back()));
        SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
        offsets.back() = offset;
        SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
        for (int64_t dim : sliceType.getShape())
          sizes.push_back(b.getIndexAttr(dim));
        Value slot =
            memref::SubViewOp::create(b, loc, placed, offsets, sizes, strides);
        memref::CopyOp::create(b, loc, gather.getSource(), slot);
        sum(placed, gather.getTarget());
        memref::DeallocOp::create(b, loc, placed);
      }
      op->erase();
    }
    // The MPI tfm links at run time is Open MPI (Debian's libopenmpi).
    SmallVector<DataLayoutEntryInterface> entries;
    if (auto existing = module->getAttrOfType<MapAttr>(DLTIDialect::kMapAttrName))
      for (DataLayoutEntryInterface entry : existing.getEntries())
        entries.push_back(entry);
    entries.push_back(DataLayoutEntryAttr::get(
        StringAttr::get(ctx, kMpiImplementationKey),
        StringAttr::get(ctx, "OpenMPI")));
    module->setAttr(DLTIDialect::kMapAttrName, MapAttr::get(ctx, entries));
  }
};
} // namespace

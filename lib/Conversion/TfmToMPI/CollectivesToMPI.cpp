//===- CollectivesToMPI.cpp - tfm collectives as mpi dialect ops ----------===//
//
// tfm-collectives-to-mpi (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/DLTI/DLTI.h"
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
    SmallVector<BufferAllReduceOp> reduces;
    module.walk([&](BufferAllReduceOp op) { reduces.push_back(op); });
    if (reduces.empty())
      return;
    MLIRContext *ctx = &getContext();
    for (BufferAllReduceOp op : reduces) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value comm = mpi::CommWorldOp::create(b, loc, mpi::CommType::get(ctx));
      // MLIR 22's mpi-to-llvm counts a buffer's elements from its first
      // dimension only: pass both as the 1-D buffers they are (identity
      // layouts, BufferizableOpInterfaceImpl.cpp).
      auto flatten = [&](Value buffer) -> Value {
        auto type = cast<MemRefType>(buffer.getType());
        if (type.getRank() == 1)
          return buffer;
        ReassociationIndices all;
        for (int64_t d = 0; d < type.getRank(); ++d)
          all.push_back(d);
        return memref::CollapseShapeOp::create(b, loc, buffer,
                                               ArrayRef<ReassociationIndices>{all});
      };
      mpi::AllReduceOp::create(b, loc, TypeRange{}, flatten(op.getSource()),
                               flatten(op.getTarget()),
                               mpi::MPI_ReductionOpEnum::MPI_SUM, comm);
      op.erase();
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

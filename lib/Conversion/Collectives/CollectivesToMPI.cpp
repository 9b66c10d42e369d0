//===- CollectivesToMPI.cpp - tfm collectives as mpi dialect ops ----------===//
//
// tfm-collectives-to-mpi (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "CollectiveBuffers.h"

#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/DLTI/DLTI.h"
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
    SmallVector<Operation *> found = collectives::collectCollectives(module);
    if (found.empty())
      return;
    MLIRContext *ctx = &getContext();
    for (Operation *op : found) {
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
      auto sum = [&](Value source, Value target) {
        mpi::AllReduceOp::create(b, loc, TypeRange{},
                                 collectives::flatten(b, loc, source),
                                 collectives::flatten(b, loc, target),
                                 mpi::MPI_ReductionOpEnum::MPI_SUM, comm);
      };
      if (auto reduce = dyn_cast<BufferAllReduceOp>(op)) {
        sum(reduce.getSource(), reduce.getTarget());
      } else {
        auto gather = cast<BufferAllGatherOp>(op);
        Value rank = arith::IndexCastOp::create(
            b, loc, b.getIndexType(),
            mpi::CommRankOp::create(b, loc, TypeRange{b.getI32Type()}, comm)
                .getRank());
        collectives::gatherAsSum(b, loc, gather.getSource(), gather.getTarget(),
                                 rank, sum);
      }
      op->erase();
    }
    // The MPI tfm links at run time is Open MPI (Debian's libopenmpi).
    SmallVector<DataLayoutEntryInterface> entries;
    if (auto existing =
            module->getAttrOfType<MapAttr>(DLTIDialect::kMapAttrName))
      for (DataLayoutEntryInterface entry : existing.getEntries())
        entries.push_back(entry);
    entries.push_back(
        DataLayoutEntryAttr::get(StringAttr::get(ctx, kMpiImplementationKey),
                                 StringAttr::get(ctx, "OpenMPI")));
    module->setAttr(DLTIDialect::kMapAttrName, MapAttr::get(ctx, entries));
  }
};
} // namespace

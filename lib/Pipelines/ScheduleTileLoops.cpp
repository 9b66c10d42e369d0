//===- ScheduleTileLoops.cpp - dynamic OpenMP schedule for AMX loops ------===//
//
// tfm-schedule-tile-loops: an OpenMP worksharing loop whose iterations run
// AMX tiles (the column blocks of tfm-cpu-amx-contractions) hands them out
// one at a time (schedule(dynamic)) instead of in equal static shares. A
// core's AMX unit is shared by its hardware threads: a thread whose sibling
// (another process, another VM) also runs tiles gets about half the tile
// throughput, and with static shares the others wait for it (measured on a
// 2-vCPU VM: two threads no faster than one while one vCPU's tile rate was
// halved). Each block is still computed whole by one thread, in one order,
// so the results do not depend on which thread takes it.
//
//===----------------------------------------------------------------------===//
#include "tfm/Pipelines/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMSCHEDULETILELOOPS
#include "tfm/Pipelines/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct ScheduleTileLoopsPass
    : public tfm::impl::TfmScheduleTileLoopsBase<ScheduleTileLoopsPass> {
  void runOnOperation() override {
    getOperation()->walk([](omp::WsloopOp loop) {
      bool runsTiles = loop->walk([](amx::TileMulFOp) {
                             return WalkResult::interrupt();
                           }).wasInterrupted();
      if (runsTiles)
        loop.setScheduleKind(omp::ClauseScheduleKind::Dynamic);
    });
  }
};
} // namespace

//===- ScheduleBlockLoops.cpp - dynamic OpenMP schedule for block loops ---===//
//
// tfm-schedule-block-loops: an OpenMP worksharing loop whose iterations run
// contraction register tiles (the cache blocks of GEMMs, flash attention's
// query tiles, decode's GEMV column groups; FMA, pair-dot or AMX tiles)
// hands them out in chunks to whichever thread is free instead of in equal
// static shares.
//
// Equal shares are only equal while every thread runs at the same speed. On
// a shared machine they do not: a vCPU whose core another tenant's thread
// also uses, or that the hypervisor deschedules for a while, finishes its
// share late, and every other thread waits for it at the loop's barrier.
// Measured on a 2-vCPU VM with a busy loop pinned to one vCPU: the Llama
// block (S=512, two threads) took 284-288 ms by median with static shares
// against 220-231 ms dynamic (126-138 ms on the quiet machine either way);
// a core's AMX unit shared with another tile user halved that thread's tile
// rate the same way.
//
// Chunks: one block each up to kMaxChunks blocks; more iterations (decode's
// GEMV column groups, a few microseconds each) are grouped into kMaxChunks
// chunks so that handing them out costs at most kMaxChunks dispatches.
// Each block is computed whole by one thread in one order, so the results
// do not depend on the schedule or the thread count.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Matchers.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMSCHEDULEBLOCKLOOPS
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

/// Most chunks a dynamically scheduled loop is handed out in.
static constexpr int64_t kMaxChunks = 32;

/// Whether `loop`'s body multiplies register tiles.
static bool runsRegisterTiles(omp::WsloopOp loop) {
  return loop
      ->walk([](Operation *op) {
        if (isa<vector::ContractionOp, vector::FMAOp, x86vector::DotBF16Op,
                amx::TileMulFOp>(op))
          return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

/// Iterations of `loop`'s nest, or nullopt when a bound is not a constant.
static std::optional<int64_t> tripCount(omp::WsloopOp loop) {
  auto nest = dyn_cast<omp::LoopNestOp>(loop.getWrappedLoop());
  if (!nest)
    return std::nullopt;
  int64_t count = 1;
  for (auto [lb, ub, step] :
       llvm::zip(nest.getLoopLowerBounds(), nest.getLoopUpperBounds(),
                 nest.getLoopSteps())) {
    APInt l, u, s;
    if (!matchPattern(lb, m_ConstantInt(&l)) ||
        !matchPattern(ub, m_ConstantInt(&u)) ||
        !matchPattern(step, m_ConstantInt(&s)) || s.getSExtValue() <= 0)
      return std::nullopt;
    int64_t extent = u.getSExtValue() - l.getSExtValue() +
                     (nest.getLoopInclusive() ? 1 : 0);
    count *= std::max<int64_t>(0, llvm::divideCeil(extent, s.getSExtValue()));
  }
  return count;
}

namespace {
struct ScheduleBlockLoopsPass
    : public tfm::impl::TfmScheduleBlockLoopsBase<ScheduleBlockLoopsPass> {
  void runOnOperation() override {
    getOperation()->walk([](omp::WsloopOp loop) {
      if (!runsRegisterTiles(loop))
        return;
      loop.setScheduleKind(omp::ClauseScheduleKind::Dynamic);
      std::optional<int64_t> count = tripCount(loop);
      if (!count || *count <= kMaxChunks)
        return;
      OpBuilder builder(loop);
      Value chunk = arith::ConstantIntOp::create(
          builder, loop.getLoc(), llvm::divideCeil(*count, kMaxChunks), 32);
      loop.getScheduleChunkMutable().assign(chunk);
    });
  }
};
} // namespace

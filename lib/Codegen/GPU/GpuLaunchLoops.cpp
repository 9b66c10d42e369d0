//===- GpuLaunchLoops.cpp - host loop nests to GPU kernels ----------------===//
//
// --tfm-gpu-launch-loops: see Passes.td. The general SIMT path of the GPU
// pipeline: correct for every loop nest linalg produces, one thread per
// iteration of its parallel dimensions, reductions sequential per thread.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPULAUNCHLOOPS
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// Whether `op` (or an op nested in it) reads or writes the contents of a
/// memref: such ops may not run on the host.
bool touchesMemory(Operation *op) {
  WalkResult result = op->walk([](Operation *nested) {
    if (isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp,
            memref::GenericAtomicRMWOp, memref::CopyOp, linalg::LinalgOp,
            vector::TransferReadOp, vector::TransferWriteOp, vector::LoadOp,
            vector::StoreOp>(nested))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

bool containsParallelLoop(Operation *op) {
  return op
      ->walk([](scf::ParallelOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// `gpu.wait async`: a token with no dependencies.
Value startToken(OpBuilder &b, Location loc) {
  return gpu::WaitOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                             ValueRange())
      .getAsyncToken();
}

/// `op` in a kernel of one thread. Host code may need its results (the MoE
/// routing counts tokens per expert and sizes loops with the counts): each
/// scalar result goes through a one-element device buffer and is copied back
/// to the host after the kernel (a synchronisation per such op).
LogicalResult launchSerial(Operation *op) {
  for (Type type : op->getResultTypes())
    if (!type.isIntOrIndexOrFloat())
      return op->emitOpError("reads GPU memory and returns ")
             << type << ", which tfm-gpu-launch-loops cannot copy back to "
                        "the host";
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value zero = indexConstant(b, loc, 0);
  SmallVector<Value> deviceResults;
  for (Type type : op->getResultTypes()) {
    auto alloc = gpu::AllocOp::create(
        b, loc, MemRefType::get({1}, type), b.getType<gpu::AsyncTokenType>(),
        ValueRange{startToken(b, loc)}, ValueRange(), ValueRange(),
        /*hostShared=*/false);
    gpu::WaitOp::create(b, loc, Type(), ValueRange{alloc.getAsyncToken()});
    deviceResults.push_back(alloc.getMemref());
  }
  Value one = indexConstant(b, loc, 1);
  auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
  OpBuilder after(op->getContext());
  after.setInsertionPointAfter(launch);
  // Host copies of the results, read after the kernel.
  for (auto [result, device] : llvm::zip(op->getResults(), deviceResults)) {
    auto type = cast<MemRefType>(device.getType());
    Value host = memref::AllocaOp::create(after, loc, type);
    auto copy = gpu::MemcpyOp::create(
        after, loc, after.getType<gpu::AsyncTokenType>(),
        ValueRange{startToken(after, loc)}, host, device);
    gpu::WaitOp::create(after, loc, Type(), ValueRange{copy.getAsyncToken()});
    Value value = memref::LoadOp::create(after, loc, host, ValueRange{zero});
    auto dealloc = gpu::DeallocOp::create(
        after, loc, after.getType<gpu::AsyncTokenType>(),
        ValueRange{startToken(after, loc)}, device);
    gpu::WaitOp::create(after, loc, Type(),
                        ValueRange{dealloc.getAsyncToken()});
    result.replaceAllUsesWith(value);
  }
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  auto terminator = gpu::TerminatorOp::create(b, loc);
  op->moveBefore(terminator);
  b.setInsertionPoint(terminator);
  for (auto [result, device] : llvm::zip(op->getResults(), deviceResults))
    memref::StoreOp::create(b, loc, result, device, ValueRange{zero});
  return success();
}

/// `loop` as a kernel with one thread per iteration: the iteration space
/// linearised with the last dimension fastest, `blockSize` threads a block.
LogicalResult launchParallel(scf::ParallelOp loop, int64_t blockSize) {
  if (!loop.getInitVals().empty())
    return loop.emitOpError("with reductions is not supported by "
                            "tfm-gpu-launch-loops");
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  // Trip count of each dimension, ceil((upper - lower) / step), and their
  // product.
  SmallVector<Value> trips;
  for (auto [l, u, st] : llvm::zip(loop.getLowerBound(),
                                   loop.getUpperBound(), loop.getStep())) {
    Value extent = arith::SubIOp::create(b, loc, u, l);
    trips.push_back(arith::CeilDivSIOp::create(b, loc, extent, st));
  }
  Value total = trips.front();
  for (Value trip : ArrayRef<Value>(trips).drop_front())
    total = arith::MulIOp::create(b, loc, total, trip);
  Value threads = indexConstant(b, loc, blockSize);
  Value one = indexConstant(b, loc, 1);
  // At least one block: a loop with no iterations launches one idle block
  // (a grid of zero blocks is a launch error).
  Value grid = arith::MaxUIOp::create(
      b, loc, arith::CeilDivSIOp::create(b, loc, total, threads), one);
  auto launch =
      gpu::LaunchOp::create(b, loc, grid, one, one, threads, one, one);

  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  auto terminator = gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(terminator);
  Value id = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                            indexConstant(b, loc, blockSize)),
      launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        id, total);
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  b.setInsertionPoint(guard.thenBlock()->getTerminator());
  SmallVector<Value> indices;
  if (trips.size() == 1) {
    indices.push_back(id);
  } else {
    auto delinearize =
        affine::AffineDelinearizeIndexOp::create(b, loc, id, ValueRange(trips));
    llvm::append_range(indices, delinearize.getResults());
  }
  IRMapping mapping;
  for (auto [iv, l, index, st] :
       llvm::zip(loop.getInductionVars(), loop.getLowerBound(), indices,
                 loop.getStep()))
    mapping.map(iv, arith::AddIOp::create(
                        b, loc, l, arith::MulIOp::create(b, loc, index, st)));
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
  loop.erase();
  return success();
}

/// Kernels for the ops of `block`, recursively through host region ops.
LogicalResult launchBlock(Block &block, int64_t blockSize) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (isa<gpu::LaunchOp>(op))
      continue;
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      if (failed(launchParallel(loop, blockSize)))
        return failure();
      continue;
    }
    if (op.getNumRegions() && containsParallelLoop(&op)) {
      for (Region &region : op.getRegions())
        for (Block &nested : region)
          if (failed(launchBlock(nested, blockSize)))
            return failure();
      continue;
    }
    if (touchesMemory(&op) && failed(launchSerial(&op)))
      return failure();
  }
  return success();
}

/// Nested parallel loops left in a kernel become sequential loops.
void sequentializeNestedLoops(gpu::LaunchOp launch) {
  SmallVector<scf::ParallelOp> loops;
  launch.walk([&](scf::ParallelOp loop) { loops.push_back(loop); });
  for (scf::ParallelOp loop : llvm::reverse(loops)) {
    OpBuilder b(loop);
    auto nest = scf::buildLoopNest(
        b, loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
        loop.getStep(),
        [&](OpBuilder &nb, Location, ValueRange ivs) {
          IRMapping mapping;
          mapping.map(loop.getInductionVars(), ivs);
          for (Operation &op : loop.getBody()->without_terminator())
            nb.clone(op, mapping);
        });
    (void)nest;
    loop.erase();
  }
}

/// Keeps the accumulator of a sequential reduction loop in a register: in
///
///   scf.for %k ... { %a = memref.load %m[%i] ... memref.store %b, %m[%i] }
///
/// with loop-invariant indices, where that load and store are the loop's
/// only accesses to %m and its only store, %m[%i] is loaded once before the
/// loop, carried as an iter_arg and stored once after it. This is what
/// linalg reductions (matmul over K, norms over d) become on the SIMT path;
/// without it each step goes through global memory. The other buffers the
/// loop reads are the reduction's inputs, which never alias its output.
void promoteAccumulators(gpu::LaunchOp launch) {
  SmallVector<scf::ForOp> loops;
  launch.walk([&](scf::ForOp loop) { loops.push_back(loop); });
  // Innermost first, so that an outer loop sees the promoted inner one.
  for (scf::ForOp loop : loops) {
    Block *body = loop.getBody();
    memref::StoreOp store;
    bool otherStores = false;
    loop.walk([&](Operation *op) {
      if (auto s = dyn_cast<memref::StoreOp>(op)) {
        if (store || s->getBlock() != body)
          otherStores = true;
        store = s;
      } else if (isa<memref::AtomicRMWOp, memref::GenericAtomicRMWOp,
                     memref::CopyOp>(op)) {
        otherStores = true;
      }
    });
    if (!store || otherStores)
      continue;
    Value buffer = store.getMemRef();
    auto invariant = [&](Value v) { return loop.isDefinedOutsideOfLoop(v); };
    if (!llvm::all_of(store.getIndices(), invariant) || !invariant(buffer))
      continue;
    memref::LoadOp load;
    bool otherUses = false;
    for (Operation *user : buffer.getUsers()) {
      if (!loop->isAncestor(user) || user == store)
        continue;
      auto l = dyn_cast<memref::LoadOp>(user);
      if (l && !load && l->getBlock() == body &&
          l.getIndices() == store.getIndices() &&
          l->isBeforeInBlock(store))
        load = l;
      else
        otherUses = true;
    }
    if (!load || otherUses)
      continue;
    // Load before, carry, store after.
    IRRewriter b(loop.getContext());
    b.setInsertionPoint(loop);
    Value initial = memref::LoadOp::create(b, load.getLoc(), buffer,
                                           load.getIndices());
    auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        b, ValueRange{initial}, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
          return SmallVector<Value>{store.getValueToStore()};
        }));
    BlockArgument carried = newLoop.getRegionIterArgs().back();
    load.replaceAllUsesWith(carried);
    load.erase();
    b.setInsertionPointAfter(newLoop);
    memref::StoreOp::create(b, store.getLoc(), newLoop.getResults().back(),
                            buffer, store.getIndices());
    store.erase();
  }
}

struct GpuLaunchLoopsPass
    : public tfm::impl::TfmGpuLaunchLoopsBase<GpuLaunchLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation().emitError("tfm-gpu-launch-loops: block-size must be in "
                               "[1, 1024], got ")
          << blockSize;
      return signalPassFailure();
    }
    for (Block &block : getOperation().getBody())
      if (failed(launchBlock(block, blockSize)))
        return signalPassFailure();
    getOperation().walk([](gpu::LaunchOp launch) {
      sequentializeNestedLoops(launch);
      promoteAccumulators(launch);
    });
  }
};
} // namespace

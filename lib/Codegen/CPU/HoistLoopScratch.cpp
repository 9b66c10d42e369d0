//===- HoistLoopScratch.cpp - loop scratch once per thread, not per tile --===//
//
// tfm-hoist-loop-scratch: see Passes.td. A buffer allocated in a loop body
// whose contents and address stay in one iteration is as good reused by
// every iteration; hoisted to the entry of the code one thread runs (the
// omp.parallel region a worksharing loop runs in, or the function) as a
// memref.alloca, it is one stack slot per thread instead of a malloc and
// free per iteration (one heap buffer per thread when too large).
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "tfm/Codegen/Common/TemporaryBuffers.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMHOISTLOOPSCRATCH
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

/// The largest buffer moved to the stack, and the most bytes moved onto the
/// stack of one scope (larger ones are hoisted on the heap): an OpenMP worker's
/// stack is a few MiB (libomp's default 4 MiB on x86-64), and flash attention's
/// per-tile scratch is a few KiB.
static constexpr uint64_t kMaxBufferBytes = 16 * 1024;
static constexpr uint64_t kMaxScopeBytes = 64 * 1024;
/// The largest buffer hoisted on the heap: hoisted, buffers of different
/// loops are live at once for the whole scope; above this, a malloc per
/// iteration costs little beside the work that fills the buffer.
static constexpr uint64_t kMaxHeapBytes = 1024 * 1024;

/// The deallocations of `alloc` when its buffer and every view of it are
/// only read, written and freed within the iteration that allocates it;
/// nullopt when the buffer may outlive the iteration (yielded, carried,
/// returned, passed to a call that may keep it, its address taken) or is
/// used by an op this cannot tell about.
static std::optional<SmallVector<memref::DeallocOp>>
getIterationLocalDeallocs(memref::AllocOp alloc) {
  SmallVector<memref::DeallocOp> deallocs;
  SmallVector<Value> worklist{alloc.getResult()};
  llvm::SmallPtrSet<Value, 8> seen{alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
        deallocs.push_back(dealloc);
        continue;
      }
      if (user->hasTrait<OpTrait::IsTerminator>() ||
          isa<memref::ExtractAlignedPointerAsIndexOp>(user))
        return std::nullopt;
      if (auto call = dyn_cast<CallOpInterface>(user)) {
        if (tfm::mayKeepBuffers(call))
          return std::nullopt;
        continue;
      }
      // A view aliases the buffer; any other op with memref results (a
      // loop carrying it, a select) might hand it on.
      bool isView = isa<ViewLikeOpInterface>(user);
      for (Value result : user->getResults()) {
        if (!isa<BaseMemRefType>(result.getType()))
          continue;
        if (!isView)
          return std::nullopt;
        if (seen.insert(result).second)
          worklist.push_back(result);
      }
    }
  }
  return deallocs;
}

/// The op whose region becomes the LLVM function `op` runs in, whose entry
/// block's allocas are the function's frame: the omp.parallel region each
/// thread runs (outlined), else the function. Not merely the nearest
/// AutomaticAllocationScope: scf.for is one, but an alloca in a loop body
/// lowers to stack that grows with every iteration.
static Operation *getFrameScope(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<omp::ParallelOp, FunctionOpInterface>(parent))
      return parent;
  return nullptr;
}

/// Whether `op` runs once per iteration of a loop inside `scope`, and no
/// loop between them may run its iterations at the same time (an
/// scf.forall or scf.parallel left sequential by now would be one).
static bool isInSequentialLoop(Operation *op, Operation *scope) {
  bool inLoop = false;
  for (Operation *parent = op->getParentOp(); parent != scope;
       parent = parent->getParentOp()) {
    if (isa<scf::ForallOp, scf::ParallelOp>(parent))
      return false;
    // omp.loop_nest (a worksharing loop's iterations on one thread) is not
    // a LoopLikeOpInterface.
    if (isa<LoopLikeOpInterface, omp::LoopNestOp>(parent))
      inLoop = true;
  }
  return inLoop;
}

namespace {
struct HoistLoopScratchPass
    : public tfm::impl::TfmHoistLoopScratchBase<HoistLoopScratchPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation()->walk(
        [&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    llvm::DenseMap<Operation *, uint64_t> stackBytes;
    llvm::DenseMap<Operation *, Operation *> lastHoisted;
    for (memref::AllocOp alloc : allocs) {
      std::optional<uint64_t> bytes =
          tfm::getStaticBufferBytes(alloc.getType());
      if (!bytes || *bytes == 0 || *bytes > kMaxHeapBytes ||
          !alloc.getSymbolOperands().empty())
        continue;
      Operation *scope = getFrameScope(alloc);
      if (!scope || !scope->getRegion(0).hasOneBlock() ||
          !isInSequentialLoop(alloc, scope))
        continue;
      std::optional<SmallVector<memref::DeallocOp>> deallocs =
          getIterationLocalDeallocs(alloc);
      if (!deallocs)
        continue;
      // In program order, after those hoisted before.
      Block &entry = scope->getRegion(0).front();
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      Operation *&last = lastHoisted[scope];
      if (last)
        b.setInsertionPointAfter(last);
      Value hoisted;
      uint64_t &stack = stackBytes[scope];
      if (*bytes <= kMaxBufferBytes && stack + *bytes <= kMaxScopeBytes) {
        stack += *bytes;
        hoisted = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                           alloc.getAlignmentAttr());
      } else {
        // Too large for the stack: one heap buffer per thread (or call),
        // freed where the scope ends.
        hoisted = memref::AllocOp::create(b, alloc.getLoc(), alloc.getType(),
                                          alloc.getAlignmentAttr());
        b.setInsertionPoint(entry.getTerminator());
        memref::DeallocOp::create(b, alloc.getLoc(), hoisted);
      }
      last = hoisted.getDefiningOp();
      for (memref::DeallocOp dealloc : *deallocs)
        dealloc.erase();
      alloc.replaceAllUsesWith(hoisted);
      alloc.erase();
    }
  }
};
} // namespace

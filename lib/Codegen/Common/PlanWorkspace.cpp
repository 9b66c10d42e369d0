//===- PlanWorkspace.cpp - a function's temporaries in one buffer ---------===//
//
// --tfm-plan-workspace: see Passes.td. Lifetimes are intervals of positions
// in the function's top-level block (an op nested in a loop counts as its
// top-level ancestor), and the placement is the usual greedy interval
// packing: largest buffer first, each at the lowest offset free for its
// whole lifetime.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/Common/Passes.h"
#include "tfm/Codegen/Common/TemporaryBuffers.h"
#include "tfm/Dialect/Tfm/IR/TfmAttrNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/CallInterfaces.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMPLANWORKSPACE
#include "tfm/Codegen/Common/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// What bufferization aligns its allocations to, and so the views here.
constexpr uint64_t kAlignment = 64;

/// One planned buffer: the alloc, its size, its lifetime [first, last] in
/// top-level positions, and (once placed) its offset in the workspace.
struct Buffer {
  memref::AllocOp alloc;
  uint64_t bytes = 0;
  unsigned first = 0, last = 0;
  uint64_t offset = 0;

  bool overlapsInTime(const Buffer &other) const {
    return first <= other.last && other.first <= last;
  }
};

/// The memref results of `op`.
void appendMemRefResults(Operation *op, SmallVectorImpl<Value> &values) {
  for (Value result : op->getResults())
    if (isa<MemRefType>(result.getType()))
      values.push_back(result);
}

/// The last top-level position at which `alloc` or a value that may alias it
/// is used; nullopt when the buffer escapes the function (returned, or passed
/// to a call that may keep it), which leaves its lifetime unknown. Aliases are the results of
/// views of it, the memref results of any op that takes it (a loop carrying
/// it as an iteration argument returns it), and the results of an op whose
/// region yields it.
std::optional<unsigned>
getLastUse(memref::AllocOp alloc,
           const llvm::DenseMap<Operation *, unsigned> &position,
           Block &body) {
  unsigned last = position.lookup(alloc);
  SmallVector<Value> worklist{alloc.getResult()};
  llvm::SmallPtrSet<Value, 8> seen{alloc.getResult()};
  auto push = [&](ArrayRef<Value> values) {
    for (Value v : values)
      if (seen.insert(v).second)
        worklist.push_back(v);
  };
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<func::ReturnOp>(user))
        return std::nullopt;
      if (auto call = dyn_cast<CallOpInterface>(user);
          call && tfm::mayKeepBuffers(call))
        return std::nullopt;
      SmallVector<Value> aliases;
      if (user->hasTrait<OpTrait::IsTerminator>())
        appendMemRefResults(user->getParentOp(), aliases);
      else
        appendMemRefResults(user, aliases);
      push(aliases);
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        return std::nullopt;
      last = std::max(last, position.lookup(top));
    }
  }
  return last;
}

/// Places `buffers` (sorted largest first) and returns the workspace size.
uint64_t placeBuffers(MutableArrayRef<Buffer> buffers) {
  uint64_t total = 0;
  SmallVector<const Buffer *> placed;
  for (Buffer &buffer : buffers) {
    // Buffers live at the same time, by offset: the first gap that fits.
    SmallVector<const Buffer *> conflicts;
    for (const Buffer *other : placed)
      if (buffer.overlapsInTime(*other))
        conflicts.push_back(other);
    llvm::sort(conflicts, [](const Buffer *a, const Buffer *b) {
      return a->offset < b->offset;
    });
    uint64_t offset = 0;
    for (const Buffer *other : conflicts) {
      if (offset + buffer.bytes <= other->offset)
        break;
      offset = std::max(offset,
                        llvm::alignTo(other->offset + other->bytes, kAlignment));
    }
    buffer.offset = offset;
    total = std::max(total, offset + buffer.bytes);
    placed.push_back(&buffer);
  }
  return llvm::alignTo(total, kAlignment);
}

struct PlanWorkspacePass
    : public tfm::impl::TfmPlanWorkspaceBase<PlanWorkspacePass> {
  using TfmPlanWorkspaceBase::TfmPlanWorkspaceBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, unsigned> position;
    for (auto [i, op] : llvm::enumerate(body))
      position[&op] = i;

    SmallVector<Buffer> buffers;
    for (auto alloc : body.getOps<memref::AllocOp>()) {
      std::optional<uint64_t> bytes =
          tfm::getStaticBufferBytes(alloc.getType());
      if (!bytes || *bytes == 0 || !alloc.getDynamicSizes().empty() ||
          !alloc.getSymbolOperands().empty() ||
          alloc.getAlignment().value_or(kAlignment) > kAlignment)
        continue;
      std::optional<unsigned> last = getLastUse(alloc, position, body);
      if (!last)
        continue;
      buffers.push_back({alloc, *bytes, position[alloc], *last});
    }
    // One buffer gains nothing from a workspace.
    if (buffers.size() < 2)
      return;
    // Largest first; ties by birth, so the plan is deterministic.
    llvm::stable_sort(buffers, [](const Buffer &a, const Buffer &b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.first < b.first;
    });
    uint64_t total = placeBuffers(buffers);
    uint64_t unplanned = 0;
    for (const Buffer &buffer : buffers)
      unplanned += llvm::alignTo(buffer.bytes, kAlignment);

    OpBuilder builder(&getContext());
    builder.setInsertionPointToStart(&body);
    Location loc = func.getLoc();
    auto workspaceType =
        MemRefType::get({int64_t(total)}, builder.getI8Type());
    Value workspace = memref::AllocOp::create(
        builder, loc, workspaceType, builder.getI64IntegerAttr(kAlignment));
    for (Buffer &buffer : buffers) {
      builder.setInsertionPoint(buffer.alloc);
      Value offset =
          arith::ConstantIndexOp::create(builder, buffer.alloc.getLoc(),
                                         int64_t(buffer.offset));
      Value view = memref::ViewOp::create(
          builder, buffer.alloc.getLoc(), buffer.alloc.getType(), workspace,
          offset, ValueRange());
      buffer.alloc.replaceAllUsesWith(view);
      buffer.alloc.erase();
    }
    func->setAttr(tfm::kWorkspaceAttrName,
                  builder.getDictionaryAttr({
                      builder.getNamedAttr("bytes",
                                           builder.getI64IntegerAttr(total)),
                      builder.getNamedAttr(
                          "buffers", builder.getI64IntegerAttr(buffers.size())),
                      builder.getNamedAttr("unplanned",
                                           builder.getI64IntegerAttr(unplanned)),
                  }));
    if (report)
      func.emitRemark() << "workspace of @" << func.getName() << ": " << total
                        << " bytes for " << buffers.size()
                        << " buffers of " << unplanned << " bytes";
  }
};
} // namespace

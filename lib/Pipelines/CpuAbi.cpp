//===- CpuAbi.cpp - the calling convention of --tfm-cpu-pipeline ----------===//
//
// The two passes that fix the ABI around one-shot bufferization (see the
// convention in tfm/Pipelines/Pipelines.h):
//   - before it, public tensor arguments are marked read-only, except KV
//     caches (`tfm.kv_cache`), which are marked writable so that a
//     tfm.kv_cache_write bufferizes to a write into the caller's buffer;
//   - after it, the function's copy of each cache (a result equivalent to the
//     cache argument) is dropped, so no out-parameter is made for it.
// And one after the results became out-parameters (tfm-results-in-place):
// a result computed in a buffer of another shape (a [M, N] GEMM output
// returned as [1, M, N]) is computed in the caller's buffer, reshaped,
// instead of being copied into it at the end.
//
//===----------------------------------------------------------------------===//
#include "PipelinePasses.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

static constexpr llvm::StringLiteral kKVCacheAttr = "tfm.kv_cache";

/// The cache names of `func`'s arguments, by index; checks the annotations.
static FailureOr<llvm::StringMap<unsigned>> cacheArguments(func::FuncOp func) {
  llvm::StringMap<unsigned> caches;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    Attribute attr = func.getArgAttr(i, kKVCacheAttr);
    if (!attr)
      continue;
    auto name = dyn_cast<StringAttr>(attr);
    if (!name || !isa<TensorType, MemRefType>(func.getArgumentTypes()[i]))
      return func.emitError() << "argument " << i << ": '" << kKVCacheAttr
                              << "' must be a string on a tensor argument";
    if (!caches.try_emplace(name.getValue(), i).second)
      return func.emitError() << "two arguments are the KV cache '"
                              << name.getValue() << "'";
  }
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto name = func.getResultAttrOfType<StringAttr>(i, kKVCacheAttr);
    if (!func.getResultAttr(i, kKVCacheAttr))
      continue;
    if (!name || !caches.count(name.getValue()))
      return func.emitError()
             << "result " << i << " is marked '" << kKVCacheAttr
             << "' but no argument is the KV cache of that name";
    if (func.getResultTypes()[i] !=
        func.getArgumentTypes()[caches.lookup(name.getValue())])
      return func.emitError() << "result " << i << ": KV cache '"
                              << name.getValue()
                              << "' must have its argument's type";
  }
  return caches;
}

namespace {
struct PrepareCpuAbiPass
    : public PassWrapper<PrepareCpuAbiPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrepareCpuAbiPass)
  StringRef getArgument() const final { return "tfm-prepare-cpu-abi"; }
  StringRef getDescription() const final {
    return "Marks public functions for the C interface, their KV-cache "
           "arguments writable and every other tensor argument read-only";
  }
  void runOnOperation() override {
    OpBuilder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      if (failed(cacheArguments(func)))
        return signalPassFailure();
      func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    b.getUnitAttr());
      // Bufferization must never reuse a caller's input (a weight, the hidden
      // state) as scratch space; caches are the one thing meant to change.
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
        if (isa<TensorType>(type))
          func.setArgAttr(
              i, bufferization::BufferizationDialect::kWritableAttrName,
              b.getBoolAttr(func.getArgAttr(i, kKVCacheAttr) != nullptr));
    }
  }
};

struct DropKVCacheResultsPass
    : public PassWrapper<DropKVCacheResultsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DropKVCacheResultsPass)
  StringRef getArgument() const final { return "tfm-drop-kv-cache-results"; }
  StringRef getDescription() const final {
    return "Drops the KV-cache results that bufferization made equivalent to "
           "their cache arguments";
  }

  /// The buffer `v` is: through casts, and through loops that yield the
  /// buffer they were given unchanged (a per-sequence cache write loops over
  /// the batch, writing each sequence's rows into its iter_arg in place).
  static Value stripCasts(Value v) {
    while (true) {
      if (auto cast = v.getDefiningOp<memref::CastOp>()) {
        v = cast.getSource();
        continue;
      }
      if (auto loop = v.getDefiningOp<scf::ForOp>()) {
        unsigned i = cast<OpResult>(v).getResultNumber();
        if (loop.getYieldedValues()[i] == loop.getRegionIterArgs()[i]) {
          v = loop.getInitArgs()[i];
          continue;
        }
      }
      return v;
    }
  }

  LogicalResult dropResults(func::FuncOp func) {
    FailureOr<llvm::StringMap<unsigned>> caches = cacheArguments(func);
    if (failed(caches))
      return failure();
    llvm::BitVector dropped(func.getNumResults());
    // Result index -> the argument it must be.
    SmallVector<std::pair<unsigned, unsigned>> pairs;
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (auto name = func.getResultAttrOfType<StringAttr>(i, kKVCacheAttr))
        pairs.push_back({i, caches->lookup(name.getValue())});
    if (pairs.empty())
      return success();
    auto returns = llvm::to_vector(func.getOps<func::ReturnOp>());
    for (auto [result, arg] : pairs) {
      BlockArgument cache = func.getArgument(arg);
      for (func::ReturnOp ret : returns)
        if (stripCasts(ret.getOperand(result)) != cache)
          return ret.emitError()
                 << "KV cache '"
                 << func.getResultAttrOfType<StringAttr>(result, kKVCacheAttr)
                        .getValue()
                 << "' is not updated in place: bufferization returns a new "
                    "buffer (is the old cache read after the write?)";
      dropped.set(result);
    }

    // Callers inside the module read the argument they passed instead.
    if (auto uses = SymbolTable::getSymbolUses(func, getOperation())) {
      for (SymbolTable::SymbolUse use : *uses) {
        auto call = dyn_cast<func::CallOp>(use.getUser());
        if (!call)
          return use.getUser()->emitError()
                 << "cannot drop the KV-cache results of '" << func.getName()
                 << "': it is used by something other than func.call";
        OpBuilder b(call);
        SmallVector<Type> types;
        for (unsigned i = 0, e = call.getNumResults(); i < e; ++i)
          if (!dropped.test(i))
            types.push_back(call.getResult(i).getType());
        auto newCall = func::CallOp::create(b, call.getLoc(), call.getCallee(),
                                            types, call.getOperands());
        unsigned next = 0;
        for (unsigned i = 0, e = call.getNumResults(); i < e; ++i) {
          if (!dropped.test(i)) {
            call.getResult(i).replaceAllUsesWith(newCall.getResult(next++));
            continue;
          }
          unsigned arg = llvm::find_if(pairs, [&](auto p) {
                           return p.first == i;
                         })->second;
          Value passed = call.getOperand(arg);
          if (passed.getType() != call.getResult(i).getType())
            passed = memref::CastOp::create(b, call.getLoc(),
                                            call.getResult(i).getType(),
                                            passed);
          call.getResult(i).replaceAllUsesWith(passed);
        }
        call.erase();
      }
    }

    for (func::ReturnOp ret : returns) {
      SmallVector<Value> kept;
      for (unsigned i = 0, e = ret.getNumOperands(); i < e; ++i)
        if (!dropped.test(i))
          kept.push_back(ret.getOperand(i));
      ret->setOperands(kept);
    }
    if (failed(func.eraseResults(dropped)))
      return func.emitError() << "could not drop the KV-cache results";
    return success();
  }

  void runOnOperation() override {
    for (auto func :
         llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>()))
      if (func.isPublic() && !func.isExternal() && failed(dropResults(func)))
        return signalPassFailure();
  }
};
} // namespace

namespace {
/// memref.copy (reshape (alloc)) -> out-parameter, the alloc read and written
/// only before the copy: the alloc becomes the inverse reshape of the
/// out-parameter and the copy goes. buffer-results-to-out-params does this
/// (hoist-static-allocs) only for a result that is the alloc itself; every
/// tfm projection's result is a reshape of one (the GEMM works on
/// [tokens, features]), and an LM head's copy is a pass over all logits.
struct ReshapedResultInPlace : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    auto target = dyn_cast<BlockArgument>(copy.getTarget());
    auto targetType = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (!target || !targetType || !targetType.getLayout().isIdentity() ||
        !target.hasOneUse() || !target.getOwner()->isEntryBlock() ||
        !isa<func::FuncOp>(target.getOwner()->getParentOp()))
      return failure();
    // The reshapes from the buffer to the copied value (a packed GEMM's
    // [M, N/nr, nr] -> [M, N] -> [1, M, N]), each read only by the next.
    SmallVector<Operation *> reshapes;
    Value source = copy.getSource();
    while (auto *def = source.getDefiningOp()) {
      if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def) ||
          !def->hasOneUse())
        break;
      reshapes.push_back(def);
      source = def->getOperand(0);
    }
    auto alloc = source.getDefiningOp<memref::AllocOp>();
    if (reshapes.empty() || !alloc || alloc->getBlock() != copy->getBlock() ||
        !alloc.getType().hasStaticShape())
      return failure();
    // Nothing may touch the buffer after the copy but its deallocation.
    SmallVector<Operation *> deallocs;
    for (Operation *user : alloc->getUsers()) {
      if (isa<memref::DeallocOp>(user)) {
        deallocs.push_back(user);
        continue;
      }
      Operation *ancestor = copy->getBlock()->findAncestorOpInBlock(*user);
      if (user != reshapes.back() &&
          (!ancestor || !ancestor->isBeforeInBlock(copy)))
        return failure();
    }
    // The out-parameter viewed in the buffer's shape: the reshapes undone,
    // last first.
    rewriter.setInsertionPoint(alloc);
    Value view = target;
    SmallVector<Operation *> created;
    for (Operation *reshape : reshapes) {
      if (auto expand = dyn_cast<memref::ExpandShapeOp>(reshape)) {
        view = memref::CollapseShapeOp::create(
            rewriter, alloc.getLoc(), view, expand.getReassociationIndices());
      } else {
        auto collapse = cast<memref::CollapseShapeOp>(reshape);
        view = memref::ExpandShapeOp::create(
            rewriter, alloc.getLoc(), collapse.getSrcType().getShape(), view,
            collapse.getReassociationIndices());
      }
      created.push_back(view.getDefiningOp());
      if (view.getType() != reshape->getOperand(0).getType()) {
        for (Operation *op : llvm::reverse(created))
          rewriter.eraseOp(op);
        return failure();
      }
    }
    rewriter.eraseOp(copy);
    for (Operation *reshape : reshapes)
      rewriter.eraseOp(reshape);
    for (Operation *dealloc : deallocs)
      rewriter.eraseOp(dealloc);
    rewriter.replaceOp(alloc, view);
    return success();
  }
};

struct ResultsInPlacePass
    : public PassWrapper<ResultsInPlacePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ResultsInPlacePass)
  StringRef getArgument() const final { return "tfm-results-in-place"; }
  StringRef getDescription() const final {
    return "Computes results that are reshapes of a local buffer in the "
           "caller's out-parameter instead of copying them into it";
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ReshapedResultInPlace>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> mlir::tfm::createResultsInPlacePass() {
  return std::make_unique<ResultsInPlacePass>();
}

std::unique_ptr<Pass> mlir::tfm::createPrepareCpuAbiPass() {
  return std::make_unique<PrepareCpuAbiPass>();
}

std::unique_ptr<Pass> mlir::tfm::createDropKVCacheResultsPass() {
  return std::make_unique<DropKVCacheResultsPass>();
}

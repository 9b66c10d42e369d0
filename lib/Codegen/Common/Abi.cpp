//===- Abi.cpp - the calling convention around bufferization -------------===//
//
// The two passes that fix the ABI around one-shot bufferization (see the
// convention in tfm/Pipelines/Pipelines.h):
//   - before it, public tensor arguments are marked read-only, except KV
//     caches (`tfm.kv_cache`), which are marked writable so that a
//     tfm.kv_cache_write bufferizes to a write into the caller's buffer;
//   - after it, the function's copy of each cache (a result equivalent to the
//     cache argument) is dropped, so no out-parameter is made for it.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/Common/Passes.h"

#include "tfm/Dialect/Tfm/IR/TfmAttrNames.h"

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

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMPREPAREABI
#define GEN_PASS_DEF_TFMDROPKVCACHERESULTS
#include "tfm/Codegen/Common/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;


/// The cache names of `func`'s arguments, by index; checks the annotations.
static FailureOr<llvm::StringMap<unsigned>> cacheArguments(func::FuncOp func) {
  llvm::StringMap<unsigned> caches;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    Attribute attr = func.getArgAttr(i, tfm::kKVCacheAttrName);
    if (!attr)
      continue;
    auto name = dyn_cast<StringAttr>(attr);
    if (!name || !isa<TensorType, MemRefType>(func.getArgumentTypes()[i]))
      return func.emitError() << "argument " << i << ": '" << tfm::kKVCacheAttrName
                              << "' must be a string on a tensor argument";
    if (!caches.try_emplace(name.getValue(), i).second)
      return func.emitError() << "two arguments are the KV cache '"
                              << name.getValue() << "'";
  }
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto name = func.getResultAttrOfType<StringAttr>(i, tfm::kKVCacheAttrName);
    if (!func.getResultAttr(i, tfm::kKVCacheAttrName))
      continue;
    if (!name || !caches.count(name.getValue()))
      return func.emitError()
             << "result " << i << " is marked '" << tfm::kKVCacheAttrName
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
struct PrepareAbiPass
    : public tfm::impl::TfmPrepareAbiBase<PrepareAbiPass> {
  using Base::Base;
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
              b.getBoolAttr(func.getArgAttr(i, tfm::kKVCacheAttrName) != nullptr));
    }
  }
};

struct DropKVCacheResultsPass
    : public tfm::impl::TfmDropKVCacheResultsBase<DropKVCacheResultsPass> {
  using Base::Base;

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
      if (auto name = func.getResultAttrOfType<StringAttr>(i, tfm::kKVCacheAttrName))
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
                 << func.getResultAttrOfType<StringAttr>(result, tfm::kKVCacheAttrName)
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

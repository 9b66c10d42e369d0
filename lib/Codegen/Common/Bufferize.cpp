//===- Bufferize.cpp - one-shot bufferization with tfm's layouts ---------===//
//
// --tfm-bufferize: see Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMBUFFERIZE
#include "tfm/Codegen/Common/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::bufferization;

/// `strided<[?, ..., ?, 1], offset: ?>`: any view whose rows are contiguous
/// casts to it without a copy.
static MemRefType withContiguousRows(TensorType type, Attribute memorySpace) {
  auto ranked = cast<RankedTensorType>(type);
  int64_t rank = ranked.getRank();
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  if (rank > 0)
    strides.back() = 1;
  auto layout =
      StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic, strides);
  return MemRefType::get(ranked.getShape(), ranked.getElementType(), layout,
                         memorySpace);
}

/// `type` with the identity layout (a fresh allocation's).
static MemRefType withIdentityLayout(MemRefType type) {
  return MemRefType::Builder(type).setLayout(MemRefLayoutAttrInterface());
}

/// Follows `value` back through the destinations it was written into (loop
/// inits, destination-style inits) to the block argument it updates in
/// place, if any. A loop counts only if what it yields is its own
/// iteration argument, updated in place, so that its result is that
/// buffer.
static BlockArgument updatedArgument(Value value) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return arg;
    auto result = cast<OpResult>(value);
    Operation *def = result.getOwner();
    unsigned number = result.getResultNumber();
    if (auto loop = dyn_cast<scf::ForOp>(def)) {
      Value yielded = loop.getYieldedValues()[number];
      if (updatedArgument(yielded) != loop.getRegionIterArgs()[number])
        return nullptr;
      value = loop.getInitArgs()[number];
    } else if (auto loop = dyn_cast<scf::ForallOp>(def)) {
      // Results are the shared outputs, written by parallel_insert_slice.
      value = loop.getOutputs()[number];
    } else if (auto dps = dyn_cast<DestinationStyleOpInterface>(def)) {
      value = dps.getDpsInitOperand(number)->get();
    } else {
      return nullptr;
    }
  }
}

/// The argument of `func` that its result `index` is written into in place
/// (through its loops' destinations), if any.
static std::optional<unsigned> tiedArgument(func::FuncOp func, unsigned index) {
  if (!func.getBody().hasOneBlock())
    return std::nullopt;
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  BlockArgument arg = updatedArgument(ret.getOperand(index));
  if (!arg || arg.getOwner() != &func.getBody().front())
    return std::nullopt;
  return arg.getArgNumber();
}

namespace {
/// The layout each tensor argument of a private function gets: the layout
/// of the buffers its callers pass, where every call passes the same one,
/// else a view with contiguous rows. A static layout at the boundary keeps
/// the buffers a function returns (its destinations, written in place)
/// static in the caller, where a reshape of dynamic strides would be a
/// copy (a collapse cannot be proven contiguous). The caller's buffers are
/// predicted from its tensors: a public function's argument and a fresh
/// tensor are identity (the calling convention, a new allocation), views
/// (reshapes, slices) take their source's layout as memref's own type
/// inference does, and a destination-style op or a call returns its
/// destination's buffer.
class ArgumentLayouts {
public:
  explicit ArgumentLayouts(ModuleOp module) {
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (privateCallee(call))
        calls.push_back(call);
    });
    // An argument's layout goes from unset to static to dynamic, never
    // back: iterate until nothing changes.
    for (bool changed = true; changed;) {
      changed = false;
      for (func::CallOp call : calls) {
        func::FuncOp callee = privateCallee(call);
        for (auto [index, operand] : llvm::enumerate(call.getOperands())) {
          auto tensor = dyn_cast<RankedTensorType>(operand.getType());
          if (!tensor)
            continue;
          MemRefType predicted =
              predict(operand).value_or(contiguousRows(tensor));
          auto [it, inserted] =
              layouts.try_emplace({callee.getOperation(), index}, predicted);
          if (inserted) {
            changed = true;
          } else if (it->second != predicted &&
                     it->second != contiguousRows(tensor)) {
            it->second = contiguousRows(tensor);
            changed = true;
          }
        }
      }
    }
  }

  /// The buffer type of `func`'s argument `index`.
  MemRefType argumentType(func::FuncOp func, unsigned index) const {
    auto tensor = cast<RankedTensorType>(func.getArgumentTypes()[index]);
    auto it = layouts.find({func.getOperation(), index});
    return it == layouts.end() ? contiguousRows(tensor) : it->second;
  }

  static MemRefType contiguousRows(RankedTensorType tensor) {
    return withContiguousRows(tensor, Attribute());
  }

private:
  static func::FuncOp privateCallee(func::CallOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || !callee.isPrivate() || callee.isExternal())
      return nullptr;
    return callee;
  }

  static MemRefType identity(Value value) {
    auto tensor = cast<RankedTensorType>(value.getType());
    return MemRefType::get(tensor.getShape(), tensor.getElementType());
  }

  /// The buffer `value` bufferizes to (conflicts are explicit copies by
  /// now, so every op here is in place), if known.
  std::optional<MemRefType> predict(Value value) const {
    auto tensor = cast<RankedTensorType>(value.getType());
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (func && func.isPublic() && arg.getOwner()->isEntryBlock())
        return identity(value);
      return std::nullopt;
    }
    Operation *def = value.getDefiningOp();
    unsigned number = cast<OpResult>(value).getResultNumber();
    if (isa<tensor::EmptyOp, AllocTensorOp>(def))
      return identity(value);
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
      std::optional<MemRefType> source = predict(expand.getSrc());
      if (!source)
        return std::nullopt;
      FailureOr<MemRefType> type = memref::ExpandShapeOp::computeExpandedType(
          *source, tensor.getShape(), expand.getReassociationIndices());
      if (failed(type))
        return std::nullopt;
      return *type;
    }
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
      std::optional<MemRefType> source = predict(collapse.getSrc());
      if (!source)
        return std::nullopt;
      // A collapse that cannot be proven contiguous is a copy into a new
      // buffer.
      if (!memref::CollapseShapeOp::isGuaranteedCollapsible(
              *source, collapse.getReassociationIndices()))
        return identity(value);
      return memref::CollapseShapeOp::computeCollapsedType(
          *source, collapse.getReassociationIndices());
    }
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
      std::optional<MemRefType> source = predict(slice.getSource());
      if (!source)
        return std::nullopt;
      return memref::SubViewOp::inferRankReducedResultType(
          tensor.getShape(), *source, slice.getStaticOffsets(),
          slice.getStaticSizes(), slice.getStaticStrides());
    }
    if (auto call = dyn_cast<func::CallOp>(def)) {
      func::FuncOp callee = privateCallee(call);
      std::optional<unsigned> tied =
          callee ? tiedArgument(callee, number) : std::nullopt;
      if (!tied)
        return std::nullopt;
      auto it = layouts.find({callee.getOperation(), *tied});
      if (it == layouts.end())
        return std::nullopt;
      return it->second;
    }
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
      return predict(dps.getDpsInitOperand(number)->get());
    return std::nullopt;
  }

  llvm::DenseMap<std::pair<Operation *, unsigned>, MemRefType> layouts;
};

struct BufferizePass : public tfm::impl::TfmBufferizeBase<BufferizePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OneShotBufferizationOptions options;
    options.bufferizeFunctionBoundaries = true;
    // A private function's results take the layout of the buffers it
    // returns (its destination arguments'); a public function's are
    // identity, the converter's.
    options.inferFunctionResultLayout = true;
    options.functionArgTypeConverterFn =
        [](TensorLikeType type, Attribute memorySpace, func::FuncOp func,
           const BufferizationOptions &) -> BufferLikeType {
      // A private function's results: any layout, made precise (its
      // destination arguments') by inferFunctionResultLayout. Its
      // arguments carry their layout (below).
      auto tensor = cast<TensorType>(type);
      if (func.isPrivate())
        return cast<BufferLikeType>(
            getMemRefTypeWithFullyDynamicLayout(tensor, memorySpace));
      return cast<BufferLikeType>(
          getMemRefTypeWithStaticIdentityLayout(tensor, memorySpace));
    };
    options.unknownTypeConverterFn = [](TensorType type, Attribute memorySpace,
                                        const BufferizationOptions &) {
      return getMemRefTypeWithStaticIdentityLayout(type, memorySpace);
    };
    // A buffer made for a view's layout (a call's argument that its caller
    // could not pass as it is) is a fresh buffer seen through that layout.
    options.allocationFn = [](OpBuilder &b, Location loc, MemRefType type,
                              ValueRange dynamicSizes,
                              unsigned alignment) -> FailureOr<Value> {
      MemRefType identity = withIdentityLayout(type);
      Value buffer = memref::AllocOp::create(b, loc, identity, dynamicSizes,
                                             b.getI64IntegerAttr(alignment))
                         .getResult();
      if (identity == type)
        return buffer;
      if (!memref::CastOp::areCastCompatible(identity, type))
        return emitError(loc) << "cannot allocate a buffer of layout " << type;
      return memref::CastOp::create(b, loc, type, buffer).getResult();
    };

    // Conflicts resolved first, as explicit copies (alloc_tensor), so that
    // the callers' buffers are known from their tensors alone...
    BufferizationState state;
    if (failed(insertTensorCopies(module, options, state)))
      return signalPassFailure();
    // ...then each private function's arguments take the layout its
    // callers pass (`bufferization.buffer_layout`, read by module
    // bufferization).
    ArgumentLayouts layouts(module);
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func.isPrivate() || func.isExternal())
        continue;
      for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
        if (isa<RankedTensorType>(type))
          func.setArgAttr(index, BufferizationDialect::kBufferLayoutAttrName,
                          layouts.argumentType(func, index).getLayout());
    }
    if (failed(bufferizeModuleOp(module, options, state)))
      return signalPassFailure();
    removeBufferizationAttributesInModule(module);
    if (failed(restorePublicResultLayouts(module)) ||
        failed(dropResultsWrittenInPlace(module)))
      return signalPassFailure();
  }

  /// A private function returns the buffers its loops wrote in place, as
  /// loop results: folded to the arguments they are, the results go and
  /// each caller uses its own operand. (Upstream's
  /// dropEquivalentBufferResults would drop a public function's too: the
  /// calling convention keeps them.)
  LogicalResult dropResultsWrittenInPlace(ModuleOp module) {
    MLIRContext *ctx = module.getContext();
    RewritePatternSet patterns(ctx);
    scf::ForOp::getCanonicalizationPatterns(patterns, ctx);
    memref::CopyOp::getCanonicalizationPatterns(patterns, ctx);
    memref::CastOp::getCanonicalizationPatterns(patterns, ctx);
    FrozenRewritePatternSet frozen(std::move(patterns));
    SmallVector<func::FuncOp> privates;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPrivate() && !func.isExternal() && func.getNumResults() > 0 &&
          func.getBody().hasOneBlock())
        privates.push_back(func);
    for (func::FuncOp func : privates)
      if (failed(applyPatternsGreedily(func, frozen)))
        return failure();
    SymbolTableCollection symbols;
    SymbolUserMap users(symbols, module);
    IRRewriter rewriter(ctx);
    for (func::FuncOp func : privates) {
      auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
      // Result -> the argument it is.
      llvm::DenseMap<unsigned, unsigned> argumentOf;
      for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
        Value source = value;
        while (auto cast = source.getDefiningOp<memref::CastOp>())
          source = cast.getSource();
        if (auto arg = dyn_cast<BlockArgument>(source);
            arg && arg.getOwner() == &func.getBody().front())
          argumentOf[index] = arg.getArgNumber();
      }
      if (argumentOf.empty())
        continue;
      llvm::BitVector dropped(func.getNumResults());
      for (auto [index, arg] : argumentOf)
        dropped.set(index);
      for (Operation *user : users.getUsers(func)) {
        auto call = dyn_cast<func::CallOp>(user);
        if (!call)
          return func.emitError("a function whose results are dropped is used "
                                "other than by calls");
        rewriter.setInsertionPoint(call);
        SmallVector<Type> kept;
        for (auto [index, type] : llvm::enumerate(call.getResultTypes()))
          if (!dropped.test(index))
            kept.push_back(type);
        auto newCall =
            func::CallOp::create(rewriter, call.getLoc(), call.getCallee(),
                                 kept, call.getOperands());
        SmallVector<Value> replacements;
        unsigned next = 0;
        for (auto [index, result] : llvm::enumerate(call.getResults())) {
          if (!dropped.test(index)) {
            replacements.push_back(newCall.getResult(next++));
            continue;
          }
          Value operand = call.getOperand(argumentOf[index]);
          if (operand.getType() != result.getType())
            operand = memref::CastOp::create(rewriter, call.getLoc(),
                                             result.getType(), operand);
          replacements.push_back(operand);
        }
        rewriter.replaceOp(call, replacements);
      }
      rewriter.modifyOpInPlace(ret, [&] { ret->eraseOperands(dropped); });
      if (failed(func.eraseResults(dropped)))
        return failure();
    }
    return success();
  }

  /// Public functions keep identity result layouts (the calling
  /// convention): result layout inference folded the casts to identity that
  /// were sure to hold (a view at offset 0 with identity strides); they are
  /// put back, and calls in the module see the identity type.
  LogicalResult restorePublicResultLayouts(ModuleOp module) {
    SymbolTableCollection symbols;
    SymbolUserMap users(symbols, module);
    IRRewriter rewriter(module.getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      SmallVector<Type> identityTypes;
      bool changed = false;
      for (Type type : func.getResultTypes()) {
        auto memref = dyn_cast<MemRefType>(type);
        if (memref && !memref.getLayout().isIdentity()) {
          type = withIdentityLayout(memref);
          changed = true;
        }
        identityTypes.push_back(type);
      }
      if (!changed)
        continue;
      for (Block &block : func.getBody()) {
        auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
        if (!ret)
          continue;
        rewriter.setInsertionPoint(ret);
        for (OpOperand &operand : ret->getOpOperands()) {
          Type want = identityTypes[operand.getOperandNumber()];
          if (operand.get().getType() == want)
            continue;
          if (!memref::CastOp::areCastCompatible(operand.get().getType(), want))
            return ret.emitError("cannot return a buffer of identity layout");
          Value cast = memref::CastOp::create(rewriter, ret.getLoc(), want,
                                              operand.get());
          rewriter.modifyOpInPlace(ret, [&] { operand.set(cast); });
        }
      }
      // The casts that inference folded away are dead now.
      func.walk([&](memref::CastOp cast) {
        if (cast->use_empty())
          rewriter.eraseOp(cast);
      });
      SmallVector<Type> oldTypes(func.getResultTypes());
      func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                     identityTypes));
      for (Operation *user : users.getUsers(func)) {
        auto call = dyn_cast<func::CallOp>(user);
        if (!call)
          continue;
        rewriter.setInsertionPointAfter(call);
        for (auto [result, want, old] :
             llvm::zip(call.getResults(), identityTypes, oldTypes)) {
          if (want == old)
            continue;
          result.setType(want);
          auto back =
              memref::CastOp::create(rewriter, call.getLoc(), old, result);
          rewriter.replaceAllUsesExcept(result, back.getResult(), back);
        }
      }
    }
    return success();
  }
};
} // namespace

//===- OutlineLoopNests.cpp - a function per loop nest --------------------===//
//
// tfm-outline-loop-nests / tfm-finalize-outlined-loops (loops, then LLVM
// dialect): split a whole model's one huge function into a function per loop
// nest, which bounds LLVM's compile time (see OutlineLoopNestsPass).
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "CpuPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMOUTLINELOOPNESTS
#define GEN_PASS_DEF_TFMFINALIZEOUTLINEDLOOPS
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// Moves every top-level loop nest of a function (any op with a body: loops,
/// parallel regions, linalg ops left for loops) into a function of its own,
/// never inlined. A whole model lowers to one function with thousands of
/// loops in sequence; LLVM's scalar evolution answers "is this loop entry
/// guarded by a condition" by walking the dominator tree up to the enclosing
/// loop -- for a top-level loop, to the function entry -- so O3 spends time
/// quadratic in the number of loops (IndVarSimplify alone took 60% of a
/// 7 s compile). A call per loop nest costs nothing measurable at run time.
struct OutlineLoopNestsPass
    : public tfm::impl::TfmOutlineLoopNestsBase<OutlineLoopNestsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    SymbolTable symbols(module);
    for (func::FuncOp func :
         llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      // Loops, and the parallel regions of threaded loops (omp.parallel):
      // every top-level op with a body.
      SmallVector<Operation *> nests;
      for (Block &block : func.getBody())
        for (Operation &op : block)
          if (isNest(op))
            nests.push_back(&op);
      // A few loops compile fast enough; keep small kernels whole. A
      // function whose nests were outlined on tensors has its rest outlined
      // too, so that what is left of each layer merges as well.
      if (nests.size() < kMinNestsToOutline &&
          (tensors || !callsOutlinedNests(func, symbols)))
        continue;
      unsigned index = 0;
      for (Operation *loop : nests) {
        if (failed(outline(rewriter, symbols, func, loop, index++)))
          return signalPassFailure();
      }
    }
  }

  static constexpr size_t kMinNestsToOutline = 16;

  static bool callsOutlinedNests(func::FuncOp func, SymbolTable &symbols) {
    for (auto call : func.getBody().getOps<func::CallOp>())
      if (Operation *callee = symbols.lookup(call.getCallee()))
        if (callee->hasAttr(tfm::kOutlinedLoopNestAttr))
          return true;
    return false;
  }

  /// On buffers every op with a body; on tensors only the loops, whose
  /// results are the tensors they wrote (a linalg op left for a later pass
  /// on buffers must stay where that pass looks for it).
  bool isNest(Operation &op) const {
    if (!tensors)
      return op.getNumRegions() > 0;
    return isa<scf::ForOp, scf::ForallOp>(op);
  }

  LogicalResult outline(IRRewriter &rewriter, SymbolTable &symbols,
                        func::FuncOp func, Operation *loop, unsigned index) {
    Location loc = loop->getLoc();
    rewriter.setInsertionPoint(loop);
    auto wrapper =
        scf::ExecuteRegionOp::create(rewriter, loc, loop->getResultTypes());
    Block *body = rewriter.createBlock(&wrapper.getRegion());
    rewriter.replaceAllUsesWith(loop->getResults(), wrapper.getResults());
    loop->moveBefore(body, body->end());
    rewriter.setInsertionPointToEnd(body);
    scf::YieldOp::create(rewriter, loc, loop->getResults());
    // Constants travel as constants, not arguments: loop bounds and steps
    // must stay visible to the optimiser.
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(wrapper.getRegion(), captured);
    rewriter.setInsertionPointToStart(body);
    for (Value value : captured) {
      Operation *def = value.getDefiningOp();
      if (!def || !def->hasTrait<OpTrait::ConstantLike>())
        continue;
      Value copy = rewriter.clone(*def)->getResult(0);
      replaceAllUsesInRegionWith(value, copy, wrapper.getRegion());
    }
    std::string name =
        (func.getSymName() + "__loop" + std::to_string(index)).str();
    while (symbols.lookup(name))
      name += "_";
    func::CallOp call;
    FailureOr<func::FuncOp> outlined = outlineSingleBlockRegion(
        rewriter, loc, wrapper.getRegion(), name, &call);
    if (failed(outlined))
      return loop->emitError("cannot outline this loop nest");
    symbols.insert(*outlined);
    outlined->setPrivate();
    // Made no_inline once it is an llvm.func (tfm-finalize-outlined-loops):
    // func.func has no such attribute.
    outlined->getOperation()->setAttr(tfm::kOutlinedLoopNestAttr,
                                      rewriter.getUnitAttr());
    // Inline the wrapper back: only the call remains.
    Block &wrapperBlock = wrapper.getRegion().front();
    auto yield = cast<scf::YieldOp>(wrapperBlock.getTerminator());
    SmallVector<Value> results(yield.getOperands());
    rewriter.inlineBlockBefore(&wrapperBlock, wrapper);
    rewriter.replaceOp(wrapper, results);
    rewriter.eraseOp(yield);
    return success();
  }
};

/// After func-to-llvm: outlined loop nests become internal and no_inline (the
/// O3 inliner would otherwise merge every single-call function back); entries
/// with a great many arguments are inlined into their C interface wrapper.
struct FinalizeOutlinedLoopsPass
    : public tfm::impl::TfmFinalizeOutlinedLoopsBase<
          FinalizeOutlinedLoopsPass> {
  using Base::Base;
  static constexpr unsigned kManyArguments = 64;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      // An entry is called only through its C interface wrapper, which
      // passes each memref as 3 + 2 * rank scalars: a whole model's call has
      // thousands of arguments, and SelectionDAG spends seconds lowering that
      // one call (5.5 s of a 12-layer GPT-2's 11 s in llc). Inlined into the
      // wrapper, the call and its argument list disappear. Entries with few
      // arguments stay callable by name (mlir-runner's -e, tests).
      if (!func.isExternal() && !func.isPrivate() &&
          !func->hasAttr(tfm::kOutlinedLoopNestAttr) &&
          func.getNumArguments() > kManyArguments &&
          module.lookupSymbol<LLVM::LLVMFuncOp>(
              ("_mlir_ciface_" + func.getSymName()).str())) {
        func.setAlwaysInline(true);
        func.setLinkage(LLVM::Linkage::Internal);
        func->removeAttr(SymbolTable::getVisibilityAttrName());
        continue;
      }
      if (!func->hasAttr(tfm::kOutlinedLoopNestAttr))
        continue;
      func->removeAttr(tfm::kOutlinedLoopNestAttr);
      func.setNoInline(true);
      func.setLinkage(LLVM::Linkage::Internal);
      func->removeAttr(SymbolTable::getVisibilityAttrName());
    }
  }
};
} // namespace

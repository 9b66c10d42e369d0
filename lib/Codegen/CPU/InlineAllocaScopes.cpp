//===- InlineAllocaScopes.cpp - drop alloca scopes that scope nothing ------===//
//
// tfm-inline-alloca-scopes: convert-scf-to-openmp wraps each worksharing
// loop body in a memref.alloca_scope so that stack allocations in the body
// are freed per iteration. tfm's bodies allocate on the heap (bufferization
// allocs, freed by the deallocation pipeline), so the scopes hold no
// memref.alloca -- but they must stay single-block, and lowering the scf
// loops inside them to control flow would break that. This pass inlines
// every alloca_scope with no alloca directly in it (nested scopes keep
// their own).
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "CpuPlan.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMINLINEALLOCASCOPES
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

/// Whether an alloca in `scope`'s region belongs to `scope` (not to a nested
/// alloca_scope or to another automatic-allocation scope such as a function).
static bool scopesAnAlloca(memref::AllocaScopeOp scope) {
  bool found = false;
  scope.getBodyRegion().walk([&](memref::AllocaOp alloca) {
    Operation *owner =
        alloca->getParentWithTrait<OpTrait::AutomaticAllocationScope>();
    if (owner == scope.getOperation())
      found = true;
  });
  return found;
}

namespace {
struct InlineAllocaScopesPass
    : public tfm::impl::TfmInlineAllocaScopesBase<InlineAllocaScopesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation()->walk([&](memref::AllocaScopeOp scope) {
      if (!scopesAnAlloca(scope))
        scopes.push_back(scope);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocaScopeOp scope : scopes) {
      Block &body = scope.getBodyRegion().front();
      auto ret = cast<memref::AllocaScopeReturnOp>(body.getTerminator());
      SmallVector<Value> results(ret.getResults());
      rewriter.eraseOp(ret);
      rewriter.inlineBlockBefore(&body, scope);
      rewriter.replaceOp(scope, results);
    }
  }
};
} // namespace

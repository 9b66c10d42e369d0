//===- SwitchedWeights.cpp - weights an scf.index_switch picks -----------===//
//
// tfm.moe's experts read their weights through an scf.index_switch on the
// expert index (TfmToLinalg/MoE.cpp): one loop body for every expert. Both
// halves of tfm-cpu-pack-weights pack each weight a switch yields and put
// beside it a switch that picks among the packed parts, so that the body
// stays one and the unpacked weights are read no more.
//
//===----------------------------------------------------------------------===//
#include "PackWeights.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tfm;

SmallVector<BlockArgument> mlir::tfm::cpu_pack::getSwitchedWeights(
    func::FuncOp func, Value v,
    llvm::function_ref<bool(BlockArgument, BlockArgument)> alike) {
  auto result = dyn_cast<OpResult>(v);
  auto sw = result ? dyn_cast<scf::IndexSwitchOp>(result.getOwner()) : nullptr;
  if (!sw)
    return {};
  SmallVector<BlockArgument> weights;
  for (Region &region : sw->getRegions()) {
    Value yielded = cast<scf::YieldOp>(region.front().getTerminator())
                        .getOperand(result.getResultNumber());
    auto weight = dyn_cast<BlockArgument>(yielded);
    if (!weight || weight.getOwner() != &func.getBody().front() ||
        weight.getType() != v.getType() ||
        !alike(weight, weights.empty() ? weight : weights.front()))
      return {};
    weights.push_back(weight);
  }
  return weights;
}

SmallVector<Value>
mlir::tfm::cpu_pack::selectSwitched(RewriterBase &rewriter,
                                    scf::IndexSwitchOp sw,
                                    ArrayRef<SmallVector<Value>> values) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(sw);
  auto selected = scf::IndexSwitchOp::create(
      rewriter, sw.getLoc(), ValueRange(values.front()).getTypes(), sw.getArg(),
      sw.getCases(), sw.getNumCases());
  for (auto [region, yielded] : llvm::zip(selected->getRegions(), values)) {
    rewriter.setInsertionPointToStart(&region.emplaceBlock());
    scf::YieldOp::create(rewriter, sw.getLoc(), yielded);
  }
  return SmallVector<Value>(selected.getResults());
}

void mlir::tfm::cpu_pack::dropUnusedResults(RewriterBase &rewriter,
                                            scf::IndexSwitchOp sw) {
  SmallVector<unsigned> used;
  for (OpResult result : sw->getResults())
    if (!result.use_empty())
      used.push_back(result.getResultNumber());
  if (used.size() == sw.getNumResults())
    return;
  if (used.empty()) {
    rewriter.eraseOp(sw);
    return;
  }
  rewriter.setInsertionPoint(sw);
  SmallVector<Type> types;
  for (unsigned i : used)
    types.push_back(sw.getResult(i).getType());
  auto kept =
      scf::IndexSwitchOp::create(rewriter, sw.getLoc(), types, sw.getArg(),
                                 sw.getCases(), sw.getNumCases());
  for (auto [from, to] : llvm::zip(sw->getRegions(), kept->getRegions())) {
    rewriter.inlineRegionBefore(from, to, to.end());
    auto yield = cast<scf::YieldOp>(to.front().getTerminator());
    SmallVector<Value> operands;
    for (unsigned i : used)
      operands.push_back(yield.getOperand(i));
    rewriter.setInsertionPoint(yield);
    rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, operands);
  }
  for (auto [i, index] : llvm::enumerate(used))
    rewriter.replaceAllUsesWith(sw.getResult(index), kept.getResult(i));
  rewriter.eraseOp(sw);
}

//===- Sublayer.cpp - the residual sublayers of a function ----------------===//
#include "tfm/Dialect/Tfm/Transforms/Sublayer.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tfm;

StringRef mlir::tfm::stringifySublayerKind(SublayerKind kind) {
  switch (kind) {
  case SublayerKind::Attention:
    return "attention";
  case SublayerKind::MoE:
    return "MoE";
  case SublayerKind::MLP:
    return "MLP";
  case SublayerKind::Unknown:
    break;
  }
  return "sublayer";
}

/// All ops `root` transitively depends on through operands (block arguments
/// end the walk). Written out rather than using SliceAnalysis so that ops of
/// any dialect, with or without regions, are followed the same way.
static llvm::DenseSet<Operation *> backwardSlice(Value root) {
  llvm::DenseSet<Operation *> slice;
  SmallVector<Value> worklist{root};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || !slice.insert(def).second)
      continue;
    llvm::append_range(worklist, def->getOperands());
  }
  return slice;
}

SmallVector<Operation *> mlir::tfm::getSublayerOps(ResidualAddOp add) {
  llvm::DenseSet<Operation *> onStream = backwardSlice(add.getResidual());
  SmallVector<Operation *> ops;
  for (Operation *op : backwardSlice(add.getBranch()))
    if (!onStream.contains(op))
      ops.push_back(op);
  return ops;
}

SublayerKind mlir::tfm::classifySublayer(ArrayRef<Operation *> ops) {
  auto holds = [&](auto isKind) { return llvm::any_of(ops, isKind); };
  if (holds([](Operation *op) { return isa<AttentionOp>(op); }))
    return SublayerKind::Attention;
  if (holds([](Operation *op) { return isa<MoEOp>(op); }))
    return SublayerKind::MoE;
  if (holds([](Operation *op) {
        return isa<GeluOp, SiluOp, SwiGLUOp, ReluOp, GeGLUOp>(op);
      }))
    return SublayerKind::MLP;
  return SublayerKind::Unknown;
}

//===- Sublayer.h - the residual sublayers of a function --------*- C++ -*-===//
//
// A decoder block is a residual stream and the sublayers that add into it.
// tfm finds a sublayer structurally, from the `tfm.residual_add` that closes
// it, never from names: the contract checker names the sublayer that broke a
// shape, and the ledger books each op under its sublayer's kind. One
// definition, so that the two agree on what "the MLP" is.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_DIALECT_TFM_TRANSFORMS_SUBLAYER_H
#define TFM_DIALECT_TFM_TRANSFORMS_SUBLAYER_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::tfm {

class ResidualAddOp;

enum class SublayerKind { Attention, MoE, MLP, Unknown };

/// "attention", "MoE", "MLP" or "sublayer" (for diagnostics).
llvm::StringRef stringifySublayerKind(SublayerKind kind);

/// The ops of the sublayer that `add` closes: the backward slice of its
/// branch operand minus the backward slice of its residual operand (the
/// stream, which carries the block's earlier sublayers). Ops of any dialect,
/// in no particular order; block arguments end the walk.
llvm::SmallVector<Operation *> getSublayerOps(ResidualAddOp add);

/// Attention if the ops hold a `tfm.attention`, else MoE if they hold a
/// `tfm.moe`, else MLP if they hold an activation (GELU, SiLU, ReLU, SwiGLU,
/// GeGLU), else Unknown.
SublayerKind classifySublayer(llvm::ArrayRef<Operation *> ops);

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_TRANSFORMS_SUBLAYER_H

//===- Passes.h - tfm transformation passes ---------------------*- C++ -*-===//
#ifndef TFM_DIALECT_TFM_TRANSFORMS_PASSES_H
#define TFM_DIALECT_TFM_TRANSFORMS_PASSES_H

#include "tfm/Dialect/Tfm/Transforms/FlashAttentionTiles.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::arith { class ArithDialect; }
namespace mlir::linalg { class LinalgDialect; }
namespace mlir::math { class MathDialect; }
namespace mlir::scf { class SCFDialect; }
namespace mlir::tensor { class TensorDialect; }

namespace mlir {
namespace tfm {

#define GEN_PASS_DECL
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"

} // namespace tfm
} // namespace mlir

#endif // TFM_DIALECT_TFM_TRANSFORMS_PASSES_H

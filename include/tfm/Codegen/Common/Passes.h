//===- Passes.h - codegen passes both pipelines run -------------*- C++ -*-===//
#ifndef TFM_CODEGEN_COMMON_PASSES_H
#define TFM_CODEGEN_COMMON_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::LLVM { class LLVMDialect; }
namespace mlir::affine { class AffineDialect; }
namespace mlir::arith { class ArithDialect; }
namespace mlir::linalg { class LinalgDialect; }
namespace mlir::memref { class MemRefDialect; }
namespace mlir::tensor { class TensorDialect; }

namespace mlir::tfm {

#define GEN_PASS_DECL
#include "tfm/Codegen/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Codegen/Common/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_CODEGEN_COMMON_PASSES_H

//===- Passes.h - codegen passes of the CPU pipeline ------------*- C++ -*-===//
#ifndef TFM_CODEGEN_CPU_PASSES_H
#define TFM_CODEGEN_CPU_PASSES_H

#include "tfm/Codegen/CPU/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::LLVM { class LLVMDialect; }
namespace mlir::affine { class AffineDialect; }
namespace mlir::amx { class AMXDialect; }
namespace mlir::arith { class ArithDialect; }
namespace mlir::linalg { class LinalgDialect; }
namespace mlir::math { class MathDialect; }
namespace mlir::memref { class MemRefDialect; }
namespace mlir::omp { class OpenMPDialect; }
namespace mlir::scf { class SCFDialect; }
namespace mlir::tensor { class TensorDialect; }
namespace mlir::ub { class UBDialect; }
namespace mlir::vector { class VectorDialect; }

namespace mlir::tfm {
class TfmDialect;

#define GEN_PASS_DECL
#include "tfm/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Codegen/CPU/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_CODEGEN_CPU_PASSES_H

//===- Passes.h - passes of the tfm pipelines -------------------*- C++ -*-===//
#ifndef TFM_PIPELINES_PASSES_H
#define TFM_PIPELINES_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::affine { class AffineDialect; }
namespace mlir::arith { class ArithDialect; }
namespace mlir::bufferization { class BufferizationDialect; }
namespace mlir::math { class MathDialect; }
namespace mlir::gpu { class GPUDialect; }
namespace mlir::linalg { class LinalgDialect; }
namespace mlir::memref { class MemRefDialect; }
namespace mlir::nvgpu { class NVGPUDialect; }
namespace mlir::NVVM { class NVVMDialect; }
namespace mlir::LLVM { class LLVMDialect; }
namespace mlir::tensor { class TensorDialect; }
namespace mlir::vector { class VectorDialect; }
namespace mlir::scf { class SCFDialect; }
namespace mlir::ub { class UBDialect; }
namespace mlir::x86vector { class X86VectorDialect; }

namespace mlir::tfm {

#define GEN_PASS_DECL
#include "tfm/Pipelines/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Pipelines/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_PIPELINES_PASSES_H

//===- Passes.h - codegen passes of the GPU pipeline ------------*- C++ -*-===//
#ifndef TFM_CODEGEN_GPU_PASSES_H
#define TFM_CODEGEN_GPU_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::LLVM { class LLVMDialect; }
namespace mlir::NVVM { class NVVMDialect; }
namespace mlir::affine { class AffineDialect; }
namespace mlir::arith { class ArithDialect; }
namespace mlir::bufferization { class BufferizationDialect; }
namespace mlir::gpu { class GPUDialect; }
namespace mlir::linalg { class LinalgDialect; }
namespace mlir::math { class MathDialect; }
namespace mlir::memref { class MemRefDialect; }
namespace mlir::nvgpu { class NVGPUDialect; }
namespace mlir::scf { class SCFDialect; }
namespace mlir::tensor { class TensorDialect; }
namespace mlir::vector { class VectorDialect; }

namespace mlir::tfm {
class TfmDialect;

#define GEN_PASS_DECL
#include "tfm/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Codegen/GPU/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_CODEGEN_GPU_PASSES_H

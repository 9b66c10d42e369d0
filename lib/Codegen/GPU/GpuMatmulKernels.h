//===- GpuMatmulKernels.h - shared by the tensor-core matmul passes -*- C++ -*-===//
//
// What --tfm-gpu-tensor-core-matmul (mma.sync) and --tfm-gpu-warpgroup-matmul
// (TMA + wgmma) share: which linalg.matmul ops an f16 kernel can take, how a
// kernel's source becomes one function per shape that replaces them, and
// the affine.apply text their kernel sources use for index arithmetic
// (convert-vector-to-gpu{use-nvgpu} rejects scalar arith.muli/addi next to
// the contractions), and the f16 rounding of the f32 tensors that f16
// tensor-core code reads (--tfm-gpu-contraction-dtype, flash attention).
// Private to lib/Pipelines.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_PIPELINES_GPUMATMULKERNELS_H
#define TFM_LIB_PIPELINES_GPUMATMULKERNELS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/SymbolTable.h"

#include <optional>
#include <string>

namespace mlir::tfm::gpu_kernels {

/// A bufferized `C[M, N] += A[M, K] * B` with B `[K, N]` or (transposedB)
/// `[N, K]`.
struct F16Matmul {
  int64_t m, n, k;
  bool transposedB;
};

/// The shape of `matmul` when it has f16 A and B and an f32 C, all static,
/// rank 2, identity layouts, default memory space, and one of the two B
/// layouts; each kernel then checks its own tile divisibility.
std::optional<F16Matmul> matchF16Matmul(linalg::MatmulOp matmul);

/// The kernel function `name` in `symbols`, or else the first function of
/// the module `buildSource` returns, parsed and inserted: matmuls of one
/// shape share one kernel. Null after an error on `matmul` (naming the
/// `kind` of kernel) when the source does not parse.
func::FuncOp lookupOrParseKernel(SymbolTable &symbols, llvm::StringRef name,
                                 linalg::MatmulOp matmul, llvm::StringRef kind,
                                 llvm::function_ref<std::string()> buildSource);

/// Replaces the bufferized `matmul` with `func.call @kernel(A, B, C)`.
void replaceWithKernelCall(linalg::MatmulOp matmul, func::FuncOp kernel);

/// "affine.apply affine_map<()[s0, ...] -> (expr)>()[syms...]".
std::string apply(llvm::StringRef expr, llvm::ArrayRef<std::string> syms);

/// `value` (a static f32 tensor) rounded to f16 elementwise: a
/// linalg.generic of arith.truncf into a fresh tensor.
Value truncateToF16(OpBuilder &b, Location loc, Value value);

} // namespace mlir::tfm::gpu_kernels

#endif // TFM_LIB_PIPELINES_GPUMATMULKERNELS_H

//===- GpuMatmulKernels.h - shared by the tensor-core matmul passes -*- C++ -*-===//
//
// What --tfm-gpu-tensor-core-matmul (mma.sync) and --tfm-gpu-warpgroup-matmul
// (TMA + wgmma) share: which linalg.matmul ops an f16 kernel can take, how a
// kernel's source becomes one function per shape that replaces them, the
// f16 rounding of the f32 tensors that f16 tensor-core code reads
// (--tfm-gpu-contraction-dtype, flash attention), and what each matmul
// kernel can take, for tfm-gpu-configure to choose. The kernel sources
// themselves are written with KernelEmitter.h. Private to lib/Codegen/GPU.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_CODEGEN_GPU_GPUMATMULKERNELS_H
#define TFM_LIB_CODEGEN_GPU_GPUMATMULKERNELS_H

#include "tfm/Dialect/Tfm/IR/Tfm.h"

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

/// The plan of one kernel for one matmul, as #tfm.gpu_kernel records it.
struct KernelPlan {
  GpuKernelKind kind;
  int64_t tileM, tileN, tileK, warps, stages;
  GpuKernelAttr toAttr(MLIRContext *ctx) const {
    return GpuKernelAttr::get(ctx, kind, tileM, tileN, tileK, warps, stages);
  }
  bool operator==(GpuKernelAttr attr) const {
    return attr.getKind() == kind && attr.getTileM() == tileM &&
           attr.getTileN() == tileN && attr.getTileK() == tileK &&
           attr.getWarps() == warps && attr.getStages() == stages;
  }
};

/// What each kernel takes, defined beside it: its plan for `f16`, or nullopt
/// when the shape does not suit it. tfm-gpu-configure tries them in the
/// order it prefers; each kernel pass checks the plan it is given against
/// the same function.
std::optional<KernelPlan> planWarpgroupMatmul(const F16Matmul &f16,
                                              int64_t stages);
std::optional<KernelPlan> planTensorCoreMatmul(const F16Matmul &f16);
std::optional<KernelPlan> planMatvec(const F16Matmul &f16);

/// A matmul tfm-gpu-configure planned for a kernel.
struct PlannedMatmul {
  linalg::MatmulOp op;
  F16Matmul shape;
  GpuKernelAttr plan;
};

/// The matmuls of `module` (outside any kernel) planned for `kind`. A plan
/// on a matmul no kernel takes (not f16 x f16 -> f32, static, identity
/// layouts) is an error on that op.
FailureOr<SmallVector<PlannedMatmul>> collectPlannedMatmuls(ModuleOp module,
                                                            GpuKernelKind kind);

/// The kernel function `name` in `symbols`, or else the first function of
/// the module `buildSource` returns, parsed and inserted: matmuls of one
/// shape share one kernel. Null after an error on `matmul` (naming the
/// `kind` of kernel) when the source does not parse.
func::FuncOp lookupOrParseKernel(SymbolTable &symbols, llvm::StringRef name,
                                 linalg::MatmulOp matmul, llvm::StringRef kind,
                                 llvm::function_ref<std::string()> buildSource);

/// Replaces the bufferized `matmul` with `func.call @kernel(A, B, C)`.
void replaceWithKernelCall(linalg::MatmulOp matmul, func::FuncOp kernel);

/// `value` (a static f32 tensor) rounded to f16 elementwise: a
/// linalg.generic of arith.truncf into a fresh tensor.
Value truncateToF16(OpBuilder &b, Location loc, Value value);

} // namespace mlir::tfm::gpu_kernels

#endif // TFM_LIB_CODEGEN_GPU_GPUMATMULKERNELS_H

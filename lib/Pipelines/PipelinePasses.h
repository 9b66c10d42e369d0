//===- PipelinePasses.h - passes private to the tfm pipelines ---*- C++ -*-===//
//
// Internal passes the CPU pipeline is built from. They are steps of
// `--tfm-cpu-pipeline`, registered (with default options) only so that tests
// can run them alone and `--mlir-print-ir-after=<argument>` can name them.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_PIPELINES_PIPELINEPASSES_H
#define TFM_LIB_PIPELINES_PIPELINEPASSES_H

#include "tfm/Pipelines/CpuTarget.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"

#include <optional>

#include <memory>

namespace mlir::tfm {

/// `llvm.emit_c_interface` on public functions; `bufferization.writable` on
/// their tensor arguments: true for KV caches (`tfm.kv_cache`), false for the
/// rest. Rejects malformed cache annotations.
std::unique_ptr<Pass> createPrepareCpuAbiPass();

/// After one-shot bufferization: removes every `tfm.kv_cache` result of a
/// public function (it is the cache argument's buffer, updated in place) and
/// fails with a clear error when bufferization had to copy the cache.
std::unique_ptr<Pass> createDropKVCacheResultsPass();

/// After results became out-parameters: a result that is a reshape of a
/// local buffer is computed in the out-parameter, reshaped, instead of
/// copied into it (CpuAbi.cpp).
std::unique_ptr<Pass> createResultsInPlacePass();

/// Producer/consumer fusion of linalg ops, restricted to consumers that read
/// each produced element once (no recomputation inside contractions).
std::unique_ptr<Pass> createFuseElementwisePass();

/// Names of the attributes that carry the CPU code generation plan.
inline constexpr llvm::StringLiteral kCpuTargetAttrName = "tfm.cpu_target";
inline constexpr llvm::StringLiteral kCpuTilingAttrName = "tfm.cpu_tiling";

/// The `tfm.cpu_tiling` dictionary of `tiling`, and back (std::nullopt when
/// `op` has none or it is malformed).
DictionaryAttr tilingToAttr(MLIRContext *ctx, const ContractionTiling &tiling);
std::optional<ContractionTiling> tilingFromAttr(Operation *op);

/// Looks up the target CPU (`cpu`, "host" by default), derives the tiling
/// from it (fields of `overrides` that are non-zero win) and records target
/// and tiling in the IR; see CpuConfigure.cpp.
std::unique_ptr<Pass> createCpuConfigurePass(StringRef cpu,
                                             const ContractionTiling &overrides);
std::unique_ptr<Pass> createCpuConfigurePass();

/// Makes every f32 matmul whose B is a weight parameter read a new parameter
/// in the register tile's panel layout (`tfm.param_pack`); see
/// CpuPackWeights.cpp.
std::unique_ptr<Pass> createCpuPackWeightsPass();

/// On tensors: tiles every f32 contraction that carries a `tfm.cpu_tiling`
/// plan (matmuls, batch matmuls, the contraction generics of flash
/// attention) into cache blocks and register tiles, remainders split off
/// and tiled on their own, vectorises the register tile into vector.contract
/// and hoists its accumulator out of the reduction loop.
std::unique_ptr<Pass> createTileAndVectorizeContractionsPass();

/// On tensors: vectorises the non-contraction generics (elementwise along
/// the innermost loop, row reductions as partial sums); see
/// VectorizeElementwise.cpp.
std::unique_ptr<Pass> createVectorizeElementwisePass();

/// scf.forall loops of fewer than 4 iterations become scf.for (see
/// SequentialSmallForalls.cpp).
std::unique_ptr<Pass> createSequentialSmallForallsPass();

/// Inlines memref.alloca_scope ops that scope no alloca (the ones
/// convert-scf-to-openmp puts around loop bodies), so the loops inside can
/// be lowered to control flow.
std::unique_ptr<Pass> createInlineAllocaScopesPass();

/// Inline polynomial approximations of f32 tanh, erf, exp and log instead of
/// libm calls (see ApproximateMath.cpp for the error bounds).
std::unique_ptr<Pass> createApproximateMathPass();

/// On buffers: lowers the vector dialect to 1-D vectors and vector.fma, the
/// form convert-vector-to-llvm turns into straight-line SIMD code.
std::unique_ptr<Pass> createLowerVectorsPass();

/// On buffers: moves every top-level op with a body (loop nests, parallel
/// regions, linalg ops) of a function with many of them into a private
/// function marked `no_inline`, so that LLVM's optimiser works
/// on many small functions instead of one huge one (compile time).
std::unique_ptr<Pass> createOutlineLoopNestsPass();

/// Marks the functions tfm-outline-loop-nests creates until they are
/// llvm.func (tfm-deduplicate-outlined-functions merges only these).
inline constexpr llvm::StringLiteral kOutlinedLoopNestAttr =
    "tfm.outlined_loop_nest";

/// After the conversion to the LLVM dialect: makes the functions of outlined
/// loop nests internal and `no_inline`.
std::unique_ptr<Pass> createFinalizeOutlinedLoopsPass();

/// Registers the passes above under their arguments.
void registerCpuPipelinePasses();

} // namespace mlir::tfm

#endif // TFM_LIB_PIPELINES_PIPELINEPASSES_H

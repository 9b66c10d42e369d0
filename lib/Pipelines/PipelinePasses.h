//===- PipelinePasses.h - passes private to the tfm pipelines ---*- C++ -*-===//
//
// Internal passes the CPU pipeline is built from. They are steps of
// `--tfm-cpu-pipeline`, registered (with default options) only so that tests
// can run them alone and `--mlir-print-ir-after=<argument>` can name them.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_PIPELINES_PIPELINEPASSES_H
#define TFM_LIB_PIPELINES_PIPELINEPASSES_H

#include "mlir/Pass/Pass.h"

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

/// Producer/consumer fusion of linalg ops, restricted to consumers that read
/// each produced element once (no recomputation inside contractions).
std::unique_ptr<Pass> createFuseElementwisePass();

/// Register tile sizes of the contraction code generator.
struct ContractionTiling {
  int64_t registerRows = 4;   // rows of the register tile (M)
  int64_t registerCols = 64;  // columns of the register tile (N, the vector)
  int64_t blockRows = 128;    // cache block (M)
  int64_t blockCols = 384;    // cache block (N)
  int64_t blockDepth = 192;   // cache block (K)
  int64_t dotCols = 4;        // rows of B per dot-product tile (few rows)
  int64_t dotDepth = 32;      // vector width of the dot-product partial sums
};

/// On tensors: tiles every f32 contraction (matmuls, batch matmuls, the
/// contraction generics of flash attention) into cache blocks and register
/// tiles, vectorises the register tile into vector.contract and hoists its
/// accumulator out of the reduction loop.
std::unique_ptr<Pass>
createTileAndVectorizeContractionsPass(const ContractionTiling &tiling);

/// On buffers: lowers the vector dialect to 1-D vectors and vector.fma, the
/// form convert-vector-to-llvm turns into straight-line SIMD code.
std::unique_ptr<Pass> createLowerVectorsPass();

/// On loops: moves every top-level loop nest of a function with many of them
/// into a private function marked `no_inline`, so that LLVM's optimiser works
/// on many small functions instead of one huge one (compile time).
std::unique_ptr<Pass> createOutlineLoopNestsPass();

/// After the conversion to the LLVM dialect: makes the functions of outlined
/// loop nests internal and `no_inline`.
std::unique_ptr<Pass> createFinalizeOutlinedLoopsPass();

/// Registers the passes above under their arguments.
void registerCpuPipelinePasses();

} // namespace mlir::tfm

#endif // TFM_LIB_PIPELINES_PIPELINEPASSES_H

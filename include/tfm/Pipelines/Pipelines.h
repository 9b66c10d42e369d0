//===- Pipelines.h - tfm pass pipelines -------------------------*- C++ -*-===//
//
// The pipelines that take a tfm module to executable code.
//
// Calling convention of the code `--tfm-cpu-pipeline` produces (what
// transformer-runner relies on): every public function keeps its name and
// gets `llvm.emit_c_interface`; each tensor argument becomes a memref with
// the identity layout, passed as a `StridedMemRefType *` through the
// `_mlir_ciface_<name>` wrapper; each tensor result becomes a trailing
// out-parameter memref that the caller allocates; `index` arguments are i64.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_PIPELINES_PIPELINES_H
#define TFM_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace tfm {

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<bool> verifyContracts{
      *this, "verify-contracts",
      llvm::cl::desc("Run --tfm-verify-contracts first"), llvm::cl::init(true)};
};

/// tfm -> linalg -> bufferized loops (vectorised where it pays) -> LLVM dialect.
void buildTfmCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// Registers `--tfm-cpu-pipeline` (and later pipelines) with the pass registry.
void registerTfmPipelines();

} // namespace tfm
} // namespace mlir

#endif // TFM_PIPELINES_PIPELINES_H

//===- Registration.cpp - the tfm pipelines and their passes --------------===//
//
// Registers, for transformer-opt and the tools built on it, every codegen
// pass and the two named pipelines.
//
//===----------------------------------------------------------------------===//
#include "tfm/Pipelines/Pipelines.h"

#include "tfm/Codegen/CPU/Passes.h"
#include "tfm/Codegen/Common/Passes.h"
#include "tfm/Codegen/GPU/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void mlir::tfm::registerTfmPipelines() {
  // Every codegen pass (tfm/Codegen/{Common,CPU,GPU}/Passes.td).
  registerTfmCodegenCommonPasses();
  registerTfmCodegenCPUPasses();
  registerTfmCodegenGPUPasses();
  PassPipelineRegistration<CpuPipelineOptions>(
      "tfm-cpu-pipeline",
      "Lowers a tfm module to the LLVM dialect for the host CPU (C interface, "
      "results as out-parameters)",
      buildTfmCpuPipeline);
  registerGpuPipeline();
}

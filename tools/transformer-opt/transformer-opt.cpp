//===- transformer-opt.cpp - the tfm optimizer driver ---------------------===//
//
// mlir-opt with the tfm dialect, every tfm pass and pipeline, and the
// upstream dialects and passes those pipelines lower through.
//
//===----------------------------------------------------------------------===//
#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::tfm::registerTfmPasses();
  mlir::tfm::registerTfmConversionPasses();
  mlir::tfm::registerTfmPipelines();

  mlir::DialectRegistry registry;
  registry.insert<mlir::tfm::TfmDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // --tfm-gpu-pipeline serialises kernels through LLVM IR (NVVM).
  mlir::registerAllToLLVMIRTranslations(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "tfm optimizer driver\n", registry));
}

//===- Registration.cpp - dialects the engine can parse and lower -------===//
//
// Kept apart from the runner's main file: the all-dialects headers are the
// slowest thing in the tool to compile.
//
//===----------------------------------------------------------------------===//
#include "tfm/Engine/Registration.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::tfm::registerEngineDialects(DialectRegistry &registry) {
  registry.insert<TfmDialect>();
  // The model may mix tfm with upstream ops, and the CPU pipeline relies on
  // the external models (bufferization, convert-to-llvm) that the extensions
  // attach: register what transformer-opt registers.
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // tfm's collectives survive to bufferization.
  registerBufferizableOpInterfaceExternalModels(registry);
  // The ExecutionEngine translates the lowered module to LLVM IR.
  registerAllToLLVMIRTranslations(registry);
}

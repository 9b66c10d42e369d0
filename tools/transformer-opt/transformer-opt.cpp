//===- transformer-opt.cpp - the tfm optimizer driver ---------------------===//
//
// mlir-opt with the tfm dialect, every tfm pass and pipeline, and the
// upstream dialects and passes those pipelines lower through.
//
// The input is read and bounded here before MlirOptMain parses it: a regular
// file (or stdin) of bounded size, nested at most kMaxMlirDepth levels (the
// upstream parser recurses per level and would overflow the stack), with no
// NUL byte (the lexer would take it for the end of the file and accept
// whatever came before). See tfm/Runtime/Limits.h.
//
//===----------------------------------------------------------------------===//
#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/BufferizableOpInterfaceImpl.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Runtime/Limits.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

static int fail(const llvm::Twine &message) {
  llvm::errs() << "transformer-opt: error: " << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAllPasses();
  mlir::tfm::registerTfmPasses();
  mlir::tfm::registerTfmConversionPasses();
  mlir::tfm::registerTfmPipelines();

  mlir::DialectRegistry registry;
  registry.insert<mlir::tfm::TfmDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::tfm::registerBufferizableOpInterfaceExternalModels(registry);
  // --tfm-gpu-pipeline serialises kernels through LLVM IR (NVVM).
  mlir::registerAllToLLVMIRTranslations(registry);

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "tfm optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();

  // Listing dialects or passes reads no input: MlirOptMain does it.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(mlir::MlirOptMain(
        argc, argv, inputFilename, outputFilename, registry));

  namespace limits = mlir::tfm::runtime;
  if (inputFilename != "-")
    if (llvm::Error err =
            limits::checkInputFile(inputFilename, limits::kMaxTextFileBytes))
      return fail(llvm::toString(std::move(err)));
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &message);
  if (!input)
    return fail(message);
  if (input->getBufferSize() > limits::kMaxTextFileBytes)
    return fail(inputFilename + ": more than the limit of " +
                llvm::Twine(limits::kMaxTextFileBytes) + " bytes");
  // Bytecode ("ML\xefR") is binary and handed on unscanned.
  if (!input->getBuffer().starts_with("ML\xef\x52"))
    if (llvm::Error err = limits::checkTextNesting(
            input->getBuffer(), limits::TextSyntax::Mlir,
            limits::kMaxMlirDepth,
            inputFilename == "-" ? llvm::StringRef("<stdin>")
                                 : llvm::StringRef(inputFilename)))
      return fail(llvm::toString(std::move(err)));

  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &message);
  if (!output)
    return fail(message);
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry,
                                     config)))
    return 1;
  output->os().flush();
  if (output->os().has_error()) {
    std::error_code ec = output->os().error();
    output->os().clear_error();
    return fail(outputFilename + ": cannot write: " + ec.message());
  }
  output->keep();
  return 0;
}

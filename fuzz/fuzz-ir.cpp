//===- fuzz-ir.cpp - libFuzzer target for transformer-opt's input path ----===//
//
// What transformer-opt does with a file before any transformation: bound the
// text (tfm/Runtime/Limits.h), parse it with the tfm dialect and the
// upstream dialects tfm IR uses, verify it, and run --tfm-verify-contracts.
// Every step may reject the input; none may crash. libMLIR.so itself is not
// instrumented: coverage and sanitizers see the tfm dialect, its verifiers
// and the contract pass.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Runtime/Limits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>
#include <memory>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (llvm::Error err = tfm::runtime::checkTextNesting(
          text, tfm::runtime::TextSyntax::Mlir, tfm::runtime::kMaxMlirDepth,
          "fuzz")) {
    llvm::consumeError(std::move(err));
    return 0;
  }
  // A context is slow to create (dialect loading); one serves 1000 inputs,
  // then a fresh one drops what failed parses left uniqued in it.
  static std::unique_ptr<MLIRContext> context;
  static unsigned uses = 0;
  if (!context || ++uses % 1000 == 0) {
    DialectRegistry registry;
    registry.insert<tfm::TfmDialect, func::FuncDialect, arith::ArithDialect,
                    tensor::TensorDialect, linalg::LinalgDialect>();
    context = std::make_unique<MLIRContext>(registry,
                                            MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
    // Diagnostics are expected; printing them would only slow the fuzzer.
    context->getDiagEngine().registerHandler(
        [](Diagnostic &) { return success(); });
  }
  // The tools parse files, which MemoryBuffer ends with a NUL the lexer
  // relies on; parseSourceString on the fuzzer's unterminated bytes would
  // read past them. A copy has the terminator.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz"),
                               llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, context.get());
  if (!module || failed(verify(*module)))
    return 0;
  PassManager pm(context.get());
  pm.addPass(tfm::createTfmVerifyContracts());
  (void)pm.run(*module);
  return 0;
}

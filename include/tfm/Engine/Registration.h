//===- RunnerRegistration.h - dialects the runner can parse -----*- C++ -*-===//
#ifndef TFM_TOOLS_TRANSFORMER_RUNNER_RUNNERREGISTRATION_H
#define TFM_TOOLS_TRANSFORMER_RUNNER_RUNNERREGISTRATION_H

namespace mlir {
class DialectRegistry;
namespace tfm {
/// tfm, the upstream dialects and extensions, and the LLVM IR translations.
void registerRunnerDialects(DialectRegistry &registry);
} // namespace tfm
} // namespace mlir

#endif // TFM_TOOLS_TRANSFORMER_RUNNER_RUNNERREGISTRATION_H

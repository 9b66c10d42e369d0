//===- Registration.h - dialects the engine can parse -----------*- C++ -*-===//
#ifndef TFM_ENGINE_REGISTRATION_H
#define TFM_ENGINE_REGISTRATION_H

namespace mlir {
class DialectRegistry;
namespace tfm {
/// tfm, the upstream dialects and extensions, and the LLVM IR translations.
void registerEngineDialects(DialectRegistry &registry);
} // namespace tfm
} // namespace mlir

#endif // TFM_ENGINE_REGISTRATION_H

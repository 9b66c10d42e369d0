//===- BufferizableOpInterfaceImpl.h - tfm ops that bufferize ---*- C++ -*-===//
//
// The tfm ops that survive --tfm-to-linalg (the collectives of a
// tensor-parallel model) bufferize through these external models, as
// upstream dialects' ops do.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_DIALECT_TFM_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define TFM_DIALECT_TFM_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace tfm {
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace tfm
} // namespace mlir

#endif // TFM_DIALECT_TFM_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

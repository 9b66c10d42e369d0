//===- TemporaryBuffers.h - what placing a temporary needs ------*- C++ -*-===//
//
// Shared by the passes that give a temporary a place of their choosing
// (tfm-plan-workspace, tfm-hoist-loop-scratch): its size, and whether a
// call it is passed to may keep it (it must then outlive the call unless
// the callee is known to keep no pointer).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_COMMON_TEMPORARYBUFFERS_H
#define TFM_CODEGEN_COMMON_TEMPORARYBUFFERS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/CallInterfaces.h"

#include <optional>

namespace mlir::tfm {

/// The bytes of a static, identity-layout memref in the default memory
/// space of whole-byte int or float elements; nullopt for anything else.
std::optional<uint64_t> getStaticBufferBytes(MemRefType type);

/// Whether a buffer passed to `call` may outlive the call. Not for an
/// external function marked tfm.nocapture (the runtime's micro-kernels),
/// nor for a private function of this module with a body and no results
/// (such as the kernels of tfm-cpu-amx-contractions): it has the buffer for
/// the call's duration and no way to hand it back.
bool mayKeepBuffers(CallOpInterface call);

} // namespace mlir::tfm

#endif // TFM_CODEGEN_COMMON_TEMPORARYBUFFERS_H

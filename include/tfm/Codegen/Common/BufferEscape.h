//===- BufferEscape.h - whether a call may keep a buffer --------*- C++ -*-===//
//
// Shared by the passes that give a temporary a place of their choosing
// (tfm-plan-workspace, tfm-hoist-loop-scratch): a buffer passed to a call
// must outlive the call unless the callee is known to keep no pointer.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_COMMON_BUFFERESCAPE_H
#define TFM_CODEGEN_COMMON_BUFFERESCAPE_H

#include "mlir/Interfaces/CallInterfaces.h"

namespace mlir::tfm {

/// Whether a buffer passed to `call` may outlive the call. Not for an
/// external function marked tfm.nocapture (the runtime's micro-kernels),
/// nor for a private function of this module with a body and no results
/// (such as the kernels of tfm-cpu-amx-contractions): it has the buffer for
/// the call's duration and no way to hand it back.
bool mayKeepBuffers(CallOpInterface call);

} // namespace mlir::tfm

#endif // TFM_CODEGEN_COMMON_BUFFERESCAPE_H

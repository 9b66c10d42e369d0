//===- Passes.h - tfm conversion passes -------------------------*- C++ -*-===//
#ifndef TFM_CONVERSION_PASSES_H
#define TFM_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace tfm {

#define GEN_PASS_DECL
#include "tfm/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Conversion/Passes.h.inc"

} // namespace tfm
} // namespace mlir

#endif // TFM_CONVERSION_PASSES_H

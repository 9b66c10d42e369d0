//===- PipelinePasses.h - helpers shared by the tfm pipelines ---*- C++ -*-===//
//
// What the passes of the CPU pipeline share beyond their declarations in
// tfm/Pipelines/Passes.td: the names of the attributes that carry the code
// generation plan and the plan's encoding.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_PIPELINES_PIPELINEPASSES_H
#define TFM_LIB_PIPELINES_PIPELINEPASSES_H

#include "tfm/Pipelines/CpuTarget.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"

#include <optional>

#include <memory>

namespace mlir::tfm {

/// Names of the attributes that carry the CPU code generation plan.
inline constexpr llvm::StringLiteral kCpuTargetAttrName = "tfm.cpu_target";
inline constexpr llvm::StringLiteral kCpuTilingAttrName = "tfm.cpu_tiling";

/// The `tfm.cpu_tiling` dictionary of `tiling`, and back (std::nullopt when
/// `op` has none or it is malformed).
DictionaryAttr tilingToAttr(MLIRContext *ctx, const ContractionTiling &tiling);
std::optional<ContractionTiling> tilingFromAttr(Operation *op);

/// Marks the functions tfm-outline-loop-nests creates until they are
/// llvm.func (tfm-deduplicate-outlined-functions merges only these).
inline constexpr llvm::StringLiteral kOutlinedLoopNestAttr =
    "tfm.outlined_loop_nest";

} // namespace mlir::tfm

#endif // TFM_LIB_PIPELINES_PIPELINEPASSES_H

//===- PackWeights.h - tfm-cpu-pack-weights' shared pieces ------*- C++ -*-===//
//
// What the two halves of tfm-cpu-pack-weights share: CpuPackWeights.cpp
// packs float weights into panels, PackQuantizedWeights.cpp rewrites the
// reads of quantized ones.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_CODEGEN_CPU_PACKWEIGHTS_H
#define TFM_LIB_CODEGEN_CPU_PACKWEIGHTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::scf {
class IndexSwitchOp;
} // namespace mlir::scf

namespace mlir::tfm::cpu_pack {

/// `op` as C[m, n] += A[m, k] * B with B = W[k, n] or W[n, k]: whether W is
/// out_in; nullopt when `op` is no such matmul.
std::optional<bool> matchMatmul(linalg::LinalgOp op);

/// The matmul C[m, .., r] += A[m, k] * P[.., k, r] as a generic reading the
/// panels `p`, or with the K pairs interleaved (`pairs`), with `op`'s plan.
Value buildPanelMatmul(RewriterBase &rewriter, linalg::LinalgOp op, Value a,
                       Value p, Value init, bool pairs);

/// C [M, N] viewed as panels [M, ceil(N / panel), panel], padded with zero
/// columns when `panel` does not divide N; and back as `type`.
Value viewAsPanels(RewriterBase &rewriter, Location loc, Value init,
                   int64_t panel);
Value viewAsMatrix(RewriterBase &rewriter, Location loc, Value panels,
                   RankedTensorType type);

/// Rewrites every matmul and element read of `func`'s quantized weights
/// (tfm.param_quant) to read the weight's parts in panels; failure on a
/// malformed signature or a weight quantized along another axis than the
/// matmul's K.
LogicalResult quantizeWeights(func::FuncOp func);

/// The weights `v` picks when it is a result of an scf.index_switch whose
/// every region yields, at its position, a parameter of `func` of `v`'s type
/// that `alike(weight, first)` accepts (`first`: the first region's; for
/// the first region, the weight itself): tfm.moe's experts
/// (TfmToLinalg/MoE.cpp), in the switch's region order; empty otherwise.
SmallVector<BlockArgument> getSwitchedWeights(
    func::FuncOp func, Value v,
    llvm::function_ref<bool(BlockArgument, BlockArgument)> alike);

/// An scf.index_switch like `sw` placed after it, region i yielding
/// `values[i]` (in `sw`'s region order); its results.
SmallVector<Value> selectSwitched(RewriterBase &rewriter, scf::IndexSwitchOp sw,
                                  ArrayRef<SmallVector<Value>> values);

/// Replaces `sw` by a switch of only its used results (none: erased), so
/// that the weights the packed switches replaced are read no more.
void dropUnusedResults(RewriterBase &rewriter, scf::IndexSwitchOp sw);

} // namespace mlir::tfm::cpu_pack

#endif // TFM_LIB_CODEGEN_CPU_PACKWEIGHTS_H

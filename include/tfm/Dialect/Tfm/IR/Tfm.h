//===- Tfm.h - the tfm dialect ----------------------------------*- C++ -*-===//
//
// Declares the tfm dialect, its enums, attributes, interfaces and ops.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_DIALECT_TFM_IR_TFM_H
#define TFM_DIALECT_TFM_IR_TFM_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tfm/Dialect/Tfm/IR/TfmOpsDialect.h.inc"
#include "tfm/Dialect/Tfm/IR/TfmEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmAttrs.h.inc"

#include "tfm/Dialect/Tfm/IR/TfmInterfaces.h.inc"

#define GET_OP_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmOps.h.inc"

#include <initializer_list>

namespace mlir::tfm {
/// The argument attribute that names a parameter in the weight file.
inline constexpr llvm::StringLiteral kParamAttrName = "tfm.param";
/// On a parameter built by concatenating weight-file tensors (e.g. by
/// --tfm-fuse-qkv): the names of the parts, in order, and the axis.
inline constexpr llvm::StringLiteral kParamPartsAttrName = "tfm.param_parts";
inline constexpr llvm::StringLiteral kParamConcatAxisAttrName =
    "tfm.param_concat_axis";
/// On a parameter the CPU pipeline reads in the GEMM micro-kernel's panel
/// layout (tfm-cpu-pack-weights): how to pack the weight-file tensor.
inline constexpr llvm::StringLiteral kParamPackAttrName = "tfm.param_pack";
/// The `format` of a tfm.param_pack whose weight is bound as the three bf16
/// parts AMX tiles read (tfm-cpu-split-amx-weights); absent: f32 panels.
inline constexpr llvm::StringLiteral kAmxSplitWeightFormat = "amx_bf16x3";
/// The `format` of a bf16 weight bound in the order AMX tiles read B (K
/// pairs interleaved), one part.
inline constexpr llvm::StringLiteral kAmxPairedWeightFormat = "amx_bf16";
/// On a parameter whose weight-file tensor has another element type than the
/// argument (a bf16 checkpoint bound to an f32 model, converted when bound):
/// that type, as a TypeAttr. The ledger counts the parameter's bytes in it.
inline constexpr llvm::StringLiteral kParamDTypeAttrName = "tfm.param_dtype";
/// On a parameter argument of a narrower float type than the model's (the
/// GPU pipeline reads matmul weights as f16, --tfm-gpu-contraction-dtype):
/// whoever binds weights rounds the weight-file tensor to the argument's
/// type once, whatever its type in the file.
inline constexpr llvm::StringLiteral kParamRoundedAttrName =
    "tfm.param_rounded";
/// The ledger's counts (elements, FLOPs, bytes) are non-negative int64s. A
/// module whose counts do not fit (tensors near the verifiers' limits, a
/// sum over many of them) gets INT64_MAX, never a wrapped value: products
/// and sums of counts, clamped.
int64_t multiplyCounts(std::initializer_list<int64_t> factors);
int64_t addCounts(int64_t a, int64_t b);

/// The function attribute that marks a decoder block (input type == output type).
inline constexpr llvm::StringLiteral kBlockAttrName = "tfm.block";

/// True if `position`, the `offset` or `position` operand of a
/// position-dependent op, holds a position per sequence (a `[B]` tensor, for
/// ragged batches) rather than one `index` for the whole batch.
inline bool isPerSequencePosition(Value position) {
  return position && isa<RankedTensorType>(position.getType());
}

/// The weight-file name of `v` if it is a function argument annotated with
/// `tfm.param`, or an empty string.
llvm::StringRef getParamName(Value v);
/// The element type of `v`'s tensor in the weight file: its
/// `tfm.param_dtype` if it is a parameter that has one, else `v`'s own.
Type getParamStorageElementType(Value v);
} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_IR_TFM_H

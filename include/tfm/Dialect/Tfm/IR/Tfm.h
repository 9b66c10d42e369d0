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

#include "tfm/Dialect/Tfm/IR/TfmAttrNames.h"

#include "tfm/Dialect/Tfm/IR/TfmOpsDialect.h.inc"
#include "tfm/Dialect/Tfm/IR/TfmEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmAttrs.h.inc"

#include "tfm/Dialect/Tfm/IR/TfmInterfaces.h.inc"

#define GET_OP_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmOps.h.inc"

#include <initializer_list>

namespace mlir::tfm {
/// The ledger's counts (elements, FLOPs, bytes) are non-negative int64s. A
/// module whose counts do not fit (tensors near the verifiers' limits, a
/// sum over many of them) gets INT64_MAX, never a wrapped value: products
/// and sums of counts, clamped.
int64_t multiplyCounts(std::initializer_list<int64_t> factors);
int64_t addCounts(int64_t a, int64_t b);

/// True if `position`, the `offset` or `position` operand of a
/// position-dependent op, holds a position per sequence (a `[B]` tensor, for
/// ragged batches) rather than one `index` for the whole batch.
inline bool isPerSequencePosition(Value position) {
  return position && isa<RankedTensorType>(position.getType());
}

/// The weight-file name of `v` if it is a function argument annotated with
/// `tfm.param`, or an empty string.
llvm::StringRef getParamName(Value v);

/// The ranks of the tensor-parallel module `op` is (in): its
/// `tfm.tensor_parallel`, or none.
std::optional<int64_t> getTensorParallelRanks(Operation *op);
/// The element type of `v`'s tensor in the weight file: its
/// `tfm.param_dtype` if it is a parameter that has one, else `v`'s own.
Type getParamStorageElementType(Value v);
/// How `v`'s weights are held if it is a parameter held quantized
/// (`tfm.param_quant`), or null.
WeightQuantAttr getParamQuant(Value v);
} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_IR_TFM_H

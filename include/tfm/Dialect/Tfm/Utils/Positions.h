//===- Positions.h - per-sequence positions of tfm ops ----------*- C++ -*-===//
//
// The position-dependent ops (tfm.attention, tfm.kv_cache_write, tfm.rope,
// tfm.position_embedding) take their start position either as one `index`
// for the whole batch or as a `[B]` tensor of i32/i64 with each sequence's
// own (ragged batches). Their lowerings (tfm-to-linalg and the flash form)
// read it through this one helper, so the two forms agree on what sequence
// `b`'s position is.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_DIALECT_TFM_UTILS_POSITIONS_H
#define TFM_DIALECT_TFM_UTILS_POSITIONS_H

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfm {

/// The start position of sequence `batchIndex` (an index) as an index:
/// `position` itself when it is one index for the batch, else element
/// `batchIndex` of the `[B]` tensor. `position` must not be null.
inline Value getSequencePosition(OpBuilder &b, Location loc, Value position,
                                 Value batchIndex) {
  if (!isPerSequencePosition(position))
    return position;
  Value element =
      tensor::ExtractOp::create(b, loc, position, ValueRange{batchIndex});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), element);
}

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_UTILS_POSITIONS_H

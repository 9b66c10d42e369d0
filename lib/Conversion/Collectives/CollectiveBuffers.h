//===- CollectiveBuffers.h - what both collective lowerings share -*- C++
//-*-===//
//
// The MPI (CPU) and NCCL (GPU) lowerings of tfm's bufferized collectives
// both sum flat buffers, and both gather as a sum: neither library's
// all-gather puts a slice of the LAST dimension in place (MLIR 22's mpi
// dialect has none; NCCL's concatenates whole buffers rank after rank).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_CONVERSION_COLLECTIVES_COLLECTIVEBUFFERS_H
#define TFM_LIB_CONVERSION_COLLECTIVES_COLLECTIVEBUFFERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <functional>

namespace mlir::tfm::collectives {

/// The ops both lowerings replace: tfm.buffer_all_reduce,
/// tfm.buffer_all_gather and tfm.rank, in `module`'s order.
SmallVector<Operation *> collectCollectives(ModuleOp module);

/// `buffer` (identity layout) as the 1-D buffer it is.
Value flatten(OpBuilder &b, Location loc, Value buffer);

/// tfm.buffer_all_gather of `slice` into `target` along the last dimension,
/// as a sum: this rank's slice copied at `rank * n` into a buffer of zeros,
/// whose sum over the ranks (`sum(placed, target)`) is every slice in place
/// -- exact, the others add zeros. The buffer is freed after the sum.
void gatherAsSum(OpBuilder &b, Location loc, Value slice, Value target,
                 Value rank, const std::function<void(Value, Value)> &sum);

} // namespace mlir::tfm::collectives

#endif // TFM_LIB_CONVERSION_COLLECTIVES_COLLECTIVEBUFFERS_H

//===- LoweringUtils.h - shared helpers of the tfm-to-linalg patterns -----===//
//
// Builders shared by the tfm -> linalg patterns: tensors, elementwise and
// reduction generics, f32 accumulation for f16/bf16, reshapes around matmuls
// and a max-subtracted softmax. Private to lib/Conversion/TfmToLinalg.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_CONVERSION_TFMTOLINALG_LOWERINGUTILS_H
#define TFM_LIB_CONVERSION_TFMTOLINALG_LOWERINGUTILS_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {

namespace lowering {

/// Body of an elementwise or reduction generic: gets the block arguments
/// (inputs then outputs) and returns the values to yield.
using BodyFn =
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;

inline RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Scalar conversions to and from f32 (no-ops for f32).
Value extToF32(OpBuilder &b, Location loc, Value scalar);
Value truncFromF32(OpBuilder &b, Location loc, Value scalar, Type type);
Value f32Const(OpBuilder &b, Location loc, double value);
Value indexConst(OpBuilder &b, Location loc, int64_t value);
/// clamp(v, lo, hi) on index values (signed).
Value clampIndex(OpBuilder &b, Location loc, Value v, int64_t lo, int64_t hi);
/// silu(v) = v / (1 + exp(-v)), on an f32 scalar (SiLU, SwiGLU, MoE experts).
Value siluF32(OpBuilder &b, Location loc, Value v);

/// A tensor.empty / a linalg.fill of `value` of the given shape.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType);
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type elementType, double value);

SmallVector<utils::IteratorType> parallelIterators(unsigned n);

/// A linalg.generic with identity-mapped (or `inputMaps`) inputs writing a
/// fresh tensor of `resultType` over all-parallel loops.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, BodyFn body,
                       ArrayRef<AffineMap> inputMaps = {});

/// Reduces the last dimension of `input` into an f32 tensor of rank r-1
/// initialised to `init`. `rowInputs` (rank r-1) are broadcast along the
/// reduced dimension; the body gets (element, rowInputs..., accumulator).
Value reduceLastDimF32(OpBuilder &b, Location loc, Value input,
                       ValueRange rowInputs, double init, BodyFn body);

/// Casts an f32 tensor to `elementType` (arith.truncf), or returns it as is.
Value truncTensor(OpBuilder &b, Location loc, Value f32Tensor,
                  Type elementType);

/// [d0, ..., dn-1, k] -> [d0*...*dn-1, k] (no-op for rank 2).
Value collapseToMatrix(OpBuilder &b, Location loc, Value v);
/// [n, k] -> [leading..., k] (no-op when `leading` has one entry).
Value expandFromMatrix(OpBuilder &b, Location loc, Value v,
                       ArrayRef<int64_t> leading);

/// x[n, in] times a weight in `layout` ([in, out] or [out, in], the latter as
/// a linalg.matmul with a transposed B map, no transposing copy) into a
/// zero-initialised f32 [n, out] accumulator. Mixed f32 x f16 operands are
/// allowed: linalg.matmul extends each operand to the accumulator type.
Value buildMatmulF32(OpBuilder &b, Location loc, Value x, Value weight,
                     bool weightIsOutIn);

/// Numerically stable softmax over the last dimension of an f32 tensor:
/// m = max_j x_j (arith.maximumf reduction), e = exp(x - m), e / sum(e).
Value buildSoftmaxF32(OpBuilder &b, Location loc, Value x);

void populateProjectionPatterns(RewritePatternSet &patterns);
void populateMoEPatterns(RewritePatternSet &patterns);
void populateAttentionPatterns(RewritePatternSet &patterns);
void populateNormPatterns(RewritePatternSet &patterns);
void populatePointwisePatterns(RewritePatternSet &patterns);
void populateReshapePatterns(RewritePatternSet &patterns);
void populateCollectivePatterns(RewritePatternSet &patterns);

} // namespace lowering
} // namespace mlir::tfm

#endif // TFM_LIB_CONVERSION_TFMTOLINALG_LOWERINGUTILS_H

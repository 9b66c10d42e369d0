//===- Norms.cpp - tfm.layer_norm / rms_norm to linalg --------------------===//
//
// Statistics are reductions over the last dimension into f32 row tensors,
// whatever the input type (f16/bf16 sums of d squares lose too much
// otherwise); the normalising generic computes in f32 and rounds once.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

/// Maps of a normalising generic over [..., d]: the element (identity), the
/// row statistics (all but d) and the per-feature vectors (only d).
static void normMaps(OpBuilder &b, unsigned rank, AffineMap &id,
                     AffineMap &row, AffineMap &feature) {
  id = b.getMultiDimIdentityMap(rank);
  row = id.dropResult(rank - 1);
  feature = AffineMap::get(rank, 0, b.getAffineDimExpr(rank - 1),
                           b.getContext());
}

/// rsqrt(sum * invD + eps) on f32 scalars: the reciprocal standard
/// deviation (LayerNorm, from the centred sum of squares) or root mean square
/// (RMSNorm) of a row of 1 / invD elements.
static Value buildRsqrtOfMean(OpBuilder &b, Location loc, Value sum,
                              double invD, double eps) {
  Value mean = arith::MulFOp::create(b, loc, sum, f32Const(b, loc, invD));
  return math::RsqrtOp::create(
      b, loc, arith::AddFOp::create(b, loc, mean, f32Const(b, loc, eps)));
}

namespace {
/// (x - mean) * rsqrt(var + eps) * scale + bias with two-pass (centred)
/// biased variance, as torch.nn.LayerNorm.
struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Value x = adaptor.getInput();
    RankedTensorType type = tensorType(x);
    int64_t d = type.getShape().back();
    double eps = op.getEpsilon().convertToDouble();
    double invD = 1.0 / double(d);

    Value sum = reduceLastDimF32(
        b, loc, x, {}, 0.0,
        [](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
          return {arith::AddFOp::create(nb, nloc, extToF32(nb, nloc, args[0]),
                                        args[1])};
        });
    Value mean = buildElementwise(
        b, loc, tensorType(sum), sum,
        [&](OpBuilder &nb, Location nloc, ValueRange args)
            -> SmallVector<Value> {
          return {arith::MulFOp::create(nb, nloc, args[0],
                                        f32Const(nb, nloc, invD))};
        });
    Value sumSq = reduceLastDimF32(
        b, loc, x, mean, 0.0,
        [](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
          Value c = arith::SubFOp::create(nb, nloc, extToF32(nb, nloc, args[0]),
                                          args[1]);
          Value sq = arith::MulFOp::create(nb, nloc, c, c);
          return {arith::AddFOp::create(nb, nloc, sq, args[2])};
        });

    AffineMap id, row, feature;
    normMaps(b, type.getRank(), id, row, feature);
    Type elementType = type.getElementType();
    Value y = buildElementwise(
        b, loc, type, {x, mean, sumSq, adaptor.getScale(), adaptor.getBias()},
        [&](OpBuilder &nb, Location nloc, ValueRange args)
            -> SmallVector<Value> {
          Value rstd = buildRsqrtOfMean(nb, nloc, args[2], invD, eps);
          Value c = arith::SubFOp::create(nb, nloc, extToF32(nb, nloc, args[0]),
                                          args[1]);
          Value n = arith::MulFOp::create(nb, nloc, c, rstd);
          Value scaled = arith::MulFOp::create(nb, nloc, n,
                                               extToF32(nb, nloc, args[3]));
          Value shifted = arith::AddFOp::create(nb, nloc, scaled,
                                                extToF32(nb, nloc, args[4]));
          return {truncFromF32(nb, nloc, shifted, elementType)};
        },
        {id, row, row, feature, feature});
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// x * rsqrt(mean(x^2) + eps) * scale (Llama's RMSNorm), or * (1 + scale)
/// with unit_offset (Gemma's).
struct RMSNormLowering : OpConversionPattern<RMSNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RMSNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Value x = adaptor.getInput();
    RankedTensorType type = tensorType(x);
    double invD = 1.0 / double(type.getShape().back());
    double eps = op.getEpsilon().convertToDouble();
    bool unitOffset = op.getUnitOffset();

    Value sumSq = reduceLastDimF32(
        b, loc, x, {}, 0.0,
        [](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
          Value v = extToF32(nb, nloc, args[0]);
          Value sq = arith::MulFOp::create(nb, nloc, v, v);
          return {arith::AddFOp::create(nb, nloc, sq, args[1])};
        });

    AffineMap id, row, feature;
    normMaps(b, type.getRank(), id, row, feature);
    Type elementType = type.getElementType();
    Value y = buildElementwise(
        b, loc, type, {x, sumSq, adaptor.getScale()},
        [&](OpBuilder &nb, Location nloc, ValueRange args)
            -> SmallVector<Value> {
          Value rstd = buildRsqrtOfMean(nb, nloc, args[1], invD, eps);
          Value n = arith::MulFOp::create(nb, nloc, extToF32(nb, nloc, args[0]),
                                          rstd);
          Value factor = extToF32(nb, nloc, args[2]);
          if (unitOffset)
            factor = arith::AddFOp::create(nb, nloc, f32Const(nb, nloc, 1.0),
                                           factor);
          Value scaled = arith::MulFOp::create(nb, nloc, n, factor);
          return {truncFromF32(nb, nloc, scaled, elementType)};
        },
        {id, row, feature});
    rewriter.replaceOp(op, y);
    return success();
  }
};
} // namespace

void mlir::tfm::lowering::populateNormPatterns(RewritePatternSet &patterns) {
  patterns.add<LayerNormLowering, RMSNormLowering>(patterns.getContext());
}

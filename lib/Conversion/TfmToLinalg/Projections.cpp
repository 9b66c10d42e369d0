//===- Projections.cpp - tfm.linear / lm_head to linalg -------------------===//
//
// Projections become linalg.matmul on [n, in] x W after collapsing the
// leading dimensions; `out_in` weights ([out, in], nn.Linear) use the
// matmul's transposed-B indexing map instead of a transposing copy. Products
// accumulate in f32 for every element type; an epilogue generic adds the bias
// and rounds back to the input's type. tfm.permute_features, which feeds a
// projection whose weight rows are stored reordered, is a gather.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

/// y = x W (+ bias) for x of any rank >= 2, in the type of `resultType`.
static Value buildProjection(OpBuilder &b, Location loc, Value x, Value weight,
                             Value bias, bool weightIsOutIn,
                             RankedTensorType resultType) {
  RankedTensorType inType = tensorType(x);
  Type elementType = resultType.getElementType();
  Value acc = buildMatmulF32(b, loc, collapseToMatrix(b, loc, x), weight,
                             weightIsOutIn);
  Value y;
  if (bias) {
    // Bias add and rounding in one epilogue: acc[i, j] + bias[j].
    RankedTensorType accType = tensorType(acc);
    AffineMap id = b.getMultiDimIdentityMap(2);
    AffineMap col = AffineMap::get(2, 0, b.getAffineDimExpr(1));
    y = buildElementwise(
        b, loc, accType.clone(elementType), {acc, bias},
        [&](OpBuilder &nb, Location nloc, ValueRange args)
            -> SmallVector<Value> {
          Value sum = arith::AddFOp::create(nb, nloc, args[0],
                                            extToF32(nb, nloc, args[1]));
          return {truncFromF32(nb, nloc, sum, elementType)};
        },
        {id, col});
  } else {
    y = truncTensor(b, loc, acc, elementType);
  }
  return expandFromMatrix(b, loc, y, inType.getShape().drop_back());
}

namespace {
struct LinearLowering : OpConversionPattern<LinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, buildProjection(rewriter, op.getLoc(), adaptor.getInput(),
                            adaptor.getWeight(), adaptor.getBias(),
                            op.getLayout() == WeightLayout::out_in,
                            tensorType(op.getResult())));
    return success();
  }
};

struct LMHeadLowering : OpConversionPattern<LMHeadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LMHeadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorType(op.getResult());
    Value logits = buildProjection(rewriter, loc, adaptor.getInput(),
                                   adaptor.getWeight(), /*bias=*/Value(),
                                   op.getLayout() == WeightLayout::out_in,
                                   type);
    // Gemma 2's final softcapping, c * tanh(logit / c) in f32: an
    // elementwise epilogue of the head's GEMM.
    if (FloatAttr cap = op.getLogitSoftcapAttr()) {
      float c = cap.getValue().convertToFloat();
      logits = buildElementwise(
          rewriter, loc, type, logits,
          [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
            Value x = extToF32(b, l, args[0]);
            Value cv = f32Const(b, l, c);
            Value y = arith::MulFOp::create(
                b, l,
                math::TanhOp::create(b, l, arith::DivFOp::create(b, l, x, cv)),
                cv);
            return {truncFromF32(b, l, y, type.getElementType())};
          });
    }
    rewriter.replaceOp(op, logits);
    return success();
  }
};
/// y[..., j] = x[..., order[j]]: a gather along the last dimension, the
/// order's entries clamped into [0, K) (the reader checked them; the clamp
/// keeps a bad one from reading out of bounds).
struct PermuteFeaturesLowering : OpConversionPattern<PermuteFeaturesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PermuteFeaturesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = tensorType(op.getResult());
    unsigned rank = type.getRank();
    int64_t k = type.getShape().back();
    Value x = adaptor.getInput();
    AffineMap orderMap = AffineMap::get(
        rank, 0, rewriter.getAffineDimExpr(rank - 1), rewriter.getContext());
    rewriter.replaceOp(
        op,
        buildElementwise(
            rewriter, op.getLoc(), type, adaptor.getOrder(),
            [&](OpBuilder &b, Location loc,
                ValueRange args) -> SmallVector<Value> {
              Value from = clampIndex(
                  b, loc,
                  arith::IndexCastOp::create(b, loc, b.getIndexType(), args[0]),
                  0, k - 1);
              SmallVector<Value> indices;
              for (unsigned d = 0; d + 1 < rank; ++d)
                indices.push_back(linalg::IndexOp::create(b, loc, d));
              indices.push_back(from);
              return {tensor::ExtractOp::create(b, loc, x, indices)};
            },
            {orderMap}));
    return success();
  }
};
} // namespace

void mlir::tfm::lowering::populateProjectionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LinearLowering, LMHeadLowering, PermuteFeaturesLowering>(
      patterns.getContext());
}

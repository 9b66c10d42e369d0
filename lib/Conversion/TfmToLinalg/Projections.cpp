//===- Projections.cpp - tfm.linear / lm_head to linalg -------------------===//
//
// Projections become linalg.matmul on [n, in] x W after collapsing the
// leading dimensions; `out_in` weights ([out, in], nn.Linear) use the
// matmul's transposed-B indexing map instead of a transposing copy. Products
// accumulate in f32 for every element type; an epilogue generic adds the bias
// and rounds back to the input's type.
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
} // namespace

void mlir::tfm::lowering::populateProjectionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LinearLowering, LMHeadLowering>(patterns.getContext());
}

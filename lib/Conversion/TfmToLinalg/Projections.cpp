//===- Projections.cpp - tfm.linear / lm_head / moe to linalg -------------===//
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
    rewriter.replaceOp(
        op, buildProjection(rewriter, op.getLoc(), adaptor.getInput(),
                            adaptor.getWeight(), /*bias=*/Value(),
                            op.getLayout() == WeightLayout::out_in,
                            tensorType(op.getResult())));
    return success();
  }
};

/// Mixtral's sparse MoE block. Routing: p = softmax(x R^T); expert e is
/// selected for a token when fewer than top_k experts beat it (a higher
/// probability, or an equal one at a lower index, as torch.topk's stable
/// order); selected probabilities are renormalised to sum to 1 and the others
/// are 0.
///
/// Experts are computed densely: every expert runs on every token and its
/// output is scaled by the token's routing weight, which is 0 for the experts
/// a token did not select. The result is exact, but costs E/top_k times the
/// expert FLOPs of routed execution; gathering each expert's tokens (routed
/// computation) is a later step.
struct MoELowering : OpConversionPattern<MoEOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MoEOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    RankedTensorType inType = tensorType(op.getInput());
    Type elementType = inType.getElementType();
    Type f32 = b.getF32Type();
    int64_t numExperts = op.getNumExperts(), topK = op.getTopK();

    Value x = collapseToMatrix(b, loc, adaptor.getInput()); // [n, d]
    int64_t n = tensorType(x).getDimSize(0), d = inType.getDimSize(2);
    Value probs = buildSoftmaxF32(
        b, loc,
        buildMatmulF32(b, loc, x, adaptor.getRouter(), /*weightIsOutIn=*/true));

    // rank[t, e] = #experts that beat e for token t, as a reduction over e2.
    MLIRContext *ctx = b.getContext();
    AffineExpr t = b.getAffineDimExpr(0), e = b.getAffineDimExpr(1),
               e2 = b.getAffineDimExpr(2);
    Value zeroRank = filledTensor(b, loc, {n, numExperts}, f32, 0.0);
    Value rank =
        linalg::GenericOp::create(
            b, loc, TypeRange{zeroRank.getType()}, ValueRange{probs, probs},
            ValueRange{zeroRank},
            ArrayRef<AffineMap>{AffineMap::get(3, 0, {t, e}, ctx),
                                AffineMap::get(3, 0, {t, e2}, ctx),
                                AffineMap::get(3, 0, {t, e}, ctx)},
            {utils::IteratorType::parallel, utils::IteratorType::parallel,
             utils::IteratorType::reduction},
            [&](OpBuilder &nb, Location nloc, ValueRange args) {
              Value self = args[0], other = args[1];
              Value ie = linalg::IndexOp::create(nb, nloc, 1);
              Value ie2 = linalg::IndexOp::create(nb, nloc, 2);
              Value greater = arith::CmpFOp::create(
                  nb, nloc, arith::CmpFPredicate::OGT, other, self);
              Value equal = arith::CmpFOp::create(
                  nb, nloc, arith::CmpFPredicate::OEQ, other, self);
              Value before = arith::CmpIOp::create(
                  nb, nloc, arith::CmpIPredicate::ult, ie2, ie);
              Value beats = arith::OrIOp::create(
                  nb, nloc, greater,
                  arith::AndIOp::create(nb, nloc, equal, before));
              Value one = arith::UIToFPOp::create(nb, nloc, f32, beats);
              linalg::YieldOp::create(
                  nb, nloc, ValueRange{arith::AddFOp::create(nb, nloc, args[2],
                                                             one)});
            })
            .getResult(0);

    // Keep the top_k probabilities, zero the rest, renormalise.
    auto routeType = RankedTensorType::get({n, numExperts}, f32);
    Value kept = buildElementwise(
        b, loc, routeType, {probs, rank},
        [&](OpBuilder &nb, Location nloc, ValueRange args)
            -> SmallVector<Value> {
          Value selected = arith::CmpFOp::create(
              nb, nloc, arith::CmpFPredicate::OLT, args[1],
              f32Const(nb, nloc, double(topK)));
          return {arith::SelectOp::create(nb, nloc, selected, args[0],
                                          f32Const(nb, nloc, 0.0))};
        });
    Value keptSum = reduceLastDimF32(
        b, loc, kept, {}, 0.0,
        [](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
          return {arith::AddFOp::create(nb, nloc, args[0], args[1])};
        });
    AffineMap id2 = b.getMultiDimIdentityMap(2);
    AffineMap rowMap = AffineMap::get(2, 0, t, ctx);
    Value routing = buildElementwise(
        b, loc, routeType, {kept, keptSum},
        [](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
          return {arith::DivFOp::create(nb, nloc, args[0], args[1])};
        },
        {id2, rowMap});

    // acc[t, :] += routing[t, e] * down_e(silu(gate_e x) * up_e x).
    Value acc = filledTensor(b, loc, {n, d}, f32, 0.0);
    auto weightType = RankedTensorType::get({n}, f32);
    for (int64_t ex = 0; ex < numExperts; ++ex) {
      Value gate = buildMatmulF32(b, loc, x, adaptor.getExpertWeights()[3 * ex],
                                  /*weightIsOutIn=*/true);
      Value up = buildMatmulF32(b, loc, x,
                                adaptor.getExpertWeights()[3 * ex + 1], true);
      Value hidden = buildElementwise(
          b, loc, tensorType(gate), {gate, up},
          [](OpBuilder &nb, Location nloc, ValueRange args)
              -> SmallVector<Value> {
            // silu(g) = g / (1 + exp(-g))
            Value g = args[0];
            Value denom = arith::AddFOp::create(
                nb, nloc, f32Const(nb, nloc, 1.0),
                math::ExpOp::create(nb, nloc,
                                    arith::NegFOp::create(nb, nloc, g)));
            Value silu = arith::DivFOp::create(nb, nloc, g, denom);
            return {arith::MulFOp::create(nb, nloc, silu, args[1])};
          });
      Value down = buildMatmulF32(
          b, loc, hidden, adaptor.getExpertWeights()[3 * ex + 2], true);
      Value column = tensor::ExtractSliceOp::create(
          b, loc, weightType, routing, ValueRange{}, ValueRange{}, ValueRange{},
          b.getDenseI64ArrayAttr({0, ex}), b.getDenseI64ArrayAttr({n, 1}),
          b.getDenseI64ArrayAttr({1, 1}));
      acc = linalg::GenericOp::create(
                b, loc, TypeRange{acc.getType()}, ValueRange{down, column},
                ValueRange{acc}, ArrayRef<AffineMap>{id2, rowMap, id2},
                parallelIterators(2),
                [](OpBuilder &nb, Location nloc, ValueRange args) {
                  Value scaled =
                      arith::MulFOp::create(nb, nloc, args[0], args[1]);
                  linalg::YieldOp::create(
                      nb, nloc,
                      ValueRange{arith::AddFOp::create(nb, nloc, args[2],
                                                       scaled)});
                })
                .getResult(0);
    }
    Value y = truncTensor(b, loc, acc, elementType);
    rewriter.replaceOp(op,
                       expandFromMatrix(b, loc, y, inType.getShape().drop_back()));
    return success();
  }
};
} // namespace

void mlir::tfm::lowering::populateProjectionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LinearLowering, LMHeadLowering, MoELowering>(
      patterns.getContext());
}

//===- Attention.cpp - tfm.attention to linalg ----------------------------===//
//
// softmax(Q K^T * scale + causal mask) V as two linalg.batch_matmul ops around
// a max-subtracted softmax, all in f32.
//
// Grouped-query attention needs no copy of K/V per query head: query head
// h = hk * G + gi (G = Hq / Hkv) reads kv head hk = h / G, so reshaping Q from
// [B, Hq, S, dh] to [B*Hkv, G*S, dh] (a pure reshape: the G query heads of a
// kv head are contiguous) lets each kv head serve its G*S query rows in a
// single batch_matmul. Row r of that matrix is query position offset + r % S,
// with the offset of sequence h / Hkv when each sequence has its own.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Utils/Positions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {
struct AttentionLowering : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    MLIRContext *ctx = b.getContext();
    RankedTensorType qType = tensorType(op.getQuery()),
                     kType = tensorType(op.getKey()),
                     vType = tensorType(op.getValue());
    Type elementType = qType.getElementType(), f32 = b.getF32Type();
    int64_t batch = qType.getDimSize(0), hq = qType.getDimSize(1),
            seq = qType.getDimSize(2), dh = qType.getDimSize(3);
    int64_t hkv = kType.getDimSize(1), skv = kType.getDimSize(2),
            dv = vType.getDimSize(3);
    int64_t group = hq / hkv, heads = batch * hkv, rows = group * seq;

    // Q: [B, Hq, S, dh] -> [B, Hkv, G, S, dh] -> [B*Hkv, G*S, dh].
    auto q5Type = RankedTensorType::get({batch, hkv, group, seq, dh},
                                        elementType);
    SmallVector<int64_t> q5Shape(q5Type.getShape());
    Value q5 = tensor::ExpandShapeOp::create(
        b, loc, q5Type, adaptor.getQuery(),
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
        getAsIndexOpFoldResult(ctx, q5Shape));
    Value q = tensor::CollapseShapeOp::create(
        b, loc, q5, SmallVector<ReassociationIndices>{{0, 1}, {2, 3}, {4}});
    SmallVector<ReassociationIndices> mergeBatchHeads{{0, 1}, {2}, {3}};
    Value k = tensor::CollapseShapeOp::create(b, loc, adaptor.getKey(),
                                              mergeBatchHeads);
    Value v = tensor::CollapseShapeOp::create(b, loc, adaptor.getValue(),
                                              mergeBatchHeads);

    // scores = Q K^T, accumulated in f32 (K read through a transposed map).
    Value scoreInit = filledTensor(b, loc, {heads, rows, skv}, f32, 0.0);
    Value scores = linalg::BatchMatmulTransposeBOp::create(
                       b, loc, TypeRange{scoreInit.getType()},
                       ValueRange{q, k}, ValueRange{scoreInit})
                       .getResult(0);

    // Scale and causal mask (with the sliding window if any). Masked scores
    // get the lowest finite f32 rather than -inf, so a fully masked row (an
    // offset before the cache start) yields a uniform row instead of NaNs;
    // exp() of it is exactly 0 otherwise.
    // Per-sequence offsets mask each sequence's keys past its own queries:
    // its padding and stale cache slots.
    Value offset = adaptor.getOffset();
    if (!offset)
      offset = indexConst(b, loc, skv - seq);
    bool causal = op.getCausal();
    Value masked = buildElementwise(
        b, loc, tensorType(scores), scores,
        [&](OpBuilder &nb, Location nloc, ValueRange args)
            -> SmallVector<Value> {
          Value s = op.buildScore(nb, nloc, args[0]);
          if (!causal)
            return {s};
          Value r = linalg::IndexOp::create(nb, nloc, 1);
          Value j = linalg::IndexOp::create(nb, nloc, 2);
          Value sequence = arith::DivUIOp::create(
              nb, nloc, linalg::IndexOp::create(nb, nloc, 0),
              indexConst(nb, nloc, hkv));
          Value first = getSequencePosition(nb, nloc, offset, sequence);
          Value pos = arith::AddIOp::create(
              nb, nloc, first,
              arith::RemUIOp::create(nb, nloc, r, indexConst(nb, nloc, seq)));
          Value last = op.getRingCache()
                           ? arith::AddIOp::create(
                                 nb, nloc, first, indexConst(nb, nloc, seq - 1))
                           : Value();
          Value hidden = op.buildCausallyHidden(nb, nloc, pos, j, last);
          Value lowest =
              f32Const(nb, nloc, std::numeric_limits<float>::lowest());
          return {arith::SelectOp::create(nb, nloc, hidden, lowest, s)};
        });
    Value probs = buildSoftmaxF32(b, loc, masked);

    // out = P V, f32 probabilities times V in its own type, f32 accumulator.
    Value outInit = filledTensor(b, loc, {heads, rows, dv}, f32, 0.0);
    Value out = linalg::BatchMatmulOp::create(b, loc,
                                              TypeRange{outInit.getType()},
                                              ValueRange{probs, v},
                                              ValueRange{outInit})
                    .getResult(0);
    out = truncTensor(b, loc, out, elementType);

    // [B*Hkv, G*S, dv] -> [B, Hkv, G, S, dv] -> [B, Hq, S, dv].
    auto o5Type = RankedTensorType::get({batch, hkv, group, seq, dv},
                                        elementType);
    SmallVector<int64_t> o5Shape(o5Type.getShape());
    Value o5 = tensor::ExpandShapeOp::create(
        b, loc, o5Type, out,
        SmallVector<ReassociationIndices>{{0, 1}, {2, 3}, {4}},
        getAsIndexOpFoldResult(ctx, o5Shape));
    rewriter.replaceOp(
        op, tensor::CollapseShapeOp::create(
                b, loc, o5,
                SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}}));
    return success();
  }
};
} // namespace

void mlir::tfm::lowering::populateAttentionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AttentionLowering>(patterns.getContext());
}

//===- Reshapes.cpp - split / split_heads / merge_heads / kv_cache_write --===//
//
// Pure data movement: slices of the last dimension, reshapes around a
// linalg.transpose of the head and sequence axes, and the KV-cache update as
// a tensor.insert_slice (which bufferizes to an in-place write when the cache
// buffer is writable).
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

/// [B, X, Y, dh] -> [B, Y, X, dh] into a fresh tensor.
static Value transposeMiddle(OpBuilder &b, Location loc, Value v) {
  RankedTensorType type = tensorType(v);
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[1], shape[2]);
  Value init = emptyTensor(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, v, init,
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      .getResult()[0];
}

namespace {
/// Consecutive slices of the last dimension; with groups = G, the slices
/// are taken of the view [..., G, n/G] and collapsed back.
struct SplitLowering : OpConversionPattern<SplitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = tensorType(op.getInput());
    int64_t groups = op.getGroups();
    Value input = adaptor.getInput();
    SmallVector<ReassociationIndices> reassociation;
    if (groups > 1) {
      SmallVector<int64_t> viewShape(inType.getShape());
      viewShape.back() /= groups;
      viewShape.insert(viewShape.end() - 1, groups);
      for (int64_t i = 0, e = inType.getRank() - 1; i < e; ++i)
        reassociation.push_back({i});
      reassociation.push_back({inType.getRank() - 1, inType.getRank()});
      input = tensor::ExpandShapeOp::create(
          rewriter, loc, inType.clone(viewShape), input, reassociation,
          getAsIndexOpFoldResult(rewriter.getContext(), viewShape));
    }
    RankedTensorType sliced = tensorType(input);
    int64_t rank = sliced.getRank(), start = 0;
    SmallVector<Value> pieces;
    for (Value result : op.getResults()) {
      RankedTensorType type = tensorType(result);
      SmallVector<int64_t> sizes(sliced.getShape());
      sizes.back() = type.getShape().back() / groups;
      SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
      offsets.back() = start;
      Value piece = tensor::ExtractSliceOp::create(
          rewriter, loc, sliced.clone(sizes), input, ValueRange{}, ValueRange{},
          ValueRange{}, rewriter.getDenseI64ArrayAttr(offsets),
          rewriter.getDenseI64ArrayAttr(sizes),
          rewriter.getDenseI64ArrayAttr(strides));
      if (groups > 1)
        piece = tensor::CollapseShapeOp::create(rewriter, loc, type, piece,
                                                reassociation);
      pieces.push_back(piece);
      start += sizes.back();
    }
    rewriter.replaceOp(op, pieces);
    return success();
  }
};

/// view(B, S, H, dh).transpose(1, 2)
struct SplitHeadsLowering : OpConversionPattern<SplitHeadsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplitHeadsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = tensorType(op.getResult());
    SmallVector<int64_t> viewShape{type.getDimSize(0), type.getDimSize(2),
                                   type.getDimSize(1), type.getDimSize(3)};
    Value view = tensor::ExpandShapeOp::create(
        rewriter, op.getLoc(), type.clone(viewShape), adaptor.getInput(),
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}},
        getAsIndexOpFoldResult(rewriter.getContext(), viewShape));
    rewriter.replaceOp(op, transposeMiddle(rewriter, op.getLoc(), view));
    return success();
  }
};

/// transpose(1, 2).reshape(B, S, H*dh)
struct MergeHeadsLowering : OpConversionPattern<MergeHeadsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MergeHeadsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value transposed =
        transposeMiddle(rewriter, op.getLoc(), adaptor.getInput());
    rewriter.replaceOp(op, tensor::CollapseShapeOp::create(
                               rewriter, op.getLoc(), transposed,
                               SmallVector<ReassociationIndices>{
                                   {0}, {1}, {2, 3}}));
    return success();
  }
};

/// cache[:, :, position : position + S, :] = update. The insert_slice is the
/// form one-shot bufferization writes in place: with a writable cache
/// argument the update costs a copy of `update` into a subview, not a copy of
/// the cache.
struct KVCacheWriteLowering : OpConversionPattern<KVCacheWriteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(KVCacheWriteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType update = tensorType(op.getUpdate());
    // The position comes from the caller: clamp it so that the rows always
    // land inside the cache. A runner checks inputs that feed it directly and
    // reports them (tfm/Runtime/EntryResources.h); the clamp keeps a computed
    // position from ever writing out of bounds.
    Location loc = op.getLoc();
    int64_t last = tensorType(op.getCache()).getDimSize(2) - update.getDimSize(2);
    Value position = arith::MinSIOp::create(
        rewriter, loc,
        arith::MaxSIOp::create(rewriter, loc, adaptor.getPosition(),
                               arith::ConstantIndexOp::create(rewriter, loc, 0)),
        arith::ConstantIndexOp::create(rewriter, loc, last));
    SmallVector<OpFoldResult> offsets{
        rewriter.getIndexAttr(0), rewriter.getIndexAttr(0), position,
        rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes;
    for (int64_t d : update.getShape())
      sizes.push_back(rewriter.getIndexAttr(d));
    SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, adaptor.getUpdate(), adaptor.getCache(), offsets, sizes, strides);
    return success();
  }
};
} // namespace

void mlir::tfm::lowering::populateReshapePatterns(RewritePatternSet &patterns) {
  patterns.add<SplitLowering, SplitHeadsLowering, MergeHeadsLowering,
               KVCacheWriteLowering>(patterns.getContext());
}

//===- Reshapes.cpp - split, heads, gathers, convert, cache writes --------===//
//
// Data movement and float conversion: slices of the last dimension, reshapes
// around a linalg.transpose of the head and sequence axes, a generic
// gathering one position per sequence, an elementwise
// generic for tfm.convert, and the KV-cache update as a tensor.insert_slice
// (which bufferizes to an in-place write when the cache buffer is writable).
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Utils/Positions.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

/// result[b, 0, j] = input[b, clamp(positions[b], 0, S-1), j]: one generic
/// reading its row by tensor.extract, as the embedding gathers its table's.
struct GatherPositionsLowering : OpConversionPattern<GatherPositionsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherPositionsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t length = tensorType(op.getInput()).getDimSize(1);
    Value input = adaptor.getInput();
    AffineMap positionsMap = AffineMap::get(
        3, 0, {rewriter.getAffineDimExpr(0)}, rewriter.getContext());
    rewriter.replaceOp(
        op, buildElementwise(rewriter, op.getLoc(), tensorType(op.getResult()),
                             adaptor.getPositions(),
                             [&](OpBuilder &b, Location loc,
                                 ValueRange args) -> SmallVector<Value> {
                               Value position = arith::IndexCastOp::create(
                                   b, loc, b.getIndexType(), args[0]);
                               Value row =
                                   clampIndex(b, loc, position, 0, length - 1);
                               Value batch = linalg::IndexOp::create(b, loc, 0);
                               Value col = linalg::IndexOp::create(b, loc, 2);
                               return {tensor::ExtractOp::create(
                                   b, loc, input, ValueRange{batch, row, col})};
                             },
                             {positionsMap}));
    return success();
  }
};

/// One elementwise generic: extend to f32 (exact), then round to the result
/// type (nearest even), so that bf16 <-> f16 rounds once.
struct ConvertLowering : OpConversionPattern<ConvertOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = tensorType(op.getResult());
    rewriter.replaceOp(
        op, buildElementwise(
                rewriter, op.getLoc(), type, adaptor.getInput(),
                [&](OpBuilder &b, Location loc, ValueRange args)
                    -> SmallVector<Value> {
                  return {truncFromF32(b, loc, extToF32(b, loc, args[0]),
                                       type.getElementType())};
                }));
    return success();
  }
};

/// cache[:, :, position : position + S, :] = update. The insert_slice is the
/// form one-shot bufferization writes in place: with a writable cache
/// argument the update costs a copy of `update` into a subview, not a copy of
/// the cache. With a position per sequence, a loop over the batch inserts
/// each sequence's rows at its own position, still in place. A ring cache
/// takes the rows one at a time, each in its slot (position + s) mod S_max
/// (a loop over s, one insert for a decode step's single row).
struct KVCacheWriteLowering : OpConversionPattern<KVCacheWriteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(KVCacheWriteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType update = tensorType(op.getUpdate());
    int64_t last =
        tensorType(op.getCache()).getDimSize(2) - update.getDimSize(2);
    Value position = adaptor.getPosition();
    bool ring = op.getRing();
    auto insert = [&](OpBuilder &b, Location nloc, Value cache, Value start,
                      Value sequence) {
      return ring ? insertRingRows(b, nloc, adaptor.getUpdate(), cache, start,
                                   sequence)
                  : insertRows(b, nloc, adaptor.getUpdate(), cache, start, last,
                               sequence);
    };
    if (!isPerSequencePosition(position)) {
      rewriter.replaceOp(op, insert(rewriter, loc, adaptor.getCache(), position,
                                    /*sequence=*/nullptr));
      return success();
    }
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero,
        arith::ConstantIndexOp::create(rewriter, loc, update.getDimSize(0)),
        arith::ConstantIndexOp::create(rewriter, loc, 1),
        ValueRange{adaptor.getCache()},
        [&](OpBuilder &b, Location nloc, Value sequence, ValueRange iterArgs) {
          Value start = getSequencePosition(b, nloc, position, sequence);
          scf::YieldOp::create(b, nloc,
                               insert(b, nloc, iterArgs[0], start, sequence));
        });
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }

  /// Sequence `sequence`'s index in the batch, or 0 for the whole batch.
  static OpFoldResult batchOffset(OpBuilder &b, Value sequence) {
    return sequence ? OpFoldResult(sequence) : OpFoldResult(b.getIndexAttr(0));
  }

  /// Inserts the `shape` slice of `update` at [batch, 0, fromRow, 0] into
  /// `cache` at [batch, 0, toRow, 0]: the whole update, unsliced, when
  /// `shape` is its own.
  static Value copySlice(OpBuilder &b, Location loc, Value update, Value cache,
                         ArrayRef<int64_t> shape, OpFoldResult batch,
                         OpFoldResult fromRow, OpFoldResult toRow) {
    RankedTensorType type = tensorType(update);
    SmallVector<OpFoldResult> sizes;
    for (int64_t d : shape)
      sizes.push_back(b.getIndexAttr(d));
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    OpFoldResult zero = b.getIndexAttr(0);
    if (shape != type.getShape())
      update = tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get(shape, type.getElementType()), update,
          SmallVector<OpFoldResult>{batch, zero, fromRow, zero}, sizes,
          strides);
    return tensor::InsertSliceOp::create(
        b, loc, update, cache,
        SmallVector<OpFoldResult>{batch, zero, toRow, zero}, sizes, strides);
  }

  /// Inserts `update` (or, given `sequence`, its rows of that sequence) into
  /// `cache` at `position`. The position comes from the caller: it is
  /// clamped to [0, last] so that the rows always land inside the cache. A
  /// runner checks inputs that feed it directly and reports them
  /// (tfm/Runtime/EntryResources.h); the clamp keeps a computed position
  /// from ever writing out of bounds.
  static Value insertRows(OpBuilder &b, Location loc, Value update, Value cache,
                          Value position, int64_t last, Value sequence) {
    position = arith::MinSIOp::create(
        b, loc,
        arith::MaxSIOp::create(b, loc, position,
                               arith::ConstantIndexOp::create(b, loc, 0)),
        arith::ConstantIndexOp::create(b, loc, last));
    SmallVector<int64_t> shape(tensorType(update).getShape());
    if (sequence)
      shape[0] = 1;
    return copySlice(b, loc, update, cache, shape, batchOffset(b, sequence),
                     b.getIndexAttr(0), position);
  }

  /// Inserts row s of `update` (of sequence `sequence` only, given one) into
  /// slot (position + s) mod S_max of ring `cache`, for each s. A negative
  /// position is taken as 0, as insertRows clamps; the position is reduced
  /// before s is added, so no position overflows.
  static Value insertRingRows(OpBuilder &b, Location loc, Value update,
                              Value cache, Value position, Value sequence) {
    int64_t rows = tensorType(update).getDimSize(2);
    Value slots =
        arith::ConstantIndexOp::create(b, loc, tensorType(cache).getDimSize(2));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value base = arith::RemUIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, position, zero), slots);
    SmallVector<int64_t> rowShape(tensorType(update).getShape());
    rowShape[2] = 1;
    if (sequence)
      rowShape[0] = 1;
    auto insertRow = [&](OpBuilder &nb, Location nloc, Value row,
                         Value into) -> Value {
      Value slot = arith::RemUIOp::create(
          nb, nloc, arith::AddIOp::create(nb, nloc, base, row), slots);
      return copySlice(nb, nloc, update, into, rowShape,
                       batchOffset(nb, sequence), row, slot);
    };
    if (rows == 1)
      return insertRow(b, loc, zero, cache);
    auto loop = scf::ForOp::create(
        b, loc, zero, arith::ConstantIndexOp::create(b, loc, rows),
        arith::ConstantIndexOp::create(b, loc, 1), ValueRange{cache},
        [&](OpBuilder &nb, Location nloc, Value row, ValueRange iterArgs) {
          scf::YieldOp::create(nb, nloc, insertRow(nb, nloc, row, iterArgs[0]));
        });
    return loop.getResult(0);
  }
};
} // namespace

void mlir::tfm::lowering::populateReshapePatterns(RewritePatternSet &patterns) {
  patterns.add<SplitLowering, SplitHeadsLowering, MergeHeadsLowering,
               GatherPositionsLowering, ConvertLowering, KVCacheWriteLowering>(
      patterns.getContext());
}

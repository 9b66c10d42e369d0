//===- Collectives.cpp - tfm collectives in the form that bufferizes -------===//
//
// tfm.all_reduce stays a tfm op through --tfm-to-linalg (it bufferizes to
// tfm.buffer_all_reduce, BufferizableOpInterfaceImpl.cpp), but only as an
// f32 sum: a bf16/f16 input is widened first and the sum rounded once
// (MPI has no portable half-precision sum), and a bias becomes an
// elementwise add after the sum.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {
struct AllReduceLowering : OpConversionPattern<AllReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AllReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorType(op.getResult());
    RankedTensorType wide = type.clone(rewriter.getF32Type());
    Value input = adaptor.getInput();
    if (!type.getElementType().isF32())
      input = buildElementwise(
          rewriter, loc, wide, input,
          [](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
            return {extToF32(b, l, args[0])};
          });
    Value sum = AllReduceOp::create(rewriter, loc, wide, input, Value());
    Type elementType = type.getElementType();
    if (Value bias = adaptor.getBias()) {
      unsigned rank = type.getRank();
      MLIRContext *ctx = rewriter.getContext();
      AffineMap id = rewriter.getMultiDimIdentityMap(rank);
      AffineMap last = AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, ctx));
      // The bias in its own type, as the unpartitioned projection adds it:
      // the sum and the bias added in f32, rounded once.
      rewriter.replaceOp(
          op, buildElementwise(
                  rewriter, loc, type, {sum, bias},
                  [&](OpBuilder &b, Location l,
                      ValueRange args) -> SmallVector<Value> {
                    Value total = arith::AddFOp::create(
                        b, l, args[0], extToF32(b, l, args[1]));
                    return {truncFromF32(b, l, total, elementType)};
                  },
                  {id, last}));
      return success();
    }
    rewriter.replaceOp(op, truncTensor(rewriter, loc, sum, elementType));
    return success();
  }
};
/// A bf16/f16 all-gather moves f32 (its lowering is a sum, done in f32).
struct AllGatherLowering : OpConversionPattern<AllGatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AllGatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorType(op.getResult());
    RankedTensorType slice = tensorType(op.getInput());
    Value wide = buildElementwise(
        rewriter, loc, slice.clone(rewriter.getF32Type()), adaptor.getInput(),
        [](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
          return {extToF32(b, l, args[0])};
        });
    Value all = AllGatherOp::create(
        rewriter, loc, type.clone(rewriter.getF32Type()), wide);
    rewriter.replaceOp(op,
                       truncTensor(rewriter, loc, all, type.getElementType()));
    return success();
  }
};
} // namespace

void mlir::tfm::lowering::populateCollectivePatterns(
    RewritePatternSet &patterns) {
  patterns.add<AllReduceLowering, AllGatherLowering>(patterns.getContext());
}

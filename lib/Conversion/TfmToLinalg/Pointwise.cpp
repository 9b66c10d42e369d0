//===- Pointwise.cpp - activations, residual, embeddings, RoPE to linalg --===//
//
// One linalg.generic per op. Transcendental activations and RoPE compute in
// f32 and round once; gathers (embedding rows, position rows, the RoPE
// partner element) are tensor.extract inside the generic's body.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Utils/Positions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
#include <tuple>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

/// clamp(v, lo, hi) on index values (signed).
static Value clampIndex(OpBuilder &b, Location loc, Value v, int64_t lo,
                        int64_t hi) {
  Value low = arith::MaxSIOp::create(b, loc, v, indexConst(b, loc, lo));
  return arith::MinSIOp::create(b, loc, low, indexConst(b, loc, hi));
}

/// gelu(x) on an f32 scalar: 0.5 x (1 + erf(x / sqrt(2))), or with `tanh`
/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
static Value gelu(OpBuilder &b, Location loc, Value x, bool useTanh) {
  Value inner;
  if (useTanh) {
    Value x3 =
        arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value poly = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, f32Const(b, loc, 0.044715), x3));
    inner = math::TanhOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, f32Const(b, loc, std::sqrt(2.0 / M_PI)),
                              poly));
  } else {
    inner = math::ErfOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, f32Const(b, loc, M_SQRT1_2)));
  }
  Value onePlus = arith::AddFOp::create(b, loc, f32Const(b, loc, 1.0), inner);
  Value half = arith::MulFOp::create(b, loc, f32Const(b, loc, 0.5), x);
  return arith::MulFOp::create(b, loc, half, onePlus);
}

/// An activation on an f32 scalar (gelu, silu).
using F32ActivationFn = llvm::function_ref<Value(OpBuilder &, Location, Value)>;

/// activation(x) elementwise, computed in f32 and rounded once to `type`.
static Value buildActivation(OpBuilder &b, Location loc, RankedTensorType type,
                             Value input, F32ActivationFn activation) {
  return buildElementwise(
      b, loc, type, input,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
        Value y = activation(nb, nloc, extToF32(nb, nloc, args[0]));
        return {truncFromF32(nb, nloc, y, type.getElementType())};
      });
}

/// activation(gate) * up elementwise (GeGLU, SwiGLU), computed in f32 and
/// rounded once to `type`.
static Value buildGatedActivation(OpBuilder &b, Location loc,
                                  RankedTensorType type, Value gate, Value up,
                                  F32ActivationFn activation) {
  return buildElementwise(
      b, loc, type, {gate, up},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
        Value g = activation(nb, nloc, extToF32(nb, nloc, args[0]));
        Value y =
            arith::MulFOp::create(nb, nloc, g, extToF32(nb, nloc, args[1]));
        return {truncFromF32(nb, nloc, y, type.getElementType())};
      });
}

namespace {
struct GeluLowering : OpConversionPattern<GeluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GeluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool useTanh = op.getApproximate() == GeluApproximation::tanh;
    rewriter.replaceOp(
        op, buildActivation(rewriter, op.getLoc(), tensorType(op.getResult()),
                            adaptor.getInput(),
                            [&](OpBuilder &b, Location loc, Value x) {
                              return gelu(b, loc, x, useTanh);
                            }));
    return success();
  }
};

/// gelu(gate) * up, in f32.
struct GeGLULowering : OpConversionPattern<GeGLUOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GeGLUOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool useTanh = op.getApproximate() == GeluApproximation::tanh;
    rewriter.replaceOp(
        op, buildGatedActivation(rewriter, op.getLoc(),
                                 tensorType(op.getResult()), adaptor.getGate(),
                                 adaptor.getUp(),
                                 [&](OpBuilder &b, Location loc, Value x) {
                                   return gelu(b, loc, x, useTanh);
                                 }));
    return success();
  }
};

/// max(x, 0) in the element type; arith.maximumf propagates NaN as
/// torch.relu does.
struct ReluLowering : OpConversionPattern<ReluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = tensorType(op.getResult());
    rewriter.replaceOp(
        op, buildElementwise(rewriter, op.getLoc(), type, adaptor.getInput(),
                             [&](OpBuilder &b, Location loc, ValueRange args)
                                 -> SmallVector<Value> {
                               Value zero = arith::ConstantOp::create(
                                   b, loc, b.getZeroAttr(type.getElementType()));
                               return {arith::MaximumFOp::create(b, loc, args[0],
                                                                 zero)};
                             }));
    return success();
  }
};

struct SiluLowering : OpConversionPattern<SiluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SiluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildActivation(rewriter, op.getLoc(),
                                           tensorType(op.getResult()),
                                           adaptor.getInput(), siluF32));
    return success();
  }
};

struct SwiGLULowering : OpConversionPattern<SwiGLUOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SwiGLUOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, buildGatedActivation(rewriter, op.getLoc(),
                                 tensorType(op.getResult()), adaptor.getGate(),
                                 adaptor.getUp(), siluF32));
    return success();
  }
};

struct ResidualAddLowering : OpConversionPattern<ResidualAddOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ResidualAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // The pass checked beforehand that both sides have the result's type.
    rewriter.replaceOp(
        op, buildElementwise(rewriter, op.getLoc(), tensorType(op.getResult()),
                             {adaptor.getResidual(), adaptor.getBranch()},
                             [](OpBuilder &b, Location loc, ValueRange args)
                                 -> SmallVector<Value> {
                               return {arith::AddFOp::create(b, loc, args[0],
                                                             args[1])};
                             }));
    return success();
  }
};

/// result[b, s, j] = table[clamp(ids[b, s], 0, V-1), j].
struct EmbeddingLowering : OpConversionPattern<EmbeddingOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = tensorType(op.getResult());
    int64_t vocab = tensorType(op.getTable()).getDimSize(0);
    Value table = adaptor.getTable();
    Type elementType = type.getElementType();
    // The factor rounded to the table's type first, as Gemma's normalizer
    // tensor is; the product in f32, rounded once.
    std::optional<double> scale;
    if (auto attr = op.getScaleAttr()) {
      llvm::APFloat factor(attr.getValueAsDouble());
      bool lost;
      factor.convert(cast<FloatType>(elementType).getFloatSemantics(),
                     llvm::APFloat::rmNearestTiesToEven, &lost);
      scale = factor.convertToDouble();
    }
    AffineMap idsMap = AffineMap::get(
        3, 0, {rewriter.getAffineDimExpr(0), rewriter.getAffineDimExpr(1)},
        rewriter.getContext());
    rewriter.replaceOp(
        op, buildElementwise(
                rewriter, op.getLoc(), type, adaptor.getIds(),
                [&](OpBuilder &b, Location loc, ValueRange args)
                    -> SmallVector<Value> {
                  Value id = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                        args[0]);
                  Value row = clampIndex(b, loc, id, 0, vocab - 1);
                  Value col = linalg::IndexOp::create(b, loc, 2);
                  Value value = tensor::ExtractOp::create(b, loc, table,
                                                          ValueRange{row, col});
                  if (!scale)
                    return {value};
                  Value scaled = arith::MulFOp::create(
                      b, loc, extToF32(b, loc, value),
                      f32Const(b, loc, *scale));
                  return {truncFromF32(b, loc, scaled, elementType)};
                },
                {idsMap}));
    return success();
  }
};

/// result[b, s, j] = input[b, s, j] + table[offset[b] + s, j]; positions past
/// the table are clamped to its last row, like out-of-range token ids.
struct PositionEmbeddingLowering : OpConversionPattern<PositionEmbeddingOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PositionEmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = tensorType(op.getResult());
    int64_t positions = tensorType(op.getTable()).getDimSize(0);
    Value table = adaptor.getTable(), offset = adaptor.getOffset();
    rewriter.replaceOp(
        op, buildElementwise(
                rewriter, op.getLoc(), type, adaptor.getInput(),
                [&](OpBuilder &b, Location loc, ValueRange args)
                    -> SmallVector<Value> {
                  Value pos = linalg::IndexOp::create(b, loc, 1);
                  if (offset)
                    pos = arith::AddIOp::create(
                        b, loc, pos,
                        getSequencePosition(
                            b, loc, offset, linalg::IndexOp::create(b, loc, 0)));
                  pos = clampIndex(b, loc, pos, 0, positions - 1);
                  Value col = linalg::IndexOp::create(b, loc, 2);
                  Value p = tensor::ExtractOp::create(b, loc, table,
                                                      ValueRange{pos, col});
                  return {arith::AddFOp::create(b, loc, args[0], p)};
                }));
    return success();
  }
};

/// Rotate-half RoPE, angles in f32 exactly as Hugging Face computes them:
/// inv_freq[i] = 1 / theta^((2i) / r) (or the op's `inv_freq` table),
/// angle = float(offset[b] + s) * inv_freq, over the first r = rotary_dims
/// elements of each head; the others are copied.
///
/// The angles depend on the sequence (only when positions are per sequence),
/// the position and the frequency, not on the head: their cosines and sines
/// are computed once, into [B', S, r/2] tables (B' = B for per-sequence
/// positions, else 1) that every head reads. Per element they cost a powf, a
/// cos and a sin each (40x the calls for a Llama block's 16 + 4 heads).
struct RoPELowering : OpConversionPattern<RoPEOp> {
  using OpConversionPattern::OpConversionPattern;

  /// cos and sin of every (sequence, position, frequency) angle.
  static std::pair<Value, Value> buildAngleTables(OpBuilder &rewriter,
                                                  Location loc, RoPEOp op,
                                                  Value offset,
                                                  int64_t sequences,
                                                  int64_t positions,
                                                  int64_t half) {
    double theta = op.getTheta().convertToDouble();
    int64_t rotary = 2 * half;
    Type f32 = rewriter.getF32Type(), i64 = rewriter.getI64Type();
    // Given frequencies (scaled RoPE) are a constant [r/2] table.
    Value invFreqTable;
    if (std::optional<ArrayRef<float>> invFreq = op.getInvFreq())
      invFreqTable = arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(RankedTensorType::get({half}, f32), *invFreq));
    auto tableType = RankedTensorType::get({sequences, positions, half}, f32);
    Value cosInit = emptyTensor(rewriter, loc, tableType.getShape(), f32);
    Value sinInit = emptyTensor(rewriter, loc, tableType.getShape(), f32);
    AffineMap id = rewriter.getMultiDimIdentityMap(3);
    auto tables = linalg::GenericOp::create(
        rewriter, loc, TypeRange{tableType, tableType}, ValueRange{},
        ValueRange{cosInit, sinInit}, ArrayRef<AffineMap>{id, id},
        parallelIterators(3), [&](OpBuilder &b, Location l, ValueRange) {
          Value bi = linalg::IndexOp::create(b, l, 0);
          Value si = linalg::IndexOp::create(b, l, 1);
          Value fi = linalg::IndexOp::create(b, l, 2);
          auto toF32 = [&](Value idx) -> Value {
            return arith::SIToFPOp::create(
                b, l, f32, arith::IndexCastOp::create(b, l, i64, idx));
          };
          Value invFreq;
          if (invFreqTable) {
            invFreq = tensor::ExtractOp::create(b, l, invFreqTable,
                                                ValueRange{fi});
          } else {
            Value exponent = arith::DivFOp::create(
                b, l,
                arith::MulFOp::create(b, l, f32Const(b, l, 2.0), toF32(fi)),
                f32Const(b, l, double(rotary)));
            invFreq = arith::DivFOp::create(
                b, l, f32Const(b, l, 1.0),
                math::PowFOp::create(b, l, f32Const(b, l, theta), exponent));
          }
          Value pos = offset ? arith::AddIOp::create(
                                   b, l, getSequencePosition(b, l, offset, bi),
                                   si)
                             : si;
          Value angle = arith::MulFOp::create(b, l, toF32(pos), invFreq);
          linalg::YieldOp::create(b, l,
                                  ValueRange{math::CosOp::create(b, l, angle),
                                             math::SinOp::create(b, l, angle)});
        });
    return {tables.getResult(0), tables.getResult(1)};
  }

  LogicalResult
  matchAndRewrite(RoPEOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = tensorType(op.getResult());
    int64_t rotary = op.getRotaryDimsValue(), half = rotary / 2;
    bool partial = rotary < type.getDimSize(3);
    Value input = adaptor.getInput(), offset = adaptor.getOffset();
    bool perSequence = offset && isPerSequencePosition(offset);
    Value cosTable, sinTable;
    std::tie(cosTable, sinTable) = buildAngleTables(
        rewriter, op.getLoc(), op, offset,
        perSequence ? type.getDimSize(0) : 1, type.getDimSize(2), half);
    rewriter.replaceOp(
        op,
        buildElementwise(
            rewriter, op.getLoc(), type, input,
            [&](OpBuilder &b, Location loc, ValueRange args)
                -> SmallVector<Value> {
              Value bi = linalg::IndexOp::create(b, loc, 0);
              Value hi = linalg::IndexOp::create(b, loc, 1);
              Value si = linalg::IndexOp::create(b, loc, 2);
              Value i = linalg::IndexOp::create(b, loc, 3);
              Value halfC = indexConst(b, loc, half);
              Value firstHalf = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ult, i, halfC);
              // Frequency index i mod r/2 and the partner element.
              Value fi = arith::RemUIOp::create(b, loc, i, halfC);
              Value partnerIdx = arith::SelectOp::create(
                  b, loc, firstHalf, arith::AddIOp::create(b, loc, i, halfC),
                  arith::SubIOp::create(b, loc, i, halfC));
              Value partner = extToF32(
                  b, loc,
                  tensor::ExtractOp::create(b, loc, input,
                                            ValueRange{bi, hi, si, partnerIdx}));
              Value seq = perSequence ? bi : indexConst(b, loc, 0);
              Value cos = tensor::ExtractOp::create(b, loc, cosTable,
                                                    ValueRange{seq, si, fi});
              Value sin = tensor::ExtractOp::create(b, loc, sinTable,
                                                    ValueRange{seq, si, fi});
              // First half: x*cos - x[i+h]*sin; second: x*cos + x[i-h]*sin.
              Value rotated = arith::SelectOp::create(
                  b, loc, firstHalf, arith::NegFOp::create(b, loc, partner),
                  partner);
              Value x = extToF32(b, loc, args[0]);
              Value y = arith::AddFOp::create(
                  b, loc, arith::MulFOp::create(b, loc, x, cos),
                  arith::MulFOp::create(b, loc, rotated, sin));
              y = truncFromF32(b, loc, y, type.getElementType());
              if (!partial)
                return {y};
              // Past the rotated part: the element itself (the partner read
              // above, at i - r/2, is in bounds and unused).
              Value rotates = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ult, i,
                  indexConst(b, loc, rotary));
              return {arith::SelectOp::create(b, loc, rotates, y, args[0])};
            }));
    return success();
  }
};
} // namespace

void mlir::tfm::lowering::populatePointwisePatterns(
    RewritePatternSet &patterns) {
  patterns.add<GeluLowering, GeGLULowering, ReluLowering, SiluLowering,
               SwiGLULowering, ResidualAddLowering,
               EmbeddingLowering, PositionEmbeddingLowering, RoPELowering>(
      patterns.getContext());
}

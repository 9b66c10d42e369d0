//===- Pointwise.cpp - activations, residual, embeddings, RoPE to linalg --===//
//
// One linalg.generic per op (RoPE: its angle tables and one rotation).
// Transcendental activations and RoPE compute in f32 and round once; gathers
// (embedding rows, position rows) are tensor.extract inside the generic's
// body.
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

/// result[b, s, j] = table[clamp(ids[b, s], 0, V-1), j]; with a first row
/// f, table[ids[b, s] - f, j] where that row is the table's, else 0.
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
    Value firstRow = adaptor.getFirstRow();
    rewriter.replaceOp(
        op, buildElementwise(
                rewriter, op.getLoc(), type, adaptor.getIds(),
                [&](OpBuilder &b, Location loc, ValueRange args)
                    -> SmallVector<Value> {
                  Value id = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                        args[0]);
                  Value inTable;
                  if (firstRow) {
                    // Rows of other ranks read row 0 and are zeroed.
                    id = arith::SubIOp::create(b, loc, id, firstRow);
                    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
                    inTable = arith::AndIOp::create(
                        b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                              id, zero),
                        arith::CmpIOp::create(
                            b, loc, arith::CmpIPredicate::slt, id,
                            arith::ConstantIndexOp::create(b, loc, vocab)));
                    id = arith::SelectOp::create(b, loc, inTable, id, zero);
                  }
                  Value row =
                      firstRow ? id : clampIndex(b, loc, id, 0, vocab - 1);
                  Value col = linalg::IndexOp::create(b, loc, 2);
                  Value value = tensor::ExtractOp::create(b, loc, table,
                                                          ValueRange{row, col});
                  if (inTable)
                    value = arith::SelectOp::create(
                        b, loc, inTable, value,
                        arith::ConstantOp::create(
                            b, loc, b.getZeroAttr(value.getType())));
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
/// elements of each head (cos and sin times the `attention_factor`); the
/// others are copied.
///
/// The inverse frequencies depend only on theta and r: they are a constant
/// [r/2] table, computed here in f32 with the same operations (and the same
/// libm powf) as the code used to run per call. The angles depend on the
/// sequence (only when positions are per sequence), the position and the
/// frequency, not on the head: their cosines and sines are computed once,
/// into [B', S, r/2] tables (B' = B for per-sequence positions, else 1) that
/// every head reads.
///
/// The rotation itself is one generic over [B, H, S, 2, r/2] reading the two
/// halves x1 = x[..., :r/2] and x2 = x[..., r/2:r] as separate inputs:
///   y[.., 0, i] = x1[i] cos[i] - x2[i] sin[i],
///   y[.., 1, i] = x2[i] cos[i] + x1[i] sin[i].
/// Every operand is read at its own index (no partner gather), so the op is
/// an ordinary elementwise generic: vectorised along i and run on threads
/// like the other elementwise ops, and fusable with the head split before it.
struct RoPELowering : OpConversionPattern<RoPEOp> {
  using OpConversionPattern::OpConversionPattern;

  /// 1 / theta^(2i / r) for i < r/2, in f32 as the per-call code computed it.
  static SmallVector<float> inverseFrequencies(RoPEOp op, int64_t half) {
    if (std::optional<ArrayRef<float>> given = op.getInvFreq())
      return SmallVector<float>(given->begin(), given->end());
    float theta = float(op.getTheta().convertToDouble());
    float rotary = float(2 * half);
    SmallVector<float> invFreq;
    for (int64_t i = 0; i < half; ++i) {
      float exponent = (2.0f * float(i)) / rotary;
      invFreq.push_back(1.0f / ::powf(theta, exponent));
    }
    return invFreq;
  }

  /// cos and sin of every (sequence, position, frequency) angle, as
  /// [sequences, positions, half] tables.
  static std::pair<Value, Value> buildAngleTables(OpBuilder &rewriter,
                                                  Location loc, RoPEOp op,
                                                  Value offset,
                                                  int64_t sequences,
                                                  int64_t positions,
                                                  int64_t half) {
    Type f32 = rewriter.getF32Type(), i64 = rewriter.getI64Type();
    Value invFreqTable = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(RankedTensorType::get({half}, f32),
                               ArrayRef<float>(inverseFrequencies(op, half))));
    auto tableType = RankedTensorType::get({sequences, positions, half}, f32);
    Value cosInit = emptyTensor(rewriter, loc, tableType.getShape(), f32);
    Value sinInit = emptyTensor(rewriter, loc, tableType.getShape(), f32);
    MLIRContext *ctx = rewriter.getContext();
    AffineMap id = rewriter.getMultiDimIdentityMap(3);
    AffineMap frequency = AffineMap::get(3, 0, getAffineDimExpr(2, ctx));
    auto tables = linalg::GenericOp::create(
        rewriter, loc, TypeRange{tableType, tableType},
        ValueRange{invFreqTable}, ValueRange{cosInit, sinInit},
        ArrayRef<AffineMap>{frequency, id, id}, parallelIterators(3),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value bi = linalg::IndexOp::create(b, l, 0);
          Value si = linalg::IndexOp::create(b, l, 1);
          Value pos = offset ? arith::AddIOp::create(
                                   b, l, getSequencePosition(b, l, offset, bi),
                                   si)
                             : si;
          Value posF32 = arith::SIToFPOp::create(
              b, l, f32, arith::IndexCastOp::create(b, l, i64, pos));
          Value angle = arith::MulFOp::create(b, l, posF32, args[0]);
          Value cos = math::CosOp::create(b, l, angle);
          Value sin = math::SinOp::create(b, l, angle);
          // yarn/longrope: cos and sin times the attention factor, in f32
          // as transformers multiplies its f32 tables.
          if (FloatAttr factor = op.getAttentionFactorAttr()) {
            Value f = arith::ConstantOp::create(
                b, l, b.getF32FloatAttr(factor.getValue().convertToFloat()));
            cos = arith::MulFOp::create(b, l, cos, f);
            sin = arith::MulFOp::create(b, l, sin, f);
          }
          linalg::YieldOp::create(b, l, ValueRange{cos, sin});
        });
    return {tables.getResult(0), tables.getResult(1)};
  }

  LogicalResult
  matchAndRewrite(RoPEOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = tensorType(op.getResult());
    Type elementType = type.getElementType();
    int64_t rotary = op.getRotaryDimsValue(), half = rotary / 2;
    int64_t batch = type.getDimSize(0), heads = type.getDimSize(1),
            seq = type.getDimSize(2), headDim = type.getDimSize(3);
    Value input = adaptor.getInput(), offset = adaptor.getOffset();
    bool perSequence = offset && isPerSequencePosition(offset);
    auto [cosTable, sinTable] = buildAngleTables(
        rewriter, loc, op, offset, perSequence ? batch : 1, seq, half);

    // The two rotated halves of every head, [B, H, S, r/2] each.
    auto halfType = RankedTensorType::get({batch, heads, seq, half},
                                          elementType);
    auto halfOf = [&](int64_t start) -> Value {
      return tensor::ExtractSliceOp::create(
          rewriter, loc, halfType, input,
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                                 rewriter.getIndexAttr(0),
                                 rewriter.getIndexAttr(0),
                                 rewriter.getIndexAttr(start)},
          getAsIndexOpFoldResult(ctx, halfType.getShape()),
          SmallVector<OpFoldResult>(4, rewriter.getIndexAttr(1)));
    };
    Value x1 = halfOf(0), x2 = halfOf(half);
    // Loops (b, h, s, j, i): the halves at (b, h, s, i), the tables at
    // (b or 0, s, i), the result at (b, h, s, j, i).
    AffineExpr b = getAffineDimExpr(0, ctx), h = getAffineDimExpr(1, ctx),
               s = getAffineDimExpr(2, ctx), i = getAffineDimExpr(4, ctx);
    AffineMap halves = AffineMap::get(5, 0, {b, h, s, i}, ctx);
    // A [1, S, r/2] table read at a constant 0 would not be a projected
    // permutation: drop its unit dimension instead.
    AffineMap tableMap = perSequence ? AffineMap::get(5, 0, {b, s, i}, ctx)
                                     : AffineMap::get(5, 0, {s, i}, ctx);
    if (!perSequence) {
      auto dropSequence = [&](Value table) -> Value {
        return tensor::CollapseShapeOp::create(
            rewriter, loc, table,
            ArrayRef<ReassociationIndices>{{0, 1}, {2}});
      };
      cosTable = dropSequence(cosTable);
      sinTable = dropSequence(sinTable);
    }
    auto rotatedType = RankedTensorType::get({batch, heads, seq, 2, half},
                                             elementType);
    Value init = emptyTensor(rewriter, loc, rotatedType.getShape(),
                             elementType);
    auto rotated = linalg::GenericOp::create(
        rewriter, loc, TypeRange{rotatedType},
        ValueRange{x1, x2, cosTable, sinTable}, ValueRange{init},
        ArrayRef<AffineMap>{halves, halves, tableMap, tableMap,
                            rewriter.getMultiDimIdentityMap(5)},
        parallelIterators(5), [&](OpBuilder &nb, Location l, ValueRange args) {
          Value first = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::eq, linalg::IndexOp::create(nb, l, 3),
              indexConst(nb, l, 0));
          Value v1 = extToF32(nb, l, args[0]), v2 = extToF32(nb, l, args[1]);
          // First half: x1 cos - x2 sin; second: x2 cos + x1 sin.
          Value own = arith::SelectOp::create(nb, l, first, v1, v2);
          Value partner = arith::SelectOp::create(
              nb, l, first, arith::NegFOp::create(nb, l, v2), v1);
          Value y = arith::AddFOp::create(
              nb, l, arith::MulFOp::create(nb, l, own, args[2]),
              arith::MulFOp::create(nb, l, partner, args[3]));
          linalg::YieldOp::create(
              nb, l, truncFromF32(nb, l, y, elementType));
        });
    auto rotaryType = RankedTensorType::get({batch, heads, seq, rotary},
                                            elementType);
    Value result = tensor::CollapseShapeOp::create(
        rewriter, loc, rotaryType, rotated.getResult(0),
        ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
    // Partial rotary: the elements past r are the input's, unchanged.
    if (rotary < headDim)
      result = tensor::InsertSliceOp::create(
          rewriter, loc, result, input,
          ArrayRef<OpFoldResult>(
              SmallVector<OpFoldResult>(4, rewriter.getIndexAttr(0))),
          getAsIndexOpFoldResult(ctx, rotaryType.getShape()),
          SmallVector<OpFoldResult>(4, rewriter.getIndexAttr(1)));
    rewriter.replaceOp(op, result);
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

//===- PackQuantizedWeights.cpp - quantized weights in kernel panels ------===//
//
// The part of tfm-cpu-pack-weights (CpuPackWeights.cpp) that rewrites the
// reads of weights held quantized.
//
// A weight held quantized (tfm.param_quant = #tfm.quant<q8_0, ...>,
// tfm-quantize-weights) is read instead from two new parameters in panels
// of P columns (two vectors of the target's f32 lanes: the micro-kernel's;
// for Q4_0 and Q4_K on int8 activations on AVX-512 VNNI, four:
// QuantizedKernelTarget::getPanel),
// its int8 values V [J, K/32, 32, P] and f16 scales S [J, K/32, P]
// (V[j, b, t, r] holds the weight at K step 32 b + t of column j P + r, in
// either layout; zero past N; formats "q8_0_values" and "q8_0_scales"),
// and the matmul becomes (f32 activations)
//
//   C[m, j, r] += A[m, b, t] * (sitofp(V[j, b, t, r]) * extf(S[j, b, r]))
//
// over (m, j, r, b, t), marked tfm.quantized_matmul: exact with respect to
// the dequantized weights, and run by a micro-kernel
// (tfm-cpu-lower-quantized-matmuls). A Q4_0 weight likewise, its values two
// K steps a byte as llama.cpp's blocks hold them, V [J, K/32, 16, P] (byte
// u: steps u and u + 16 in its low and high nibble; formats "q4_0_values"
// and "q4_0_scales"), the generic over (m, j, r, b, h, u) unpacking nibble
// h of byte u. A Q4_K weight's values likewise (each block of 32 a
// sub-block, its nibbles unsigned), with two more arguments: its super-
// blocks' f16 d and dmin D [J, K/256, 2, P] ("q4_k_super") and its
// sub-blocks' 6-bit scale and min SC [J, K/32, 2, P] ("q4_k_scales"); the
// generic dequantizes (d * sc) * q - dmin * m as llama.cpp does, reading D
// and SC twice each (d and dmin, sc and m: constant indices). A Q6_K
// weight's values are Q8_0's (its unsigned 6-bit q, a byte a K step; in 6
// bits on int8 activations, read twice: rewriteToQuantizedInt8), its
// super-blocks' d D [J, K/256, P] ("q6_k_super") and the signed scale of
// each 16 steps SC [J, K/16, P] ("q6_k_scales"): (d * sc) * (q - 32). A
// Q5_K weight's values are a byte a K step too (its 5-bit q), its scales
// Q4_K's ("q5_k_super", "q5_k_scales").
// With `int8_dot` planned (tfm.cpu_target) the activations are
// int8 instead: see rewriteToQuantizedInt8; its values keep four K steps of
// a column together (tfm.param_pack adds `group = 4`).
//
// Any other read of an element of such a weight (a `tensor.extract`: the
// gather of an embedding table quantized with its tied LM head, or alone)
// reads the same element from the two new parameters and dequantizes it,
// so that the f32 table need not be bound at all.
//
// A matmul whose weight an scf.index_switch picks among weights held alike
// (tfm.moe's experts, token-major when held quantized: TfmToLinalg/MoE.cpp)
// reads the parts a switch beside it picks among their packed parts.
//
//===----------------------------------------------------------------------===//
#include "PackWeights.h"

#include "CpuPlan.h"

#include "tfm/Dialect/Tfm/IR/QuantizedParts.h"
#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::cpu_pack;

namespace {
/// A quantized weight's packed arguments (tfm/Dialect/Tfm/IR/QuantizedParts.h):
/// its values, its f16 scales (the K formats' super-blocks') and the K
/// formats' byte scales (else null).
struct PackedQuant {
  Value values, scales, subScales;
};
} // namespace

/// The K steps of a column the int8 kernels' values keep together (an int8
/// dot product's 32-bit lane): tfm.param_pack's `group`.
static constexpr int64_t kInt8Group = 4;

/// Whether a format's weight is a scale times q minus a min with a 6-bit
/// scale and min per sub-block of 32 (Q4_K, Q5_K).
static bool hasMins(QuantFormat format) {
  return format == QuantFormat::q4_k || format == QuantFormat::q5_k;
}

/// The scale operands of a quantized GEMM's generic after its values, and
/// their maps given its dims j, b (the block of 32), r, and `half`, the
/// block's half of 16 the K step is in: S[j, b, r]; for Q4_K and Q5_K the
/// super-block's d and dmin D[j, b floordiv 8, 0 | 1, r] and the
/// sub-block's sc and m SC[j, b, 0 | 1, r]; for Q6_K the super-block's d
/// D[j, b floordiv 8, r] and the scale of the step's 16 SC[j, 2 b + half,
/// r].
static void appendScaleOperands(const PackedQuant &packed, QuantFormat format,
                                AffineExpr j, AffineExpr b, AffineExpr r,
                                AffineExpr half, unsigned numDims,
                                SmallVectorImpl<Value> &inputs,
                                SmallVectorImpl<AffineMap> &maps) {
  MLIRContext *ctx = j.getContext();
  auto map = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(numDims, 0, results, ctx);
  };
  if (format == QuantFormat::q6_k) {
    inputs.append({packed.scales, packed.subScales});
    maps.append({map({j, b.floorDiv(8), r}), map({j, b * 2 + half, r})});
    return;
  }
  if (!hasMins(format)) {
    inputs.push_back(packed.scales);
    maps.push_back(map({j, b, r}));
    return;
  }
  AffineExpr zero = getAffineConstantExpr(0, ctx),
             one = getAffineConstantExpr(1, ctx);
  inputs.append(
      {packed.scales, packed.scales, packed.subScales, packed.subScales});
  maps.append({map({j, b.floorDiv(8), zero, r}),
               map({j, b.floorDiv(8), one, r}), map({j, b, zero, r}),
               map({j, b, one, r})});
}

/// In a quantized GEMM's generic body: the weight `byte` (Q8_0's int8, Q6_K's
/// q minus 32, or the Q4_0/Q4_K byte whose nibble h -- the generic's
/// dimension 4 -- is the step: (byte >> 4 h) & 15, minus 8 for Q4_0)
/// dequantized by `scales` (appendScaleOperands' block arguments): times
/// its f16 scale, or as llama.cpp dequantizes it, Q4_K's and Q5_K's (d *
/// sc) * q - dmin * m and Q6_K's (d * sc) * (q - 32).
static Value buildDequantizedWeight(OpBuilder &b, Location l, Value byte,
                                    ValueRange scales, QuantFormat format) {
  Type f32 = b.getF32Type(), i8 = b.getIntegerType(8);
  Value integer = byte;
  if (isNibbleFormat(format)) {
    Value h =
        arith::IndexCastOp::create(b, l, i8, linalg::IndexOp::create(b, l, 4));
    Value shift = arith::MulIOp::create(
        b, l, h, arith::ConstantIntOp::create(b, l, i8, 4));
    integer = arith::AndIOp::create(
        b, l, arith::ShRUIOp::create(b, l, integer, shift),
        arith::ConstantIntOp::create(b, l, i8, 15));
  }
  if (format == QuantFormat::q4_0 || format == QuantFormat::q6_k)
    integer = arith::SubIOp::create(
        b, l, integer,
        arith::ConstantIntOp::create(b, l, i8,
                                     format == QuantFormat::q4_0 ? 8 : 32));
  auto toFloat = [&](Value x) { return arith::SIToFPOp::create(b, l, f32, x); };
  if (format == QuantFormat::q6_k) {
    Value scale = arith::MulFOp::create(
        b, l, arith::ExtFOp::create(b, l, f32, scales[0]), toFloat(scales[1]));
    return arith::MulFOp::create(b, l, scale, toFloat(integer));
  }
  if (!hasMins(format))
    return arith::MulFOp::create(b, l, toFloat(integer),
                                 arith::ExtFOp::create(b, l, f32, scales[0]));
  // The sub-block's scale and min (6 bits, non-negative as i8).
  Value d = arith::ExtFOp::create(b, l, f32, scales[0]);
  Value dmin = arith::ExtFOp::create(b, l, f32, scales[1]);
  Value scale = arith::MulFOp::create(b, l, d, toFloat(scales[2]));
  Value min = arith::MulFOp::create(b, l, dmin, toFloat(scales[3]));
  return arith::SubFOp::create(
      b, l, arith::MulFOp::create(b, l, scale, toFloat(integer)), min);
}

/// Q6_K's unsigned 6-bit q from its int8 layout (isSixBitValues): the
/// `nibbles` byte's nibble h (the step's half of its block) and, from the
/// `high` byte of its quad u, the two bits at 4 (u mod 2) + 2 h. h, u: i8.
static Value buildSixBitInteger(OpBuilder &b, Location l, Value nibbles,
                                Value high, Value h, Value u) {
  Type i8 = b.getIntegerType(8);
  auto constant = [&](int64_t c) -> Value {
    return arith::ConstantIntOp::create(b, l, i8, c);
  };
  Value two = constant(2), four = constant(4);
  Value low = arith::AndIOp::create(
      b, l,
      arith::ShRUIOp::create(b, l, nibbles,
                             arith::MulIOp::create(b, l, h, four)),
      constant(15));
  Value shift = arith::AddIOp::create(
      b, l,
      arith::MulIOp::create(b, l, arith::RemUIOp::create(b, l, u, two), four),
      arith::MulIOp::create(b, l, h, two));
  Value top = arith::AndIOp::create(
      b, l, arith::ShRUIOp::create(b, l, high, shift), constant(3));
  return arith::OrIOp::create(b, l, low,
                              arith::ShLIOp::create(b, l, top, four));
}

/// The matmul `op` (C = A W, W out_in or in_out) over Q8_0 or Q4_0 weights
/// in panels of `panel` columns, as a generic with C viewed as [M, J, P]
/// (padded with zero columns, sliced back, when P does not divide N):
///   Q8_0, over (m, j, r, b, t), K step 32 b + t:
///     C[m, j, r] += A[m, b, t] * (sitofp(V[j, b, t, r]) * extf(S[j, b, r]))
///   Q4_0, over (m, j, r, b, h, u), K step 32 b + 16 h + u, V's byte u of a
///   block holding steps u and u + 16 in its low and high nibble:
///     C[m, j, r] += A[m, b, h, u]
///                   * (sitofp(((V[j, b, u, r] >> 4 h) & 15) - 8) * S[j, b, r])
///   Q4_K likewise, its weight (d * sc) * q - dmin * m (buildDequantizedWeight)
static void rewriteToQuantized(RewriterBase &rewriter, linalg::LinalgOp op,
                               const PackedQuant &packed, int64_t panel,
                               QuantFormat format) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputOperand(0)->get();
  Value init = op.getDpsInitOperand(0)->get();
  auto aType = cast<RankedTensorType>(a.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1);
  constexpr int64_t kBlock = 32;
  bool q4 = isNibbleFormat(format);
  // A's K as the generic's reduction dims: [K/32, 32] or [K/32, 2, 16].
  SmallVector<int64_t> blockShape{m, k / kBlock};
  if (q4)
    blockShape.append({2, kBlock / 2});
  else
    blockShape.push_back(kBlock);
  ReassociationIndices kDims{1, 2};
  if (q4)
    kDims.push_back(3);
  Value blocks = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(blockShape, rewriter.getF32Type()),
      a, ArrayRef<ReassociationIndices>{{0}, kDims});
  Value initPanels = viewAsPanels(rewriter, loc, init, panel);
  unsigned numDims = q4 ? 6 : 5;
  SmallVector<AffineExpr> d;
  for (unsigned i = 0; i < numDims; ++i)
    d.push_back(getAffineDimExpr(i, ctx));
  auto map = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(numDims, 0, results, ctx);
  };
  // dm, dj, dr, db, then t (Q8_0) or h, u (Q4_0, Q4_K).
  SmallVector<Value> inputs{blocks, packed.values};
  SmallVector<AffineMap> maps =
      q4 ? SmallVector<AffineMap>{map({d[0], d[3], d[4], d[5]}),
                                  map({d[1], d[3], d[5], d[2]})}
         : SmallVector<AffineMap>{map({d[0], d[3], d[4]}),
                                  map({d[1], d[3], d[4], d[2]})};
  // The step's half of its block: h (Q4_0, Q4_K) or t floordiv 16.
  AffineExpr half = q4 ? d[4] : d[4].floorDiv(16);
  appendScaleOperands(packed, format, d[1], d[3], d[2], half, numDims, inputs,
                      maps);
  maps.push_back(map({d[0], d[1], d[2]}));
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.append(numDims - 3, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{initPanels.getType()}, inputs,
      ValueRange{initPanels}, maps, iterators,
      [format](OpBuilder &b, Location l, ValueRange args) {
        Value weight = buildDequantizedWeight(
            b, l, args[1], args.drop_front(2).drop_back(), format);
        Value product = arith::MulFOp::create(b, l, args[0], weight);
        linalg::YieldOp::create(
            b, l,
            ValueRange{arith::AddFOp::create(b, l, args.back(), product)});
      });
  generic->setAttr(kQuantizedMatmulAttrName,
                   rewriter.getStringAttr(stringifyQuantFormat(format)));
  rewriter.replaceOp(
      op, viewAsMatrix(rewriter, loc, generic.getResult(0), initType));
}

/// The matmul `op` over quantized weights on int8 activations (`int8_dot`
/// planned), values four K steps a column together (V [J, K/32, 8, 4 or 6,
/// P, 4]): A's blocks' largest magnitudes
///   AMAX[m, b] = max_t |A[m, b, t]|
/// and, with d = AMAX[m, b] / 127 and id = (d != 0 ? 1 / d : 0),
///   C[m, j, r] += (roundeven(A[m, k] * id) * d) * (w * S[j, b, r])
/// over (m, j, r, b, u, i), K step k = 32 b + 4 u + i, w = V[j, b, u, r, i]
/// (Q8_0), or over (m, j, r, b, h, u, i), k = 32 b + 16 h + 4 u + i, w =
/// nibble h of V[j, b, u, r, i] minus 8 (Q4_0; Q4_K: that nibble q,
/// (d * sc) * q - dmin * m; Q6_K: nibble h of V[j, b, u + 1 + u / 2, r, i]
/// joined to its 2 high bits in V[j, b, 3 (u / 2), r, i] (buildSixBitInteger),
/// (d * sc) * (q - 32)); Q5_K's as Q8_0's. The micro-kernel sums each
/// block's integer products exactly before scaling (Int8BlockMatmul.h).
static void rewriteToQuantizedInt8(RewriterBase &rewriter, linalg::LinalgOp op,
                                   const PackedQuant &packed, int64_t panel,
                                   QuantFormat format) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputOperand(0)->get();
  Value init = op.getDpsInitOperand(0)->get();
  auto aType = cast<RankedTensorType>(a.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1);
  constexpr int64_t kBlock = 32;
  // Q6_K's 6-bit values index like the nibbles, a second read for the
  // high bits.
  bool sixBit = isSixBitValues(format, kInt8Group);
  bool q4 = isNibbleFormat(format) || sixBit;
  Type f32 = rewriter.getF32Type();
  auto dims = [&](unsigned n) {
    SmallVector<AffineExpr> d;
    for (unsigned i = 0; i < n; ++i)
      d.push_back(getAffineDimExpr(i, ctx));
    return d;
  };

  // AMAX[m, b] = max over t of |A[m, b, t]|.
  Value blocks = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get({m, k / kBlock, kBlock}, f32), a,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  auto amaxType = RankedTensorType::get({m, k / kBlock}, f32);
  Value zero =
      arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0));
  Value amaxInit =
      linalg::FillOp::create(rewriter, loc, zero,
                             ValueRange{tensor::EmptyOp::create(
                                 rewriter, loc, amaxType.getShape(), f32)})
          .getResult(0);
  SmallVector<AffineExpr> d3 = dims(3);
  Value amax =
      linalg::GenericOp::create(
          rewriter, loc, TypeRange{amaxType}, ValueRange{blocks},
          ValueRange{amaxInit},
          SmallVector<AffineMap>{
              AffineMap::get(3, 0, {d3[0], d3[1], d3[2]}, ctx),
              AffineMap::get(3, 0, {d3[0], d3[1]}, ctx)},
          SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::parallel,
                                           utils::IteratorType::reduction},
          [](OpBuilder &b, Location l, ValueRange args) {
            Value magnitude = math::AbsFOp::create(b, l, args[0]);
            linalg::YieldOp::create(b, l,
                                    ValueRange{arith::MaximumFOp::create(
                                        b, l, args[1], magnitude)});
          })
          .getResult(0);

  // A's K as the generic's reduction dims: [K/32, 8, 4] or [K/32, 2, 4, 4].
  SmallVector<int64_t> stepShape{m, k / kBlock};
  if (q4)
    stepShape.append({2, 4, 4});
  else
    stepShape.append({8, 4});
  ReassociationIndices kDims{1, 2, 3};
  if (q4)
    kDims.push_back(4);
  Value steps = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(stepShape, f32), a,
      ArrayRef<ReassociationIndices>{{0}, kDims});
  Value initPanels = viewAsPanels(rewriter, loc, init, panel);
  unsigned numDims = q4 ? 7 : 6;
  SmallVector<AffineExpr> d = dims(numDims);
  auto map = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(numDims, 0, results, ctx);
  };
  // dm, dj, dr, db, then u, i (Q8_0) or h, u, i (Q4_0).
  AffineExpr du = d[q4 ? 5 : 4], di = d[q4 ? 6 : 5];
  SmallVector<AffineExpr> aResults{d[0], d[3]};
  if (q4)
    aResults.push_back(d[4]);
  aResults.append({du, di});
  SmallVector<Value> inputs{steps, amax, packed.values};
  // Q6_K's 6-bit values: nibble quad u at quad u + 1 + u floordiv 2, its
  // high bits at quad 3 (u floordiv 2).
  SmallVector<AffineMap> maps{
      map(aResults), map({d[0], d[3]}),
      map({d[1], d[3], sixBit ? du + 1 + du.floorDiv(2) : du, d[2], di})};
  if (sixBit) {
    inputs.push_back(packed.values);
    maps.push_back(map({d[1], d[3], du.floorDiv(2) * 3, d[2], di}));
  }
  // The step's half of its block: h (Q4_0, Q4_K, Q6_K) or u floordiv 4.
  AffineExpr half = q4 ? d[4] : du.floorDiv(4);
  appendScaleOperands(packed, format, d[1], d[3], d[2], half, numDims, inputs,
                      maps);
  maps.push_back(map({d[0], d[1], d[2]}));
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.append(numDims - 3, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{initPanels.getType()}, inputs,
      ValueRange{initPanels}, maps, iterators,
      [format, sixBit](OpBuilder &b, Location l, ValueRange args) {
        auto constant = [&](float value) {
          return arith::ConstantOp::create(b, l, b.getF32FloatAttr(value));
        };
        // The activation quantized and dequantized.
        Value scale = arith::DivFOp::create(b, l, args[1], constant(127));
        Value isZero = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                             scale, constant(0));
        Value inverse = arith::SelectOp::create(
            b, l, isZero, constant(0),
            arith::DivFOp::create(b, l, constant(1), scale));
        Value q = math::RoundEvenOp::create(
            b, l, arith::MulFOp::create(b, l, args[0], inverse));
        Value x = arith::MulFOp::create(b, l, q, scale);
        Value integer = args[2];
        if (sixBit) {
          auto index = [&](int64_t dim) -> Value {
            return arith::IndexCastOp::create(
                b, l, b.getIntegerType(8), linalg::IndexOp::create(b, l, dim));
          };
          integer =
              buildSixBitInteger(b, l, args[2], args[3], index(4), index(5));
        }
        Value weight = buildDequantizedWeight(
            b, l, integer, args.drop_front(sixBit ? 4 : 3).drop_back(), format);
        Value product = arith::MulFOp::create(b, l, x, weight);
        linalg::YieldOp::create(
            b, l,
            ValueRange{arith::AddFOp::create(b, l, args.back(), product)});
      });
  generic->setAttr(kQuantizedMatmulAttrName,
                   rewriter.getStringAttr(stringifyQuantFormat(format)));
  generic->setAttr(kInt8ActivationsAttrName, rewriter.getUnitAttr());
  rewriter.replaceOp(
      op, viewAsMatrix(rewriter, loc, generic.getResult(0), initType));
}

/// Replaces `extract`, a read of element (n, k) of a quantized weight (K
/// along `axis`), by the same element read from its packed arguments (the
/// layouts above; `group` K steps of a column together) and dequantized as
/// buildDequantizedWeight does.
static void rewriteExtract(RewriterBase &rewriter, tensor::ExtractOp extract,
                           const PackedQuant &packed, int64_t panel,
                           int64_t group, int64_t axis, QuantFormat format) {
  rewriter.setInsertionPoint(extract);
  OpBuilder &b = rewriter;
  Location l = extract.getLoc();
  auto index = [&](int64_t c) -> Value {
    return arith::ConstantIndexOp::create(b, l, c);
  };
  auto div = [&](Value x, int64_t c) -> Value {
    return arith::DivUIOp::create(b, l, x, index(c));
  };
  auto rem = [&](Value x, int64_t c) -> Value {
    return arith::RemUIOp::create(b, l, x, index(c));
  };
  Value n = extract.getIndices()[axis == 1 ? 0 : 1];
  Value k = extract.getIndices()[axis == 1 ? 1 : 0];
  Value j = div(n, panel), r = rem(n, panel);
  Value block = div(k, 32), step = rem(k, 32);
  // Q4_0, Q4_K: byte u of a block holds steps u and u + 16, and so does
  // Q6_K's in 6 bits, their high bits in a byte of their own.
  bool nibbles = isNibbleFormat(format);
  bool sixBit = isSixBitValues(format, group);
  Value byte = nibbles || sixBit ? rem(step, 16) : step;
  SmallVector<Value> at{j, block};
  if (sixBit) // nibble quad u = byte / 4 at quad u + 1 + u / 2
    at.append(
        {arith::AddIOp::create(
             b, l, arith::AddIOp::create(b, l, div(byte, 4), div(byte, 8)),
             index(1)),
         r, rem(byte, 4)});
  else if (group > 1)
    at.append({div(byte, group), r, rem(byte, group)});
  else
    at.append({byte, r});
  Value integer = tensor::ExtractOp::create(b, l, packed.values, at);
  Type i8 = b.getIntegerType(8);
  if (sixBit) {
    // Their high bits in quad 3 (u / 2).
    Value high = tensor::ExtractOp::create(
        b, l, packed.values,
        ValueRange{j, block,
                   arith::MulIOp::create(b, l, div(byte, 8), index(3)), r,
                   rem(byte, 4)});
    auto toI8 = [&](Value x) {
      return arith::IndexCastOp::create(b, l, i8, x);
    };
    integer = buildSixBitInteger(b, l, integer, high, toI8(div(step, 16)),
                                 toI8(div(byte, 4)));
  }
  if (nibbles) {
    Value shift = arith::MulIOp::create(
        b, l, arith::IndexCastOp::create(b, l, i8, div(step, 16)),
        arith::ConstantIntOp::create(b, l, i8, 4));
    integer = arith::AndIOp::create(
        b, l, arith::ShRUIOp::create(b, l, integer, shift),
        arith::ConstantIntOp::create(b, l, i8, 15));
  }
  if (format == QuantFormat::q4_0 || format == QuantFormat::q6_k)
    integer = arith::SubIOp::create(
        b, l, integer,
        arith::ConstantIntOp::create(b, l, i8,
                                     format == QuantFormat::q4_0 ? 8 : 32));
  Type f32 = b.getF32Type();
  auto toFloat = [&](Value x) { return arith::SIToFPOp::create(b, l, f32, x); };
  if (format == QuantFormat::q6_k) {
    Value d = tensor::ExtractOp::create(b, l, packed.scales,
                                        ValueRange{j, div(block, 8), r});
    Value sc = tensor::ExtractOp::create(b, l, packed.subScales,
                                         ValueRange{j, div(k, 16), r});
    Value scale = arith::MulFOp::create(
        b, l, arith::ExtFOp::create(b, l, f32, d), toFloat(sc));
    rewriter.replaceOpWithNewOp<arith::MulFOp>(extract, scale,
                                               toFloat(integer));
    return;
  }
  if (!hasMins(format)) {
    Value scale =
        tensor::ExtractOp::create(b, l, packed.scales, ValueRange{j, block, r});
    rewriter.replaceOpWithNewOp<arith::MulFOp>(
        extract, toFloat(integer), arith::ExtFOp::create(b, l, f32, scale));
    return;
  }
  Value super = div(block, 8);
  auto part = [&](Value tensor, Value at, int64_t which) -> Value {
    return tensor::ExtractOp::create(b, l, tensor,
                                     ValueRange{j, at, index(which), r});
  };
  Value d = arith::ExtFOp::create(b, l, f32, part(packed.scales, super, 0));
  Value dmin = arith::ExtFOp::create(b, l, f32, part(packed.scales, super, 1));
  Value scale =
      arith::MulFOp::create(b, l, d, toFloat(part(packed.subScales, block, 0)));
  Value min = arith::MulFOp::create(b, l, dmin,
                                    toFloat(part(packed.subScales, block, 1)));
  rewriter.replaceOpWithNewOp<arith::SubFOp>(
      extract, arith::MulFOp::create(b, l, scale, toFloat(integer)), min);
}

/// Reads each quantized weight of `func` from its values and scales in
/// panels of the micro-kernel's width (two new arguments right after it,
/// three for the K formats):
/// its matmuls as quantized GEMMs, its element reads (tensor.extract) as
/// dequantized elements; the weight goes when nothing else reads it.
/// Inserts after `weight` the arguments of its quantized parts in panels of
/// `target`'s width (tfm/Dialect/Tfm/IR/QuantizedParts.h), each with the
/// weight's attributes and a tfm.param_pack saying how to bind it; the
/// panels run along N, which the quantization axis (K's) fixes.
static FailureOr<PackedQuant>
insertQuantizedParts(func::FuncOp func, BlockArgument weight,
                     const QuantizedKernelTarget &target) {
  Builder b(func.getContext());
  PackedQuant packed;
  WeightQuantAttr quant = getParamQuant(weight);
  int64_t panel = target.getPanel(quant.getFormat());
  bool outIn = quant.getAxis() == 1;
  auto weightType = cast<RankedTensorType>(weight.getType());
  int64_t n = weightType.getDimSize(outIn ? 0 : 1);
  int64_t k = weightType.getDimSize(outIn ? 1 : 0);
  unsigned index = weight.getArgNumber();
  SmallVector<NamedAttribute> common;
  if (DictionaryAttr attrs = func.getArgAttrDict(index))
    for (NamedAttribute attr : attrs)
      if (attr.getName() != kParamQuantAttrName)
        common.push_back(attr);
  auto argument = [&](unsigned at, RankedTensorType type, StringRef format,
                      int64_t group) -> FailureOr<Value> {
    SmallVector<NamedAttribute> attrs(common);
    SmallVector<NamedAttribute> pack{
        b.getNamedAttr("layout", b.getStringAttr(outIn ? "out_in" : "in_out")),
        b.getNamedAttr("panel", b.getI64IntegerAttr(panel)),
        b.getNamedAttr("shape", b.getDenseI64ArrayAttr(weightType.getShape())),
        b.getNamedAttr("format", b.getStringAttr(format))};
    if (group > 1)
      pack.push_back(b.getNamedAttr("group", b.getI64IntegerAttr(group)));
    attrs.push_back(
        b.getNamedAttr(kParamPackAttrName, b.getDictionaryAttr(pack)));
    if (failed(func.insertArgument(at, type, b.getDictionaryAttr(attrs),
                                   weight.getLoc())))
      return failure();
    return Value(func.getArgument(at));
  };
  int64_t panels = llvm::divideCeil(n, panel);
  QuantFormat format = quant.getFormat();
  // For int8 activations, four K steps of a column together.
  int64_t group = target.int8 ? kInt8Group : 1;
  unsigned at = index;
  for (QuantizedPart part : getQuantizedParts(format)) {
    bool values = part == QuantizedPart::Values;
    Type element = isF16QuantizedPart(format, part) ? Type(b.getF16Type())
                                                    : b.getIntegerType(8);
    FailureOr<Value> arg = argument(
        ++at,
        RankedTensorType::get(getQuantizedPartShape(format, part, panels, k,
                                                    panel, values ? group : 1),
                              element),
        getQuantizedPartName(format, part), values ? group : 1);
    if (failed(arg))
      return failure();
    if (values)
      packed.values = *arg;
    else if (isF16QuantizedPart(format, part))
      packed.scales = *arg;
    else
      packed.subScales = *arg;
  }
  return packed;
}

/// Whether `v` is a weight parameter of `func` held quantized.
static bool isQuantizedWeight(func::FuncOp func, Value v) {
  auto weight = dyn_cast<BlockArgument>(v);
  return weight && weight.getOwner() == &func.getBody().front() &&
         getParamQuant(weight);
}

/// The quantized weights `v` picks through an scf.index_switch, all in one
/// format along one axis (SwitchedWeights.cpp).
static SmallVector<BlockArgument> getSwitchedQuantized(func::FuncOp func,
                                                       Value v) {
  return getSwitchedWeights(
      func, v, [&](BlockArgument weight, BlockArgument first) {
        return isQuantizedWeight(func, weight) &&
               getParamQuant(weight) == getParamQuant(first);
      });
}

/// A switch like `sw` picking among the weights' packed parts.
static PackedQuant selectPacked(RewriterBase &rewriter, scf::IndexSwitchOp sw,
                                ArrayRef<PackedQuant> packed) {
  SmallVector<SmallVector<Value>> parts;
  for (const PackedQuant &p : packed) {
    parts.push_back({p.values, p.scales});
    if (p.subScales)
      parts.back().push_back(p.subScales);
  }
  SmallVector<Value> selected = selectSwitched(rewriter, sw, parts);
  return {selected[0], selected[1],
          packed[0].subScales ? selected[2] : Value()};
}

LogicalResult mlir::tfm::cpu_pack::quantizeWeights(func::FuncOp func) {
  SmallVector<std::pair<linalg::LinalgOp, bool>> matmuls;
  func.walk([&](linalg::LinalgOp op) {
    std::optional<bool> outIn = matchMatmul(op);
    if (!outIn ||
        !getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType())
             .isF32())
      return;
    Value weight = op.getDpsInputOperand(1)->get();
    if (isQuantizedWeight(func, weight) ||
        !getSwitchedQuantized(func, weight).empty())
      matmuls.push_back({op, *outIn});
  });
  // Element reads of quantized weights (gathers) the matmuls leave.
  SmallVector<tensor::ExtractOp> extracts;
  func.walk([&](tensor::ExtractOp extract) {
    auto weight = dyn_cast<BlockArgument>(extract.getTensor());
    if (weight && weight.getOwner() == &func.getBody().front() &&
        getParamQuant(weight))
      extracts.push_back(extract);
  });
  if (matmuls.empty() && extracts.empty())
    return success();
  IRRewriter rewriter(func.getContext());
  QuantizedKernelTarget target =
      getQuantizedKernelTarget(func->getParentOfType<ModuleOp>());
  // Each quantized weight's packed arguments, made on first use.
  llvm::DenseMap<Value, PackedQuant> bound;
  auto getPacked = [&](BlockArgument weight) -> FailureOr<PackedQuant> {
    PackedQuant &packed = bound[weight];
    if (packed.values)
      return packed;
    FailureOr<PackedQuant> inserted =
        insertQuantizedParts(func, weight, target);
    if (succeeded(inserted))
      packed = *inserted;
    return inserted;
  };
  // The packed parts a switch of quantized weights picks, per result.
  llvm::DenseMap<Value, PackedQuant> switched;
  llvm::SetVector<Operation *> switches;
  for (auto [op, outIn] : matmuls) {
    Value read = op.getDpsInputOperand(1)->get();
    SmallVector<BlockArgument> weights = getSwitchedQuantized(func, read);
    if (weights.empty())
      weights.push_back(cast<BlockArgument>(read));
    BlockArgument weight = weights.front();
    WeightQuantAttr quant = getParamQuant(weight);
    if (quant.getAxis() != (outIn ? 1 : 0))
      return op.emitError()
             << "tfm-cpu-pack-weights: the weight '" << getParamName(weight)
             << "' is quantized along dimension " << quant.getAxis()
             << " but read by this matmul with K along dimension "
             << (outIn ? 1 : 0);
    FailureOr<PackedQuant> packed = failure();
    if (read == weight) {
      packed = getPacked(weight);
    } else if (auto it = switched.find(read); it != switched.end()) {
      packed = it->second;
    } else {
      SmallVector<PackedQuant> each;
      for (BlockArgument w : weights) {
        FailureOr<PackedQuant> one = getPacked(w);
        if (failed(one))
          return failure();
        each.push_back(*one);
      }
      auto sw = cast<scf::IndexSwitchOp>(read.getDefiningOp());
      packed = switched[read] = selectPacked(rewriter, sw, each);
      switches.insert(sw);
    }
    if (failed(packed))
      return failure();
    int64_t panel = target.getPanel(quant.getFormat());
    if (target.int8)
      rewriteToQuantizedInt8(rewriter, op, *packed, panel, quant.getFormat());
    else
      rewriteToQuantized(rewriter, op, *packed, panel, quant.getFormat());
  }
  for (tensor::ExtractOp extract : extracts) {
    auto weight = cast<BlockArgument>(extract.getTensor());
    FailureOr<PackedQuant> packed = getPacked(weight);
    if (failed(packed))
      return failure();
    WeightQuantAttr quant = getParamQuant(weight);
    rewriteExtract(
        rewriter, extract, *packed, target.getPanel(quant.getFormat()),
        target.int8 ? kInt8Group : 1, quant.getAxis(), quant.getFormat());
  }
  for (Operation *sw : switches)
    dropUnusedResults(rewriter, cast<scf::IndexSwitchOp>(sw));
  llvm::BitVector unused(func.getNumArguments());
  for (auto &[weight, args] : bound)
    if (weight.use_empty())
      unused.set(cast<BlockArgument>(weight).getArgNumber());
  return func.eraseArguments(unused);
}

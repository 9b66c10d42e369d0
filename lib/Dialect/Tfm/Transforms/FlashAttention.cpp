//===- FlashAttention.cpp - tiled online-softmax attention ----------------===//
//
// Rewrites tfm.attention into the FlashAttention form: never materialise the
// S x S_kv score matrix; walk key/value tiles keeping per query row a running
// max m, a running sum l and an output accumulator acc:
//
//   s      = (Q_tile K_tile^T) * scale            masked: -inf
//   m_new  = max(m, rowmax(s))
//   p      = exp(s - m_new)
//   corr   = exp(m - m_new)
//   l      = l * corr + rowsum(p)
//   acc    = acc * corr + p V_tile                 p rounded to V's type
//   out    = acc / l                               once, after the last tile
//
// Loop nest: batch b, key/value head g, query tile (all Hq/Hkv query heads of
// g at once, so each K/V tile is read once per group), key tile. The key loop
// ends at the last tile a causal query tile can see; later tiles are skipped.
// With per-sequence offsets (ragged batches) the query positions, the mask and
// that bound are each sequence's own: a short sequence's key loop stops at its
// own length, never visiting tiles of padding.
// Under a sliding window it also starts at the first tile the window of the
// tile's first query reaches: earlier tiles are wholly masked for every row.
// A row can then meet a tile in which all its keys are masked (its window
// starts later than the tile's first row's): m stays -inf, and a safe max
// (0 while m is -inf) keeps exp(-inf - -inf) from turning into NaN.
// Over a ring cache (`ring_cache`) a slot's position is not its index, so the
// loop visits every tile (the ring holds about the window and no more) and
// the mask maps each slot to its position.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Dialect/Tfm/Utils/Positions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFLASHATTENTION
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

/// Builds the tile computations of one attention op.
class FlashBuilder {
public:
  FlashBuilder(ImplicitLocOpBuilder &b, AttentionOp op, int64_t queryTile,
               int64_t keyTile, bool causalSkip, bool transposeKeys)
      : b(b), op(op), causalSkip(causalSkip), f32(b.getF32Type()) {
    auto q = cast<RankedTensorType>(op.getQuery().getType());
    auto k = cast<RankedTensorType>(op.getKey().getType());
    auto v = cast<RankedTensorType>(op.getValue().getType());
    batch = q.getDimSize(0);
    kvHeads = k.getDimSize(1);
    group = q.getDimSize(1) / kvHeads;
    seq = q.getDimSize(2);
    kvSeq = k.getDimSize(2);
    headDim = q.getDimSize(3);
    valueDim = v.getDimSize(3);
    elemType = q.getElementType();
    tq = std::min(queryTile, seq);
    tk = std::min(keyTile, kvSeq);
    keysTransposed = transposeKeys && group * tq >= kMinRowsToTransposeKeys;
  }

  /// Fewest query-tile rows for which the keys are read from a transposed
  /// copy (see the pass's `transpose-keys`).
  static constexpr int64_t kMinRowsToTransposeKeys = 16;

  Value build();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value f32Const(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }
  static Value negInf(OpBuilder &nb, Location loc) {
    return arith::ConstantOp::create(
        nb, loc,
        nb.getFloatAttr(nb.getF32Type(),
                        APFloat::getInf(APFloat::IEEEsingle(), true)));
  }
  Value toF32(OpBuilder &nb, Location loc, Value v) {
    if (v.getType() == f32)
      return v;
    return arith::ExtFOp::create(nb, loc, f32, v);
  }
  Value filled(ArrayRef<int64_t> shape, Value value) {
    Value empty = tensor::EmptyOp::create(b, shape, f32);
    return linalg::FillOp::create(b, value, empty).getResult(0);
  }
  AffineMap map(unsigned dims, ArrayRef<unsigned> results) {
    SmallVector<AffineExpr> exprs;
    for (unsigned r : results)
      exprs.push_back(b.getAffineDimExpr(r));
    return AffineMap::get(dims, 0, exprs, b.getContext());
  }
  Value generic(Type resultType, ValueRange ins, Value out,
                ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iters,
                function_ref<void(OpBuilder &, Location, ValueRange)> body) {
    return linalg::GenericOp::create(b, TypeRange{resultType}, ins,
                                     ValueRange{out}, maps, iters, body)
        .getResult(0);
  }
  /// Pads dimension 2 of `v` with zeros up to `padded` rows.
  Value padSequence(Value v, int64_t padded) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getDimSize(2) == padded)
      return v;
    SmallVector<int64_t> shape(type.getShape());
    shape[2] = padded;
    Value zero = arith::ConstantOp::create(b, b.getZeroAttr(elemType));
    return tensor::createPadHighOp(
        RankedTensorType::get(shape, elemType), v, zero, /*nofold=*/false,
        b.getLoc(), b);
  }
  /// A [rows x cols] slice of `v` at [bi, head, row, 0], dropping the unit dims
  /// (or [group x rows x cols] when `heads` > 1).
  Value slice(Value v, Value bi, Value head, int64_t heads, Value row,
              int64_t rows, int64_t cols) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape;
    if (heads > 1)
      shape.push_back(heads);
    shape.append({rows, cols});
    auto sliceType = RankedTensorType::get(shape, type.getElementType());
    SmallVector<OpFoldResult> offsets{bi, head, row, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(heads),
                                    b.getIndexAttr(rows), b.getIndexAttr(cols)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, sliceType, v, offsets, sizes,
                                          strides);
  }

  /// The [rows x cols] slice of `v` at [bi, head, 0, col] (K^T's key tile).
  Value sliceColumns(Value v, Value bi, Value head, Value col, int64_t rows,
                     int64_t cols) {
    auto type = cast<RankedTensorType>(v.getType());
    auto sliceType = RankedTensorType::get({rows, cols}, type.getElementType());
    SmallVector<OpFoldResult> offsets{bi, head, b.getIndexAttr(0), col};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(1),
                                    b.getIndexAttr(rows), b.getIndexAttr(cols)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, sliceType, v, offsets, sizes,
                                          strides);
  }

  /// One step of the key loop: folds a key/value tile into (m, l, acc).
  SmallVector<Value> foldKeyTile(Value qTile, Value kTile, Value vTile,
                                 Value keyStart, Value queryPos0, bool masked,
                                 Value m, Value l, Value acc);
  /// The tile's raw scores s[j, i, t] = sum_d q[j, i, d] * k[t, d], in f32.
  Value buildScores(Value qTile, Value kTile);
  /// Inside a linalg body over [j, i, t]: the scaled score `s` of query row
  /// i and key t of the tile starting at `keyStart`, or, when the tile is
  /// `masked`, -inf where the key is hidden: a padding key or, under a
  /// causal mask, one the query may not see.
  Value scaleOrMask(OpBuilder &nb, Location loc, Value s, Value keyStart,
                    Value queryPos0, bool masked);
  /// `mx`, or 0 where it is -inf under a sliding window (see foldKeyTile).
  Value safeMax(OpBuilder &nb, Location loc, Value mx);
  /// The correction exp(m - m_new) and the new running max m_new.
  std::pair<Value, Value> updateRowMax(Value scores, Value keyStart,
                                       Value queryPos0, bool masked, Value m);
  /// p[j, i, t] = exp(s - m_new).
  Value buildProbabilities(Value scores, Value mNew, Value keyStart,
                           Value queryPos0, bool masked);
  /// l * corr + rowsum(p) and acc * corr + p V.
  std::pair<Value, Value> accumulate(Value probs, Value vTile, Value corr,
                                     Value l, Value acc);
  /// The key range [begin, end) a query tile whose first row is at absolute
  /// position `queryPos0` must visit.
  std::pair<Value, Value> keyRange(Value queryPos0);
  /// Where the key tiles from 0 that every row of the query tile sees whole
  /// end (no padding key, none in a row's future): at most `end`, the end
  /// of the key range (`end` itself when all are); null under a sliding
  /// window, whose tiles all keep the mask.
  Value unmaskedEnd(Value queryPos0, Value end);
  /// out = acc / l, in the output's element type.
  Value normalize(Value acc, Value l);
  /// K^T: [B, Hkv, dh, S_kv], so that key tiles are column slices.
  Value transposeKeys(Value k);
  /// An scf.for over [lb, ub) by `step` carrying `iterArgs`, whose body
  /// `body(iv, args)` builds at `b` and returns the values to yield.
  ValueRange loop(Value lb, Value ub, Value step, ValueRange iterArgs,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body);

  ImplicitLocOpBuilder &b;
  AttentionOp op;
  bool causalSkip;
  Type f32, elemType;
  int64_t batch, kvHeads, group, seq, kvSeq, headDim, valueDim, tq, tk;
  /// Key tiles are [dh x tk] slices of K^T instead of [tk x dh] slices of K.
  bool keysTransposed = false;
  /// Under `ring_cache`, the position of the current sequence's last query
  /// (set per iteration of the batch loop), which places the ring's slots.
  Value lastQueryPos;
};

Value FlashBuilder::buildScores(Value qTile, Value kTile) {
  auto scoreType = RankedTensorType::get({group, tq, tk}, f32);
  return generic(
      scoreType, {qTile, kTile}, filled({group, tq, tk}, f32Const(0.0)),
      {map(4, {0, 1, 3}), keysTransposed ? map(4, {3, 2}) : map(4, {2, 3}),
       map(4, {0, 1, 2})},
      {kPar, kPar, kPar, kRed}, [&](OpBuilder &nb, Location loc, ValueRange a) {
        Value prod = arith::MulFOp::create(nb, loc, toF32(nb, loc, a[0]),
                                           toF32(nb, loc, a[1]));
        linalg::YieldOp::create(nb, loc,
                                arith::AddFOp::create(nb, loc, a[2], prod)
                                    .getResult());
      });
}

Value FlashBuilder::scaleOrMask(OpBuilder &nb, Location loc, Value s,
                                Value keyStart, Value queryPos0,
                                bool masked) {
  Value scaled = op.buildScore(nb, loc, s);
  if (!masked)
    return scaled;
  Value i = linalg::IndexOp::create(nb, loc, 1);
  Value t = linalg::IndexOp::create(nb, loc, 2);
  Value key = arith::AddIOp::create(nb, loc, keyStart, t);
  Value hidden =
      arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::sge, key,
                            arith::ConstantIndexOp::create(nb, loc, kvSeq));
  if (op.getCausal()) {
    Value query = arith::AddIOp::create(nb, loc, queryPos0, i);
    hidden = arith::OrIOp::create(
        nb, loc, hidden,
        op.buildCausallyHidden(nb, loc, query, key, lastQueryPos));
  }
  return arith::SelectOp::create(nb, loc, hidden, negInf(nb, loc), scaled);
}

Value FlashBuilder::safeMax(OpBuilder &nb, Location loc, Value mx) {
  if (!op.getSlidingWindow())
    return mx;
  Value isNegInf = arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OEQ,
                                         mx, negInf(nb, loc));
  return arith::SelectOp::create(
      nb, loc, isNegInf,
      arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(0.0)), mx);
}

std::pair<Value, Value> FlashBuilder::updateRowMax(Value scores,
                                                   Value keyStart,
                                                   Value queryPos0,
                                                   bool masked, Value m) {
  // The tile's row maxima, then corr = exp(m - m_new) (how much the old
  // running values shrink), then m_new = max(m, tile max) written into m's
  // buffer only after corr has read m, so the loop updates m in place.
  // The maxima are maxnumf (a NaN score is skipped): the score itself still
  // gives exp(NaN - m) = NaN in the row's sum and output, as with maximumf,
  // and maxnumf needs no signed-zero ordering, which made the row max about
  // a fifth of the CPU attention loop.
  auto rowType = RankedTensorType::get({group, tq}, f32);
  Value tileMax = generic(
      rowType, {scores}, filled({group, tq}, negInf(b, b.getLoc())),
      {map(3, {0, 1, 2}), map(3, {0, 1})}, {kPar, kPar, kRed},
      [&](OpBuilder &nb, Location loc, ValueRange a) {
        Value s = scaleOrMask(nb, loc, a[0], keyStart, queryPos0, masked);
        linalg::YieldOp::create(
            nb, loc, arith::MaxNumFOp::create(nb, loc, a[1], s).getResult());
      });
  auto rowMap = map(2, {0, 1});
  Value corr = generic(
      rowType, {m, tileMax}, tensor::EmptyOp::create(b, rowType.getShape(), f32),
      {rowMap, rowMap, rowMap}, {kPar, kPar},
      [&](OpBuilder &nb, Location loc, ValueRange a) {
        Value mNew = safeMax(nb, loc,
                             arith::MaxNumFOp::create(nb, loc, a[0], a[1]));
        linalg::YieldOp::create(
            nb, loc,
            math::ExpOp::create(nb, loc,
                                arith::SubFOp::create(nb, loc, a[0], mNew))
                .getResult());
      });
  Value mNew = generic(rowType, {tileMax}, m, {rowMap, rowMap}, {kPar, kPar},
                       [&](OpBuilder &nb, Location loc, ValueRange a) {
                         linalg::YieldOp::create(
                             nb, loc,
                             arith::MaxNumFOp::create(nb, loc, a[1], a[0])
                                 .getResult());
                       });
  return {corr, mNew};
}

Value FlashBuilder::buildProbabilities(Value scores, Value mNew,
                                       Value keyStart, Value queryPos0,
                                       bool masked) {
  // Masked keys give exp(-inf) = 0. Without a window m_new is finite: key 0
  // is visible to every query and lies in the first tile; with one, see
  // safeMax.
  auto scoreType = cast<RankedTensorType>(scores.getType());
  return generic(
      scoreType, {scores, mNew},
      tensor::EmptyOp::create(b, scoreType.getShape(), f32),
      {map(3, {0, 1, 2}), map(3, {0, 1}), map(3, {0, 1, 2})},
      {kPar, kPar, kPar}, [&](OpBuilder &nb, Location loc, ValueRange a) {
        Value s = scaleOrMask(nb, loc, a[0], keyStart, queryPos0, masked);
        Value e = math::ExpOp::create(
            nb, loc,
            arith::SubFOp::create(nb, loc, s, safeMax(nb, loc, a[1])));
        linalg::YieldOp::create(nb, loc, e);
      });
}

std::pair<Value, Value> FlashBuilder::accumulate(Value probs, Value vTile,
                                                 Value corr, Value l,
                                                 Value acc) {
  auto mulCorr = [&](OpBuilder &nb, Location loc, ValueRange a) {
    linalg::YieldOp::create(
        nb, loc, arith::MulFOp::create(nb, loc, a[1], a[0]).getResult());
  };
  // l_new = l * corr + sum_t p.
  auto rowType = RankedTensorType::get({group, tq}, f32);
  Value lScaled = generic(rowType, {corr}, l, {map(2, {0, 1}), map(2, {0, 1})},
                          {kPar, kPar}, mulCorr);
  Value lNew = generic(rowType, {probs}, lScaled,
                       {map(3, {0, 1, 2}), map(3, {0, 1})}, {kPar, kPar, kRed},
                       [&](OpBuilder &nb, Location loc, ValueRange a) {
                         linalg::YieldOp::create(
                             nb, loc,
                             arith::AddFOp::create(nb, loc, a[1], a[0])
                                 .getResult());
                       });

  // acc_new = acc * corr + p V, with p rounded to a half-precision value
  // type first (l above sums it unrounded): Hugging Face's eager attention
  // rounds its probabilities to the value type before P V, and PyTorch's CPU
  // flash kernel its exp values, so tfm matches both to the rounding. The
  // rounded p stays f32 (a round trip through the value type): a P V on f32
  // FMAs then reads f32 as before, and tfm-tile-and-vectorize-contractions
  // reads it back as bf16 where P V runs as pair dot products.
  Value weights = probs;
  Type valueType = cast<RankedTensorType>(vTile.getType()).getElementType();
  if (valueType != f32) {
    auto scoreType = cast<RankedTensorType>(probs.getType());
    weights = generic(
        scoreType, {probs},
        tensor::EmptyOp::create(b, scoreType.getShape(), f32),
        {map(3, {0, 1, 2}), map(3, {0, 1, 2})}, {kPar, kPar, kPar},
        [&](OpBuilder &nb, Location loc, ValueRange a) {
          Value low = arith::TruncFOp::create(nb, loc, valueType, a[0]);
          linalg::YieldOp::create(
              nb, loc, arith::ExtFOp::create(nb, loc, f32, low).getResult());
        });
  }
  auto accType = RankedTensorType::get({group, tq, valueDim}, f32);
  Value accScaled =
      generic(accType, {corr}, acc, {map(3, {0, 1}), map(3, {0, 1, 2})},
              {kPar, kPar, kPar}, mulCorr);
  Value accNew = generic(
      accType, {weights, vTile}, accScaled,
      {map(4, {0, 1, 3}), map(4, {3, 2}), map(4, {0, 1, 2})},
      {kPar, kPar, kPar, kRed}, [&](OpBuilder &nb, Location loc, ValueRange a) {
        Value prod =
            arith::MulFOp::create(nb, loc, a[0], toF32(nb, loc, a[1]));
        linalg::YieldOp::create(nb, loc,
                                arith::AddFOp::create(nb, loc, a[2], prod)
                                    .getResult());
      });
  return {lNew, accNew};
}

SmallVector<Value> FlashBuilder::foldKeyTile(Value qTile, Value kTile,
                                             Value vTile, Value keyStart,
                                             Value queryPos0, bool masked,
                                             Value m, Value l, Value acc) {
  // Under a sliding window a row may have seen only masked keys so far
  // (m_new = -inf, l = acc = 0): safeMax subtracts 0 instead, which keeps
  // corr and p at exp(-inf) = 0 rather than NaN. Without a window key 0 is
  // always visible.
  Value scores = buildScores(qTile, kTile);
  auto [corr, mNew] = updateRowMax(scores, keyStart, queryPos0, masked, m);
  Value probs = buildProbabilities(scores, mNew, keyStart, queryPos0, masked);
  auto [lNew, accNew] = accumulate(probs, vTile, corr, l, acc);
  return {mNew, lNew, accNew};
}

std::pair<Value, Value> FlashBuilder::keyRange(Value queryPos0) {
  // Keys [0, kvEnd) can matter to this query tile; under a causal mask
  // later tiles are wholly in the future and the loop never visits them.
  Value kvEnd = idx(kvSeq);
  if (op.getRingCache())
    return {idx(0), kvEnd};
  if (op.getCausal() && causalSkip)
    kvEnd = arith::MinSIOp::create(
        b, kvEnd, arith::AddIOp::create(b, queryPos0, idx(tq)));
  // Under a sliding window of W, keys before queryPos0 - W + 1 are outside
  // every row's window: start at the tile holding that key (tiles stay
  // aligned to multiples of tk, so the last one ends within the padding).
  Value kvBegin = idx(0);
  if (std::optional<uint64_t> window = op.getSlidingWindow();
      window && causalSkip) {
    Value first = arith::MaxSIOp::create(
        b, kvBegin,
        arith::SubIOp::create(b, queryPos0,
                              idx(static_cast<int64_t>(*window) - 1)));
    kvBegin = arith::MulIOp::create(
        b, arith::DivUIOp::create(b, first, idx(tk)), idx(tk));
  }
  return {kvBegin, kvEnd};
}

Value FlashBuilder::unmaskedEnd(Value queryPos0, Value end) {
  if (op.getSlidingWindow())
    return nullptr;
  // A tile [ks, ks + tk) needs no mask when it holds no padding key (ks + tk
  // <= kvSeq) and, under a causal mask, no key after the tile's first query
  // row (ks + tk - 1 <= queryPos0). Such tiles start at 0 (no window) and
  // end at a multiple of tk that is at most `end` (kvSeq, or queryPos0 + tq
  // with the causal skip).
  int64_t whole = kvSeq / tk * tk;
  if (!op.getCausal())
    return whole == kvSeq ? end : idx(whole);
  Value seen = arith::MulIOp::create(
      b,
      arith::DivUIOp::create(b, arith::AddIOp::create(b, queryPos0, idx(1)),
                             idx(tk)),
      idx(tk));
  return arith::MinSIOp::create(b, idx(whole), seen);
}

Value FlashBuilder::normalize(Value acc, Value l) {
  auto tileType = RankedTensorType::get({group, tq, valueDim}, elemType);
  return generic(
      tileType, {acc, l},
      tensor::EmptyOp::create(b, tileType.getShape(), elemType),
      {map(3, {0, 1, 2}), map(3, {0, 1}), map(3, {0, 1, 2})},
      {kPar, kPar, kPar}, [&](OpBuilder &nb, Location loc, ValueRange a) {
        Value r = arith::DivFOp::create(nb, loc, a[0], a[1]);
        if (elemType != f32)
          r = arith::TruncFOp::create(nb, loc, elemType, r);
        linalg::YieldOp::create(nb, loc, r);
      });
}

Value FlashBuilder::transposeKeys(Value k) {
  auto kType = cast<RankedTensorType>(k.getType());
  SmallVector<int64_t> shape{batch, kvHeads, headDim, kType.getDimSize(2)};
  Value init = tensor::EmptyOp::create(b, shape, kType.getElementType());
  return linalg::TransposeOp::create(b, k, init, ArrayRef<int64_t>{0, 1, 3, 2})
      .getResult()[0];
}

ValueRange
FlashBuilder::loop(Value lb, Value ub, Value step, ValueRange iterArgs,
                   function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto forOp = scf::ForOp::create(
      b, lb, ub, step, iterArgs,
      [&](OpBuilder &nb, Location loc, Value iv, ValueRange args) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, body(iv, args));
      });
  return forOp.getResults();
}

Value FlashBuilder::build() {
  int64_t paddedSeq = llvm::divideCeil(seq, tq) * tq;
  int64_t paddedKvSeq = llvm::divideCeil(kvSeq, tk) * tk;
  Value q = padSequence(op.getQuery(), paddedSeq);
  Value k = padSequence(op.getKey(), paddedKvSeq);
  if (keysTransposed)
    k = transposeKeys(k);
  Value v = padSequence(op.getValue(), paddedKvSeq);

  // Absolute position of query row 0 (of each sequence, when the offset is
  // per sequence); see tfm.attention's `offset`.
  Value offset = op.getOffset() ? op.getOffset() : idx(kvSeq - seq);

  auto outType =
      RankedTensorType::get({batch, kvHeads * group, paddedSeq, valueDim},
                            elemType);
  Value init = tensor::EmptyOp::create(b, outType.getShape(), elemType);
  // Every (batch, kv head, query tile) is independent: one scf.forall over
  // the three, each iteration writing its own output tile, so targets can
  // run them in parallel (CPU threads, GPU blocks).
  auto forall = scf::ForallOp::create(
      b, ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                                b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(batch), b.getIndexAttr(kvHeads),
                             b.getIndexAttr(paddedSeq)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                             b.getIndexAttr(tq)},
      ValueRange{init}, /*mapping=*/std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    Value bi = forall.getInductionVar(0);
    Value g = forall.getInductionVar(1);
    Value qs = forall.getInductionVar(2);
    Value head0 = arith::MulIOp::create(b, g, idx(group));
    Value qTile = slice(q, bi, head0, group, qs, tq, headDim);
    if (group == 1) // Keep the [group, rows, cols] shape the maps expect.
      qTile = tensor::ExpandShapeOp::create(
          b, RankedTensorType::get({1, tq, headDim}, elemType), qTile,
          SmallVector<ReassociationIndices>{{0, 1}, {2}});
    Value firstPos = getSequencePosition(b, b.getLoc(), offset, bi);
    Value queryPos0 = arith::AddIOp::create(b, firstPos, qs);
    if (op.getRingCache())
      lastQueryPos = arith::AddIOp::create(b, firstPos, idx(seq - 1));

    auto [kvBegin, kvEnd] = keyRange(queryPos0);
    Value m0 = filled({group, tq}, negInf(b, b.getLoc()));
    Value l0 = filled({group, tq}, f32Const(0.0));
    Value acc0 = filled({group, tq, valueDim}, f32Const(0.0));
    auto keyLoop = [&](Value from, Value to, bool masked, ValueRange init) {
      return loop(from, to, idx(tk), init, [&](Value ks, ValueRange s) {
        Value kTile = keysTransposed ? sliceColumns(k, bi, g, ks, headDim, tk)
                                    : slice(k, bi, g, 1, ks, tk, headDim);
        Value vTile = slice(v, bi, g, 1, ks, tk, valueDim);
        return foldKeyTile(qTile, kTile, vTile, ks, queryPos0, masked, s[0],
                           s[1], s[2]);
      });
    };
    // Tiles every row sees whole (all but the causal diagonal's and the
    // padding's) skip the mask: a compare and select per score.
    SmallVector<Value> state = {m0, l0, acc0};
    Value kvMasked = kvBegin;
    if (Value unmasked = unmaskedEnd(queryPos0, kvEnd)) {
      state = llvm::to_vector(
          keyLoop(kvBegin, unmasked, /*masked=*/false, state));
      kvMasked = unmasked;
    }
    if (kvMasked != kvEnd)
      state = llvm::to_vector(keyLoop(kvMasked, kvEnd, /*masked=*/true, state));
    Value outTile = normalize(state[2], state[1]);
    SmallVector<OpFoldResult> offsets{bi, head0, qs, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(group),
                                    b.getIndexAttr(tq),
                                    b.getIndexAttr(valueDim)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    b.setInsertionPointToEnd(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, outTile,
                                          forall.getRegionIterArgs()[0],
                                          offsets, sizes, strides);
  }
  Value result = forall.getResult(0);

  if (paddedSeq == seq)
    return result;
  auto type = cast<RankedTensorType>(op.getType());
  SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : type.getShape())
    sizes.push_back(b.getIndexAttr(d));
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, type, result, offsets, sizes,
                                        strides);
}

struct FlashAttentionPattern : public OpRewritePattern<AttentionOp> {
  FlashAttentionPattern(MLIRContext *ctx, int64_t queryTile, int64_t keyTile,
                        bool causalSkip, bool transposeKeys,
                        int64_t decodeMinKeys)
      : OpRewritePattern(ctx), queryTile(queryTile), keyTile(keyTile),
        causalSkip(causalSkip), transposeKeys(transposeKeys),
        decodeMinKeys(decodeMinKeys) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    // One query per head (a decode step) over a short cache: its scores are
    // a single row of S_kv values, nothing quadratic to avoid, and tiling
    // the key loop only adds per-tile overhead (measured 3x slower decode).
    // Left to the plain lowering. Over a long cache the plain form reads
    // every one of its S_kv keys each step; tiles that skip the keys after
    // the position read only those written (see the pass description).
    if (cast<RankedTensorType>(op.getQuery().getType()).getDimSize(2) == 1 &&
        cast<RankedTensorType>(op.getKey().getType()).getDimSize(2) <
            decodeMinKeys)
      return rewriter.notifyMatchFailure(op, "a single query row");
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    rewriter.replaceOp(
        op, FlashBuilder(b, op, queryTile, keyTile, causalSkip, transposeKeys)
                .build());
    return success();
  }

  int64_t queryTile, keyTile;
  bool causalSkip, transposeKeys;
  int64_t decodeMinKeys;
};

struct FlashAttentionPass
    : public tfm::impl::TfmFlashAttentionBase<FlashAttentionPass> {
  using TfmFlashAttentionBase::TfmFlashAttentionBase;

  void runOnOperation() override {
    if (queryTile < 1 || keyTile < 1) {
      getOperation().emitError() << "tfm-flash-attention: tile sizes must be "
                                    "positive, got query-tile="
                                 << int64_t(queryTile)
                                 << " key-tile=" << int64_t(keyTile);
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    patterns.add<FlashAttentionPattern>(&getContext(), queryTile, keyTile,
                                        causalSkip, transposeKeys,
                                        decodeMinKeys);
    // One rewrite per attention op; the loops it creates are not revisited.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      return signalPassFailure();
  }
};

} // namespace

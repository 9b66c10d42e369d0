//===- TfmOps.cpp - tfm op verifiers and ledger hooks ---------------------===//
//
// Verifiers check the local shape contracts of each op (the ones visible from
// its own operands); cross-op contracts live in --tfm-verify-contracts.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tfm;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Emits "<what> must have rank <n>, got <type>" when the rank is wrong.
static LogicalResult checkRank(Operation *op, Value v, StringRef what,
                               int64_t rank) {
  auto type = tensorType(v);
  if (type.getRank() == rank)
    return success();
  return op->emitOpError() << what << " must have rank " << rank << ", got "
                           << type;
}

/// Emits an error unless `a` and `b` share their element type.
static LogicalResult checkSameElementType(Operation *op, Value a, StringRef an,
                                          Value b, StringRef bn) {
  Type ea = tensorType(a).getElementType(), eb = tensorType(b).getElementType();
  if (ea == eb)
    return success();
  return op->emitOpError() << an << " element type " << ea << " differs from "
                           << bn << " element type " << eb;
}

/// Checks that the result type equals `expected`, naming the contract.
static LogicalResult checkResultType(Operation *op, Type expected) {
  Type actual = op->getResult(0).getType();
  if (actual == expected)
    return success();
  return op->emitOpError() << "result type " << actual << " should be "
                           << expected;
}

/// Checks a per-feature vector (norm scale/bias, linear bias): `[d]`.
static LogicalResult checkVector(Operation *op, Value v, StringRef what,
                                 int64_t d, StringRef dName) {
  auto type = tensorType(v);
  if (type.getRank() == 1 && type.getDimSize(0) == d)
    return success();
  return op->emitOpError() << what << " must be [" << d << "] (" << dName
                           << "), got " << type;
}

/// Checks a per-sequence `position` operand (a `[B]` tensor) against the
/// batch size; an `index` position (or none) needs no check.
static LogicalResult checkPerSequencePosition(Operation *op, Value position,
                                              StringRef what, int64_t batch) {
  if (!isPerSequencePosition(position))
    return success();
  auto type = tensorType(position);
  if (type.getDimSize(0) == batch)
    return success();
  return op->emitOpError() << what << " " << type
                           << " must hold one position per sequence of the "
                              "batch (B="
                           << batch << ")";
}

/// Product of all but the last dimension (computed directly rather than
/// dividing by the last dimension, which may be 0).
int64_t mlir::tfm::multiplyCounts(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t f : factors)
    if (llvm::MulOverflow(product, f, product))
      return std::numeric_limits<int64_t>::max();
  return product;
}

int64_t mlir::tfm::addCounts(int64_t a, int64_t b) {
  int64_t sum;
  return llvm::AddOverflow(a, b, sum) ? std::numeric_limits<int64_t>::max()
                                      : sum;
}

static int64_t leadingElements(RankedTensorType t) {
  int64_t n = 1;
  for (int64_t size : t.getShape().drop_back())
    n *= size;
  return n;
}

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  if (failed(checkRank(*this, getIds(), "ids", 2)) ||
      failed(checkRank(*this, getTable(), "table", 2)))
    return failure();
  auto ids = tensorType(getIds()), table = tensorType(getTable());
  if (auto scale = getScaleAttr()) {
    // A zero or non-finite factor erases the tokens: no model means that.
    double value = scale.getValueAsDouble();
    if (!std::isfinite(value) || !(value > 0.0))
      return emitOpError() << "scale must be finite and positive, got "
                           << value;
  }
  return checkResultType(
      *this, RankedTensorType::get({ids.getDimSize(0), ids.getDimSize(1),
                                    table.getDimSize(1)},
                                   table.getElementType()));
}

int64_t EmbeddingOp::getFlopCount() { return 0; }

//===----------------------------------------------------------------------===//
// PositionEmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult PositionEmbeddingOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)) ||
      failed(checkRank(*this, getTable(), "table", 2)) ||
      failed(checkSameElementType(*this, getInput(), "input", getTable(),
                                  "table")))
    return failure();
  auto in = tensorType(getInput()), table = tensorType(getTable());
  if (table.getDimSize(1) != in.getDimSize(2))
    return emitOpError() << "table width " << table.getDimSize(1)
                         << " differs from the hidden size d="
                         << in.getDimSize(2);
  if (failed(checkPerSequencePosition(*this, getOffset(), "offset",
                                      in.getDimSize(0))))
    return failure();
  if (!getOffset() && in.getDimSize(1) > table.getDimSize(0))
    return emitOpError() << "sequence length " << in.getDimSize(1)
                         << " exceeds the " << table.getDimSize(0)
                         << " positions of the table";
  return checkResultType(*this, in);
}

int64_t PositionEmbeddingOp::getFlopCount() { return 0; }

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

static LogicalResult verifyNorm(Operation *op, Value input,
                                ArrayRef<std::pair<Value, StringRef>> params,
                                float epsilon) {
  auto in = tensorType(input);
  if (in.getRank() < 1)
    return op->emitOpError() << "input must have rank >= 1, got " << in;
  int64_t d = in.getShape().back();
  for (auto [param, name] : params) {
    if (failed(checkVector(op, param, name, d, "the normalised dimension d")) ||
        failed(checkSameElementType(op, input, "input", param, name)))
      return failure();
  }
  if (!(epsilon > 0.0f))
    return op->emitOpError() << "epsilon must be positive, got " << epsilon;
  return checkResultType(op, in);
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, getInput(),
                    {{getScale(), "scale"}, {getBias(), "bias"}},
                    getEpsilon().convertToFloat());
}
int64_t LayerNormOp::getFlopCount() { return 0; }

LogicalResult RMSNormOp::verify() {
  return verifyNorm(*this, getInput(), {{getScale(), "scale"}},
                    getEpsilon().convertToFloat());
}
int64_t RMSNormOp::getFlopCount() { return 0; }

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

int64_t LinearOp::getInFeatures() {
  auto w = tensorType(getWeight());
  return getLayout() == WeightLayout::in_out ? w.getDimSize(0)
                                             : w.getDimSize(1);
}

int64_t LinearOp::getOutFeatures() {
  auto w = tensorType(getWeight());
  return getLayout() == WeightLayout::in_out ? w.getDimSize(1)
                                             : w.getDimSize(0);
}

LogicalResult LinearOp::verify() {
  auto in = tensorType(getInput());
  if (in.getRank() < 2)
    return emitOpError() << "input must have rank >= 2, got " << in;
  if (failed(checkRank(*this, getWeight(), "weight", 2)) ||
      failed(checkSameElementType(*this, getInput(), "input", getWeight(),
                                  "weight")))
    return failure();
  int64_t inFeatures = getInFeatures(), outFeatures = getOutFeatures();
  if (in.getShape().back() != inFeatures)
    return emitOpError() << "input's last dimension " << in.getShape().back()
                         << " does not match the weight's in=" << inFeatures
                         << " (weight " << getWeight().getType() << ", layout "
                         << stringifyWeightLayout(getLayout()) << ")";
  if (Value bias = getBias()) {
    if (failed(checkVector(*this, bias, "bias", outFeatures,
                           "the weight's out")) ||
        failed(checkSameElementType(*this, getInput(), "input", bias, "bias")))
      return failure();
  }
  SmallVector<int64_t> shape(in.getShape());
  shape.back() = outFeatures;
  return checkResultType(*this,
                         RankedTensorType::get(shape, in.getElementType()));
}

int64_t LinearOp::getFlopCount() {
  return multiplyCounts({2, leadingElements(tensorType(getInput())),
                         getInFeatures(), getOutFeatures()});
}

//===----------------------------------------------------------------------===//
// PermuteFeaturesOp
//===----------------------------------------------------------------------===//

LogicalResult PermuteFeaturesOp::verify() {
  auto in = tensorType(getInput());
  if (in.getRank() < 1)
    return emitOpError() << "input must have rank >= 1, got " << in;
  if (failed(checkVector(*this, getOrder(), "order", in.getShape().back(),
                         "the input's last dimension")))
    return failure();
  return checkResultType(*this, in);
}

int64_t PermuteFeaturesOp::getFlopCount() { return 0; }

//===----------------------------------------------------------------------===//
// LMHeadOp
//===----------------------------------------------------------------------===//

/// A `logit_softcap` must be finite and positive: it divides the scores.
static LogicalResult verifySoftcap(Operation *op, FloatAttr cap) {
  if (!cap)
    return success();
  float c = cap.getValue().convertToFloat();
  if (!std::isfinite(c) || !(c > 0.0f))
    return op->emitOpError()
           << "logit_softcap must be finite and positive, got " << c;
  return success();
}

LogicalResult LMHeadOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)) ||
      failed(checkRank(*this, getWeight(), "weight", 2)) ||
      failed(checkSameElementType(*this, getInput(), "input", getWeight(),
                                  "weight")))
    return failure();
  auto in = tensorType(getInput()), w = tensorType(getWeight());
  bool outIn = getLayout() == WeightLayout::out_in;
  int64_t vocab = w.getDimSize(outIn ? 0 : 1), d = w.getDimSize(outIn ? 1 : 0);
  if (d != in.getDimSize(2))
    return emitOpError() << "weight " << w << " (layout "
                         << stringifyWeightLayout(getLayout())
                         << ") expects hidden size " << d << ", input has "
                         << in.getDimSize(2);
  if (failed(verifySoftcap(*this, getLogitSoftcapAttr())))
    return failure();
  return checkResultType(
      *this, RankedTensorType::get({in.getDimSize(0), in.getDimSize(1), vocab},
                                   in.getElementType()));
}

int64_t LMHeadOp::getFlopCount() {
  // 2*B*S*d*V, with V the weight's non-hidden dimension.
  auto w = tensorType(getWeight());
  int64_t vocab = w.getDimSize(getLayout() == WeightLayout::out_in ? 0 : 1);
  return multiplyCounts({2, tensorType(getInput()).getNumElements(), vocab});
}

//===----------------------------------------------------------------------===//
// SplitOp
//===----------------------------------------------------------------------===//

LogicalResult SplitOp::verify() {
  auto in = tensorType(getInput());
  if (in.getRank() < 1)
    return emitOpError() << "input must have rank >= 1, got " << in;
  if (getResults().empty())
    return emitOpError() << "needs at least one result";
  int64_t total = 0;
  for (auto [i, r] : llvm::enumerate(getResults())) {
    auto rt = tensorType(r);
    if (rt.getRank() != in.getRank() ||
        rt.getElementType() != in.getElementType() ||
        rt.getShape().drop_back() != in.getShape().drop_back())
      return emitOpError() << "result #" << i << " " << rt
                           << " must match the input " << in
                           << " in all but the last dimension";
    int64_t groups = getGroups();
    if (rt.getShape().back() % groups != 0)
      return emitOpError() << "result #" << i << " has " << rt.getShape().back()
                           << " elements in its last dimension, not a multiple "
                              "of groups="
                           << groups;
    total += rt.getShape().back();
  }
  if (total != in.getShape().back())
    return emitOpError() << "pieces add up to " << total
                         << ", but the last dimension of the input is "
                         << in.getShape().back();
  return success();
}

//===----------------------------------------------------------------------===//
// ConvertOp
//===----------------------------------------------------------------------===//

OpFoldResult ConvertOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// SplitHeadsOp / MergeHeadsOp
//===----------------------------------------------------------------------===//

LogicalResult SplitHeadsOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)))
    return failure();
  auto in = tensorType(getInput());
  int64_t heads = getNumHeads();
  if (heads <= 0)
    return emitOpError() << "num_heads must be positive, got " << heads;
  int64_t width = in.getDimSize(2);
  if (width % heads != 0)
    return emitOpError() << "width " << width
                         << " is not divisible by num_heads=" << heads;
  return checkResultType(
      *this, RankedTensorType::get(
                 {in.getDimSize(0), heads, in.getDimSize(1), width / heads},
                 in.getElementType()));
}

LogicalResult GatherPositionsOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)))
    return failure();
  auto in = tensorType(getInput());
  if (failed(checkPerSequencePosition(*this, getPositions(), "positions",
                                      in.getDimSize(0))))
    return failure();
  return checkResultType(
      *this, RankedTensorType::get({in.getDimSize(0), 1, in.getDimSize(2)},
                                   in.getElementType()));
}

LogicalResult MergeHeadsOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 4)))
    return failure();
  auto in = tensorType(getInput());
  return checkResultType(
      *this, RankedTensorType::get({in.getDimSize(0), in.getDimSize(2),
                                    in.getDimSize(1) * in.getDimSize(3)},
                                   in.getElementType()));
}

//===----------------------------------------------------------------------===//
// RoPEOp
//===----------------------------------------------------------------------===//

int64_t RoPEOp::getRotaryDimsValue() {
  if (std::optional<uint64_t> dims = getRotaryDims())
    return static_cast<int64_t>(*dims);
  return tensorType(getInput()).getDimSize(3);
}

LogicalResult RoPEOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 4)))
    return failure();
  auto in = tensorType(getInput());
  int64_t dh = in.getDimSize(3);
  if (auto dims = getRotaryDimsAttr()) {
    // Read signed so that rotary_dims = -2 is reported as -2.
    int64_t r = dims.getInt();
    if (r < 2 || r > dh || r % 2 != 0)
      return emitOpError() << "rotary_dims=" << r
                           << " must be even and in [2, dh=" << dh << "]";
  } else if (dh % 2 != 0) {
    return emitOpError() << "head dimension dh=" << dh
                         << " must be even to rotate halves";
  }
  if (!(getTheta().convertToFloat() > 0.0f))
    return emitOpError() << "theta must be positive, got "
                         << getTheta().convertToFloat();
  if (failed(checkPerSequencePosition(*this, getOffset(), "offset",
                                      in.getDimSize(0))))
    return failure();
  if (std::optional<ArrayRef<float>> invFreq = getInvFreq()) {
    // One frequency per rotated pair.
    int64_t half = getRotaryDimsValue() / 2;
    if (static_cast<int64_t>(invFreq->size()) != half)
      return emitOpError() << "inv_freq must hold "
                           << (getRotaryDims() ? "rotary_dims/2" : "dh/2")
                           << " = " << half << " frequencies, got "
                           << invFreq->size();
    for (auto [i, f] : llvm::enumerate(*invFreq))
      if (!std::isfinite(f) || !(f > 0.0f))
        return emitOpError() << "inv_freq[" << i
                             << "] must be finite and positive, got " << f;
  }
  if (FloatAttr factor = getAttentionFactorAttr()) {
    float f = factor.getValue().convertToFloat();
    if (!std::isfinite(f) || !(f > 0.0f))
      return emitOpError() << "attention_factor must be finite and positive, "
                              "got "
                           << f;
  }
  return checkResultType(*this, in);
}

int64_t RoPEOp::getFlopCount() { return 0; }

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

double AttentionOp::getScaleValue() {
  if (auto scale = getScaleAttr())
    return scale.getValueAsDouble();
  return 1.0 / std::sqrt(double(tensorType(getQuery()).getDimSize(3)));
}

LogicalResult AttentionOp::verify() {
  if (failed(checkRank(*this, getQuery(), "query", 4)) ||
      failed(checkRank(*this, getKey(), "key", 4)) ||
      failed(checkRank(*this, getValue(), "value", 4)) ||
      failed(checkSameElementType(*this, getQuery(), "query", getKey(),
                                  "key")) ||
      failed(checkSameElementType(*this, getQuery(), "query", getValue(),
                                  "value")))
    return failure();
  auto q = tensorType(getQuery()), k = tensorType(getKey()),
       v = tensorType(getValue());
  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (k.getDimSize(0) != q.getDimSize(0) || v.getDimSize(0) != q.getDimSize(0))
    return emitOpError() << "batch sizes differ: query " << q << ", key " << k
                         << ", value " << v;
  if (v.getDimSize(1) != hkv || v.getDimSize(2) != k.getDimSize(2))
    return emitOpError() << "key " << k << " and value " << v
                         << " must agree in heads and length";
  if (hkv <= 0 || hq % hkv != 0)
    return emitOpError() << "query heads Hq=" << hq
                         << " must be a multiple of key/value heads Hkv="
                         << hkv;
  if (k.getDimSize(3) != q.getDimSize(3))
    return emitOpError() << "query head dim " << q.getDimSize(3)
                         << " differs from key head dim " << k.getDimSize(3);
  if (failed(checkPerSequencePosition(*this, getOffset(), "offset",
                                      q.getDimSize(0))))
    return failure();
  if (isPerSequencePosition(getOffset()) && !getCausal())
    return emitOpError() << "per-sequence offsets need causal attention: "
                            "they mark where each sequence's keys end";
  if (getSlidingWindow() && !getCausal())
    return emitOpError() << "sliding_window requires a causal mask: the "
                            "window is the last W positions up to the query";
  if (failed(verifySoftcap(*this, getLogitSoftcapAttr())))
    return failure();
  if (getRingCache()) {
    if (!getSlidingWindow() || !getOffset())
      return emitOpError() << "ring_cache needs a sliding_window and an "
                              "offset: the ring holds the window's keys "
                              "behind the queries' positions";
    int64_t needed =
        static_cast<int64_t>(*getSlidingWindow()) + q.getDimSize(2) - 1;
    if (k.getDimSize(2) < needed)
      return emitOpError() << "ring_cache of " << k.getDimSize(2)
                           << " slots is shorter than the window "
                           << *getSlidingWindow() << " plus the "
                           << q.getDimSize(2) - 1
                           << " queries after the first (" << needed
                           << "): later queries' keys would overwrite keys "
                              "the first still sees";
  }
  if (!getOffset() && q.getDimSize(2) > k.getDimSize(2))
    return emitOpError() << "query length " << q.getDimSize(2)
                         << " exceeds key length " << k.getDimSize(2)
                         << " with no offset";
  return checkResultType(
      *this, RankedTensorType::get({q.getDimSize(0), hq, q.getDimSize(2),
                                    v.getDimSize(3)},
                                   q.getElementType()));
}

Value AttentionOp::buildCausallyHidden(OpBuilder &b, Location loc,
                                       Value queryPos, Value keySlot,
                                       Value lastQueryPos) {
  if (!getCausal())
    return Value();
  Value keyPos = keySlot;
  Value unwritten;
  if (getRingCache()) {
    // L - ((L - j) mod C), the mod taken non-negative.
    Value slots = arith::ConstantIndexOp::create(
        b, loc, cast<RankedTensorType>(getKey().getType()).getDimSize(2));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value back = arith::RemSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, lastQueryPos, keySlot), slots);
    back = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, back, zero),
        arith::AddIOp::create(b, loc, back, slots), back);
    keyPos = arith::SubIOp::create(b, loc, lastQueryPos, back);
    unwritten =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, keyPos, zero);
  }
  Value hidden = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                       keyPos, queryPos);
  if (unwritten)
    hidden = arith::OrIOp::create(b, loc, hidden, unwritten);
  std::optional<uint64_t> window = getSlidingWindow();
  if (!window)
    return hidden;
  Value age = arith::SubIOp::create(b, loc, queryPos, keyPos);
  Value w = arith::ConstantIndexOp::create(b, loc, static_cast<int64_t>(*window));
  Value old = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, age, w);
  return arith::OrIOp::create(b, loc, hidden, old);
}

Value AttentionOp::buildScore(OpBuilder &b, Location loc, Value dot) {
  Value score = arith::MulFOp::create(
      b, loc, dot,
      arith::ConstantOp::create(b, loc,
                                b.getF32FloatAttr(float(getScaleValue()))));
  FloatAttr cap = getLogitSoftcapAttr();
  if (!cap)
    return score;
  Value c = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(cap.getValue().convertToFloat()));
  Value bounded = math::TanhOp::create(
      b, loc, arith::DivFOp::create(b, loc, score, c));
  return arith::MulFOp::create(b, loc, bounded, c);
}

int64_t AttentionOp::getFlopCount() {
  auto q = tensorType(getQuery());
  int64_t rows = q.getDimSize(0) * q.getDimSize(1) * q.getDimSize(2);
  int64_t skv = tensorType(getKey()).getDimSize(2);
  return addCounts(
      multiplyCounts({2, rows, skv, q.getDimSize(3)}),
      multiplyCounts({2, rows, skv, tensorType(getValue()).getDimSize(3)}));
}

int64_t AttentionOp::getKVCacheBytesPerToken() {
  auto k = tensorType(getKey()), v = tensorType(getValue());
  int64_t bytes = k.getElementTypeBitWidth() / 8;
  return k.getDimSize(1) * (k.getDimSize(3) + v.getDimSize(3)) * bytes;
}

//===----------------------------------------------------------------------===//
// KVCacheWriteOp
//===----------------------------------------------------------------------===//

LogicalResult KVCacheWriteOp::verify() {
  if (failed(checkRank(*this, getCache(), "cache", 4)) ||
      failed(checkRank(*this, getUpdate(), "update", 4)) ||
      failed(checkSameElementType(*this, getCache(), "cache", getUpdate(),
                                  "update")))
    return failure();
  auto cache = tensorType(getCache()), update = tensorType(getUpdate());
  if (cache.getDimSize(0) != update.getDimSize(0) ||
      cache.getDimSize(1) != update.getDimSize(1) ||
      cache.getDimSize(3) != update.getDimSize(3))
    return emitOpError() << "update " << update << " must match cache "
                         << cache << " in batch, heads and head dim";
  if (update.getDimSize(2) > cache.getDimSize(2))
    return emitOpError() << "update of " << update.getDimSize(2)
                         << " positions exceeds the cache's "
                         << cache.getDimSize(2);
  if (failed(checkPerSequencePosition(*this, getPosition(), "position",
                                      cache.getDimSize(0))))
    return failure();
  return checkResultType(*this, cache);
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

int64_t GeluOp::getFlopCount() { return 0; }
int64_t SiluOp::getFlopCount() { return 0; }
int64_t SwiGLUOp::getFlopCount() { return 0; }
int64_t ReluOp::getFlopCount() { return 0; }
int64_t GeGLUOp::getFlopCount() { return 0; }

//===----------------------------------------------------------------------===//
// ResidualAddOp
//===----------------------------------------------------------------------===//

LogicalResult ResidualAddOp::verify() {
  auto res = tensorType(getResidual()), branch = tensorType(getBranch());
  if (res.getRank() != branch.getRank())
    return emitOpError() << "residual " << res << " and branch " << branch
                         << " differ in rank";
  if (failed(checkSameElementType(*this, getResidual(), "residual",
                                  getBranch(), "branch")))
    return failure();
  return checkResultType(*this, res);
}

int64_t ResidualAddOp::getFlopCount() { return 0; }

//===----------------------------------------------------------------------===//
// MoEOp
//===----------------------------------------------------------------------===//

int64_t MoEOp::getNumRoutedExperts() {
  return tensorType(getRouter()).getDimSize(0);
}

int64_t MoEOp::getIntermediateSize() {
  if (getExpertWeights().empty())
    return 0;
  return tensorType(getExpertGate(0)).getDimSize(0);
}

LogicalResult MoEOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)) ||
      failed(checkRank(*this, getRouter(), "router", 2)))
    return failure();
  auto in = tensorType(getInput()), router = tensorType(getRouter());
  int64_t d = in.getDimSize(2);
  size_t numWeights = getExpertWeights().size();
  if (numWeights == 0 || numWeights % 3 != 0)
    return emitOpError() << "expects 3 weights (gate, up, down) per expert, got "
                         << numWeights;
  int64_t experts = getNumExperts();
  int64_t routed = router.getDimSize(0);
  if (getFirstExpert()) {
    // A rank's share of the experts: the ranks' shares tile the router's.
    if (router.getDimSize(1) != d || routed % experts != 0)
      return emitOpError() << "router must be [R, " << d
                           << "] with R a multiple of the " << experts
                           << " experts held (first_expert), got " << router;
  } else if (routed != experts || router.getDimSize(1) != d) {
    return emitOpError() << "router must be [" << experts << ", " << d
                         << "] (experts x d), got " << router;
  }
  // The getter is unsigned; read the attribute signed so top_k = -1 is
  // reported as -1.
  int64_t topK = getTopKAttr().getInt();
  if (topK < 1 || topK > routed)
    return emitOpError() << "top_k=" << topK << " must be in [1, " << routed
                         << "]";
  // The intermediate size m is read off expert 0's gate: check its rank first.
  if (failed(checkRank(*this, getExpertGate(0), "expert 0 gate weight", 2)))
    return failure();
  int64_t m = getIntermediateSize();
  auto expect = [&](Value w, int64_t rows, int64_t cols, int64_t e,
                    StringRef name) -> LogicalResult {
    auto t = tensorType(w);
    if (t.getRank() == 2 && t.getDimSize(0) == rows &&
        t.getDimSize(1) == cols && t.getElementType() == in.getElementType())
      return success();
    return emitOpError() << "expert " << e << " " << name << " weight must be "
                         << RankedTensorType::get({rows, cols},
                                                  in.getElementType())
                         << ", got " << t;
  };
  for (int64_t e = 0; e < experts; ++e) {
    if (failed(expect(getExpertGate(e), m, d, e, "gate")) ||
        failed(expect(getExpertUp(e), m, d, e, "up")) ||
        failed(expect(getExpertDown(e), d, m, e, "down")))
      return failure();
  }
  return checkResultType(*this, in);
}

int64_t MoEOp::getFlopCount() {
  auto in = tensorType(getInput());
  int64_t n = leadingElements(in), d = in.getDimSize(2);
  // Of the top_k experts a token runs, this op holds E of the R on
  // average (all of them without first_expert).
  return addCounts(
      multiplyCounts({2, n, d, getNumRoutedExperts()}),
      multiplyCounts({int64_t(getTopK()), 6, n, d,
                      int64_t(getIntermediateSize()), getNumExperts()}) /
          getNumRoutedExperts());
}

#define GET_OP_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// The ranks of the module around `op`, or an error naming the attribute.
static FailureOr<int64_t> verifyTensorParallelRanks(Operation *op);

LogicalResult RankOp::verify() {
  return success(succeeded(verifyTensorParallelRanks(*this)));
}

static FailureOr<int64_t> verifyTensorParallelRanks(Operation *op) {
  if (std::optional<int64_t> ranks = getTensorParallelRanks(op))
    return *ranks;
  op->emitOpError() << "is only valid in a module with '"
                    << kTensorParallelAttrName << "' (its ranks)";
  return failure();
}

/// What a ring all-reduce of `bytes` sends from each of `op`'s ranks.
static int64_t getRingAllReduceBytes(Operation *op, int64_t bytes) {
  int64_t n = getTensorParallelRanks(op).value_or(1);
  return bytes * 2 * (n - 1) / n;
}

LogicalResult AllReduceOp::verify() {
  if (Value bias = getBias()) {
    RankedTensorType input = tensorType(getInput()), type = tensorType(bias);
    if (type.getRank() != 1 || input.getRank() < 1 ||
        type.getDimSize(0) != input.getShape().back() ||
        type.getElementType() != input.getElementType())
      return emitOpError() << "bias must be [" << input.getShape().back()
                           << "] of " << input.getElementType()
                           << " (the input's last dimension), got " << type;
  }
  return success(succeeded(verifyTensorParallelRanks(*this)));
}

int64_t AllReduceOp::getFlopCount() { return 0; }

int64_t AllReduceOp::getCommunicationBytes() {
  RankedTensorType type = tensorType(getInput());
  return getRingAllReduceBytes(
      *this, type.getNumElements() *
                 llvm::divideCeil(type.getElementTypeBitWidth(), 8));
}

LogicalResult BufferAllReduceOp::verify() {
  if (getSource().getType().getShape() != getTarget().getType().getShape())
    return emitOpError() << "source " << getSource().getType()
                         << " and target " << getTarget().getType()
                         << " must have one shape";
  return success(succeeded(verifyTensorParallelRanks(*this)));
}

/// "<what> must be <n>x the source's last dimension" unless `target` is
/// `source` with its last dimension `ranks` times larger.
static LogicalResult checkGathered(Operation *op, ShapedType source,
                                   ShapedType target, int64_t ranks) {
  SmallVector<int64_t> expected(source.getShape());
  if (!expected.empty())
    expected.back() *= ranks;
  if (target.getShape() == ArrayRef<int64_t>(expected) &&
      source.getElementType() == target.getElementType())
    return success();
  return op->emitOpError() << "result " << target << " must be " << source
                           << " with its last dimension " << ranks
                           << " times larger (one slice per rank)";
}

LogicalResult AllGatherOp::verify() {
  FailureOr<int64_t> ranks = verifyTensorParallelRanks(*this);
  if (failed(ranks))
    return failure();
  return checkGathered(*this, tensorType(getInput()), tensorType(getResult()),
                       *ranks);
}

int64_t AllGatherOp::getFlopCount() { return 0; }

int64_t AllGatherOp::getCommunicationBytes() {
  // Lowered as an f32 sum of the gathered size (see the op's description).
  return getRingAllReduceBytes(*this,
                               tensorType(getResult()).getNumElements() * 4);
}

LogicalResult BufferAllGatherOp::verify() {
  FailureOr<int64_t> ranks = verifyTensorParallelRanks(*this);
  if (failed(ranks))
    return failure();
  return checkGathered(*this, getSource().getType(), getTarget().getType(),
                       *ranks);
}

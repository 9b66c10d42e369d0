//===- MoE.cpp - tfm.moe to routed linalg on tensors ----------------------===//
//
// Mixtral's sparse MoE block, computing only what the router selects.
//
// Routing, per token, on whole tensors:
//   p       = softmax(x R^T)                                  [n, E] f32
//   rank    = #experts that beat e: p[t,e2] > p[t,e], or equal with e2 < e
//   w[t,e]  = rank < top_k ? p[t,e] (/ sum_{selected} p[t,.]) : 0, the
//             division unless normalize_top_k is false (Qwen3-MoE)
// Ties go to the lower expert index. This is our definition, not torch's:
// torch.topk on CPU has no stable order for equal values (on torch 1.13 it
// picks the higher indices of an all-equal row of 8 but the lower of a tie
// behind a strict maximum); the lower-index rule equals
// torch.sort(p, descending=True, stable=True)[..., :top_k]. Ties are exact
// only for degenerate input (identical router rows, an all-zero token).
//
// Experts, grouped: an scf.for over the E experts carries the f32 [n, d]
// output. Expert e
//   1. scans the tokens once (scalar scf.for) into a compact list of the
//      count_e tokens that selected it and their routing weights;
//   2. picks its three weights with an scf.index_switch on the loop index
//      (the weights are 3*E separate arguments; stacking them into an
//      [E, ...] tensor would copy every weight on every call);
//   3. walks its list in chunks: gathers the chunk's tokens as rows of a
//      static [T, d] tile (slots past count_e are zero rows), runs gate/up,
//      silu(gate) * up and down token-major, as a linear does (C[T, out] +=
//      X[T, in] W[out, in]: each weight the B operand in its nn.Linear
//      layout, no weight copy or transpose), and scatter-adds w * y into the
//      rows of its tokens. Full chunks have kRowTile rows, the remainder
//      kTailTile-row chunks.
// The chunks are static-shape on purpose: the CPU pipeline only tiles and
// vectorises contractions of static shape, and a count_e-row dynamic matmul
// would fall back to scalar loops (~100x slower). GEMM rows total
// <= n*top_k + E*(kTailTile-1), against n*E for dense execution; an expert
// that no token selected costs a scan and nothing else (its loops are empty).
//
// The GEMMs read their operands in the weights' type, so that
// tfm-cpu-pack-weights packs each expert's weight as a linear's (f32 or
// bf16/f16 panels, or its blocks when held quantized) and picks the packed
// one with a switch beside the experts' (docs/design.md, "Quantized
// weights", *Experts*): the gathered tokens are f32 for f32 and quantized
// experts and the model's bf16/f16 for half-precision ones, whose
// silu(gate) * up is rounded to that type before the down projection, as
// a half-precision MLP holds it. Accumulation is f32 throughout.
//
// Each token appears at most once in an expert's list, so the scatter writes
// distinct rows; experts are summed in index order (as the reference loop).
//
// With `first_expert` (a rank's experts under expert parallelism) the
// routing is over all R of the router's experts and the loop visits the E
// held ones, expert e reading the routing of expert first_expert + e.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

/// Tokens per expert GEMM chunk (the GEMMs' M). The remainder of an
/// expert's list (< 64 tokens) runs in 16-token chunks, so padding is at
/// most 15 rows per expert. Measured on bench/moe (n=256, d=512, m=1024,
/// E=8, top-2), then with the chunk as the vector dimension: 64/16 ~
/// 64/32 ~ 32/16 ~ 128/16 within 5%, 64/8 and 32/32 slower.
static constexpr int64_t kRowTile = 64;
static constexpr int64_t kTailTile = 16;

/// rank[t, e] = number of experts that beat e for token t (f32 [n, E]).
static Value buildRoutingRank(OpBuilder &b, Location loc, Value probs) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType type = tensorType(probs);
  AffineExpr t = b.getAffineDimExpr(0), e = b.getAffineDimExpr(1),
             e2 = b.getAffineDimExpr(2);
  Value zero = filledTensor(b, loc, type.getShape(), b.getF32Type(), 0.0);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{probs, probs},
             ValueRange{zero},
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
               Value one =
                   arith::UIToFPOp::create(nb, nloc, nb.getF32Type(), beats);
               linalg::YieldOp::create(
                   nb, nloc,
                   ValueRange{arith::AddFOp::create(nb, nloc, args[2], one)});
             })
      .getResult(0);
}

/// Routing weights: p where rank < top_k, 0 elsewhere, divided by the row
/// sum of the kept probabilities when `normalize`.
static Value buildRoutingWeights(OpBuilder &b, Location loc, Value probs,
                                 Value rank, int64_t topK, bool normalize) {
  RankedTensorType type = tensorType(probs);
  Value kept = buildElementwise(
      b, loc, type, {probs, rank},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
        Value selected =
            arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OLT, args[1],
                                  f32Const(nb, nloc, double(topK)));
        return {arith::SelectOp::create(nb, nloc, selected, args[0],
                                        f32Const(nb, nloc, 0.0))};
      });
  if (!normalize)
    return kept;
  Value keptSum = reduceLastDimF32(
      b, loc, kept, {}, 0.0,
      [](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
        return {arith::AddFOp::create(nb, nloc, args[0], args[1])};
      });
  AffineMap rowMap = AffineMap::get(2, 0, b.getAffineDimExpr(0),
                                    b.getContext());
  return buildElementwise(
      b, loc, type, {kept, keptSum},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
        return {arith::DivFOp::create(nb, nloc, args[0], args[1])};
      },
      {b.getMultiDimIdentityMap(2), rowMap});
}

namespace {
/// Shapes and values one expert's computation needs.
struct MoEContext {
  Location loc;
  int64_t n, d, topK, numExperts, rowTile, tailTile;
  Value firstExpert; // index of the routing column of held expert 0
  Value x;       // [n, d], input element type
  Value rank;    // [n, R] f32 (R: the router's experts)
  Value routing; // [n, R] f32, renormalised, 0 when not selected
  ValueRange expertWeights;
  Type gemmType; // the gathered tokens' type: the weights', f32 if quantized
};
} // namespace

/// Scans the tokens for those that selected expert `e` (the routing's column
/// `e`): returns (count, tokens [n] index, weights [n] f32) with the first
/// `count` entries valid.
/// Branch-free: every token is written at position `count`, which only
/// advances when the token selected `e`; count <= t keeps it in bounds.
static std::tuple<Value, Value, Value> buildTokenList(OpBuilder &b,
                                                      const MoEContext &c,
                                                      Value e) {
  Location loc = c.loc;
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value tokens0 = emptyTensor(b, loc, {c.n}, b.getIndexType());
  Value weights0 = emptyTensor(b, loc, {c.n}, b.getF32Type());
  auto scan = scf::ForOp::create(
      b, loc, zero, indexConst(b, loc, c.n), one,
      ValueRange{zero, tokens0, weights0},
      [&](OpBuilder &nb, Location nloc, Value t, ValueRange args) {
        Value count = args[0];
        Value r = tensor::ExtractOp::create(nb, nloc, c.rank, ValueRange{t, e});
        Value selected = arith::CmpFOp::create(
            nb, nloc, arith::CmpFPredicate::OLT, r,
            f32Const(nb, nloc, double(c.topK)));
        Value w =
            tensor::ExtractOp::create(nb, nloc, c.routing, ValueRange{t, e});
        Value tokens =
            tensor::InsertOp::create(nb, nloc, t, args[1], ValueRange{count});
        Value weights =
            tensor::InsertOp::create(nb, nloc, w, args[2], ValueRange{count});
        Value next = arith::AddIOp::create(
            nb, nloc, count,
            arith::SelectOp::create(nb, nloc, selected, one, zero));
        scf::YieldOp::create(nb, nloc, ValueRange{next, tokens, weights});
      });
  return {scan.getResult(0), scan.getResult(1), scan.getResult(2)};
}

/// Expert `e`'s gate, up and down weights, picked by an scf.index_switch.
static SmallVector<Value> selectExpertWeights(OpBuilder &b,
                                              const MoEContext &c, Value e) {
  Location loc = c.loc;
  TypeRange types = c.expertWeights.take_front(3).getTypes();
  SmallVector<int64_t> cases;
  for (int64_t ex = 0; ex + 1 < c.numExperts; ++ex)
    cases.push_back(ex);
  auto sw = scf::IndexSwitchOp::create(b, loc, types, e, cases, cases.size());
  OpBuilder::InsertionGuard guard(b);
  auto fill = [&](Region &region, int64_t ex) {
    b.setInsertionPointToStart(&region.emplaceBlock());
    scf::YieldOp::create(b, loc, c.expertWeights.slice(3 * ex, 3));
  };
  for (auto [i, region] : llvm::enumerate(sw.getCaseRegions()))
    fill(region, cases[i]);
  // The default region is the last expert (the loop never leaves [0, E)).
  fill(sw.getDefaultRegion(), c.numExperts - 1);
  return SmallVector<Value>(sw.getResults());
}

/// Slots [c0, c0 + T) of the token list, gathered from x into a [T, d] tile
/// of `c.gemmType` (row i is token list slot c0 + i). Slots at or past
/// `count` are zeros (computed, never scattered).
static Value gatherTokens(OpBuilder &b, const MoEContext &c, Value tokens,
                          Value count, Value c0, int64_t rowTile) {
  Location loc = c.loc;
  auto type = RankedTensorType::get({rowTile, c.d}, c.gemmType);
  Value init = emptyTensor(b, loc, type.getShape(), c.gemmType);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{b.getMultiDimIdentityMap(2)},
             parallelIterators(2),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value i = linalg::IndexOp::create(nb, nloc, 0);
               Value j = linalg::IndexOp::create(nb, nloc, 1);
               Value slot = arith::AddIOp::create(nb, nloc, c0, i);
               Value valid = arith::CmpIOp::create(
                   nb, nloc, arith::CmpIPredicate::slt, slot, count);
               // Padding slots read token list slot c0 (always valid).
               Value safe = arith::SelectOp::create(nb, nloc, valid, slot, c0);
               Value token = tensor::ExtractOp::create(nb, nloc, tokens,
                                                       ValueRange{safe});
               Value v = tensor::ExtractOp::create(nb, nloc, c.x,
                                                   ValueRange{token, j});
               if (v.getType() != c.gemmType)
                 v = truncFromF32(nb, nloc, extToF32(nb, nloc, v), c.gemmType);
               Value zero = arith::ConstantOp::create(
                   nb, nloc, nb.getFloatAttr(c.gemmType, 0.0));
               linalg::YieldOp::create(nb, nloc,
                                       ValueRange{arith::SelectOp::create(
                                           nb, nloc, valid, v, zero)});
             })
      .getResult(0);
}

/// silu(gate) * up, elementwise in f32.
static Value buildSwiGLU(OpBuilder &b, Location loc, Value gate, Value up) {
  return buildElementwise(
      b, loc, tensorType(gate), {gate, up},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
        return {arith::MulFOp::create(nb, nloc, siluF32(nb, nloc, args[0]),
                                      args[1])};
      });
}

/// acc[tokens[c0 + i], :] += weights[c0 + i] * y[i, :] for i < rows.
static Value scatterAdd(OpBuilder &b, const MoEContext &c, Value acc, Value y,
                        Value tokens, Value weights, Value c0, Value rows) {
  Location loc = c.loc;
  auto rowType = RankedTensorType::get({c.d}, b.getF32Type());
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, zero, rows, one, ValueRange{acc},
      [&](OpBuilder &nb, Location nloc, Value i, ValueRange args) {
        Value slot = arith::AddIOp::create(nb, nloc, c0, i);
        Value token =
            tensor::ExtractOp::create(nb, nloc, tokens, ValueRange{slot});
        Value w = tensor::ExtractOp::create(nb, nloc, weights, ValueRange{slot});
        SmallVector<OpFoldResult> sizes{nb.getIndexAttr(1),
                                        nb.getIndexAttr(c.d)};
        SmallVector<OpFoldResult> strides(2, nb.getIndexAttr(1));
        SmallVector<OpFoldResult> offsets{i, nb.getIndexAttr(0)};
        Value yRow = tensor::ExtractSliceOp::create(nb, nloc, rowType, y,
                                                    offsets, sizes, strides);
        SmallVector<OpFoldResult> at{token, nb.getIndexAttr(0)};
        Value accRow = tensor::ExtractSliceOp::create(nb, nloc, rowType,
                                                      args[0], at, sizes,
                                                      strides);
        AffineMap id = nb.getMultiDimIdentityMap(1);
        Value updated =
            linalg::GenericOp::create(
                nb, nloc, TypeRange{rowType}, ValueRange{yRow},
                ValueRange{accRow}, ArrayRef<AffineMap>{id, id},
                parallelIterators(1),
                [&](OpBuilder &bb, Location bloc, ValueRange bargs) {
                  Value scaled = arith::MulFOp::create(bb, bloc, bargs[0], w);
                  linalg::YieldOp::create(
                      bb, bloc,
                      ValueRange{
                          arith::AddFOp::create(bb, bloc, bargs[1], scaled)});
                })
                .getResult(0);
        Value next = tensor::InsertSliceOp::create(nb, nloc, updated, args[0],
                                                   at, sizes, strides);
        scf::YieldOp::create(nb, nloc, ValueRange{next});
      });
  return loop.getResult(0);
}

/// Expert weights `w` (gate, up, down) applied to token list slots
/// [lb, ub) in chunks of `rowTile`, added into `acc`: X W_gate^T, X W_up^T,
/// silu(gate) * up (rounded to `c.gemmType`), H W_down^T, each weight the B
/// operand in its [out, in] layout.
static Value buildChunks(OpBuilder &b, const MoEContext &c, Value acc,
                         ArrayRef<Value> w, Value lb, Value ub,
                         int64_t rowTile, Value count, Value tokens,
                         Value weights) {
  Location loc = c.loc;
  Value tile = indexConst(b, loc, rowTile);
  auto chunks = scf::ForOp::create(
      b, loc, lb, ub, tile, ValueRange{acc},
      [&](OpBuilder &nb, Location nloc, Value c0, ValueRange args) {
        Value left = arith::SubIOp::create(nb, nloc, count, c0);
        Value rows = arith::MinSIOp::create(nb, nloc, left, tile);
        Value xs = gatherTokens(nb, c, tokens, count, c0, rowTile);
        auto project = [&](Value in, Value weight) {
          return buildMatmulF32(nb, nloc, in, weight, /*weightIsOutIn=*/true);
        };
        Value h = buildSwiGLU(nb, nloc, project(xs, w[0]),
                              project(xs, w[1])); // [T, m] f32
        Value y = project(truncTensor(nb, nloc, h, c.gemmType), w[2]);
        scf::YieldOp::create(
            nb, nloc, scatterAdd(nb, c, args[0], y, tokens, weights, c0, rows));
      });
  return chunks.getResult(0);
}

/// Expert `e` applied to its `count` tokens, added into `acc`: full chunks
/// of kRowTile rows, then the remainder in chunks of kTailTile rows (at most
/// kTailTile - 1 padding rows per expert).
static Value buildExpert(OpBuilder &b, const MoEContext &c, Value acc,
                         Value e, Value count, Value tokens, Value weights) {
  Location loc = c.loc;
  SmallVector<Value> w = selectExpertWeights(b, c, e);
  Value zero = indexConst(b, loc, 0);
  if (c.tailTile == c.rowTile)
    return buildChunks(b, c, acc, w, zero, count, c.rowTile, count, tokens,
                       weights);
  Value full = arith::SubIOp::create(
      b, loc, count,
      arith::RemSIOp::create(b, loc, count, indexConst(b, loc, c.rowTile)));
  acc = buildChunks(b, c, acc, w, zero, full, c.rowTile, count, tokens,
                    weights);
  return buildChunks(b, c, acc, w, full, count, c.tailTile, count, tokens,
                     weights);
}

namespace {
struct MoELowering : OpConversionPattern<MoEOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MoEOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    RankedTensorType inType = tensorType(op.getInput());
    Value x = collapseToMatrix(b, loc, adaptor.getInput()); // [n, d]
    MoEContext c{loc,
                 tensorType(x).getDimSize(0),
                 inType.getDimSize(2),
                 op.getTopKAttr().getInt(),
                 op.getNumExperts(),
                 /*rowTile=*/0,
                 /*tailTile=*/0,
                 adaptor.getFirstExpert(),
                 x,
                 Value(),
                 Value(),
                 adaptor.getExpertWeights(),
                 b.getF32Type()};
    // The quantized kernels take f32 tokens; other experts read the tokens
    // in their weights' type (the verifier makes it the input's).
    if (llvm::none_of(adaptor.getExpertWeights(),
                      [](Value weight) { return bool(getParamQuant(weight)); }))
      c.gemmType = getElementTypeOrSelf(adaptor.getExpertWeights()[0]);
    c.rowTile = std::min(kRowTile, c.n);
    c.tailTile = std::min(kTailTile, c.rowTile);

    Value probs = buildSoftmaxF32(
        b, loc,
        buildMatmulF32(b, loc, x, adaptor.getRouter(), /*weightIsOutIn=*/true));
    c.rank = buildRoutingRank(b, loc, probs);
    c.routing = buildRoutingWeights(b, loc, probs, c.rank, c.topK,
                                    op.getNormalizeTopK());

    Value acc0 = filledTensor(b, loc, {c.n, c.d}, b.getF32Type(), 0.0);
    Value zero = indexConst(b, loc, 0);
    auto experts = scf::ForOp::create(
        b, loc, zero, indexConst(b, loc, c.numExperts), indexConst(b, loc, 1),
        ValueRange{acc0},
        [&](OpBuilder &nb, Location nloc, Value e, ValueRange args) {
          Value routed = c.firstExpert
                             ? arith::AddIOp::create(nb, nloc, c.firstExpert, e)
                                   .getResult()
                             : e;
          Value count, tokens, weights;
          std::tie(count, tokens, weights) = buildTokenList(nb, c, routed);
          scf::YieldOp::create(
              nb, nloc, buildExpert(nb, c, args[0], e, count, tokens, weights));
        });
    Value y = truncTensor(b, loc, experts.getResult(0),
                          inType.getElementType());
    rewriter.replaceOp(
        op, expandFromMatrix(b, loc, y, inType.getShape().drop_back()));
    return success();
  }
};
} // namespace

void mlir::tfm::lowering::populateMoEPatterns(RewritePatternSet &patterns) {
  patterns.add<MoELowering>(patterns.getContext());
}

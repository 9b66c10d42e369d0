//===- CpuPackWeights.cpp - weights in the micro-kernel's panel layout -----===//
//
// tfm-cpu-pack-weights (after tfm-cpu-configure, before tiling): every
// matmul `C[m, n] += A[m, k] * W` with an f32 accumulator C and A, W both
// f32, bf16 or f16 (packed in their own type), whose W is a weight parameter
// -- `[K, N]`
// (in_out) or `[N, K]` (out_in, nn.Linear) -- reads W instead from a new
// parameter in panel layout
//
//   P[j, k, r] = W(k, j * nr + r)   (0 where j * nr + r >= N)
//
// of type tensor<ceil(N / nr) x K x nr>, nr being the register tile's
// columns (`tfm.cpu_tiling`). A register tile then reads, at each K step, nr
// consecutive elements, and consecutive K steps are adjacent: B streams through
// the cache with unit stride, and no weight is ever transposed per call. The
// matmul becomes a generic over (m, j, r, k) writing C viewed as [M, N/nr,
// nr]; an N that nr does not divide is padded once, in the weights. With an
// elementwise consumer (an epilogue fused into the GEMM's blocks) the padding
// columns are computed and sliced off; without one (an LM head's logits) the
// full panels write straight into C and the last panel's N mod nr columns
// are a narrow matmul of their own, so C is never a slice of a padded buffer.
//
// With `bf16_pairs` planned (AVX512-BF16, tfm-cpu-configure) a bf16 weight
// of even K is packed with its K pairs interleaved instead,
//
//   P[j, k / 2, r, k % 2] = W(k, j * nr + r)   (tensor<J x K/2 x nr x 2>)
//
// so that one 64-byte load holds, for 16 columns, the pair of K steps one
// `vdpbf16ps` multiplies; A is read as [M, K/2, 2] and the matmul becomes a
// generic over (m, j, r, q, t), k = 2 q + t. The parameter's tfm.param_pack
// adds `format = "bf16_pairs"`.
//
// A weight held quantized (tfm.param_quant = #tfm.quant<q8_0, ...>,
// tfm-quantize-weights) is read instead from two new parameters in panels
// of P columns (two vectors of the target's f32 lanes: the micro-kernel's),
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
// weight's values are Q8_0's (its unsigned 6-bit q, a byte a K step), its
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
// The new argument keeps the parameter's `tfm.param` (and `tfm.param_parts`)
// and records the packing for whoever binds weights (transformer-runner):
//
//   tfm.param_pack = {layout = "in_out" | "out_in", panel = nr,
//                     shape = array<i64: K, N> | array<i64: N, K>}
//
// `shape` is the tensor's shape in the weight file (after any concatenation
// of parts). The original argument is erased when nothing else reads it; a
// tied embedding's gathers (tensor.extract) are redirected to the packed
// copy first, so the table is bound and held once.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "CpuPlan.h"
#include "TilingUtils.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUPACKWEIGHTS
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// A matmul whose B operand is a parameter that can be packed.
struct PackCandidate {
  linalg::LinalgOp op;
  BlockArgument weight;
  bool outIn;
  int64_t panel;
  /// K pairs interleaved (bf16_pairs planned, a bf16 weight of even K).
  bool pairs;
};
} // namespace

/// `op` as C[m, n] += A[m, k] * B with B = W[k, n] or W[n, k] (outIn).
static std::optional<bool> matchMatmul(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() != 3 ||
      op.hasDynamicShape() || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  // f32 accumulation from two operands of one type: f32, or a
  // half-precision model's bf16/f16 (packed as they are, extended in the
  // micro-kernel).
  if (!codegen::isF32Accumulation(op) ||
      getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType()) !=
          getElementTypeOrSelf(op.getDpsInputOperand(1)->get().getType()))
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  auto map = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(3, 0, results, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0] != map({m, k}) || maps[2] != map({m, n}))
    return std::nullopt;
  if (maps[1] == map({k, n}))
    return false;
  if (maps[1] == map({n, k}))
    return true;
  return std::nullopt;
}

/// The type of the weight `w` packed in panels of `panel` columns, with
/// `pairs` its K pairs interleaved.
static RankedTensorType packedType(RankedTensorType w, bool outIn,
                                   int64_t panel, bool pairs) {
  int64_t n = w.getDimSize(outIn ? 0 : 1), k = w.getDimSize(outIn ? 1 : 0);
  int64_t panels = llvm::divideCeil(n, panel);
  if (pairs)
    return RankedTensorType::get({panels, k / 2, panel, 2},
                                 w.getElementType());
  return RankedTensorType::get({panels, k, panel}, w.getElementType());
}

/// Whether `value` reaches an elementwise generic through reshapes and
/// slices: an epilogue the contraction tiling fuses into the GEMM's blocks,
/// which works on the padded panels (EpilogueFusion.cpp).
static bool feedsElementwiseOp(Value value) {
  for (Operation *user : value.getUsers()) {
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
            tensor::ExtractSliceOp>(user)) {
      if (feedsElementwiseOp(user->getResult(0)))
        return true;
      continue;
    }
    if (auto generic = dyn_cast<linalg::GenericOp>(user))
      if (generic.getNumParallelLoops() == generic.getNumLoops())
        return true;
  }
  return false;
}

/// acc + a * b in f32, half-precision operands extended first.
static void buildMultiplyAccumulate(OpBuilder &b, Location l,
                                    ValueRange args) {
  Type f32 = b.getF32Type();
  auto extend = [&](Value v) -> Value {
    return v.getType() == f32 ? v : arith::ExtFOp::create(b, l, f32, v);
  };
  Value product = arith::MulFOp::create(b, l, extend(args[0]), extend(args[1]));
  linalg::YieldOp::create(
      b, l, ValueRange{arith::AddFOp::create(b, l, args[2], product)});
}

/// The matmul C[m, .., r] += A[m, k] * P[.., k, r] as a generic reading the
/// panels `p` (rank 3: [J, K, nr], C [M, J, nr]; rank 2: one panel [K, nr],
/// C [M, nr]), or with the K pairs interleaved (rank 4 [J, K/2, nr, 2] or
/// rank 3 [K/2, nr, 2]; A read as [M, K/2, 2]), with `op`'s tile plan.
static Value buildPanelMatmul(RewriterBase &rewriter, linalg::LinalgOp op,
                              Value a, Value p, Value init, bool pairs) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  bool panels = cast<RankedTensorType>(init.getType()).getRank() == 3;
  unsigned numLoops = (panels ? 3 : 2) + (pairs ? 2 : 1);
  SmallVector<AffineExpr> d;
  for (unsigned i = 0; i < numLoops; ++i)
    d.push_back(getAffineDimExpr(i, ctx));
  // Loops: m, [j,] r, then k, or q and t (k = 2 q + t).
  AffineExpr m = d[0], r = d[panels ? 2 : 1];
  unsigned firstK = panels ? 3 : 2;
  SmallVector<AffineExpr> aExprs{m}, pExprs, cExprs{m};
  if (panels) {
    pExprs.push_back(d[1]);
    cExprs.push_back(d[1]);
  }
  cExprs.push_back(r);
  if (pairs) {
    AffineExpr q = d[firstK], t = d[firstK + 1];
    aExprs.append({q, t});
    pExprs.append({q, r, t});
    auto aType = cast<RankedTensorType>(a.getType());
    int64_t k = aType.getDimSize(1);
    a = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({aType.getDimSize(0), k / 2, 2},
                              aType.getElementType()),
        a, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  } else {
    AffineExpr k = d[firstK];
    aExprs.push_back(k);
    pExprs.append({k, r});
  }
  SmallVector<AffineMap> maps{AffineMap::get(numLoops, 0, aExprs, ctx),
                              AffineMap::get(numLoops, 0, pExprs, ctx),
                              AffineMap::get(numLoops, 0, cExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(firstK,
                                             utils::IteratorType::parallel);
  iterators.append(numLoops - firstK, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{a, p},
      ValueRange{init}, maps, iterators, buildMultiplyAccumulate);
  // The tile plan travels with the op.
  if (Attribute plan = op->getAttr(kCpuTilingAttrName))
    generic->setAttr(kCpuTilingAttrName, plan);
  return generic.getResult(0);
}

/// C [M, N] viewed as panels [M, ceil(N / panel), panel], padded with zero
/// columns when `panel` does not divide N.
static Value viewAsPanels(RewriterBase &rewriter, Location loc, Value init,
                          int64_t panel) {
  auto type = cast<RankedTensorType>(init.getType());
  int64_t m = type.getDimSize(0), n = type.getDimSize(1);
  int64_t panels = llvm::divideCeil(n, panel), padded = panels * panel;
  Type f32 = rewriter.getF32Type();
  if (padded != n) {
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0));
    init = tensor::PadOp::create(
        rewriter, loc, RankedTensorType::get({m, padded}, f32), init,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                               rewriter.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                               rewriter.getIndexAttr(padded - n)},
        zero);
  }
  return tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get({m, panels, panel}, f32), init,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}});
}

/// The panels [M, J, panel] back as `type` [M, N]: collapsed, and the
/// padding columns sliced off.
static Value viewAsMatrix(RewriterBase &rewriter, Location loc, Value panels,
                          RankedTensorType type) {
  auto panelType = cast<RankedTensorType>(panels.getType());
  int64_t m = type.getDimSize(0), n = type.getDimSize(1);
  int64_t padded = panelType.getDimSize(1) * panelType.getDimSize(2);
  Value result = tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get({m, padded}, type.getElementType()),
      panels, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  if (padded == n)
    return result;
  return tensor::ExtractSliceOp::create(
      rewriter, loc, type, result,
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                             rewriter.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(m),
                             rewriter.getIndexAttr(n)},
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                             rewriter.getIndexAttr(1)});
}

/// Rewrites `c.op` to read the packed argument `packed`.
static void rewriteToPacked(RewriterBase &rewriter, const PackCandidate &c,
                            Value packed) {
  linalg::LinalgOp op = c.op;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputOperand(0)->get();
  Value init = op.getDpsInitOperand(0)->get();
  auto initType = cast<RankedTensorType>(init.getType());
  int64_t m = initType.getDimSize(0), n = initType.getDimSize(1);
  int64_t panels = cast<RankedTensorType>(packed.getType()).getDimSize(0);
  int64_t padded = panels * c.panel;
  Type f32 = rewriter.getF32Type();

  // No epilogue to run on the padded panels (an LM head's logits): computing
  // N' columns and slicing N of them would leave the result a strided view
  // of a padded buffer, copied whole into the caller's (15% of an LM head
  // at V = 50257). The full panels write straight into C instead and the
  // last panel's N mod nr columns are a narrow matmul of their own.
  if (padded != n && !feedsElementwiseOp(op->getResult(0))) {
    auto index = [&](int64_t v) -> OpFoldResult {
      return rewriter.getIndexAttr(v);
    };
    int64_t full = panels - 1, bulk = full * c.panel, rest = n - bulk;
    int64_t k = cast<RankedTensorType>(a.getType()).getDimSize(1);
    Type packedElementType =
        cast<RankedTensorType>(packed.getType()).getElementType();
    // A zero-filled init is filled per part (so each part's fill is fused
    // into its blocks), not as a whole first.
    auto fill = init.getDefiningOp<linalg::FillOp>();
    Value result = fill ? fill.getDpsInitOperand(0)->get() : init;
    auto part = [&](Value whole, int64_t offset, int64_t size) -> Value {
      Value slice = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get({m, size}, f32), whole,
          ArrayRef<OpFoldResult>{index(0), index(offset)},
          ArrayRef<OpFoldResult>{index(m), index(size)},
          ArrayRef<OpFoldResult>{index(1), index(1)});
      if (!fill)
        return slice;
      return linalg::FillOp::create(rewriter, loc, fill.getInputs(), slice)
          .getResult(0);
    };
    if (full > 0) {
      Value bulkInit = part(result, 0, bulk);
      auto panelType = RankedTensorType::get({m, full, c.panel}, f32);
      SmallVector<ReassociationIndices> split{{0}, {1, 2}};
      Value bulkPanels = tensor::ExpandShapeOp::create(rewriter, loc, panelType,
                                                       bulkInit, split);
      // The full panels: [full, K, nr], or [full, K/2, nr, 2] (pairs).
      auto packedType = cast<RankedTensorType>(packed.getType());
      SmallVector<int64_t> fullShape(packedType.getShape());
      fullShape[0] = full;
      SmallVector<OpFoldResult> zeros(fullShape.size(), index(0)),
          ones(fullShape.size(), index(1)), sizes;
      for (int64_t size : fullShape)
        sizes.push_back(index(size));
      Value fullPanels = tensor::ExtractSliceOp::create(
          rewriter, loc,
          RankedTensorType::get(fullShape, packedElementType), packed, zeros,
          sizes, ones);
      Value bulkProduct =
          buildPanelMatmul(rewriter, op, a, fullPanels, bulkPanels, c.pairs);
      Value bulkResult = tensor::CollapseShapeOp::create(
          rewriter, loc, RankedTensorType::get({m, bulk}, f32),
          bulkProduct, split);
      result = tensor::InsertSliceOp::create(
          rewriter, loc, bulkResult, result,
          ArrayRef<OpFoldResult>{index(0), index(0)},
          ArrayRef<OpFoldResult>{index(m), index(bulk)},
          ArrayRef<OpFoldResult>{index(1), index(1)});
    }
    Value tailInit = part(result, bulk, rest);
    // The last panel's first `rest` columns, as [K, rest] (or [K/2, rest,
    // 2] with pairs).
    SmallVector<int64_t> lastShape{c.pairs ? k / 2 : k, rest};
    if (c.pairs)
      lastShape.push_back(2);
    SmallVector<OpFoldResult> lastOffsets{index(full), index(0), index(0)},
        lastSizes{index(1)}, lastStrides{index(1), index(1), index(1)};
    for (int64_t size : lastShape)
      lastSizes.push_back(index(size));
    if (c.pairs) {
      lastOffsets.push_back(index(0));
      lastStrides.push_back(index(1));
    }
    Value lastPanel = tensor::ExtractSliceOp::create(
        rewriter, loc, RankedTensorType::get(lastShape, packedElementType),
        packed, lastOffsets, lastSizes, lastStrides);
    Value tail =
        buildPanelMatmul(rewriter, op, a, lastPanel, tailInit, c.pairs);
    result = tensor::InsertSliceOp::create(
        rewriter, loc, tail, result,
        ArrayRef<OpFoldResult>{index(0), index(bulk)},
        ArrayRef<OpFoldResult>{index(m), index(rest)},
        ArrayRef<OpFoldResult>{index(1), index(1)});
    rewriter.replaceOp(op, result);
    if (fill && fill->use_empty())
      rewriter.eraseOp(fill);
    return;
  }

  // C as [M, N/nr, nr], padded with zero columns when nr does not divide N.
  Value initPanels = viewAsPanels(rewriter, loc, init, c.panel);

  // (m, j, r, k): A[m, k], P[j, k, r] -> C[m, j, r]; with pairs (m, j, r,
  // q, t): A[m, q, t], P[j, q, r, t].
  Value product = buildPanelMatmul(rewriter, op, a, packed, initPanels, c.pairs);
  rewriter.replaceOp(op, viewAsMatrix(rewriter, loc, product, initType));
}

namespace {
/// A quantized weight's packed arguments: its values and f16 scales (Q4_K:
/// the super-blocks' d and dmin, [J, K/256, 2, P]), and Q4_K's sub-blocks'
/// 6-bit scales and mins ([J, K/32, 2, P] i8; else null).
struct PackedQuant {
  Value values, scales, subScales;
};
} // namespace

/// Whether a format keeps two K steps a byte (else one).
static bool isNibbles(QuantFormat format) {
  return format == QuantFormat::q4_0 || format == QuantFormat::q4_k;
}

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
  inputs.append({packed.scales, packed.scales, packed.subScales,
                 packed.subScales});
  maps.append({map({j, b.floorDiv(8), zero, r}), map({j, b.floorDiv(8), one, r}),
               map({j, b, zero, r}), map({j, b, one, r})});
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
  if (isNibbles(format)) {
    Value h = arith::IndexCastOp::create(b, l, i8,
                                         linalg::IndexOp::create(b, l, 4));
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
  bool q4 = isNibbles(format);
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
        Value weight = buildDequantizedWeight(b, l, args[1],
                                              args.drop_front(2).drop_back(),
                                              format);
        Value product = arith::MulFOp::create(b, l, args[0], weight);
        linalg::YieldOp::create(
            b, l, ValueRange{arith::AddFOp::create(b, l, args.back(), product)});
      });
  generic->setAttr(kQuantizedMatmulAttrName,
                   rewriter.getStringAttr(stringifyQuantFormat(format)));
  rewriter.replaceOp(op,
                     viewAsMatrix(rewriter, loc, generic.getResult(0),
                                  initType));
}

/// The matmul `op` over Q8_0, Q4_0 or Q4_K weights on int8 activations
/// (`int8_dot` planned), values four K steps a column together
/// (V [J, K/32, 8 or 4, P, 4]): A's blocks' largest magnitudes
///   AMAX[m, b] = max_t |A[m, b, t]|
/// and, with d = AMAX[m, b] / 127 and id = (d != 0 ? 1 / d : 0),
///   C[m, j, r] += (roundeven(A[m, k] * id) * d) * (w * S[j, b, r])
/// over (m, j, r, b, u, i), K step k = 32 b + 4 u + i, w = V[j, b, u, r, i]
/// (Q8_0), or over (m, j, r, b, h, u, i), k = 32 b + 16 h + 4 u + i, w =
/// nibble h of V[j, b, u, r, i] minus 8 (Q4_0; Q4_K: that nibble q,
/// (d * sc) * q - dmin * m). The micro-kernel sums each
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
  bool q4 = isNibbles(format);
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
  Value amaxInit = linalg::FillOp::create(
                       rewriter, loc, zero,
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
            linalg::YieldOp::create(
                b, l,
                ValueRange{arith::MaximumFOp::create(b, l, args[1], magnitude)});
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
  SmallVector<AffineMap> maps{map(aResults), map({d[0], d[3]}),
                              map({d[1], d[3], du, d[2], di})};
  // The step's half of its block: h (Q4_0, Q4_K) or u floordiv 4.
  AffineExpr half = q4 ? d[4] : du.floorDiv(4);
  appendScaleOperands(packed, format, d[1], d[3], d[2], half, numDims, inputs,
                      maps);
  maps.push_back(map({d[0], d[1], d[2]}));
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.append(numDims - 3, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{initPanels.getType()}, inputs,
      ValueRange{initPanels}, maps, iterators,
      [format](OpBuilder &b, Location l, ValueRange args) {
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
        Value weight = buildDequantizedWeight(
            b, l, args[2], args.drop_front(3).drop_back(), format);
        Value product = arith::MulFOp::create(b, l, x, weight);
        linalg::YieldOp::create(
            b, l, ValueRange{arith::AddFOp::create(b, l, args.back(), product)});
      });
  generic->setAttr(kQuantizedMatmulAttrName,
                   rewriter.getStringAttr(stringifyQuantFormat(format)));
  generic->setAttr(kInt8ActivationsAttrName, rewriter.getUnitAttr());
  rewriter.replaceOp(op,
                     viewAsMatrix(rewriter, loc, generic.getResult(0),
                                  initType));
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
  // Q4_0, Q4_K: byte u of a block holds steps u and u + 16.
  bool nibbles = isNibbles(format);
  Value byte = nibbles ? rem(step, 16) : step;
  SmallVector<Value> at{j, block};
  if (group > 1)
    at.append({div(byte, group), r, rem(byte, group)});
  else
    at.append({byte, r});
  Value integer = tensor::ExtractOp::create(b, l, packed.values, at);
  Type i8 = b.getIntegerType(8);
  if (nibbles) {
    Value shift = arith::MulIOp::create(
        b, l,
        arith::IndexCastOp::create(b, l, i8, div(step, 16)),
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
    Value scale = tensor::ExtractOp::create(b, l, packed.scales,
                                            ValueRange{j, block, r});
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
  Value scale = arith::MulFOp::create(
      b, l, d, toFloat(part(packed.subScales, block, 0)));
  Value min = arith::MulFOp::create(
      b, l, dmin, toFloat(part(packed.subScales, block, 1)));
  rewriter.replaceOpWithNewOp<arith::SubFOp>(
      extract, arith::MulFOp::create(b, l, scale, toFloat(integer)), min);
}

/// Reads each quantized weight of `func` from its values and scales in
/// panels of the micro-kernel's width (two new arguments right after it,
/// three for the K formats):
/// its matmuls as quantized GEMMs, its element reads (tensor.extract) as
/// dequantized elements; the weight goes when nothing else reads it.
static LogicalResult quantizeWeights(func::FuncOp func) {
  SmallVector<std::pair<linalg::LinalgOp, bool>> matmuls;
  func.walk([&](linalg::LinalgOp op) {
    std::optional<bool> outIn = matchMatmul(op);
    if (!outIn ||
        !getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType())
             .isF32())
      return;
    auto weight = dyn_cast<BlockArgument>(op.getDpsInputOperand(1)->get());
    if (weight && weight.getOwner() == &func.getBody().front() &&
        getParamQuant(weight))
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
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  IRRewriter rewriter(ctx);
  QuantizedKernelTarget target =
      getQuantizedKernelTarget(func->getParentOfType<ModuleOp>());
  int64_t panel = target.panel;
  // Each quantized weight's packed arguments, made on first use; the
  // panels run along N, which the quantization axis (K's) fixes.
  llvm::DenseMap<Value, PackedQuant> bound;
  auto getPacked = [&](BlockArgument weight) -> FailureOr<PackedQuant> {
    PackedQuant &packed = bound[weight];
    if (packed.values)
      return packed;
    WeightQuantAttr quant = getParamQuant(weight);
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
          b.getNamedAttr("layout",
                         b.getStringAttr(outIn ? "out_in" : "in_out")),
          b.getNamedAttr("panel", b.getI64IntegerAttr(panel)),
          b.getNamedAttr("shape",
                         b.getDenseI64ArrayAttr(weightType.getShape())),
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
    bool mins = hasMins(format), q6k = format == QuantFormat::q6_k;
    // Q8_0, Q6_K: a byte a K step; Q4_0, Q4_K: two steps a byte (16 bytes a
    // block); for int8 activations, four K steps of a column together.
    int64_t blockBytes = isNibbles(format) ? 16 : 32;
    SmallVector<int64_t> valuesShape{panels, k / 32};
    if (target.int8)
      valuesShape.append({blockBytes / 4, panel, 4});
    else
      valuesShape.append({blockBytes, panel});
    StringRef valuesFormat, scalesFormat, subFormat;
    switch (format) {
    case QuantFormat::q8_0:
      valuesFormat = kQ8_0ValuesWeightFormat;
      scalesFormat = kQ8_0ScalesWeightFormat;
      break;
    case QuantFormat::q4_0:
      valuesFormat = kQ4_0ValuesWeightFormat;
      scalesFormat = kQ4_0ScalesWeightFormat;
      break;
    case QuantFormat::q4_k:
      valuesFormat = kQ4_KValuesWeightFormat;
      scalesFormat = kQ4_KSuperWeightFormat;
      subFormat = kQ4_KScalesWeightFormat;
      break;
    case QuantFormat::q5_k:
      valuesFormat = kQ5_KValuesWeightFormat;
      scalesFormat = kQ5_KSuperWeightFormat;
      subFormat = kQ5_KScalesWeightFormat;
      break;
    case QuantFormat::q6_k:
      valuesFormat = kQ6_KValuesWeightFormat;
      scalesFormat = kQ6_KSuperWeightFormat;
      subFormat = kQ6_KScalesWeightFormat;
      break;
    }
    FailureOr<Value> v = argument(
        index + 1, RankedTensorType::get(valuesShape, b.getIntegerType(8)),
        valuesFormat, target.int8 ? 4 : 1);
    // The K formats' f16 scales are their super-blocks' (Q4_K, Q5_K: d
    // and dmin).
    SmallVector<int64_t> scalesShape =
        mins  ? SmallVector<int64_t>{panels, k / 256, 2, panel}
        : q6k ? SmallVector<int64_t>{panels, k / 256, panel}
              : SmallVector<int64_t>{panels, k / 32, panel};
    FailureOr<Value> s =
        argument(index + 2, RankedTensorType::get(scalesShape, b.getF16Type()),
                 scalesFormat, 1);
    if (failed(v) || failed(s))
      return failure();
    packed.values = *v;
    packed.scales = *s;
    if (mins || q6k) {
      // Q4_K, Q5_K: each sub-block's sc and m; Q6_K: each 16's scale.
      SmallVector<int64_t> subShape =
          mins ? SmallVector<int64_t>{panels, k / 32, 2, panel}
               : SmallVector<int64_t>{panels, k / 16, panel};
      FailureOr<Value> sub = argument(
          index + 3, RankedTensorType::get(subShape, b.getIntegerType(8)),
          subFormat, 1);
      if (failed(sub))
        return failure();
      packed.subScales = *sub;
    }
    return packed;
  };
  for (auto [op, outIn] : matmuls) {
    auto weight = cast<BlockArgument>(op.getDpsInputOperand(1)->get());
    WeightQuantAttr quant = getParamQuant(weight);
    if (quant.getAxis() != (outIn ? 1 : 0))
      return op.emitError()
             << "tfm-cpu-pack-weights: the weight '" << getParamName(weight)
             << "' is quantized along dimension " << quant.getAxis()
             << " but read by this matmul with K along dimension "
             << (outIn ? 1 : 0);
    FailureOr<PackedQuant> packed = getPacked(weight);
    if (failed(packed))
      return failure();
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
    rewriteExtract(rewriter, extract, *packed, panel, target.int8 ? 4 : 1,
                   quant.getAxis(), quant.getFormat());
  }
  llvm::BitVector unused(func.getNumArguments());
  for (auto &[weight, args] : bound)
    if (weight.use_empty())
      unused.set(cast<BlockArgument>(weight).getArgNumber());
  return func.eraseArguments(unused);
}

/// Packs the weights of `func`'s matmuls; returns failure on a malformed
/// function signature.
static LogicalResult packWeights(func::FuncOp func) {
  if (func.isExternal())
    return success();
  if (failed(quantizeWeights(func)))
    return failure();
  SmallVector<PackCandidate> candidates;
  func.walk([&](linalg::LinalgOp op) {
    std::optional<ContractionTiling> tiling = tilingFromAttr(op);
    std::optional<bool> outIn = matchMatmul(op);
    if (!tiling || !outIn)
      return;
    auto weight = dyn_cast<BlockArgument>(op.getDpsInputOperand(1)->get());
    if (!weight || weight.getOwner() != &func.getBody().front() ||
        !func.getArgAttr(weight.getArgNumber(), kParamAttrName) ||
        getParamQuant(weight))
      return;
    auto weightType = cast<RankedTensorType>(weight.getType());
    bool pairs = tiling->bf16Pairs && weightType.getElementType().isBF16() &&
                 weightType.getDimSize(*outIn ? 1 : 0) % 2 == 0;
    candidates.push_back({op, weight, *outIn, tiling->registerCols, pairs});
  });
  if (candidates.empty())
    return success();

  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  IRRewriter rewriter(ctx);
  // One packed argument per (weight, layout, panel width), inserted right
  // after the weight so that, once the weight is erased, argument numbers
  // (which error messages quote) stay as the user wrote them.
  llvm::DenseMap<std::tuple<Value, unsigned, int64_t, unsigned>, BlockArgument>
      packedArgs;
  for (const PackCandidate &c : candidates) {
    unsigned index = c.weight.getArgNumber();
    auto key = std::make_tuple(Value(c.weight), unsigned(c.outIn), c.panel,
                               unsigned(c.pairs));
    BlockArgument &packed = packedArgs[key];
    if (!packed) {
      auto weightType = cast<RankedTensorType>(c.weight.getType());
      SmallVector<NamedAttribute> attrs(func.getArgAttrDict(index)
                                            ? func.getArgAttrDict(index).getValue()
                                            : ArrayRef<NamedAttribute>());
      SmallVector<NamedAttribute> pack{
          b.getNamedAttr("layout",
                         b.getStringAttr(c.outIn ? "out_in" : "in_out")),
          b.getNamedAttr("panel", b.getI64IntegerAttr(c.panel)),
          b.getNamedAttr("shape",
                         b.getDenseI64ArrayAttr(weightType.getShape()))};
      if (c.pairs)
        pack.push_back(b.getNamedAttr(
            "format", b.getStringAttr(kBf16PairsWeightFormat)));
      attrs.push_back(
          b.getNamedAttr(kParamPackAttrName, b.getDictionaryAttr(pack)));
      unsigned at = index + 1;
      if (failed(func.insertArgument(
              at, packedType(weightType, c.outIn, c.panel, c.pairs),
              b.getDictionaryAttr(attrs), c.weight.getLoc())))
        return failure();
      packed = func.getArgument(at);
    }
    rewriteToPacked(rewriter, c, packed);
  }
  // A tied embedding's gathers read the packed copy too, so that the table
  // is held once: W[n, k] is P[n / nr, k, n % nr] (out_in), W[k, n] likewise
  // with the roles swapped (in_out); P[n / nr, k / 2, n % nr, k % 2] with
  // pairs.
  for (auto &[key, packed] : packedArgs) {
    auto original = cast<BlockArgument>(std::get<0>(key));
    if (original.use_empty() ||
        !llvm::all_of(original.getUsers(),
                      llvm::IsaPred<tensor::ExtractOp>))
      continue;
    bool outIn = std::get<1>(key);
    int64_t panel = std::get<2>(key);
    bool pairs = std::get<3>(key);
    for (Operation *user : llvm::make_early_inc_range(original.getUsers())) {
      auto extract = cast<tensor::ExtractOp>(user);
      Location loc = extract.getLoc();
      rewriter.setInsertionPoint(extract);
      Value row = extract.getIndices()[0], col = extract.getIndices()[1];
      Value n = outIn ? row : col, k = outIn ? col : row;
      Value width = arith::ConstantIndexOp::create(rewriter, loc, panel);
      Value j = arith::DivUIOp::create(rewriter, loc, n, width);
      Value r = arith::RemUIOp::create(rewriter, loc, n, width);
      if (!pairs) {
        rewriter.replaceOpWithNewOp<tensor::ExtractOp>(extract, packed,
                                                       ValueRange{j, k, r});
        continue;
      }
      Value two = arith::ConstantIndexOp::create(rewriter, loc, 2);
      Value q = arith::DivUIOp::create(rewriter, loc, k, two);
      Value t = arith::RemUIOp::create(rewriter, loc, k, two);
      rewriter.replaceOpWithNewOp<tensor::ExtractOp>(extract, packed,
                                                     ValueRange{j, q, r, t});
    }
  }
  // Weights nothing reads any more are dropped from the signature.
  llvm::BitVector unused(func.getNumArguments());
  for (auto &[key, packed] : packedArgs) {
    auto original = cast<BlockArgument>(std::get<0>(key));
    if (original.use_empty())
      unused.set(original.getArgNumber());
  }
  return func.eraseArguments(unused);
}

namespace {
struct CpuPackWeightsPass
    : public tfm::impl::TfmCpuPackWeightsBase<CpuPackWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(packWeights(func)))
        return signalPassFailure();
  }
};
} // namespace

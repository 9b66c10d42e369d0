//===- CpuPackWeights.cpp - weights in the micro-kernel's panel layout
//-----===//
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
// A weight held quantized (tfm.param_quant) is rewritten by
// PackQuantizedWeights.cpp, which this pass runs first.
//
// A matmul whose weight an scf.index_switch picks among parameters (tfm.moe's
// experts, token-major: TfmToLinalg/MoE.cpp) reads a switch beside it that
// picks among their packed copies (SwitchedWeights.cpp); once nothing reads
// the original switch's result, it goes, and the unpacked weights with it.
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
#include "PackWeights.h"
#include "TilingUtils.h"

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

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUPACKWEIGHTS
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::cpu_pack;

namespace {
/// A matmul whose B operand is a parameter that can be packed, or one an
/// scf.index_switch picks among such parameters (tfm.moe's experts).
struct PackCandidate {
  linalg::LinalgOp op;
  /// The parameter, or those the switch picks, in its region order.
  SmallVector<BlockArgument> weights;
  bool outIn;
  int64_t panel;
  /// K pairs interleaved (bf16_pairs planned, a bf16 weight of even K).
  bool pairs;
};
} // namespace

/// `op` as C[m, n] += A[m, k] * B with B = W[k, n] or W[n, k] (outIn).
std::optional<bool> mlir::tfm::cpu_pack::matchMatmul(linalg::LinalgOp op) {
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
Value mlir::tfm::cpu_pack::buildPanelMatmul(RewriterBase &rewriter,
                                            linalg::LinalgOp op, Value a,
                                            Value p, Value init, bool pairs) {
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
Value mlir::tfm::cpu_pack::viewAsPanels(RewriterBase &rewriter, Location loc,
                                        Value init, int64_t panel) {
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
Value mlir::tfm::cpu_pack::viewAsMatrix(RewriterBase &rewriter, Location loc,
                                        Value panels, RankedTensorType type) {
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

/// Packs the weights of `func`'s matmuls; returns failure on a malformed
/// function signature.
static LogicalResult packWeights(func::FuncOp func) {
  if (func.isExternal())
    return success();
  if (failed(quantizeWeights(func)))
    return failure();
  auto isFloatWeight = [&](BlockArgument weight) {
    return weight && weight.getOwner() == &func.getBody().front() &&
           func.getArgAttr(weight.getArgNumber(), kParamAttrName) &&
           !getParamQuant(weight);
  };
  SmallVector<PackCandidate> candidates;
  func.walk([&](linalg::LinalgOp op) {
    std::optional<ContractionTiling> tiling = tilingFromAttr(op);
    std::optional<bool> outIn = matchMatmul(op);
    if (!tiling || !outIn)
      return;
    Value read = op.getDpsInputOperand(1)->get();
    SmallVector<BlockArgument> weights = getSwitchedWeights(
        func, read, [&](BlockArgument weight, BlockArgument) {
          return isFloatWeight(weight);
        });
    if (weights.empty()) {
      auto weight = dyn_cast<BlockArgument>(read);
      if (!isFloatWeight(weight))
        return;
      weights.push_back(weight);
    }
    auto weightType = cast<RankedTensorType>(read.getType());
    bool pairs = tiling->bf16Pairs && weightType.getElementType().isBF16() &&
                 weightType.getDimSize(*outIn ? 1 : 0) % 2 == 0;
    candidates.push_back({op, weights, *outIn, tiling->registerCols, pairs});
  });
  if (candidates.empty())
    return success();

  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  IRRewriter rewriter(ctx);
  // One packed argument per (weight, layout, panel width), inserted right
  // after the weight so that, once the weight is erased, argument numbers
  // (which error messages quote) stay as the user wrote them.
  using PackKey = std::tuple<Value, unsigned, int64_t, unsigned>;
  llvm::DenseMap<PackKey, BlockArgument> packedArgs;
  auto getPacked = [&](BlockArgument weight,
                       const PackCandidate &c) -> FailureOr<BlockArgument> {
    unsigned index = weight.getArgNumber();
    BlockArgument &packed = packedArgs[std::make_tuple(
        Value(weight), unsigned(c.outIn), c.panel, unsigned(c.pairs))];
    if (packed)
      return packed;
    auto weightType = cast<RankedTensorType>(weight.getType());
    SmallVector<NamedAttribute> attrs(
        func.getArgAttrDict(index) ? func.getArgAttrDict(index).getValue()
                                   : ArrayRef<NamedAttribute>());
    SmallVector<NamedAttribute> pack{
        b.getNamedAttr("layout",
                       b.getStringAttr(c.outIn ? "out_in" : "in_out")),
        b.getNamedAttr("panel", b.getI64IntegerAttr(c.panel)),
        b.getNamedAttr("shape", b.getDenseI64ArrayAttr(weightType.getShape()))};
    if (c.pairs)
      pack.push_back(
          b.getNamedAttr("format", b.getStringAttr(kBf16PairsWeightFormat)));
    attrs.push_back(
        b.getNamedAttr(kParamPackAttrName, b.getDictionaryAttr(pack)));
    unsigned at = index + 1;
    if (failed(func.insertArgument(
            at, packedType(weightType, c.outIn, c.panel, c.pairs),
            b.getDictionaryAttr(attrs), weight.getLoc())))
      return failure();
    packed = func.getArgument(at);
    return packed;
  };
  // The switch of packed weights beside each switch of weights, per
  // (switch result, layout, panel width, pairs).
  llvm::DenseMap<PackKey, Value> switched;
  llvm::SetVector<Operation *> switches;
  for (const PackCandidate &c : candidates) {
    linalg::LinalgOp op = c.op;
    Value read = op.getDpsInputOperand(1)->get();
    Value packed;
    if (read == c.weights.front()) {
      FailureOr<BlockArgument> arg = getPacked(c.weights.front(), c);
      if (failed(arg))
        return failure();
      packed = *arg;
    } else {
      Value &selected = switched[std::make_tuple(read, unsigned(c.outIn),
                                                 c.panel, unsigned(c.pairs))];
      if (!selected) {
        SmallVector<SmallVector<Value>> each;
        for (BlockArgument weight : c.weights) {
          FailureOr<BlockArgument> arg = getPacked(weight, c);
          if (failed(arg))
            return failure();
          each.push_back({*arg});
        }
        auto sw = cast<scf::IndexSwitchOp>(read.getDefiningOp());
        selected = selectSwitched(rewriter, sw, each).front();
        switches.insert(sw);
      }
      packed = selected;
    }
    rewriteToPacked(rewriter, c, packed);
  }
  for (Operation *sw : switches)
    dropUnusedResults(rewriter, cast<scf::IndexSwitchOp>(sw));
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

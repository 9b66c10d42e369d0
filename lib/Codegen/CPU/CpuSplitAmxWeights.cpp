//===- CpuSplitAmxWeights.cpp - AMX GEMM weights split when bound ---------===//
//
// tfm-cpu-split-amx-weights (after tfm-cpu-pack-weights, in the signature
// stage): a packed f32 weight P[J, K, panel] that only AMX GEMMs read
// (matchAmxContraction) is bound instead as its three bf16 parts, already
// in the order AMX tiles load B,
//
//   S[i, n / 16, k / 2, 2 (n % 16) + k % 2] = part i of W(k, n)
//   (w = w0 + w1 + w2: w0 = bf16(w), w1 = bf16(w - w0), w2 = bf16(w - w0 - w1);
//    0 for the padding columns n >= N),
//
// of type tensor<3 x J*panel/16 x K/2 x 32 x bf16>, with `format =
// "amx_bf16x3"` added to its tfm.param_pack. tfm-cpu-amx-contractions then
// loads B's tiles straight from S: the conversion it otherwise makes on every
// call (a third of the GEMMs' time at 128 rows) is made once by the binder.
//
// The GEMM becomes a generic over (m, j, rc, x, q, t), n = j * panel + 16 rc
// + x and k = 2 q + t, that reads the three parts and adds them:
//
//   C[m, j, rc, x] += A[m, q, t] * (S0 + S1 + S2)[j, rc, q, x, t]
//
// The parts add up to w (they hold its 24 significant bits, each sum exact
// in f32; only bits below the smallest normal float are flushed, and a w
// within half a bf16 step of FLT_MAX rounds to infinity, as in the per-call
// split), so the op still means the f32 GEMM: as loops, if no AMX code is
// made for it, it computes the same product. The op is marked
// tfm.amx_weight_parts: its parts are such a split, and the AMX kernel may
// drop the part products of order three and more.
//
// Only weights that nothing else reads are split: every argument with the
// weight's name, in every function of the module, must be such a packed
// argument of AMX GEMMs. A weight that a decode entry (one row: FMA) or a
// tied embedding's gather also reads keeps its f32 panels, bound once and
// split per call, rather than being held both ways.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "CpuPlan.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUSPLITAMXWEIGHTS
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

/// Whether argument `arg` of `func` is a packed f32 or bf16 weight that
/// only AMX GEMMs read, as their B operand.
static bool onlyAmxGemmsRead(func::FuncOp func, BlockArgument arg) {
  auto pack =
      func.getArgAttrOfType<DictionaryAttr>(arg.getArgNumber(),
                                            kParamPackAttrName);
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (!pack || pack.get("format") || !type ||
      !(type.getElementType().isF32() || type.getElementType().isBF16()) ||
      arg.use_empty())
    return false;
  for (OpOperand &use : arg.getUses()) {
    auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!generic || generic.getNumDpsInputs() != 2 ||
        use.getOperandNumber() != 1)
      return false;
    std::optional<AmxContraction> amx = matchAmxContraction(generic);
    if (!amx || amx->prepacked)
      return false;
  }
  return true;
}

/// The GEMM `op` (C[m, j, r] += A[m, k] * P[j, k, r]) rewritten to read B
/// from the parts `split` (see the file comment).
static void rewriteToParts(RewriterBase &rewriter, linalg::GenericOp op,
                           Value split) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputOperand(0)->get();
  Value c = op.getDpsInitOperand(0)->get();
  auto cType = cast<RankedTensorType>(c.getType());
  auto aType = cast<RankedTensorType>(a.getType());
  int64_t m = cType.getDimSize(0), panels = cType.getDimSize(1),
          panel = cType.getDimSize(2), k = aType.getDimSize(1);
  Type f32 = rewriter.getF32Type(), bf16 = rewriter.getBF16Type();
  // Three parts of f32 weights; a bf16 weight is its own one part.
  int64_t parts = cast<RankedTensorType>(split.getType()).getDimSize(0);

  // A[m, k] as [M, K/2, 2]; C[m, j, r] as [M, J, panel/16, 16].
  Value a3 = tensor::ExpandShapeOp::create(
      rewriter, loc,
      RankedTensorType::get({m, k / kAmxVnniPair, kAmxVnniPair}, aType.getElementType()), a,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  auto c4Type = RankedTensorType::get(
      {m, panels, panel / kAmxTileF32Cols, kAmxTileF32Cols}, f32);
  SmallVector<ReassociationIndices> splitColumns{{0}, {1}, {2, 3}};
  Value c4 =
      tensor::ExpandShapeOp::create(rewriter, loc, c4Type, c, splitColumns);
  // Part i as [J, panel/16, K/2, 16, 2].
  int64_t tiles = panels * panel / kAmxTileF32Cols;
  SmallVector<Value> inputs = {a3};
  for (int64_t i = 0; i < parts; ++i) {
    auto index = [&](int64_t v) -> OpFoldResult {
      return rewriter.getIndexAttr(v);
    };
    Value part = tensor::ExtractSliceOp::create(
        rewriter, loc,
        RankedTensorType::get({tiles, k / kAmxVnniPair, kAmxVnniPair * kAmxTileF32Cols}, bf16),
        split, ArrayRef<OpFoldResult>{index(i), index(0), index(0), index(0)},
        ArrayRef<OpFoldResult>{index(1), index(tiles), index(k / kAmxVnniPair),
                               index(kAmxVnniPair * kAmxTileF32Cols)},
        ArrayRef<OpFoldResult>{index(1), index(1), index(1), index(1)});
    inputs.push_back(tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get(
            {panels, panel / kAmxTileF32Cols, k / kAmxVnniPair, kAmxTileF32Cols, kAmxVnniPair}, bf16),
        part, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3, 4}}));
  }

  // Loops (m, j, rc, x, q, t).
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr dm, dj, drc, dx, dq, dt;
  bindDims(ctx, dm, dj, drc, dx, dq, dt);
  auto map = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(6, 0, results, ctx);
  };
  SmallVector<AffineMap> maps = {map({dm, dq, dt})};
  maps.append(parts, map({dj, drc, dq, dx, dt}));
  maps.push_back(map({dm, dj, drc, dx}));
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{c4Type}, inputs, ValueRange{c4}, maps,
      iterators, [f32, parts](OpBuilder &b, Location l, ValueRange args) {
        auto extend = [&](Value v) -> Value {
          return arith::ExtFOp::create(b, l, f32, v);
        };
        // f32: a * ((w0 + w1) + w2); bf16: ext(a) * ext(w).
        Value product;
        if (parts == 1) {
          product = arith::MulFOp::create(b, l, extend(args[0]),
                                          extend(args[1]));
        } else {
          Value w = arith::AddFOp::create(
              b, l,
              arith::AddFOp::create(b, l, extend(args[1]), extend(args[2])),
              extend(args[3]));
          product = arith::MulFOp::create(b, l, args[0], w);
        }
        linalg::YieldOp::create(
            b, l,
            ValueRange{arith::AddFOp::create(b, l, args.back(), product)});
      });
  generic->setAttr(kCpuTilingAttrName, op->getAttr(kCpuTilingAttrName));
  generic->setAttr(kAmxWeightPartsAttrName, rewriter.getUnitAttr());
  rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
      op, cType, generic.getResult(0), splitColumns);
}

/// Splits the weights of `func` that `splittable` names.
static LogicalResult splitWeights(func::FuncOp func,
                                  const llvm::StringMap<bool> &splittable) {
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  IRRewriter rewriter(ctx);
  for (unsigned index = 0; index < func.getNumArguments(); ++index) {
    BlockArgument arg = func.getArgument(index);
    auto name = func.getArgAttrOfType<StringAttr>(index, kParamAttrName);
    if (!name || !splittable.lookup(name.getValue()))
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    int64_t panels = type.getDimSize(0), k = type.getDimSize(1),
            panel = type.getDimSize(2);
    bool isF32 = type.getElementType().isF32();
    auto splitType = RankedTensorType::get(
        {isF32 ? kAmxF32Parts : 1, panels * panel / kAmxTileF32Cols, k / kAmxVnniPair,
         kAmxVnniPair * kAmxTileF32Cols},
        b.getBF16Type());
    SmallVector<NamedAttribute> attrs;
    for (NamedAttribute attr : func.getArgAttrDict(index)) {
      if (attr.getName() != kParamPackAttrName) {
        attrs.push_back(attr);
        continue;
      }
      SmallVector<NamedAttribute> pack(
          cast<DictionaryAttr>(attr.getValue()).getValue());
      pack.push_back(b.getNamedAttr(
          "format", b.getStringAttr(isF32 ? kAmxSplitWeightFormat
                                          : kAmxPairedWeightFormat)));
      attrs.push_back(
          b.getNamedAttr(kParamPackAttrName, b.getDictionaryAttr(pack)));
    }
    // The split argument takes the weight's place (error messages quote
    // argument numbers).
    if (failed(func.insertArgument(index + 1, splitType,
                                   b.getDictionaryAttr(attrs), arg.getLoc())))
      return failure();
    Value split = func.getArgument(index + 1);
    for (Operation *user : llvm::make_early_inc_range(arg.getUsers()))
      rewriteToParts(rewriter, cast<linalg::GenericOp>(user), split);
    if (failed(func.eraseArgument(index)))
      return failure();
  }
  return success();
}

namespace {
struct CpuSplitAmxWeightsPass
    : public tfm::impl::TfmCpuSplitAmxWeightsBase<CpuSplitAmxWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Per weight name: whether every argument that binds it, in any
    // function, is a packed weight only AMX GEMMs read.
    llvm::StringMap<bool> splittable;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      for (BlockArgument arg : func.getArguments()) {
        auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      kParamAttrName);
        if (!name)
          continue;
        bool split = onlyAmxGemmsRead(func, arg);
        auto [it, inserted] = splittable.try_emplace(name.getValue(), split);
        if (!inserted)
          it->second = it->second && split;
      }
    }
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && failed(splitWeights(func, splittable)))
        return signalPassFailure();
  }
};
} // namespace

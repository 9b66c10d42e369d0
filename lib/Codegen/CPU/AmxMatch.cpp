//===- AmxMatch.cpp - the GEMMs tfm-cpu-amx-contractions takes ------------===//
//
// matchAmxContraction and getAmxRowStride (CpuPlan.h): which linalg ops are
// GEMMs for AMX tiles, in tfm-cpu-pack-weights' form (f32 or bf16 panels) or
// tfm-cpu-split-amx-weights' (B bound as its bf16 parts), and whether C's
// layout lets tiles load and store it. Apart from the code generator:
// tfm-cpu-split-amx-weights and tfm-tile-and-vectorize-contractions (which
// leaves these GEMMs alone) ask the same question.
//
//===----------------------------------------------------------------------===//
#include "AmxKernel.h"
#include "CpuPlan.h"
#include "TilingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tfm;

/// GEMMs of fewer rows keep the FMA path: B's conversion, made on every
/// call, must be paid for by M rows. Measured for 768 x 3072 on one thread
/// (emeraldrapids): AMX about 0.9 ms more a call and 0.024 against 0.036 ms
/// a row, even near M = 64 (2.3 against 2.2 ms), 1.7 against 1.3 ms at 32.
/// (Decode's GEMVs, M = 1, read each weight once; converted, they would
/// read and write it three times more.)
static constexpr int64_t kMinRows = 64;

/// The shape of a GEMM in tfm-cpu-split-amx-weights' form: loops
/// (m, j, rc, x, q, t), A[m, q, t], B's parts S_i[j, rc, q, x, t] (bf16), C[m,
/// j, rc, x] f32; A f32 with three parts, or A bf16 with one (a bf16 model's
/// weights, only reordered).
static std::optional<AmxContraction>
matchSplitWeightGemm(linalg::GenericOp generic) {
  // Only parts split as the runner splits them (the marker): the kernel
  // drops the products of order three and more.
  int64_t inputs = generic.getNumDpsInputs();
  if (!generic->hasAttr(kAmxWeightPartsAttrName) ||
      (inputs != 1 + kAmxF32Parts && inputs != 2) ||
      generic.getNumDpsInits() != 1 || generic.getNumLoops() != 6)
    return std::nullopt;
  int64_t parts = inputs - 1;
  SmallVector<utils::IteratorType> iters = generic.getIteratorTypesArray();
  for (int64_t d = 0; d < 6; ++d)
    if (iters[d] != (d < 4 ? utils::IteratorType::parallel
                           : utils::IteratorType::reduction))
      return std::nullopt;
  auto map = [&](ArrayRef<unsigned> dims) {
    return AffineMap::getMultiDimMapWithTargets(6, dims, generic.getContext());
  };
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (maps[0] != map({0, 4, 5}) || maps[inputs] != map({0, 1, 2, 3}))
    return std::nullopt;
  for (int64_t i = 1; i <= parts; ++i)
    if (maps[i] != map({1, 2, 4, 3, 5}))
      return std::nullopt;
  for (OpOperand &operand : generic->getOpOperands()) {
    int64_t number = operand.getOperandNumber();
    bool isBf16 = (number >= 1 && number <= parts) || (number == 0 && parts == 1);
    Type type = getElementTypeOrSelf(operand.get().getType());
    if (isBf16 ? !type.isBF16() : !type.isF32())
      return std::nullopt;
  }
  // The body, as built: acc + a * ((ext(s0) + ext(s1)) + ext(s2)), or
  // acc + ext(a) * ext(s0).
  Block &body = generic.getRegion().front();
  auto isExtendedArg = [&](Value v, unsigned arg) {
    auto ext = v.getDefiningOp<arith::ExtFOp>();
    return ext && ext.getIn() == body.getArgument(arg);
  };
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto acc = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  auto product = acc ? acc.getRhs().getDefiningOp<arith::MulFOp>() : nullptr;
  if (!product || acc.getLhs() != body.getArgument(inputs))
    return std::nullopt;
  if (parts == 1) {
    if (!isExtendedArg(product.getLhs(), 0) ||
        !isExtendedArg(product.getRhs(), 1) ||
        std::distance(body.begin(), body.end()) != 5)
      return std::nullopt;
  } else {
    auto weight = product.getRhs().getDefiningOp<arith::AddFOp>();
    auto firstTwo =
        weight ? weight.getLhs().getDefiningOp<arith::AddFOp>() : nullptr;
    if (!firstTwo || product.getLhs() != body.getArgument(0) ||
        !isExtendedArg(firstTwo.getLhs(), 1) ||
        !isExtendedArg(firstTwo.getRhs(), 2) ||
        !isExtendedArg(weight.getRhs(), 3) ||
        std::distance(body.begin(), body.end()) != 8)
      return std::nullopt;
  }
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  // x: a B tile's 16 columns; t: a K pair.
  if (llvm::any_of(ranges, ShapedType::isDynamic) || ranges[3] != kAmxTileF32Cols ||
      ranges[5] != kAmxVnniPair)
    return std::nullopt;
  AmxContraction amx;
  amx.m = ranges[0];
  amx.panel = ranges[2] * kAmxTileF32Cols;
  amx.n = ranges[1] * amx.panel;
  amx.k = ranges[4] * 2;
  amx.parts = parts;
  amx.prepacked = true;
  return amx;
}

/// The shape of a GEMM in tfm-cpu-pack-weights' form: loops (m, j, r, k),
/// A(m, k), P(j, k, r), C(m, j, r); all f32 (three parts), or A and P bf16
/// accumulating in f32 (one part).
static std::optional<AmxContraction>
matchPackedGemm(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 2 || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != 4 ||
      !linalg::isaContractionOpInterface(generic))
    return std::nullopt;
  Type a = getElementTypeOrSelf(generic.getDpsInputOperand(0)->get().getType());
  Type p = getElementTypeOrSelf(generic.getDpsInputOperand(1)->get().getType());
  Type c = getElementTypeOrSelf(generic.getDpsInitOperand(0)->get().getType());
  if (!c.isF32() || a != p || (!a.isF32() && !a.isBF16()))
    return std::nullopt;
  SmallVector<utils::IteratorType> iters = generic.getIteratorTypesArray();
  if (iters[0] != utils::IteratorType::parallel ||
      iters[1] != utils::IteratorType::parallel ||
      iters[2] != utils::IteratorType::parallel ||
      iters[3] != utils::IteratorType::reduction)
    return std::nullopt;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  auto map = [&](ArrayRef<unsigned> dims) {
    return AffineMap::getMultiDimMapWithTargets(4, dims, generic.getContext());
  };
  if (maps[0] != map({0, 3}) || maps[1] != map({1, 3, 2}) ||
      maps[2] != map({0, 1, 2}))
    return std::nullopt;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  AmxContraction amx;
  amx.m = ranges[0];
  amx.panel = ranges[2];
  amx.n = ranges[1] * ranges[2];
  amx.k = ranges[3];
  amx.parts = a.isBF16() ? 1 : kAmxF32Parts;
  return amx;
}

std::optional<AmxContraction> mlir::tfm::matchAmxContraction(Operation *op) {
  std::optional<ContractionTiling> plan = tilingFromAttr(op);
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!plan || plan->amxBlockCols <= 0 || plan->amxBlockDepth <= 0 ||
      !generic || !codegen::isOutsideParallelLoops(op))
    return std::nullopt;
  std::optional<AmxContraction> amx = matchPackedGemm(generic);
  if (!amx)
    amx = matchSplitWeightGemm(generic);
  if (!amx || amx->m < kMinRows || amx->k % kBlock || amx->n % kBlock ||
      amx->panel % kAmxTileF32Cols)
    return std::nullopt;
  amx->blockCols = codegen::blockSize(amx->n, kBlock, plan->amxBlockCols);
  amx->blockDepth = codegen::blockSize(amx->k, kBlock, plan->amxBlockDepth);
  // A block of columns must not straddle panels unevenly: either a whole
  // number of panels, or a part of one.
  if (amx->blockCols % amx->panel && amx->panel % amx->blockCols)
    return std::nullopt;
  return amx;
}

std::optional<int64_t> mlir::tfm::getAmxRowStride(MemRefType cType,
                                                  int64_t panel) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(cType.getStridesAndOffset(strides, offset)) ||
      strides.size() != 3 || strides[2] != 1 || strides[1] != panel ||
      ShapedType::isDynamic(strides[0]))
    return std::nullopt;
  return strides[0];
}

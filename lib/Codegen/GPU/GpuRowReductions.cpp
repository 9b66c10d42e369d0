//===- GpuRowReductions.cpp - row reductions a warp a row -----------------===//
//
// --tfm-gpu-row-reductions: see Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

#include <cmath>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUROWREDUCTIONS
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
constexpr int64_t kWarpSize = 32;

/// The identity of `combiner` for `type`, or null if it is not a combiner
/// handled here.
TypedAttr getIdentity(Operation *combiner, FloatType type) {
  const llvm::fltSemantics &sem = type.getFloatSemantics();
  if (isa<arith::AddFOp>(combiner))
    return FloatAttr::get(type, 0.0);
  if (isa<arith::MulFOp>(combiner))
    return FloatAttr::get(type, 1.0);
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner))
    return FloatAttr::get(type, llvm::APFloat::getInf(sem, /*Negative=*/true));
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(combiner))
    return FloatAttr::get(type, llvm::APFloat::getInf(sem, /*Negative=*/false));
  return {};
}

/// The final combiner of `generic`'s payload if the op is a row reduction
/// this pass handles. `contraction` admits inputs that do not index every
/// parallel loop (a matmul's rows).
Operation *matchRowReduction(linalg::GenericOp generic,
                             bool contraction = false) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 1 ||
      generic->getParentOfType<gpu::LaunchOp>())
    return nullptr;
  unsigned numLoops = generic.getNumLoops();
  SmallVector<utils::IteratorType> iterators =
      generic.getIteratorTypesArray();
  if (iterators.back() != utils::IteratorType::reduction)
    return nullptr;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return nullptr;
  // Every input indexes every parallel loop (no contraction); the output is
  // indexed by the parallel loops, in order.
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    for (unsigned d = 0; d + 1 < numLoops; ++d)
      if (!map.isFunctionOfDim(d) && !contraction)
        return nullptr;
  }
  AffineMap outMap =
      generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  SmallVector<AffineExpr> rowDims;
  for (unsigned d = 0; d + 1 < numLoops; ++d)
    rowDims.push_back(getAffineDimExpr(d, generic.getContext()));
  if (outMap != AffineMap::get(numLoops, 0, rowDims, generic.getContext()))
    return nullptr;
  // The accumulator: used once, by the combiner whose result is yielded.
  Block &body = generic.getRegion().front();
  BlockArgument acc = body.getArgument(body.getNumArguments() - 1);
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *combiner = yield.getOperand(0).getDefiningOp();
  auto type = dyn_cast<FloatType>(acc.getType());
  if (!combiner || !type || !acc.hasOneUse() ||
      *acc.getUsers().begin() != combiner || combiner->getNumOperands() != 2 ||
      !getIdentity(combiner, type))
    return nullptr;
  return combiner;
}

/// `combiner` applied to `a` and `b` (a clone with new operands).
Value combine(OpBuilder &b, Operation *combiner, Value lhs, Value rhs) {
  IRMapping mapping;
  mapping.map(combiner->getOperand(0), lhs);
  mapping.map(combiner->getOperand(1), rhs);
  return b.clone(*combiner, mapping)->getResult(0);
}

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

void buildRowKernel(linalg::GenericOp generic, Operation *combiner,
                    int64_t warpsPerBlock) {
  OpBuilder b(generic);
  Location loc = generic.getLoc();
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  int64_t depth = ranges.back();
  SmallVector<int64_t> rowShape(ranges.begin(), ranges.end() - 1);
  int64_t rows = 1;
  for (int64_t r : rowShape)
    rows *= r;
  int64_t blocks = llvm::divideCeil(rows, warpsPerBlock);
  Value one = indexConstant(b, loc, 1);
  auto launch = gpu::LaunchOp::create(
      b, loc, indexConstant(b, loc, blocks), one, one,
      indexConstant(b, loc, warpsPerBlock * kWarpSize), one, one);
  Block &kernel = launch.getBody().front();
  b.setInsertionPointToStart(&kernel);
  auto terminator = gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(terminator);

  AffineExpr s0, s1;
  bindSymbols(b.getContext(), s0, s1);
  Value tid = launch.getThreadIds().x;
  Value row = affine::AffineApplyOp::create(
      b, loc,
      AffineMap::get(0, 2, s0 * warpsPerBlock + s1.floorDiv(kWarpSize)),
      ValueRange{launch.getBlockIds().x, tid});
  Value lane = affine::AffineApplyOp::create(
      b, loc, AffineMap::get(0, 1, s0 % kWarpSize), ValueRange{tid});
  // Rows past the end: their warps idle (whole warps, so the shuffles below
  // are never partial).
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                                        indexConstant(b, loc, rows));
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  b.setInsertionPoint(guard.thenBlock()->getTerminator());
  SmallVector<Value> rowIndices;
  if (rowShape.size() == 1) {
    rowIndices.push_back(row);
  } else if (!rowShape.empty()) {
    auto delinearize = affine::AffineDelinearizeIndexOp::create(
        b, loc, row, ArrayRef<int64_t>(rowShape));
    llvm::append_range(rowIndices, delinearize.getResults());
  }

  // Each lane combines elements lane, lane + 32, ... from the identity.
  Block &body = generic.getRegion().front();
  auto accType = cast<FloatType>(body.getArguments().back().getType());
  Value identity = arith::ConstantOp::create(
      b, loc, getIdentity(combiner, accType));
  auto loop = scf::ForOp::create(b, loc, lane, indexConstant(b, loc, depth),
                                 indexConstant(b, loc, kWarpSize),
                                 ValueRange{identity});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> ivs(rowIndices);
    ivs.push_back(loop.getInductionVar());
    IRMapping mapping;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      AffineMap map = generic.getMatchingIndexingMap(input);
      SmallVector<Value> indices;
      for (AffineExpr expr : map.getResults())
        indices.push_back(affine::AffineApplyOp::create(
            b, loc, AffineMap::get(map.getNumDims(), 0, expr), ivs));
      Value element =
          memref::LoadOp::create(b, loc, input->get(), indices);
      mapping.map(body.getArgument(input->getOperandNumber()), element);
    }
    mapping.map(body.getArguments().back(), loop.getRegionIterArgs()[0]);
    // linalg.index inside the payload: the loop's indices.
    for (Operation &op : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(op)) {
        mapping.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      b.clone(op, mapping);
    }
    scf::YieldOp::create(
        b, loc, mapping.lookup(body.getTerminator()->getOperand(0)));
  }
  // Butterfly across the warp: every lane ends with the total.
  Value partial = loop.getResult(0);
  for (int64_t offset = kWarpSize / 2; offset >= 1; offset /= 2) {
    auto shuffle = gpu::ShuffleOp::create(b, loc, partial, offset, kWarpSize,
                                          gpu::ShuffleMode::XOR);
    partial = combine(b, combiner, partial, shuffle.getShuffleResult());
  }
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                      indexConstant(b, loc, 0));
  auto write = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  b.setInsertionPoint(write.thenBlock()->getTerminator());
  Value out = generic.getDpsInits()[0];
  Value init = memref::LoadOp::create(b, loc, out, rowIndices);
  memref::StoreOp::create(b, loc, combine(b, combiner, init, partial), out,
                          rowIndices);
  generic.erase();
}

/// A matmul of at most `maxRows` rows against a transposed ([N, K]) B.
bool isMatrixVector(linalg::MatmulOp matmul, int64_t maxRows) {
  if (!matmul.hasPureBufferSemantics() ||
      matmul->getParentOfType<gpu::LaunchOp>())
    return false;
  auto cType = dyn_cast<MemRefType>(matmul.getDpsInits()[0].getType());
  if (!cType || !cType.hasStaticShape() || cType.getRank() != 2 ||
      cType.getDimSize(0) > maxRows)
    return false;
  MLIRContext *ctx = matmul.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  SmallVector<AffineMap> maps = matmul.getIndexingMapsArray();
  return maps[0] == AffineMap::get(3, 0, {m, k}, ctx) &&
         maps[1] == AffineMap::get(3, 0, {n, k}, ctx) &&
         maps[2] == AffineMap::get(3, 0, {m, n}, ctx);
}

struct GpuRowReductionsPass
    : public tfm::impl::TfmGpuRowReductionsBase<GpuRowReductionsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (warpsPerBlock < 1 || warpsPerBlock > 32) {
      getOperation().emitError("tfm-gpu-row-reductions: warps-per-block must "
                               "be in [1, 32], got ")
          << warpsPerBlock;
      return signalPassFailure();
    }
    // Matrix-vector products (decode: a few rows against an [out, in]
    // weight): an output element a warp, the lanes reading consecutive
    // elements of a weight row. ([in, out] weights keep the SIMT path, whose
    // neighbouring threads read neighbouring columns.)
    SmallVector<linalg::MatmulOp> gemvs;
    getOperation().walk([&](linalg::MatmulOp matmul) {
      if (isMatrixVector(matmul, gemvMaxRows))
        gemvs.push_back(matmul);
    });
    IRRewriter rewriter(&getContext());
    SmallVector<std::pair<linalg::GenericOp, Operation *>> reductions;
    for (linalg::MatmulOp matmul : gemvs) {
      rewriter.setInsertionPoint(matmul);
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, matmul);
      if (failed(generic))
        continue;
      if (Operation *combiner = matchRowReduction(*generic, true))
        reductions.push_back({*generic, combiner});
    }
    getOperation().walk([&](linalg::GenericOp generic) {
      if (llvm::any_of(reductions,
                       [&](auto &r) { return r.first == generic; }))
        return;
      if (Operation *combiner = matchRowReduction(generic))
        reductions.push_back({generic, combiner});
    });
    for (auto [generic, combiner] : reductions)
      buildRowKernel(generic, combiner, warpsPerBlock);
  }
};
} // namespace

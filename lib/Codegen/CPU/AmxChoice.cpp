//===- AmxChoice.cpp - tiles or FMA, per block of an AMX GEMM -------------===//
//
// The AmxGemmBuilder members (AmxKernel.h) that run a kernel's blocks of
// columns and choose each block's path, as the pass's `choice` says: tiles
// (AmxKernel.cpp), f32 FMAs (12 x 32 strips from A's strips and the packed
// panels), or, with choice=measured, whichever the thread timed cheaper
// (cycle counts per kernel and thread in a memref.global). Apart from the
// tile code: this is when tiles run, not how.
//
//===----------------------------------------------------------------------===//
#include "AmxKernel.h"
#include "TilingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::tfm;

/// The FMA path's K blocks: at most 128.
static constexpr int64_t kFmaBlockDepth = 128;
/// With `choice=measured`, the slower path is timed again every 32 blocks
/// of a thread (in a quiet moment, one FMA block in 32 costs about 3%).
static constexpr int64_t kProbeInterval = 32;
/// A kernel's cost state: a row per OpenMP thread up to 256 (more share the
/// last), each a cache line of 8 i64 (columns 0-2 used), so that threads do
/// not write each other's lines.
static constexpr int64_t kStateRows = 256;
static constexpr int64_t kStateRowWords = 8;
/// Blocks a thread first runs on tiles and FMA in turn, its last two
/// measuring each path once warm (the first two touch the buffers and the
/// tile state).
static constexpr int64_t kWarmupBlocks = 4;

namespace {
/// The cost state of a kernel: per thread, cycles a block on tiles, with
/// FMA, and blocks run.
MemRefType stateType(OpBuilder &b) {
  return MemRefType::get({kStateRows, kStateRowWords}, b.getI64Type());
}
} // namespace

void AmxGemmBuilder::multiplyBlockWithFma(Value ap, Value p, Value c,
                                          Value n0) {
  OpBuilder::InsertionGuard guard(b);
  // K blocks of at most 128: a 32-column slice of B (16 KiB) stays in L1
  // while all row strips read it.
  int64_t depth = codegen::blockSize(s.k, kBlock, kFmaBlockDepth);
  Value kb = beginLoop(s.k, depth);
  Value nt = beginLoop(s.blockCols, kBlock);
  Value n = apply(getAffineDimExpr(0, b.getContext()) +
                      getAffineDimExpr(1, b.getContext()),
                  {n0, nt});
  int64_t fullRows = s.m / kFmaRows * kFmaRows;
  if (fullRows > 0) {
    OpBuilder::InsertionGuard rowsGuard(b);
    Value mt = beginLoop(fullRows, kFmaRows);
    fmaStrip(ap, p, c, kb, n, mt, kFmaRows, depth);
  }
  if (int64_t rest = s.m - fullRows)
    fmaStrip(ap, p, c, kb, n, index(fullRows), rest, depth);
}

void AmxGemmBuilder::fmaStrip(Value ap, Value p, Value c, Value kb, Value n,
                              Value mt, int64_t rows, int64_t depth) {
  OpBuilder::InsertionGuard guard(b);
  MLIRContext *ctx = b.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx);
  auto f32x16 = VectorType::get({16}, b.getF32Type());
  // Two vectors of 16 columns, each inside one panel (panel % 16 == 0).
  Value panelIndex[2][2];
  for (int64_t v = 0; v < 2; ++v) {
    Value col = apply(d0 + v * 16, {n});
    panelIndex[v][0] = apply(d0.floorDiv(s.panel), {col});
    panelIndex[v][1] = apply(d0 % s.panel, {col});
  }
  SmallVector<Value> rowIndex, initial;
  for (int64_t i = 0; i < rows; ++i)
    rowIndex.push_back(apply(d0 + i, {mt}));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t v = 0; v < 2; ++v)
      initial.push_back(vector::LoadOp::create(
          b, loc, f32x16, c,
          ValueRange{rowIndex[i], panelIndex[v][0], panelIndex[v][1]}));
  auto depthLoop = scf::ForOp::create(b, loc, index(0), index(depth),
                                      index(1), initial);
  {
    OpBuilder::InsertionGuard bodyGuard(b);
    b.setInsertionPointToStart(depthLoop.getBody());
    Value k = apply(d0 + getAffineDimExpr(1, ctx),
                    {kb, depthLoop.getInductionVar()});
    Value bVec[2];
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    for (int64_t v = 0; v < 2; ++v)
      bVec[v] = vector::TransferReadOp::create(
          b, loc, f32x16, p, ValueRange{panelIndex[v][0], k, panelIndex[v][1]},
          zero, ArrayRef<bool>{true});
    SmallVector<Value> acc(depthLoop.getRegionIterArgs());
    Value strip = apply(d0.floorDiv(kFmaRows), {mt});
    for (int64_t i = 0; i < rows; ++i) {
      Value x = memref::LoadOp::create(b, loc, ap,
                                       ValueRange{strip, k, index(i)});
      Value xs = vector::BroadcastOp::create(b, loc, f32x16, x);
      for (int64_t v = 0; v < 2; ++v)
        acc[2 * i + v] =
            vector::FMAOp::create(b, loc, xs, bVec[v], acc[2 * i + v]);
    }
    scf::YieldOp::create(b, loc, acc);
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t v = 0; v < 2; ++v)
      vector::StoreOp::create(
          b, loc, depthLoop.getResult(2 * i + v), c,
          ValueRange{rowIndex[i], panelIndex[v][0], panelIndex[v][1]});
}

Value AmxGemmBuilder::readCycles() {
  // An llvm.func of the module, called with llvm.call: the buffer passes
  // that follow reject an intrinsic call (its memory effects are unknown)
  // in the func.func bodies they analyse.
  constexpr StringLiteral kName = "tfm_read_cycles";
  auto function = symbols.lookup<LLVM::LLVMFuncOp>(kName);
  if (!function) {
    OpBuilder top = OpBuilder::atBlockBegin(
        cast<ModuleOp>(symbols.getOp()).getBody());
    function = LLVM::LLVMFuncOp::create(
        top, loc, kName,
        LLVM::LLVMFunctionType::get(top.getI64Type(), {}),
        LLVM::Linkage::Internal);
    symbols.insert(function);
    OpBuilder body = OpBuilder::atBlockBegin(function.addEntryBlock(top));
    Value cycles =
        LLVM::CallIntrinsicOp::create(body, loc, body.getI64Type(),
                                      body.getStringAttr("llvm.readcyclecounter"),
                                      ValueRange{})
            .getResult(0);
    LLVM::ReturnOp::create(body, loc, cycles);
  }
  return LLVM::CallOp::create(b, loc, function, ValueRange{}).getResult();
}

std::pair<Value, Value> AmxGemmBuilder::chooseTiles(Value state,
                                                    Value row) {
  Value tilesCost = memref::LoadOp::create(b, loc, state,
                                           ValueRange{row, index(0)});
  Value fmaCost = memref::LoadOp::create(b, loc, state,
                                         ValueRange{row, index(1)});
  Value blocks = memref::LoadOp::create(b, loc, state,
                                        ValueRange{row, index(2)});
  memref::StoreOp::create(b, loc,
                          arith::AddIOp::create(b, loc, blocks, i64(1)),
                          state, ValueRange{row, index(2)});
  using arith::CmpIPredicate;
  Value tilesCheaper =
      arith::CmpIOp::create(b, loc, CmpIPredicate::ule, tilesCost, fmaCost);
  Value probe = arith::CmpIOp::create(
      b, loc, CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, blocks, i64(kProbeInterval)),
      i64(kProbeInterval - 1));
  // Cheaper one, or on a probe the other; while warming up, each in turn.
  Value pick = arith::XOrIOp::create(b, loc, tilesCheaper, probe);
  Value warmup = arith::CmpIOp::create(b, loc, CmpIPredicate::ult, blocks,
                                       i64(kWarmupBlocks));
  Value evenBlock = arith::CmpIOp::create(
      b, loc, CmpIPredicate::eq,
      arith::AndIOp::create(b, loc, blocks, i64(1)), i64(0));
  Value onTiles = arith::SelectOp::create(b, loc, warmup, evenBlock, pick);
  return {onTiles, arith::OrIOp::create(b, loc, warmup, probe)};
}

void AmxGemmBuilder::recordCost(Value state, Value row, Value onTiles,
                                Value replace, Value cycles) {
  Value column = arith::SelectOp::create(b, loc, onTiles, index(0), index(1));
  Value old = memref::LoadOp::create(b, loc, state, ValueRange{row, column});
  // The path in use: weighted 3:1 towards the new time (a change of the
  // neighbours' load shows after a block or two; one disturbed block does
  // not decide alone). A probe replaces the old time, from 32 blocks ago,
  // and so does each warm-up block.
  Value blended = arith::DivUIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, old,
                            arith::MulIOp::create(b, loc, cycles, i64(3))),
      i64(4));
  Value cost = arith::SelectOp::create(b, loc, replace, cycles, blended);
  memref::StoreOp::create(b, loc, cost, state, ValueRange{row, column});
}

LogicalResult AmxGemmBuilder::buildKernel(Value a, ValueRange bOperand,
                                          Value c, ValueRange buffers,
                                          int64_t rowStride) {
  // {As, Bs} for tiles ({As} prepacked), {Ap} for FMA, {As, Bs, Ap} for
  // both.
  Value as, bs, ap;
  if (choice != AmxPathChoice::Fma) {
    as = buffers[0];
    if (!s.prepacked)
      bs = buffers[1];
  }
  Value p = s.prepacked ? Value() : bOperand[0];
  if (choice != AmxPathChoice::Tiles)
    ap = buffers.back();
  Value cRowStride = index(rowStride);
  if (choice == AmxPathChoice::Measured) {
    OpBuilder top = OpBuilder::atBlockBegin(
        cast<ModuleOp>(symbols.getOp()).getBody());
    MemRefType type = stateType(b);
    auto global = memref::GlobalOp::create(
        top, loc, "tfm_amx_costs", top.getStringAttr("private"), type,
        DenseElementsAttr::get(
            RankedTensorType::get(type.getShape(), type.getElementType()),
            ArrayRef<Attribute>(top.getI64IntegerAttr(0))),
        /*constant=*/false, /*alignment=*/IntegerAttr());
    stateName = symbols.insert(global).getValue().str(); // unique name
  }
  if (choice != AmxPathChoice::Fma)
    requestTilePermission();
  splitA(a, as, ap);
  int64_t blocks = s.n / s.blockCols;
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(blocks)}, ValueRange{},
      std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value block = forall.getInductionVar(0);
  Value n0 = apply(getAffineDimExpr(0, b.getContext()) * s.blockCols,
                   {block});
  // The thread's own buffer. Inside the block loop's parallel region the
  // thread number is below the caller's omp_get_max_threads(), the buffer
  // count; a block loop left sequential (few blocks) in a caller that is
  // itself an OpenMP thread reads the caller's number: one thread runs all
  // blocks then, and any buffer will do.
  Value slot = index(0);
  if (parallel && bs) {
    Value last = arith::SubIOp::create(
        b, loc, memref::DimOp::create(b, loc, bs, 0), index(1));
    slot = arith::MinUIOp::create(b, loc, openmpIndex("omp_get_thread_num"),
                                  last);
  }
  switch (choice) {
  case AmxPathChoice::Tiles:
    return multiplyBlockOnTiles(bOperand, as, bs, c, cRowStride, slot, n0);
  case AmxPathChoice::Fma:
    multiplyBlockWithFma(ap, p, c, n0);
    return success();
  case AmxPathChoice::Measured:
    break;
  }
  // Each thread times its blocks on either path (its row of the kernel's
  // state, kept across calls) and takes the cheaper: a core's tile unit
  // shared with another hardware thread can run at half rate or less, and
  // then FMA is faster. Threads beyond the state's rows share the last
  // (a race on a cost only changes a choice).
  Value row = index(0);
  if (parallel)
    row = arith::MinUIOp::create(b, loc, slot, index(kStateRows - 1));
  Value state = memref::GetGlobalOp::create(b, loc, stateType(b),
                                            stateName);
  auto [onTiles, replace] = chooseTiles(state, row);
  Value start = readCycles();
  auto path = scf::IfOp::create(b, loc, onTiles, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard branchGuard(b);
    b.setInsertionPointToStart(path.thenBlock());
    if (failed(multiplyBlockOnTiles(bOperand, as, bs, c, cRowStride, slot,
                                    n0)))
      return failure();
    b.setInsertionPointToStart(path.elseBlock());
    multiplyBlockWithFma(ap, p, c, n0);
  }
  Value cycles = arith::SubIOp::create(b, loc, readCycles(), start);
  recordCost(state, row, onTiles, replace, cycles);
  return success();
}

//===- AmxKernel.cpp - the tile code of an AMX GEMM -----------------------===//
//
// The AmxGemmBuilder members (AmxKernel.h) that emit the tile path: the
// kernel functions and the C functions they call, the workspace buffers,
// the bf16 split of A and of B's blocks into tile order, and each block of
// columns on tiles (32 x 32 blocks of C, the part products' tile loads and
// multiplies, the last M % 32 rows in a function of their own). Apart from
// when tiles run (AmxChoice.cpp) and the pass (CpuAmxContractions.cpp).
//
//===----------------------------------------------------------------------===//
#include "AmxKernel.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tfm;

func::FuncOp AmxGemmBuilder::createKernelFunction(StringRef name,
                                                 TypeRange arguments) {
  OpBuilder top = OpBuilder::atBlockEnd(
      cast<ModuleOp>(symbols.getOp()).getBody());
  auto function = func::FuncOp::create(top, loc, name,
                                       top.getFunctionType(arguments, {}));
  function.setPrivate();
  function->setAttr("llvm.linkage",
                    LLVM::LinkageAttr::get(b.getContext(),
                                           LLVM::Linkage::Internal));
  symbols.insert(function); // unique name
  function.addEntryBlock();
  return function;
}

Value AmxGemmBuilder::callExternal(StringRef name, TypeRange results,
                                   ValueRange operands) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  if (!module.lookupSymbol<func::FuncOp>(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    func::FuncOp::create(b, loc, name,
                         b.getFunctionType(operands.getTypes(), results))
        .setPrivate();
  }
  return func::CallOp::create(b, loc, name, results, operands).getResult(0);
}

void AmxGemmBuilder::requestTilePermission() {
  // glibc's arch_prctl(int code, unsigned long addr) (x86-64 Linux).
  constexpr int64_t kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  callExternal("arch_prctl", b.getI32Type(),
               ValueRange{arith::ConstantOp::create(
                              b, loc, b.getI32IntegerAttr(kArchReqXcompPerm)),
                          arith::ConstantOp::create(
                              b, loc, b.getI64IntegerAttr(kXfeatureXtiledata))});
}

Value AmxGemmBuilder::openmpIndex(StringRef function) {
  Value value = callExternal(function, b.getI32Type(), ValueRange{});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
}

SmallVector<Value, kAmxF32Parts> AmxGemmBuilder::split(Value v) {
  auto f32 = cast<VectorType>(v.getType());
  if (f32.getElementType().isBF16())
    return {v};
  auto bf16 = VectorType::get(f32.getShape(), b.getBF16Type());
  SmallVector<Value, kAmxF32Parts> parts;
  Value rest = v;
  for (int64_t i = 0; i < kAmxF32Parts; ++i) {
    parts.push_back(arith::TruncFOp::create(b, loc, bf16, rest));
    if (i + 1 < kAmxF32Parts)
      rest = arith::SubFOp::create(
          b, loc, rest, arith::ExtFOp::create(b, loc, f32, parts[i]));
  }
  return parts;
}

/// 16 elements of `memref` at `indices`, in its element type.
static Value read16(OpBuilder &b, Location loc, Value memref,
                    ValueRange indices) {
  Type element = getElementTypeOrSelf(memref.getType());
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  return vector::TransferReadOp::create(b, loc,
                                        VectorType::get({16}, element), memref,
                                        indices, zero, ArrayRef<bool>{true});
}

/// As[i, m, :] = part i of A[m, :] (in tile order), and (with `ap`) A in
/// strips of kFmaRows rows for the FMA path, Ap[m / R, k, m % R] = A[m, k],
/// rows in parallel.
void AmxGemmBuilder::splitA(Value a, Value as, Value ap) {
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(s.m)}, ValueRange{},
      std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value m = forall.getInductionVar(0);
  auto loop = scf::ForOp::create(b, loc, index(0), index(s.k), index(16));
  b.setInsertionPointToStart(loop.getBody());
  Value k = loop.getInductionVar();
  Value v = read16(b, loc, a, ValueRange{m, k});
  MLIRContext *ctx = b.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx);
  if (choice != AmxPathChoice::Fma) {
    SmallVector<Value, kAmxF32Parts> parts = split(v);
    // Tile order: As[i, m / 16, k / 32, m % 16, k % 32], each 16 x 32 tile
    // 1 KiB contiguous (rows K apart would all fall in one L1 set).
    Value rowTile = apply(d0.floorDiv(kAmxTileRows), {m});
    Value row = apply(d0 % kAmxTileRows, {m});
    Value colTile = apply(d0.floorDiv(kAmxTileBf16Cols), {k});
    Value col = apply(d0 % kAmxTileBf16Cols, {k});
    for (int64_t i = 0; i < s.parts; ++i)
      vector::StoreOp::create(b, loc, parts[i], as,
                              ValueRange{index(i), rowTile, colTile, row, col});
  }
  if (ap) {
    // A strip's kFmaRows values of one K step are then one load stream:
    // its rows K apart (8 KiB for K = 2048) made the FMA path 1.3-1.5x
    // slower than the FMA pipeline, which packs A the same way.
    Value strip = apply(d0.floorDiv(kFmaRows), {m});
    Value lane = apply(d0 % kFmaRows, {m});
    for (int64_t i = 0; i < 16; ++i) {
      Value x = vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i});
      memref::StoreOp::create(b, loc, x, ap,
                              ValueRange{strip, apply(d0 + i, {k}), lane});
    }
  }
}

/// Bs[slot] = the parts of B[kb : kb + Kb, n0 : n0 + Nb] in tile order:
/// Bs[slot, i, c, q, 2 x + t] = part i of B[kb + 2 q + t, n0 + 16 c + x].
void AmxGemmBuilder::splitBBlock(Value p, Value bs, Value block, Value n0,
                                 Value kb) {
  OpBuilder::InsertionGuard guard(b);
  auto cols = scf::ForOp::create(b, loc, index(0), index(s.blockCols / 16),
                                 index(1));
  b.setInsertionPointToStart(cols.getBody());
  Value col = cols.getInductionVar();
  MLIRContext *ctx = b.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx);
  Value n = apply(d0 + d1 * 16, {n0, col});
  Value j = apply(d0.floorDiv(s.panel), {n});
  Value r = apply(d0 % s.panel, {n});
  auto pairs = scf::ForOp::create(b, loc, index(0), index(s.blockDepth / 2),
                                  index(1));
  b.setInsertionPointToStart(pairs.getBody());
  Value q = pairs.getInductionVar();
  Value k0 = apply(d0 + d1 * 2, {kb, q});
  Value k1 = apply(d0 + d1 * 2 + 1, {kb, q});
  SmallVector<Value, kAmxF32Parts> evenParts = split(read16(b, loc, p, {j, k0, r}));
  SmallVector<Value, kAmxF32Parts> oddParts = split(read16(b, loc, p, {j, k1, r}));
  SmallVector<int64_t> interleave;
  for (int64_t x = 0; x < 16; ++x) {
    interleave.push_back(x);
    interleave.push_back(16 + x);
  }
  for (int64_t i = 0; i < s.parts; ++i) {
    Value pair = vector::ShuffleOp::create(b, loc, evenParts[i], oddParts[i],
                                           interleave);
    vector::StoreOp::create(b, loc, pair, bs,
                            ValueRange{block, index(i), col, q, index(0)});
  }
}

/// C[:, n0 : n0 + Nb] += A[:, kb : kb + Kb] * B[kb : kb + Kb, n0 : n0 + Nb]
/// from the parts in As and Bs[block], 32 x 32 at a time; the last rows
/// (M % 32) in tiles of fewer rows.
LogicalResult AmxGemmBuilder::multiplyBlock(Value as, ValueRange bs, Value c,
                                            Value cRowStride, Value block,
                                            Value n0, Value kb) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<scf::ForOp> depthLoops;
  int64_t fullRows = s.m / kBlock * kBlock;
  if (fullRows > 0) {
    // (Columns outer measured the same.)
    OpBuilder::InsertionGuard loopsGuard(b);
    Value mt = beginLoop(fullRows);
    Value nt = beginLoop(s.blockCols);
    depthLoops.push_back(multiplyTiles(as, bs, c, cRowStride, block, n0, kb,
                                       mt, nt, {kAmxTileRows, kAmxTileRows}));
  }
  // The last M % 32 rows: tiles of that many rows (one or two), which load
  // and store no row of C beyond M, and read only A's rows below M. In a
  // function of their own: LLVM configures each tile register with one
  // shape per function, and the 32-row blocks use all eight.
  if (int64_t rest = s.m - fullRows) {
    SmallVector<int64_t, 2> tileRows = {std::min(rest, kAmxTileRows)};
    if (rest > kAmxTileRows)
      tileRows.push_back(rest - kAmxTileRows);
    SmallVector<Value> operands = {as};
    llvm::append_range(operands, bs);
    llvm::append_range(operands, ValueRange{c, cRowStride, block, n0, kb});
    func::FuncOp tail = createKernelFunction(
        "tfm_amx_gemm_rows", ValueRange(operands).getTypes());
    // Kept a call: inlined, its tiles would share the registers' shapes.
    tail->setAttr("passthrough",
                  b.getArrayAttr({b.getStringAttr("noinline")}));
    {
      OpBuilder::InsertionGuard tailGuard(b);
      Block *body = &tail.getBody().front();
      b.setInsertionPointToStart(body);
      Value mt = index(fullRows);
      Value nt = beginLoop(s.blockCols);
      ValueRange args = body->getArguments();
      size_t nb = bs.size();
      depthLoops.push_back(multiplyTiles(
          args[0], args.slice(1, nb), args[nb + 1], args[nb + 2],
          args[nb + 3], args[nb + 4], args[nb + 5], mt, nt, tileRows));
      b.setInsertionPointToEnd(body);
      func::ReturnOp::create(b, loc);
    }
    func::CallOp::create(b, loc, tail, operands);
  }
  // Unrolled (K block / 32 steps, 8 with the derived plan): tiles cannot
  // cross blocks, as the LLVM lowering of control flow has no conversion
  // for them.
  for (scf::ForOp loop : depthLoops)
    if (failed(loopUnrollFull(loop)))
      return failure();
  return success();
}

Value AmxGemmBuilder::beginLoop(int64_t upper, int64_t step) {
  auto loop = scf::ForOp::create(b, loc, index(0), index(upper), index(step));
  b.setInsertionPointToStart(loop.getBody());
  return loop.getInductionVar();
}

scf::ForOp AmxGemmBuilder::multiplyTiles(Value as, ValueRange bs, Value c,
                                         Value cRowStride, Value block,
                                         Value n0, Value kb, Value mt,
                                         Value nt,
                                         ArrayRef<int64_t> tileRows) {
  OpBuilder::InsertionGuard guard(b);
  MLIRContext *ctx = b.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx);

  int64_t rowTiles = tileRows.size();
  SmallVector<amx::TileType, 2> cTiles, aTiles;
  SmallVector<Value, 2> rows;
  for (int64_t x = 0; x < rowTiles; ++x) {
    cTiles.push_back(
        amx::TileType::get({tileRows[x], kAmxTileF32Cols}, b.getF32Type()));
    aTiles.push_back(
        amx::TileType::get({tileRows[x], kAmxTileBf16Cols}, b.getBF16Type()));
    rows.push_back(apply(d0 + x * kAmxTileRows, {mt}));
  }
  auto bTileType =
      amx::TileType::get({kAmxTileRows, kAmxTileBf16Cols}, b.getBF16Type());
  // C's tiles, addressed as C[m, j, r] with rows cRowStride apart, stay in
  // tile registers for the whole K block: storing a tile and loading it
  // again in the next K step stalls (measured: 750 against 330 cycles a
  // step).
  Value cIndex[2][2];
  for (int64_t y = 0; y < 2; ++y) {
    Value n = apply(d0 + d1 + y * kAmxTileF32Cols, {n0, nt});
    cIndex[y][0] = apply(d0.floorDiv(s.panel), {n});
    cIndex[y][1] = apply(d0 % s.panel, {n});
  }
  SmallVector<Value> initial;
  for (int64_t x = 0; x < rowTiles; ++x)
    for (int64_t y = 0; y < 2; ++y)
      initial.push_back(amx::TileLoadOp::create(
          b, loc, cTiles[x], c,
          ValueRange{rows[x], cIndex[y][0], cIndex[y][1]}, cRowStride));
  auto depthLoop = scf::ForOp::create(b, loc, index(0), index(s.blockDepth),
                                      index(kBlock), initial);
  {
    OpBuilder::InsertionGuard bodyGuard(b);
    b.setInsertionPointToStart(depthLoop.getBody());
    Value ks = depthLoop.getInductionVar();
    SmallVector<Value> acc(depthLoop.getRegionIterArgs());
    Value k = apply(d0 + d1, {kb, ks});
    Value kTile = apply(d0.floorDiv(kAmxTileBf16Cols), {k});
    // B's tile of part j for C's columns y: in the thread's buffer,
    // Bs[block, j, nt / 16 + y, ks / 2]; prepacked, S_j[(n0 + nt) / 16 + y,
    // (kb + ks) / 2].
    auto bTile = [&](int64_t j,
                     int64_t y) -> std::pair<Value, SmallVector<Value>> {
      if (!s.prepacked)
        return {bs[0],
                {block, index(j), apply(d0.floorDiv(16) + y, {nt}),
                 apply(d0.floorDiv(2), {ks}), index(0)}};
      return {bs[j],
              {apply((d0 + d1).floorDiv(16) + y, {n0, nt}),
               apply(d0.floorDiv(2), {k}), index(0)}};
    };
    // The six part products in an order that keeps a part of A or of B in
    // its tiles from one product to the next: 8 pairs of tile loads a step
    // instead of 9 (A part by A part, each with its B parts).
    // bf16 operands (one part each): the one product.
    constexpr std::pair<int64_t, int64_t> kSplitProducts[] = {
        {0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 0}, {2, 0}};
    ArrayRef<std::pair<int64_t, int64_t>> products = kSplitProducts;
    if (s.parts == 1)
      products = products.take_front();
    SmallVector<Value, 2> aParts(rowTiles);
    Value bParts[2];
    int64_t loadedA = -1, loadedB = -1;
    for (auto [i, j] : products) {
      if (i != loadedA) {
        for (int64_t x = 0; x < rowTiles; ++x)
          aParts[x] = amx::TileLoadOp::create(
              b, loc, aTiles[x], as,
              ValueRange{index(i), apply(d0.floorDiv(kAmxTileRows), {rows[x]}),
                         kTile, index(0), index(0)});
        loadedA = i;
      }
      if (j != loadedB) {
        for (int64_t y = 0; y < 2; ++y) {
          auto [memref, indices] = bTile(j, y);
          bParts[y] = amx::TileLoadOp::create(b, loc, bTileType, memref,
                                              indices);
        }
        loadedB = j;
      }
      for (int64_t x = 0; x < rowTiles; ++x)
        for (int64_t y = 0; y < 2; ++y)
          acc[2 * x + y] = amx::TileMulFOp::create(
              b, loc, cTiles[x], aParts[x], bParts[y], acc[2 * x + y]);
    }
    scf::YieldOp::create(b, loc, acc);
  }
  for (int64_t x = 0; x < rowTiles; ++x)
    for (int64_t y = 0; y < 2; ++y)
      amx::TileStoreOp::create(b, loc, c,
                               ValueRange{rows[x], cIndex[y][0], cIndex[y][1]},
                               depthLoop.getResult(2 * x + y), cRowStride);
  return depthLoop;
}

LogicalResult AmxGemmBuilder::multiplyBlockOnTiles(ValueRange bOperand,
                                                   Value as, Value bs, Value c,
                                                   Value cRowStride,
                                                   Value slot, Value n0) {
  OpBuilder::InsertionGuard guard(b);
  auto depthBlocks =
      scf::ForOp::create(b, loc, index(0), index(s.k), index(s.blockDepth));
  b.setInsertionPointToStart(depthBlocks.getBody());
  Value kb = depthBlocks.getInductionVar();
  if (s.prepacked)
    return multiplyBlock(as, bOperand, c, cRowStride, slot, n0, kb);
  splitBBlock(bOperand[0], bs, slot, n0, kb);
  return multiplyBlock(as, bs, c, cRowStride, slot, n0, kb);
}

SmallVector<Value> AmxGemmBuilder::allocateBuffers() {
  IntegerAttr alignment = b.getI64IntegerAttr(64);
  SmallVector<Value> buffers;
  if (choice != AmxPathChoice::Fma) {
    Type bf16 = b.getBF16Type();
    auto asType = MemRefType::get(
        {s.parts, llvm::divideCeilSigned(s.m, kAmxTileRows), s.k / kAmxTileBf16Cols,
         kAmxTileRows, kAmxTileBf16Cols},
        bf16);
    // B's parts: one buffer (3 x Nb x Kb bf16) per thread, indexed by
    // omp_get_thread_num(), not per block: an LM head's 785 blocks would
    // take 116 MiB.
    auto bsType = MemRefType::get({parallel ? ShapedType::kDynamic : 1,
                                   s.parts, s.blockCols / 16,
                                   s.blockDepth / 2, 2 * 16},
                                  bf16);
    buffers.push_back(memref::AllocOp::create(b, loc, asType, alignment));
    if (s.prepacked)
      return buffers; // B's parts are bound; choice is tiles.
    SmallVector<Value> slots;
    if (parallel)
      slots.push_back(openmpIndex("omp_get_max_threads"));
    buffers.push_back(
        memref::AllocOp::create(b, loc, bsType, slots, alignment));
  }
  if (choice != AmxPathChoice::Tiles) {
    auto apType = MemRefType::get(
        {llvm::divideCeilSigned(s.m, kFmaRows), s.k, kFmaRows}, b.getF32Type());
    buffers.push_back(memref::AllocOp::create(b, loc, apType, alignment));
  }
  // No dealloc: the workspace plan, or else the deallocation pipeline,
  // owns the buffers.
  return buffers;
}

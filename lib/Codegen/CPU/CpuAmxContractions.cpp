//===- CpuAmxContractions.cpp - f32 GEMMs on AMX tiles as bf16x6 ----------===//
//
// tfm-cpu-amx-contractions (buffers, after bufferization, before the
// workspace is planned): each packed f32 GEMM that tfm-cpu-configure planned
// for AMX (`amx` in tfm.cpu_tiling) becomes code on AMX tiles. See Passes.td
// for the arithmetic (bf16x6: three bf16 parts per operand, the six part
// products whose order is at most 2) and why it is about as accurate as f32.
//
// The code for C[M, N] += A[M, K] * B[K, N] (B read from the packed panels
// P[j, k, r] = B[k, j * panel + r]):
//
//   As = workspace [3][ceil(M / 16)][K / 32][16][32] bf16 // A's parts, tiles
//   forall m in [0, M):  As[:, m, :] = split(A[m, :])
//                        Ap[m / 12, :, m % 12] = A[m, :]  // FMA path's A
//   Bs = [threads][3][Nb / 16][Kb / 2][32] bf16   // one per OpenMP thread
//   forall block in [0, N / Nb):                  // threads share blocks
//     t = omp_get_thread_num()
//     if the thread's costs say tiles (else: 12 x 32 FMA strips from Ap
//                                      and the panels; both timed):
//     for kb in [0, K) step Kb:
//       Bs[t] = split(B[kb : kb + Kb, block's Nb columns]), with the
//                   K pairs interleaved as the tiles read them (VNNI)
//       for mt in [0, M - M % 32) step 32, nt in [0, Nb) step 32:
//         c[2][2] = 16 x 16 tiles of C[mt : mt + 32, n0 + nt : n0 + nt + 32]
//         for ks in [0, Kb) step 32:                // c stays in tiles
//         for (i, j) in (0,0) (0,1) (0,2) (1,1) (1,0) (2,0):  // i + j <= 2
//           a[2] = As[i, mt : mt + 32, kb + ks : +32]  // if i changed
//           b[2] = Bs[t, j, nt / 16 .., ks / 2]        // if j changed
//           c[x][y] += a[x] * b[y]
//         store c
//       tfm_amx_gemm_rows(...)  // the last M % 32 rows, as above on one
//                               // or two tiles of fewer rows, not inlined
//
// Eight tile registers hold the 4 C, 2 A and 2 B tiles. A is split by rows
// in parallel, before the blocks; B's split is done once per call (a block
// holds all M rows). A GEMM in tfm-cpu-split-amx-weights' form has B bound
// as its parts, [3][N / 16][K / 2][32] in the tiles' order: it skips B's
// split and its buffer, and loads b[2] from the parts at column tile
// (n0 + nt) / 16 and pair (kb + ks) / 2. The code after the allocations is
// a kernel function shared by the GEMMs of one shape and operand types.
//
// The costs (choice=measured; the default, tiles, has none): per kernel and
// thread, the cycles a block took on tiles and with FMA. A thread takes the
// cheaper and times the other again every 32 blocks: on a core whose tile unit is shared
// with another hardware thread (another tenant's, on a cloud VM), tiles can
// run at half rate or less and FMA is then faster. Which path made a block
// then depends on the machine's load, so its last bits do too (both are f32
// GEMMs in accuracy); choice=tiles, the default, gives the same bits on
// every run and thread count.
//
//===----------------------------------------------------------------------===//
#include "tfm/Pipelines/Passes.h"

#include "PipelinePasses.h"
#include "TilingUtils.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUAMXCONTRACTIONS
#include "tfm/Pipelines/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

/// The register block: 2 x 2 C tiles.
static constexpr int64_t kBlock = 32;
/// GEMMs of fewer rows keep the FMA path: B's conversion, made on every
/// call, must be paid for by M rows. Measured for 768 x 3072 on one thread
/// (emeraldrapids): AMX about 0.9 ms more a call and 0.024 against 0.036 ms
/// a row, even near M = 64 (2.3 against 2.2 ms), 1.7 against 1.3 ms at 32.
/// (Decode's GEMVs, M = 1, read each weight once; converted, they would
/// read and write it three times more.)
static constexpr int64_t kMinRows = 64;
/// The FMA path's strips: 12 rows x 32 columns, 24 accumulators of the 32
/// AVX-512 registers; K blocks of at most 128.
static constexpr int64_t kFmaRows = 12;
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
/// How a kernel picks between tiles and FMA for a block of columns.
enum class AmxPathChoice { Measured, Tiles, Fma };

/// The cost state of a kernel: per thread, cycles a block on tiles, with
/// FMA, and blocks run.
MemRefType stateType(OpBuilder &b) {
  return MemRefType::get({kStateRows, kStateRowWords}, b.getI64Type());
}
} // namespace

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
      !generic || !codegen::isOutermost(op))
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

namespace {
/// Emits the code of one AMX GEMM in place of its linalg op.
class AmxGemmBuilder {
public:
  AmxGemmBuilder(OpBuilder &b, Location loc, const AmxContraction &shape,
                 bool parallel, AmxPathChoice choice, SymbolTable &symbols)
      : b(b), loc(loc), s(shape), parallel(parallel), choice(choice),
        symbols(symbols) {}

  /// A new private function of the module, internal in the object (two
  /// models linked into one program must not share, or clash on, kernels
  /// of different shapes), named `name` made unique, with an entry block.
  func::FuncOp createKernelFunction(StringRef name, TypeRange arguments);

  /// The workspace buffers of the kernel, where the builder is: A's parts
  /// and B's parts (tiles), then A in FMA strips (FMA).
  SmallVector<Value> allocateBuffers();
  /// The GEMM's code, where the builder is (a kernel function's body), for
  /// C's rows `rowStride` elements apart. `b` is the packed panels P, or
  /// (prepacked) B's three parts as [N / 16, K / 2, 32].
  LogicalResult buildKernel(Value a, ValueRange b, Value c, ValueRange buffers,
                            int64_t rowStride);

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i64(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value apply(AffineExpr e, ValueRange operands) {
    return affine::makeComposedAffineApply(b, loc, e,
                                           getAsOpFoldResult(operands));
  }
  /// Linux lets a process use AMX tile data only once it asked (arch_prctl
  /// ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); before, the first tile
  /// instruction faults. The code asks itself, so that it runs in any
  /// process (the runner, mlir-runner, a program linking an object): one
  /// system call per GEMM call (a fraction of a microsecond; the permission
  /// is the process's, for every thread). Its result is not checked: for
  /// the host, tfm-cpu-configure planned tiles only after the same request
  /// succeeded; code compiled for a named CPU and run where Linux refuses
  /// the tiles faults at the first one, like any code for a CPU it is not
  /// running on.
  void requestTilePermission();
  /// A call of the C function `name` (declared in the module if needed).
  Value callExternal(StringRef name, TypeRange results, ValueRange operands);
  /// omp_get_max_threads() or omp_get_thread_num() as an index.
  Value openmpIndex(StringRef function);
  /// The three bf16 parts of a vector of f32.
  /// The bf16 parts of a vector: three of f32, a bf16 vector itself.
  SmallVector<Value, kAmxF32Parts> split(Value v);
  void splitA(Value a, Value as, Value ap);
  void splitBBlock(Value p, Value bs, Value block, Value n0, Value kb);
  /// `bs`: the thread's buffer of B's parts, Bs (its `block`), or
  /// (prepacked) the three parts of the whole B.
  LogicalResult multiplyBlock(Value as, ValueRange bs, Value c,
                              Value cRowStride, Value block, Value n0,
                              Value kb);
  /// The column block [n0, n0 + Nb) on tiles: per K block, B's parts
  /// (unless prepacked), then multiplyBlock.
  LogicalResult multiplyBlockOnTiles(ValueRange bOperand, Value as, Value bs,
                                     Value c, Value cRowStride, Value slot,
                                     Value n0);
  /// The column block [n0, n0 + Nb) with f32 FMAs, from A's strips (Ap)
  /// and the packed panels as they are (no parts).
  void multiplyBlockWithFma(Value ap, Value p, Value c, Value n0);
  /// C[mt : mt + rows, 32 columns at n] += A[.., kb : kb + depth] * B[..],
  /// A read from its strips in `ap`.
  void fmaStrip(Value ap, Value p, Value c, Value kb, Value n, Value mt,
                int64_t rows, int64_t depth);
  /// The time-stamp counter (llvm.readcyclecounter: rdtsc on x86).
  Value readCycles();
  /// The path for the next block of this thread, from its costs in `state`
  /// (row `row`: cycles a block on tiles, with FMA, blocks run): whichever
  /// is cheaper, each measured first (kWarmupBlocks), and the other tried
  /// again every kProbeInterval blocks.
  /// Also whether this block's time replaces the path's cost (a probe of
  /// the dearer path, or warming up) rather than updating it.
  std::pair<Value, Value> chooseTiles(Value state, Value row);
  /// Records that a block took `cycles` on the chosen path.
  void recordCost(Value state, Value row, Value onTiles, Value replace,
                  Value cycles);
  /// C[mt : mt + sum(tileRows), n0 + nt : n0 + nt + 32] over the K block:
  /// one or two tiles of rows (tileRows) by two of 16 columns; returns its
  /// K-step loop, left to unroll.
  scf::ForOp multiplyTiles(Value as, ValueRange bs, Value c,
                           Value cRowStride, Value block, Value n0, Value kb,
                           Value mt, Value nt, ArrayRef<int64_t> tileRows);
  /// A loop over [0, upper) by `step` where the builder is; the builder
  /// moves into its body.
  Value beginLoop(int64_t upper, int64_t step = kBlock);

  OpBuilder &b;
  Location loc;
  AmxContraction s;
  /// Blocks run on OpenMP threads: B's parts get a buffer per thread.
  bool parallel;
  /// Tiles, FMA, or the faster as measured, for each block.
  AmxPathChoice choice;
  /// The kernel's cost state (a memref.global), with choice == Measured.
  std::string stateName;
  /// The module's, for the kernel functions.
  SymbolTable &symbols;
};
} // namespace

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

namespace {
struct CpuAmxContractionsPass
    : public tfm::impl::TfmCpuAmxContractionsBase<CpuAmxContractionsPass> {
  using Base::Base;
  // On the module: the GEMMs' code declares arch_prctl there.
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<AmxPathChoice> path =
        llvm::StringSwitch<std::optional<AmxPathChoice>>(choice)
            .Case("measured", AmxPathChoice::Measured)
            .Case("tiles", AmxPathChoice::Tiles)
            .Case("fma", AmxPathChoice::Fma)
            .Default(std::nullopt);
    if (!path) {
      module.emitError() << "tfm-cpu-amx-contractions: choice must be "
                            "measured, tiles or fma, not '"
                         << choice << "'";
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::GenericOp, AmxContraction>> gemms;
    module.walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (std::optional<AmxContraction> shape = matchAmxContraction(op))
        gemms.emplace_back(op, *shape);
    });
    SymbolTable symbols(module);
    // One kernel function per GEMM shape and operand types, called by every
    // GEMM that has them (the 12 layers of a model share 4): the passes that
    // follow, and LLVM, see each unrolled kernel once (outlining and
    // deduplication come later in the pipeline).
    llvm::StringMap<func::FuncOp> kernels;
    for (auto [op, shape] : gemms) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      // tfm-cpu-split-amx-weights' form: C[M, J, panel / 16, 16] seen as
      // C[M, J, panel], as the kernel addresses it.
      SmallVector<ReassociationIndices> cPanels = {{0}, {1}, {2, 3}};
      SmallVector<ReassociationIndices> aRows = {{0}, {1, 2}};
      SmallVector<ReassociationIndices> partTiles = {{0, 1}, {2}, {3, 4}};
      Value c = op.getDpsInitOperand(0)->get();
      auto cType = cast<MemRefType>(c.getType());
      bool collapsible = true;
      if (shape.prepacked) {
        auto collapses = [](Value v, ArrayRef<ReassociationIndices> groups) {
          return memref::CollapseShapeOp::isGuaranteedCollapsible(
              cast<MemRefType>(v.getType()), groups);
        };
        collapsible = collapses(c, cPanels) &&
                      collapses(op.getDpsInputOperand(0)->get(), aRows);
        for (int64_t i = 1; i <= shape.parts; ++i)
          collapsible = collapsible &&
                        collapses(op.getDpsInputOperand(i)->get(), partTiles);
        if (collapsible)
          cType = memref::CollapseShapeOp::computeCollapsedType(cType, cPanels);
      }
      std::optional<int64_t> rowStride =
          collapsible ? getAmxRowStride(cType, shape.panel) : std::nullopt;
      if (!collapsible) {
        op.emitRemark("tfm-cpu-amx-contractions: an operand's split-weight "
                      "views do not collapse back to A[M, K], B's parts "
                      "[N / 16, K / 2, 32] or C[M, J, panel]; left to "
                      "scalar loops");
        op->removeAttr(kCpuTilingAttrName);
        continue;
      }
      if (!rowStride) {
        // The FMA path skipped it: without AMX it would run as scalar
        // loops, correct but slow. Say so rather than degrade silently.
        op.emitRemark("tfm-cpu-amx-contractions: C's layout is not tiles' "
                      "(rows a static stride apart, panels contiguous); left "
                      "to scalar loops");
        op->removeAttr(kCpuTilingAttrName);
        continue;
      }
      Value a = op.getDpsInputOperand(0)->get();
      SmallVector<Value> bOperand = {op.getDpsInputOperand(1)->get()};
      if (shape.prepacked) {
        // The views back to A[M, K] and B's parts [N / 16, K / 2, 32].
        a = memref::CollapseShapeOp::create(b, loc, a, aRows);
        bOperand.clear();
        for (int64_t i = 1; i <= shape.parts; ++i)
          bOperand.push_back(memref::CollapseShapeOp::create(
              b, loc, op.getDpsInputOperand(i)->get(), partTiles));
        c = memref::CollapseShapeOp::create(b, loc, c, cPanels);
      }
      // B exists only as its bf16 parts, or the operands are bf16 (the FMA
      // path reads f32): no FMA path to choose.
      AmxPathChoice gemmChoice = shape.prepacked || shape.parts == 1
                                     ? AmxPathChoice::Tiles
                                     : *path;
      AmxGemmBuilder caller(b, loc, shape, parallel, gemmChoice, symbols);
      SmallVector<Value> operands = {a};
      llvm::append_range(operands, bOperand);
      operands.push_back(c);
      llvm::append_range(operands, caller.allocateBuffers());
      std::string key;
      llvm::raw_string_ostream os(key);
      llvm::interleave(ValueRange(operands).getTypes(), os, ";");
      os << "|" << shape.blockCols << "x" << shape.blockDepth;
      func::FuncOp &kernel = kernels[key];
      if (!kernel) {
        kernel = caller.createKernelFunction(
            "tfm_amx_gemm", ValueRange(operands).getTypes());
        Block *body = &kernel.getBody().front();
        OpBuilder inside = OpBuilder::atBlockBegin(body);
        AmxGemmBuilder builder(inside, loc, shape, parallel, gemmChoice,
                               symbols);
        size_t nb = bOperand.size();
        ValueRange args = body->getArguments();
        if (failed(builder.buildKernel(args[0], args.slice(1, nb),
                                       args[nb + 1], args.drop_front(nb + 2),
                                       *rowStride)))
          return signalPassFailure();
        func::ReturnOp::create(inside, loc);
      }
      func::CallOp::create(b, loc, kernel, operands);
      op.erase();
    }
  }
};
} // namespace

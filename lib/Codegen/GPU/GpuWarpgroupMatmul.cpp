//===- GpuWarpgroupMatmul.cpp - f16 matmuls as TMA + wgmma kernels --------===//
//
// --tfm-gpu-warpgroup-matmul: see Passes.td. Like the mma.sync pass
// (GpuTensorCoreMatmul.cpp), the kernel of each matmul shape is written as
// MLIR text (a host function that encodes the TMA descriptors and launches a
// gpu.launch), parsed, and called in place of the linalg.matmul.
//
// Every nvgpu.warpgroup.mma here is one wgmma.m64n128k16: MLIR 22's lowering
// of a larger op advances the B descriptor by K rows of the whole tile, which
// is right only for an [K, N] (N-major) B, and the A descriptor by rows of
// the op's own K extent. One instruction per op, with descriptors whose start
// addresses are computed here, is right for both B layouts.
//
//===----------------------------------------------------------------------===//
#include "GpuMatmulKernels.h"
#include "KernelEmitter.h"

#include "tfm/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUWARPGROUPMATMUL
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
namespace gpu_kernels = mlir::tfm::gpu_kernels;
using gpu_kernels::KernelEmitter;

namespace {
/// A block (one warpgroup) computes BM x 128 of C, BM = 128 or 64, as BM/64
/// accumulators of 64x128 f32; K advances by 64 (one 128-byte swizzle row of
/// f16).
constexpr int64_t kBN = 128, kBK = 64, kThreads = 128;
/// wgmma shape m64n128k16.
constexpr int64_t kWgM = 64, kWgK = 16;
/// Row stride (in f32) of the accumulator tile staged in shared memory for
/// the epilogue: padded against bank conflicts, 16-byte aligned rows.
constexpr int64_t kEpilogueStride = kBN + 4;
/// 128-byte swizzled TMA tiles need 1024-byte aligned shared memory.
constexpr int64_t kSwizzleAlign = 1024;

struct MatmulShape {
  int64_t m, n, k;
  bool transposedB; // B is [N, K]
  int64_t bm;       // block tile rows: 128, or 64 where M is not a multiple
};

struct KernelLayout {
  int64_t stages;
  int64_t aBytes, bBytes, slotBytes, smemBytes;
  KernelLayout(const MatmulShape &s, int64_t stages) : stages(stages) {
    aBytes = s.bm * kBK * 2;
    bBytes = kBK * kBN * 2;
    slotBytes = aBytes + bBytes;
    int64_t epilogue = s.bm * kEpilogueStride * 4;
    smemBytes = kSwizzleAlign + std::max(stages * slotBytes, epilogue);
  }
};

/// Writes the kernel for one shape: the host part (TMA descriptors, the
/// launch), the prologue (shared memory, mbarriers, the first stages - 1 K
/// tiles in flight), the main loop (wait for a K tile, issue its wgmmas,
/// refill the slot of the previous tile) and the epilogue (C += the
/// accumulators, through shared memory). The prologue's values are members
/// that the later parts read.
class WgmmaKernelBuilder {
public:
  WgmmaKernelBuilder(const MatmulShape &s, int64_t stages, bool overlapTiles);
  std::string build(llvm::StringRef name);

private:
  void emitHost(llvm::StringRef name);
  void emitPrologue();
  void emitSharedMemory();
  void emitLoads(const std::string &kt, const std::string &slot);
  std::string emitMainLoop(const std::vector<std::string> &init);
  std::vector<std::string> emitTileMmas(const std::string &slot,
                                        std::vector<std::string> current);
  void emitEpilogue(const std::string &loop);

  const MatmulShape &s;
  const KernelLayout l;
  const bool overlapTiles;
  KernelEmitter e;

  // Types.
  std::string aType, bType, cType, aBox, bBox, aMap, bMap, barType, accType,
      descAType, descBType, dynType;
  /// Rows of the TMA box of B.
  int64_t bBoxRows;
  /// 64-row accumulators of a block, K tiles.
  int64_t accs, numK;

  // Values: the descriptors as i64 (host), then the kernel's prologue.
  std::string intA, intB;
  std::string tmA, tmB, c0, one, numKV, txBytes, ticks, m0, n0, n1, dyn, base,
      bar, leader;
};

WgmmaKernelBuilder::WgmmaKernelBuilder(const MatmulShape &s, int64_t stages,
                                       bool overlapTiles)
    : s(s), l(s, stages), overlapTiles(overlapTiles) {
  aType = llvm::formatv("memref<{0}x{1}xf16>", s.m, s.k);
  bType = s.transposedB ? llvm::formatv("memref<{0}x{1}xf16>", s.n, s.k).str()
                        : llvm::formatv("memref<{0}x{1}xf16>", s.k, s.n).str();
  cType = llvm::formatv("memref<{0}x{1}xf32>", s.m, s.n);
  const char *ws = "#gpu.address_space<workgroup>";
  // TMA boxes: A is bm x 64 (rows of 64 f16 = one 128-byte swizzle row);
  // B [N, K] is one 128 x 64 box (K-major, like A); B [K, N] is two 64 x 64
  // boxes side by side (N-major: a swizzle row holds 64 columns).
  bBoxRows = s.transposedB ? kBN : kBK;
  int64_t bBoxCols = 64;
  aBox = llvm::formatv("memref<{0}x{1}xf16, {2}>", s.bm, kBK, ws);
  bBox = llvm::formatv("memref<{0}x{1}xf16, {2}>", bBoxRows, bBoxCols, ws);
  auto tensorMap = [&](llvm::StringRef box) {
    return llvm::formatv("!nvgpu.tensormap.descriptor<tensor = {0}, swizzle "
                         "= swizzle_128b, l2promo = l2promo_128b, oob = zero, "
                         "interleave = none>",
                         box)
        .str();
  };
  aMap = tensorMap(aBox);
  bMap = tensorMap(bBox);
  barType = llvm::formatv(
      "!nvgpu.mbarrier.group<memorySpace = {0}, num_barriers = {1}>", ws,
      stages);
  accType = llvm::formatv("!nvgpu.warpgroup.accumulator<fragmented = "
                          "vector<{0}x{1}xf32>>",
                          kWgM, kBN);
  descAType = llvm::formatv(
      "!nvgpu.warpgroup.descriptor<tensor = memref<{0}x{1}xf16, {2}>>", kWgM,
      kWgK, ws);
  descBType = llvm::formatv(
      "!nvgpu.warpgroup.descriptor<tensor = memref<{0}x{1}xf16, {2}>>", kWgK,
      kBN, ws);
  dynType = llvm::formatv("memref<?xi8, {0}>", ws);
  accs = s.bm / kWgM;
  numK = s.k / kBK;
}

std::string WgmmaKernelBuilder::build(llvm::StringRef name) {
  emitHost(name);
  emitPrologue();
  std::vector<std::string> init;
  for (int64_t i = 0; i < accs; ++i)
    init.push_back(
        e.let("nvgpu.warpgroup.mma.init.accumulator -> " + accType, "init"));
  std::string loop = emitMainLoop(init);
  emitEpilogue(loop);
  e.line("gpu.terminator");
  e.close();
  e.line("return");
  e.close();
  return e.str();
}

/// The host function: TMA descriptors of A and B (128-byte swizzle), and
/// the launch of a block per bm x 128 tile of C.
void WgmmaKernelBuilder::emitHost(llvm::StringRef name) {
  e.open(llvm::formatv("func.func private @{0}(%A: {1}, %B: {2}, %C: {3})",
                       name, aType, bType, cType));
  e.def("one", "arith.constant 1 : index");
  e.def("threads", llvm::formatv("arith.constant {0} : index", kThreads));
  e.def("gx", llvm::formatv("arith.constant {0} : index", s.n / kBN));
  e.def("gy", llvm::formatv("arith.constant {0} : index", s.m / s.bm));
  e.def("smem", llvm::formatv("arith.constant {0} : i32", l.smemBytes));
  std::string boxA0 = e.index(s.bm);
  std::string boxB0 = e.index(bBoxRows);
  std::string box64 = e.index(64);
  std::string ua =
      e.let(llvm::formatv("memref.cast %A : {0} to memref<*xf16>", aType));
  std::string ub =
      e.let(llvm::formatv("memref.cast %B : {0} to memref<*xf16>", bType));
  std::string hA = e.let(llvm::formatv("nvgpu.tma.create.descriptor {0} "
                                       "box[{1}, {2}] : memref<*xf16> -> {3}",
                                       ua, boxA0, box64, aMap));
  std::string hB = e.let(llvm::formatv("nvgpu.tma.create.descriptor {0} "
                                       "box[{1}, {2}] : memref<*xf16> -> {3}",
                                       ub, boxB0, box64, bMap));
  // The descriptors cross into the kernel as integers: tfm outlines kernels
  // before nvgpu types are lowered, kernel signatures admit no nvgpu types,
  // and a pair of casts alone would fold away before outlining. The casts
  // vanish once nvgpu is lowered.
  auto toInt = [&](const std::string &h, const std::string &map) {
    std::string ptr = e.let(llvm::formatv(
        "builtin.unrealized_conversion_cast {0} : {1} to !llvm.ptr", h, map));
    return e.let(llvm::formatv("llvm.ptrtoint {0} : !llvm.ptr to i64", ptr));
  };
  intA = toInt(hA, aMap);
  intB = toInt(hB, bMap);
  e.open("gpu.launch blocks(%bx, %by, %bz) in (%x = %gx, %y = %gy, %z = "
         "%one) threads(%tx, %ty, %tz) in (%u = %threads, %v = %one, %w = "
         "%one) dynamic_shared_memory_size %smem");
}

/// The descriptors back, constants, the block's offsets, shared memory and
/// its mbarriers, and the first K tiles in flight.
void WgmmaKernelBuilder::emitPrologue() {
  auto fromInt = [&](const std::string &i, const std::string &map) {
    std::string ptr =
        e.let(llvm::formatv("llvm.inttoptr {0} : i64 to !llvm.ptr", i));
    return e.let(llvm::formatv(
        "builtin.unrealized_conversion_cast {0} : !llvm.ptr to {1}", ptr, map));
  };
  tmA = fromInt(intA, aMap);
  tmB = fromInt(intB, bMap);
  c0 = e.index(0);
  one = e.index(1);
  numKV = e.index(numK);
  txBytes = e.index(l.slotBytes);
  ticks = e.index(10000000);
  m0 = e.apply(llvm::formatv("s0 * {0}", s.bm).str(), {"%by"}, "m");
  n0 = e.apply(llvm::formatv("s0 * {0}", kBN).str(), {"%bx"}, "n");
  n1 = e.apply("s0 + 64", {n0}, "n");
  emitSharedMemory();

  // Prologue: K tiles 0 .. stages - 2 in flight.
  e.open("scf.if " + leader);
  for (int64_t st = 0; st + 1 < l.stages && st < numK; ++st) {
    std::string t = e.index(st);
    emitLoads(t, t);
  }
  e.close();
}

/// Dynamic shared memory from the first 1024-byte aligned address above the
/// symbol of gpu.dynamic_shared_memory: `stages` slots of [A tile | B
/// tile], reused by the epilogue. The symbol itself is no safe start: NVPTX
/// demotes it (an internal zero-size array) to a one-byte static .shared
/// variable, which ptxas places among the other static ones (the
/// mbarriers) rather than at the dynamic region after them. Static shared
/// memory here is far below 1 KiB, so the aligned start lies in the
/// dynamic region, and the 1 KiB of slack requested covers the skip.
void WgmmaKernelBuilder::emitSharedMemory() {
  dyn = e.let("gpu.dynamic_shared_memory : " + dynType, "dyn");
  std::string dynPtr = e.let("memref.extract_aligned_pointer_as_index " + dyn +
                             " : " + dynType + " -> index");
  base = e.apply(
      llvm::formatv("(s0 floordiv {0}) * {0} + {0} - s0", kSwizzleAlign).str(),
      {dynPtr}, "base");
  bar = e.let("nvgpu.mbarrier.create -> " + barType, "bar");
  leader =
      e.let(llvm::formatv("arith.cmpi eq, %tx, {0} : index", c0), "leader");
  e.open("scf.if " + leader);
  for (int64_t st = 0; st < l.stages; ++st) {
    std::string i = e.index(st);
    e.line(llvm::formatv("nvgpu.mbarrier.init {0}[{1}], {2} : {3}", bar, i, one,
                         barType));
  }
  e.line(llvm::formatv("nvgpu.tma.prefetch.descriptor {0} : {1}", tmA, aMap));
  e.line(llvm::formatv("nvgpu.tma.prefetch.descriptor {0} : {1}", tmB, bMap));
  e.close();
  e.line("gpu.barrier");
}

/// Issues (leader only) the TMA loads of K tile `kt` into slot `slot`, both
/// index values; completion counted by the slot's mbarrier.
void WgmmaKernelBuilder::emitLoads(const std::string &kt,
                                   const std::string &slot) {
  e.line(llvm::formatv("nvgpu.mbarrier.arrive.expect_tx {0}[{1}], {2} : {3}",
                       bar, slot, txBytes, barType));
  std::string k = e.apply(llvm::formatv("s0 * {0}", kBK).str(), {kt}, "k");
  std::string aOffset = e.apply(
      llvm::formatv("s0 + s1 * {0}", l.slotBytes).str(), {base, slot}, "ao");
  std::string aView = e.let(llvm::formatv("memref.view {0}[{1}][] : {2} to {3}",
                                          dyn, aOffset, dynType, aBox),
                            "av");
  // Coordinates innermost first: (column, row).
  e.line(llvm::formatv("nvgpu.tma.async.load {0}[{1}, {2}], {3}[{4}] to {5} "
                       ": {6}, {7} -> {8}",
                       tmA, k, m0, bar, slot, aView, aMap, barType, aBox));
  int64_t halves = s.transposedB ? 1 : 2;
  for (int64_t h = 0; h < halves; ++h) {
    std::string bOffset =
        e.apply(llvm::formatv("s0 + s1 * {0} + {1}", l.slotBytes,
                              l.aBytes + h * kBK * 64 * 2)
                    .str(),
                {base, slot}, "bo");
    std::string bView =
        e.let(llvm::formatv("memref.view {0}[{1}][] : {2} to {3}", dyn, bOffset,
                            dynType, bBox),
              "bv");
    std::string coords =
        s.transposedB ? k + ", " + n0 : (h ? n1 : n0) + ", " + k;
    e.line(llvm::formatv("nvgpu.tma.async.load {0}[{1}], {2}[{3}] to {4} : "
                         "{5}, {6} -> {7}",
                         tmB, coords, bar, slot, bView, bMap, barType, bBox));
  }
}

/// Main loop: wait for tile kt, issue its wgmmas (the wgmmas of tile
/// kt - 1 retire meanwhile), then all warps meet and the leader refills the
/// slot of tile kt - 1 with tile kt + stages - 1. Returns the loop's name
/// (its results are the accumulators).
std::string
WgmmaKernelBuilder::emitMainLoop(const std::vector<std::string> &init) {
  std::string loop = e.fresh("r"), kt = e.fresh("kt");
  std::vector<std::string> current;
  std::string iterArgs, types;
  for (int64_t i = 0; i < accs; ++i) {
    current.push_back(e.fresh("acc"));
    iterArgs +=
        llvm::formatv("{0}{1} = {2}", i ? ", " : "", current[i], init[i]);
    types += (i ? ", " : "") + accType;
  }
  e.open(llvm::formatv("{0}:{1} = scf.for {2} = {3} to {4} step {5} "
                       "iter_args({6}) -> ({7})",
                       loop, accs, kt, c0, numKV, one, iterArgs, types));
  std::string slot =
      e.apply(llvm::formatv("s0 mod {0}", l.stages).str(), {kt}, "slot");
  std::string parity =
      e.apply(llvm::formatv("(s0 floordiv {0}) mod 2", l.stages).str(), {kt});
  std::string phase =
      e.let(llvm::formatv("arith.cmpi ne, {0}, {1} : index", parity, c0));
  e.line(llvm::formatv("nvgpu.mbarrier.try_wait.parity {0}[{1}], {2}, {3} : "
                       "{4}",
                       bar, slot, phase, ticks, barType));
  current = emitTileMmas(slot, current);
  e.line("gpu.barrier");
  std::string ktNext =
      e.apply(llvm::formatv("s0 + {0}", l.stages - 1).str(), {kt});
  std::string more =
      e.let(llvm::formatv("arith.cmpi ult, {0}, {1} : index", ktNext, numKV));
  std::string refill =
      e.let(llvm::formatv("arith.andi {0}, {1} : i1", leader, more));
  e.open("scf.if " + refill);
  std::string nextSlot =
      e.apply(llvm::formatv("s0 mod {0}", l.stages).str(), {ktNext}, "slot");
  emitLoads(ktNext, nextSlot);
  e.close();
  std::string yielded;
  for (int64_t i = 0; i < accs; ++i)
    yielded += (i ? ", " : "") + current[i];
  e.line("scf.yield " + yielded + " : " + types);
  e.close();
  return loop;
}

/// The wgmmas of the K tile in `slot`: for each k16 step, one per
/// accumulator, with descriptors of the step's A rows and B tile.
std::vector<std::string>
WgmmaKernelBuilder::emitTileMmas(const std::string &slot,
                                 std::vector<std::string> current) {
  std::string aBase =
      e.apply(llvm::formatv("s0 + s1 * {0}", l.slotBytes).str(), {base, slot});
  std::string bBase =
      e.apply(llvm::formatv("s0 + s1 * {0} + {1}", l.slotBytes, l.aBytes).str(),
              {base, slot});
  // Each op is one commit group; waiting until at most one K tile's worth
  // of groups is pending leaves the wgmmas of tile kt in flight and retires
  // those of tile kt - 1, whose slot is refilled below (without
  // `overlapTiles`, each op waits for all but itself).
  int64_t groupsPerTile = overlapTiles ? accs * (kBK / kWgK) : 1;
  std::string opAttrs =
      llvm::formatv("{{waitGroup = {0} : i64} ", groupsPerTile).str();
  std::string opAttrsT =
      llvm::formatv("{{transposeB, waitGroup = {0} : i64} ", groupsPerTile)
          .str();
  for (int64_t kk = 0; kk < kBK / kWgK; ++kk) {
    // B [K, N]: 16 rows of 128 bytes further per k16 step; B [N, K]: 32
    // bytes further within the swizzle row (as for A).
    int64_t bOff = s.transposedB ? kk * kWgK * 2 : kk * kWgK * 128;
    std::string bOffset =
        e.apply(llvm::formatv("s0 + {0}", bOff).str(), {bBase}, "bo");
    std::string bView =
        e.let(llvm::formatv("memref.view {0}[{1}][] : {2} to {3}", dyn, bOffset,
                            dynType, bBox),
              "bs");
    std::string descB =
        e.let(llvm::formatv("nvgpu.warpgroup.generate.descriptor {0}, {1} : "
                            "{2}, {3} -> {4}",
                            bView, tmB, bBox, bMap, descBType),
              "db");
    for (int64_t i = 0; i < accs; ++i) {
      int64_t aOff = i * kWgM * 128 + kk * kWgK * 2;
      std::string aOffset =
          e.apply(llvm::formatv("s0 + {0}", aOff).str(), {aBase}, "ao");
      std::string aView =
          e.let(llvm::formatv("memref.view {0}[{1}][] : {2} to {3}", dyn,
                              aOffset, dynType, aBox),
                "as");
      std::string descA = e.let(
          llvm::formatv("nvgpu.warpgroup.generate.descriptor {0}, {1} : {2}, "
                        "{3} -> {4}",
                        aView, tmA, aBox, aMap, descAType),
          "da");
      current[i] = e.let(
          llvm::formatv("nvgpu.warpgroup.mma {0}, {1}, {2} {3}: {4}, {5}, {6} "
                        "-> {6}",
                        descA, descB, current[i],
                        s.transposedB ? opAttrs : opAttrsT, descAType,
                        descBType, accType),
          "d");
    }
  }
  return current;
}

/// Epilogue: all wgmmas done; the accumulators go through shared memory
/// (the ring is free) so that C is read and written a row of 128 f32 per
/// warp: C += tile.
void WgmmaKernelBuilder::emitEpilogue(const std::string &loop) {
  const char *ws = "#gpu.address_space<workgroup>";
  e.line("nvvm.wgmma.wait.group.sync.aligned 0");
  e.line("gpu.barrier");
  std::string stagedType = llvm::formatv("memref<{0}x{1}xf32, {2}>", s.bm,
                                         kEpilogueStride, ws);
  std::string staged =
      e.let(llvm::formatv("memref.view {0}[{1}][] : {2} to {3}", dyn, base,
                          dynType, stagedType),
            "staged");
  for (int64_t i = 0; i < accs; ++i) {
    std::string partType = llvm::formatv(
        "memref<{0}x{1}xf32, strided<[{2}, 1], offset: {3}>, "
        "{4}>",
        kWgM, kBN, kEpilogueStride, i * kWgM * kEpilogueStride, ws);
    std::string part =
        e.let(llvm::formatv("memref.subview {0}[{1}, 0] [{2}, {3}] [1, 1] : "
                            "{4} to {5}",
                            staged, i * kWgM, kWgM, kBN, stagedType, partType),
              "part");
    e.line(llvm::formatv("nvgpu.warpgroup.mma.store {0}#{1}, {2} : {3} to {4}",
                         loop, i, part, accType, partType));
  }
  e.line("gpu.barrier");
  std::string row0 = e.apply("s0 floordiv 32", {"%tx"}, "row");
  std::string col = e.apply("(s0 mod 32) * 4", {"%tx"}, "col");
  std::string gcol = e.apply("s0 + s1", {n0, col}, "gcol");
  std::string rows = e.index(s.bm);
  std::string four = e.index(4);
  std::string row = e.fresh("row");
  e.open(llvm::formatv("scf.for {0} = {1} to {2} step {3}", row, row0, rows,
                       four));
  std::string grow = e.apply("s0 + s1", {m0, row}, "grow");
  std::string acc = e.let(llvm::formatv("vector.load {0}[{1}, {2}] : {3}, "
                                        "vector<4xf32>",
                                        staged, row, col, stagedType),
                          "acc");
  // N is a multiple of 128 and device buffers are 256-byte aligned: each
  // 4-element access of C is 16-byte aligned (ld/st.global.v4).
  std::string old = e.let(llvm::formatv("vector.load %C[{0}, {1}] "
                                        "{{alignment = 16 : i64} : {2}, "
                                        "vector<4xf32>",
                                        grow, gcol, cType),
                          "old");
  std::string sum =
      e.let("arith.addf " + old + ", " + acc + " : vector<4xf32>", "sum");
  e.line(llvm::formatv("vector.store {0}, %C[{1}, {2}] {{alignment = 16 : "
                       "i64} : {3}, vector<4xf32>",
                       sum, grow, gcol, cType));
  e.close();
}

struct GpuWarpgroupMatmulPass
    : public tfm::impl::TfmGpuWarpgroupMatmulBase<GpuWarpgroupMatmulPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    auto matmuls =
        gpu_kernels::collectPlannedMatmuls(module, tfm::GpuKernelKind::wgmma);
    if (failed(matmuls))
      return signalPassFailure();
    for (auto [matmul, f16, plan] : *matmuls) {
      int64_t stages = plan.getStages();
      std::optional<gpu_kernels::KernelPlan> fits =
          gpu_kernels::planWarpgroupMatmul(f16, stages);
      if (!fits || !(*fits == plan)) {
        matmul.emitOpError("has a wgmma plan the kernel cannot run: ")
            << plan;
        return signalPassFailure();
      }
      MatmulShape shape{f16.m, f16.n, f16.k, f16.transposedB, plan.getTileM()};
      std::string name = llvm::formatv(
          "tfm_wgmma_matmul_{0}x{1}x{2}_{3}_s{4}{5}", shape.m, shape.n,
          shape.k, shape.transposedB ? "nt" : "nn", int64_t(stages),
          overlap ? "" : "_w1");
      func::FuncOp kernel = gpu_kernels::lookupOrParseKernel(
          symbols, name, matmul, "warpgroup", [&, s = shape] {
            return WgmmaKernelBuilder(s, stages, overlap).build(name);
          });
      if (!kernel)
        return signalPassFailure();
      gpu_kernels::replaceWithKernelCall(matmul, kernel);
    }
  }
};
} // namespace

std::optional<gpu_kernels::KernelPlan>
gpu_kernels::planWarpgroupMatmul(const F16Matmul &f16, int64_t stages) {
  if (f16.m % kWgM || f16.n % kBN || f16.k % kBK || stages < 2 || stages > 8)
    return std::nullopt;
  // Block tiles of 128 rows where M allows, else 64.
  return KernelPlan{tfm::GpuKernelKind::wgmma, f16.m % 128 ? 64 : 128, kBN,
                    kBK, kThreads / 32, stages};
}

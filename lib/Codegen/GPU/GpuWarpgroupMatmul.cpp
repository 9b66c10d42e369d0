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
#include "llvm/Support/raw_ostream.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUWARPGROUPMATMUL
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
namespace gpu_kernels = mlir::tfm::gpu_kernels;
using gpu_kernels::apply;

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

/// The host function `name(A, B, C)`: encodes the TMA descriptors of A and B
/// (128-byte swizzle) and launches the kernel for `shape`.
std::string buildKernelSource(llvm::StringRef name, const MatmulShape &s,
                              int64_t stages, bool overlapTiles) {
  KernelLayout l(s, stages);
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string aType = llvm::formatv("memref<{0}x{1}xf16>", s.m, s.k);
  std::string bType = s.transposedB
                          ? llvm::formatv("memref<{0}x{1}xf16>", s.n, s.k).str()
                          : llvm::formatv("memref<{0}x{1}xf16>", s.k, s.n).str();
  std::string cType = llvm::formatv("memref<{0}x{1}xf32>", s.m, s.n);
  const char *ws = "#gpu.address_space<workgroup>";
  // TMA boxes: A is bm x 64 (rows of 64 f16 = one 128-byte swizzle row);
  // B [N, K] is one 128 x 64 box (K-major, like A); B [K, N] is two 64 x 64
  // boxes side by side (N-major: a swizzle row holds 64 columns).
  int64_t bBoxRows = s.transposedB ? kBN : kBK;
  int64_t bBoxCols = 64;
  std::string aBox = llvm::formatv("memref<{0}x{1}xf16, {2}>", s.bm, kBK, ws);
  std::string bBox =
      llvm::formatv("memref<{0}x{1}xf16, {2}>", bBoxRows, bBoxCols, ws);
  auto tensorMap = [&](llvm::StringRef box) {
    return llvm::formatv("!nvgpu.tensormap.descriptor<tensor = {0}, swizzle "
                         "= swizzle_128b, l2promo = l2promo_128b, oob = zero, "
                         "interleave = none>",
                         box)
        .str();
  };
  std::string aMap = tensorMap(aBox), bMap = tensorMap(bBox);
  std::string barType = llvm::formatv(
      "!nvgpu.mbarrier.group<memorySpace = {0}, num_barriers = {1}>", ws,
      stages);
  std::string accType =
      llvm::formatv("!nvgpu.warpgroup.accumulator<fragmented = "
                    "vector<{0}x{1}xf32>>",
                    kWgM, kBN);
  std::string descAType = llvm::formatv(
      "!nvgpu.warpgroup.descriptor<tensor = memref<{0}x{1}xf16, {2}>>", kWgM,
      kWgK, ws);
  std::string descBType = llvm::formatv(
      "!nvgpu.warpgroup.descriptor<tensor = memref<{0}x{1}xf16, {2}>>", kWgK,
      kBN, ws);
  std::string dynType = llvm::formatv("memref<?xi8, {0}>", ws);
  int64_t accs = s.bm / kWgM;
  int64_t numK = s.k / kBK;

  os << llvm::formatv("func.func private @{0}(%A: {1}, %B: {2}, %C: {3}) {{\n",
                      name, aType, bType, cType);
  os << "  %c1 = arith.constant 1 : index\n";
  os << llvm::formatv("  %threads = arith.constant {0} : index\n", kThreads);
  os << llvm::formatv("  %gx = arith.constant {0} : index\n", s.n / kBN);
  os << llvm::formatv("  %gy = arith.constant {0} : index\n", s.m / s.bm);
  os << llvm::formatv("  %smem = arith.constant {0} : i32\n", l.smemBytes);
  os << llvm::formatv("  %boxA0 = arith.constant {0} : index\n", s.bm);
  os << llvm::formatv("  %boxB0 = arith.constant {0} : index\n", bBoxRows);
  os << "  %box64 = arith.constant 64 : index\n";
  os << llvm::formatv("  %ua = memref.cast %A : {0} to memref<*xf16>\n",
                      aType);
  os << llvm::formatv("  %ub = memref.cast %B : {0} to memref<*xf16>\n",
                      bType);
  os << llvm::formatv("  %hA = nvgpu.tma.create.descriptor %ua box[%boxA0, "
                      "%box64] : memref<*xf16> -> {0}\n",
                      aMap);
  os << llvm::formatv("  %hB = nvgpu.tma.create.descriptor %ub box[%boxB0, "
                      "%box64] : memref<*xf16> -> {0}\n",
                      bMap);
  // The descriptors cross into the kernel as integers: tfm outlines kernels
  // before nvgpu types are lowered, kernel signatures admit no nvgpu types,
  // and a pair of casts alone would fold away before outlining. The casts
  // vanish once nvgpu is lowered.
  for (auto [v, map] : {std::pair{"A", &aMap}, std::pair{"B", &bMap}}) {
    os << llvm::formatv("  %q{0} = builtin.unrealized_conversion_cast %h{0} : "
                        "{1} to !llvm.ptr\n",
                        v, *map);
    os << llvm::formatv("  %i{0} = llvm.ptrtoint %q{0} : !llvm.ptr to i64\n",
                        v);
  }
  os << "  gpu.launch blocks(%bx, %by, %bz) in (%x = %gx, %y = %gy, %z = %c1) "
        "threads(%tx_id, %ty, %tz) in (%u = %threads, %v = %c1, %w = %c1) "
        "dynamic_shared_memory_size %smem {\n";
  for (auto [v, map] : {std::pair{"A", &aMap}, std::pair{"B", &bMap}}) {
    os << llvm::formatv("    %p{0} = llvm.inttoptr %i{0} : i64 to !llvm.ptr\n",
                        v);
    os << llvm::formatv("    %tm{0} = builtin.unrealized_conversion_cast "
                        "%p{0} : !llvm.ptr to {1}\n",
                        v, *map);
  }
  os << "    %c0 = arith.constant 0 : index\n";
  os << "    %one = arith.constant 1 : index\n";
  os << llvm::formatv("    %numK = arith.constant {0} : index\n", numK);
  os << llvm::formatv("    %txBytes = arith.constant {0} : index\n", l.slotBytes);
  os << "    %ticks = arith.constant 10000000 : index\n";
  os << "    %m0 = " << apply(llvm::formatv("s0 * {0}", s.bm).str(), {"%by"})
     << "\n";
  os << "    %n0 = " << apply(llvm::formatv("s0 * {0}", kBN).str(), {"%bx"})
     << "\n";
  os << "    %n1 = " << apply("s0 + 64", {"%n0"}) << "\n";
  // Dynamic shared memory from the first 1024-byte aligned address above the
  // symbol of gpu.dynamic_shared_memory: `stages` slots of [A tile | B
  // tile], reused by the epilogue. The symbol itself is no safe start: NVPTX
  // demotes it (an internal zero-size array) to a one-byte static .shared
  // variable, which ptxas places among the other static ones (the
  // mbarriers) rather than at the dynamic region after them. Static shared
  // memory here is far below 1 KiB, so the aligned start lies in the
  // dynamic region, and the 1 KiB of slack requested covers the skip.
  os << "    %dyn = gpu.dynamic_shared_memory : " << dynType << "\n";
  os << "    %dynPtr = memref.extract_aligned_pointer_as_index %dyn : "
     << dynType << " -> index\n";
  os << "    %base = "
     << apply(llvm::formatv("(s0 floordiv {0}) * {0} + {0} - s0", kSwizzleAlign)
                  .str(),
              {"%dynPtr"})
     << "\n";
  os << "    %bar = nvgpu.mbarrier.create -> " << barType << "\n";
  os << "    %leader = arith.cmpi eq, %tx_id, %c0 : index\n";
  os << "    scf.if %leader {\n";
  for (int64_t st = 0; st < stages; ++st) {
    os << llvm::formatv("      %i{0} = arith.constant {0} : index\n", st);
    os << llvm::formatv("      nvgpu.mbarrier.init %bar[%i{0}], %one : {1}\n",
                        st, barType);
  }
  os << llvm::formatv("      nvgpu.tma.prefetch.descriptor %tmA : {0}\n", aMap);
  os << llvm::formatv("      nvgpu.tma.prefetch.descriptor %tmB : {0}\n", bMap);
  os << "    }\n";
  os << "    gpu.barrier\n";

  // Issue (leader only) the TMA loads of K tile `kt` into slot `slot`, both
  // index values; completion counted by the slot's mbarrier.
  int counter = 0;
  auto emitLoads = [&](llvm::StringRef indent, llvm::StringRef kt,
                       llvm::StringRef slot) {
    int id = counter++;
    os << indent
       << llvm::formatv("nvgpu.mbarrier.arrive.expect_tx %bar[{0}], %txBytes : {1}\n",
                        slot, barType);
    os << indent << llvm::formatv("%k{0} = ", id)
       << apply(llvm::formatv("s0 * {0}", kBK).str(), {kt.str()}) << "\n";
    os << indent << llvm::formatv("%ao{0} = ", id)
       << apply(llvm::formatv("s0 + s1 * {0}", l.slotBytes).str(),
                {"%base", slot.str()})
       << "\n";
    os << indent
       << llvm::formatv("%av{0} = memref.view %dyn[%ao{0}][] : {1} to {2}\n",
                        id, dynType, aBox);
    // Coordinates innermost first: (column, row).
    os << indent
       << llvm::formatv("nvgpu.tma.async.load %tmA[%k{0}, %m0], %bar[{1}] to "
                        "%av{0} : {2}, {3} -> {4}\n",
                        id, slot, aMap, barType, aBox);
    int64_t halves = s.transposedB ? 1 : 2;
    for (int64_t h = 0; h < halves; ++h) {
      os << indent << llvm::formatv("%bo{0}_{1} = ", id, h)
         << apply(llvm::formatv("s0 + s1 * {0} + {1}", l.slotBytes,
                                l.aBytes + h * kBK * 64 * 2)
                      .str(),
                  {"%base", slot.str()})
         << "\n";
      os << indent
         << llvm::formatv(
                "%bv{0}_{1} = memref.view %dyn[%bo{0}_{1}][] : {2} to {3}\n",
                id, h, dynType, bBox);
      std::string coords =
          s.transposedB ? llvm::formatv("%k{0}, %n0", id).str()
                        : llvm::formatv("{0}, %k{1}", h ? "%n1" : "%n0", id)
                              .str();
      os << indent
         << llvm::formatv("nvgpu.tma.async.load %tmB[{0}], %bar[{1}] to "
                          "%bv{2}_{3} : {4}, {5} -> {6}\n",
                          coords, slot, id, h, bMap, barType, bBox);
    }
  };

  // Prologue: K tiles 0 .. stages - 2 in flight.
  os << "    scf.if %leader {\n";
  for (int64_t st = 0; st + 1 < stages && st < numK; ++st) {
    os << llvm::formatv("      %t{0} = arith.constant {0} : index\n", st);
    emitLoads("      ", llvm::formatv("%t{0}", st).str(),
              llvm::formatv("%t{0}", st).str());
  }
  os << "    }\n";

  std::string iterArgs, types, inits;
  for (int64_t i = 0; i < accs; ++i) {
    os << llvm::formatv("    %init{0} = nvgpu.warpgroup.mma.init.accumulator "
                        "-> {1}\n",
                        i, accType);
    iterArgs += llvm::formatv("{0}%acc{1} = %init{1}", i ? ", " : "", i);
    types += (i ? ", " : "") + accType;
  }
  // Main loop: wait for tile kt, issue its wgmmas (the wgmmas of tile
  // kt - 1 retire meanwhile), then all warps meet and the leader refills the slot of tile kt - 1 with tile
  // kt + stages - 1.
  os << llvm::formatv("    %r:{0} = scf.for %kt = %c0 to %numK step %one "
                      "iter_args({1}) -> ({2}) {{\n",
                      accs, iterArgs, types);
  os << "      %slot = "
     << apply(llvm::formatv("s0 mod {0}", stages).str(), {"%kt"}) << "\n";
  os << "      %parity = "
     << apply(llvm::formatv("(s0 floordiv {0}) mod 2", stages).str(), {"%kt"})
     << "\n";
  os << "      %phase = arith.cmpi ne, %parity, %c0 : index\n";
  os << llvm::formatv("      nvgpu.mbarrier.try_wait.parity %bar[%slot], "
                      "%phase, %ticks : {0}\n",
                      barType);
  os << "      %aBase = "
     << apply(llvm::formatv("s0 + s1 * {0}", l.slotBytes).str(),
              {"%base", "%slot"})
     << "\n";
  os << "      %bBase = "
     << apply(llvm::formatv("s0 + s1 * {0} + {1}", l.slotBytes, l.aBytes)
                  .str(),
              {"%base", "%slot"})
     << "\n";
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
  std::vector<std::string> current;
  for (int64_t i = 0; i < accs; ++i)
    current.push_back(llvm::formatv("%acc{0}", i));
  for (int64_t kk = 0; kk < kBK / kWgK; ++kk) {
    // B [K, N]: 16 rows of 128 bytes further per k16 step; B [N, K]: 32
    // bytes further within the swizzle row (as for A).
    int64_t bOff = s.transposedB ? kk * kWgK * 2 : kk * kWgK * 128;
    os << llvm::formatv("      %bo_{0} = ", kk)
       << apply(llvm::formatv("s0 + {0}", bOff).str(), {"%bBase"}) << "\n";
    os << llvm::formatv(
        "      %bs_{0} = memref.view %dyn[%bo_{0}][] : {1} to {2}\n", kk,
        dynType, bBox);
    os << llvm::formatv("      %db_{0} = nvgpu.warpgroup.generate.descriptor "
                        "%bs_{0}, %tmB : {1}, {2} -> {3}\n",
                        kk, bBox, bMap, descBType);
    for (int64_t i = 0; i < accs; ++i) {
      int64_t aOff = i * kWgM * 128 + kk * kWgK * 2;
      os << llvm::formatv("      %ao_{0}_{1} = ", kk, i)
         << apply(llvm::formatv("s0 + {0}", aOff).str(), {"%aBase"}) << "\n";
      os << llvm::formatv(
          "      %as_{0}_{1} = memref.view %dyn[%ao_{0}_{1}][] : {2} to {3}\n",
          kk, i, dynType, aBox);
      os << llvm::formatv("      %da_{0}_{1} = "
                          "nvgpu.warpgroup.generate.descriptor %as_{0}_{1}, "
                          "%tmA : {2}, {3} -> {4}\n",
                          kk, i, aBox, aMap, descAType);
      std::string next = llvm::formatv("%d_{0}_{1}", kk, i);
      os << llvm::formatv("      {0} = nvgpu.warpgroup.mma %da_{1}_{2}, "
                          "%db_{1}, {3} {4}: {5}, {6}, {7} -> {7}\n",
                          next, kk, i, current[i],
                          s.transposedB ? opAttrs : opAttrsT, descAType,
                          descBType, accType);
      current[i] = next;
    }
  }
  os << "      gpu.barrier\n";
  os << "      %ktNext = "
     << apply(llvm::formatv("s0 + {0}", stages - 1).str(), {"%kt"}) << "\n";
  os << "      %more = arith.cmpi ult, %ktNext, %numK : index\n";
  os << "      %refill = arith.andi %leader, %more : i1\n";
  os << "      scf.if %refill {\n";
  os << "        %nextSlot = "
     << apply(llvm::formatv("s0 mod {0}", stages).str(), {"%ktNext"}) << "\n";
  emitLoads("        ", "%ktNext", "%nextSlot");
  os << "      }\n";
  std::string yielded;
  for (int64_t i = 0; i < accs; ++i)
    yielded += (i ? ", " : "") + current[i];
  os << "      scf.yield " << yielded << " : " << types << "\n";
  os << "    }\n";

  // Epilogue: all wgmmas done; the accumulators go through shared memory
  // (the ring is free) so that C is read and written a row of 128 f32 per
  // warp: C += tile.
  os << "    nvvm.wgmma.wait.group.sync.aligned 0\n";
  os << "    gpu.barrier\n";
  std::string stagedType = llvm::formatv("memref<{0}x{1}xf32, {2}>", s.bm,
                                         kEpilogueStride, ws);
  os << llvm::formatv("    %staged = memref.view %dyn[%base][] : {0} to {1}\n",
                      dynType, stagedType);
  for (int64_t i = 0; i < accs; ++i) {
    std::string part =
        llvm::formatv("memref<{0}x{1}xf32, strided<[{2}, 1], offset: {3}>, "
                      "{4}>",
                      kWgM, kBN, kEpilogueStride, i * kWgM * kEpilogueStride,
                      ws);
    os << llvm::formatv("    %part{0} = memref.subview %staged[{1}, 0] [{2}, "
                        "{3}] [1, 1] : {4} to {5}\n",
                        i, i * kWgM, kWgM, kBN, stagedType, part);
    os << llvm::formatv("    nvgpu.warpgroup.mma.store %r#{0}, %part{0} : {1} "
                        "to {2}\n",
                        i, accType, part);
  }
  os << "    gpu.barrier\n";
  os << "    %row0 = " << apply("s0 floordiv 32", {"%tx_id"}) << "\n";
  os << "    %col = " << apply("(s0 mod 32) * 4", {"%tx_id"}) << "\n";
  os << "    %gcol = " << apply("s0 + s1", {"%n0", "%col"}) << "\n";
  os << llvm::formatv("    %rows = arith.constant {0} : index\n", s.bm);
  os << "    %four = arith.constant 4 : index\n";
  os << "    scf.for %row = %row0 to %rows step %four {\n";
  os << "      %grow = " << apply("s0 + s1", {"%m0", "%row"}) << "\n";
  os << llvm::formatv("      %acc = vector.load %staged[%row, %col] : {0}, "
                      "vector<4xf32>\n",
                      stagedType);
  // N is a multiple of 128 and device buffers are 256-byte aligned: each
  // 4-element access of C is 16-byte aligned (ld/st.global.v4).
  os << llvm::formatv("      %old = vector.load %C[%grow, %gcol] "
                      "{{alignment = 16 : i64} : {0}, vector<4xf32>\n",
                      cType);
  os << "      %sum = arith.addf %old, %acc : vector<4xf32>\n";
  os << llvm::formatv("      vector.store %sum, %C[%grow, %gcol] "
                      "{{alignment = 16 : i64} : {0}, vector<4xf32>\n",
                      cType);
  os << "    }\n";
  os << "    gpu.terminator\n  }\n  return\n}\n";
  return text;
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
            return buildKernelSource(name, s, stages, overlap);
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

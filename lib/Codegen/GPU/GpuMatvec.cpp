//===- GpuMatvec.cpp - f16 matmuls of few rows as split-K SIMT kernels ----===//
//
// --tfm-gpu-matvec: see Passes.td. A decode step's projections are matmuls
// of one row (one per sequence of the batch): the SIMT path gives each
// output its own thread and the whole K loop, a few blocks in all (768
// outputs: 3 blocks of a 132-SM GPU) whose threads read the weight at
// strides of K. These kernels instead read the weight once, coalesced, with
// every warp of a block on a part of the reduction. The kernel of each
// shape is MLIR text (a host function around a gpu.launch), as in
// GpuTensorCoreMatmul.cpp.
//
//===----------------------------------------------------------------------===//
#include "GpuMatmulKernels.h"
#include "KernelEmitter.h"

#include "tfm/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUMATVEC
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
namespace gpu_kernels = mlir::tfm::gpu_kernels;
using gpu_kernels::KernelEmitter;

namespace {
/// Rows of C one kernel computes at once (accumulators per thread).
constexpr int64_t kMaxRows = 8;
/// Warps per block.
constexpr int64_t kWarps = 8;
constexpr int64_t kThreads = kWarps * 32;
/// f16 elements a lane loads at once from the weight (16 bytes).
constexpr int64_t kVector = 8;
/// [K, N] weight: K rows a warp reads per loop step (independent loads in
/// flight).
constexpr int64_t kUnroll = 4;

/// Blocks the [K, N] kernel aims for: two per SM of an H100/H200 (132
/// SMs), enough loads in flight to keep HBM busy.
constexpr int64_t kTargetBlocks = 264;
/// [K, N] weight: columns a block covers (32 lanes x 8).
constexpr int64_t kBlockColumns = 32 * kVector;

/// Splits of K for a [K, N] B: about kTargetBlocks blocks in all, each split
/// a whole number of steps (8 warps x kUnroll rows). Returns (splits, rows
/// per split).
std::pair<int64_t, int64_t> splitK(const gpu_kernels::F16Matmul &s) {
  const int64_t step = kWarps * kUnroll;
  const int64_t columnGroups = (s.n + kBlockColumns - 1) / kBlockColumns;
  const int64_t steps = s.k / step;
  int64_t splits = std::clamp<int64_t>(
      (kTargetBlocks + columnGroups - 1) / columnGroups, 1, steps);
  int64_t rows = (steps + splits - 1) / splits * step;
  return {(s.k + rows - 1) / rows, rows};
}

/// Writes the host function `name(A, B, C)` of one shape: buildTransposed()
/// for an [N, K] B, buildDirect() for a [K, N] B.
class MatvecKernelBuilder {
public:
  explicit MatvecKernelBuilder(const gpu_kernels::F16Matmul &s);
  std::string buildTransposed(llvm::StringRef name);
  std::string buildDirect(llvm::StringRef name, int64_t rows, bool chained);

private:
  // [N, K] B.
  std::string emitDotProducts(const std::string &n, const std::string &k0,
                              const std::string &cK, const std::string &step,
                              const std::string &zero);
  void emitWarpSums(const std::string &sums, const std::string &lane,
                    const std::string &c0, const std::string &n);
  // [K, N] B.
  void emitPartialSums(int64_t rows, const std::string &p);
  std::string emitSplitLoop(int64_t rows);
  void emitBlockSums(const std::string &sums, const std::string &p);
  void emitCombine(const std::string &p);
  // Both.
  void emitHostFunction(llvm::StringRef name);
  void emitLaunch(const std::string &gridX, const std::string &gridY,
                  const std::string &workgroup = "");
  void emitRowIndices();
  std::string emitSum(const std::string &zero, int64_t count,
                      llvm::function_ref<std::string(int64_t)> emitLoad);
  void emitAccumulate(const std::string &row, const std::string &col,
                      const std::string &value);

  const gpu_kernels::F16Matmul &s;
  KernelEmitter e;
  std::string aType, bType, cType;
  /// A lane's 8 f32 accumulators and 8 f16 of a weight row.
  std::string acc, half;
  /// [K, N] B: the splits of K, and the types of the partial sums
  /// P[split, m, n] and of the first kernel's workgroup buffer of the warps'
  /// sums.
  int64_t splits = 0;
  std::string pType, redType;
  /// The constant 0 .. M - 1 of each row of A and C.
  std::vector<std::string> rowIndex;
  /// [K, N] B, the first kernel: N, the f32 0, the constant of each warp,
  /// and this thread's row and column in the workgroup buffer.
  std::string cN, zf, warp, laneCol;
  std::vector<std::string> warpIndex;
};

MatvecKernelBuilder::MatvecKernelBuilder(const gpu_kernels::F16Matmul &s)
    : s(s) {
  aType = llvm::formatv("memref<{0}x{1}xf16>", s.m, s.k);
  bType = s.transposedB ? llvm::formatv("memref<{0}x{1}xf16>", s.n, s.k).str()
                        : llvm::formatv("memref<{0}x{1}xf16>", s.k, s.n).str();
  cType = llvm::formatv("memref<{0}x{1}xf32>", s.m, s.n);
  acc = llvm::formatv("vector<{0}xf32>", kVector);
  half = llvm::formatv("vector<{0}xf16>", kVector);
}

/// `func.func private @name(%A, %B, %C) {` and the constants every kernel's
/// launch uses (%one, %threads).
void MatvecKernelBuilder::emitHostFunction(llvm::StringRef name) {
  e.open(llvm::formatv("func.func private @{0}(%A: {1}, %B: {2}, %C: {3})",
                       name, aType, bType, cType));
  e.def("one", "arith.constant 1 : index");
  e.def("threads", llvm::formatv("arith.constant {0} : index", kThreads));
}

/// `gpu.launch` over a `gridX` x `gridY` grid of %threads-thread blocks,
/// with `workgroup` attributions when not empty; opens the body.
void MatvecKernelBuilder::emitLaunch(const std::string &gridX,
                                     const std::string &gridY,
                                     const std::string &workgroup) {
  e.open(llvm::formatv(
      "gpu.launch blocks(%bx, %by, %bz) in (%x = {0}, %y = "
      "{1}, %z = %one) threads(%tx, %ty, %tz) in (%u = "
      "%threads, %v = %one, %w = %one){2}",
      gridX, gridY, workgroup.empty() ? "" : " workgroup(" + workgroup + ")"));
}

/// The index constants of the M rows, in rowIndex.
void MatvecKernelBuilder::emitRowIndices() {
  rowIndex.clear();
  for (int64_t m = 0; m < s.m; ++m)
    rowIndex.push_back(e.index(m));
}

/// `count` f32 values added in order to `zero`: `emitLoad(i)` writes the ops
/// that load the i-th and returns it. Returns the sum.
std::string MatvecKernelBuilder::emitSum(
    const std::string &zero, int64_t count,
    llvm::function_ref<std::string(int64_t)> emitLoad) {
  std::string total = zero;
  for (int64_t i = 0; i < count; ++i) {
    std::string value = emitLoad(i);
    total = e.let(llvm::formatv("arith.addf {0}, {1} : f32", total, value));
  }
  return total;
}

/// `C[row, col] += value`.
void MatvecKernelBuilder::emitAccumulate(const std::string &row,
                                         const std::string &col,
                                         const std::string &value) {
  std::string old = e.let(
      llvm::formatv("memref.load %C[{0}, {1}] : {2}", row, col, cType), "old");
  std::string sum =
      e.let(llvm::formatv("arith.addf {0}, {1} : f32", old, value), "new");
  e.line(llvm::formatv("memref.store {0}, %C[{1}, {2}] : {3}", sum, row, col,
                       cType));
}

//===----------------------------------------------------------------------===//
// [N, K] B
//===----------------------------------------------------------------------===//

/// The host function for a transposed ([N, K]) B: warp w of block b
/// computes column n = 8b + w for all M rows. Its lanes walk K in vectors
/// of 8 (lane l from 8l, 256 apart: each step one coalesced 512-byte read of
/// a weight row), then a vector reduction and a butterfly of shuffles leave
/// the dot products in every lane; lane 0 adds them to C.
std::string MatvecKernelBuilder::buildTransposed(llvm::StringRef name) {
  emitHostFunction(name);
  std::string grid = e.index((s.n + kWarps - 1) / kWarps);
  emitLaunch(grid, "%one");
  std::string c0 = e.index(0);
  std::string cK = e.index(s.k);
  std::string cN = e.index(s.n);
  std::string step = e.index(32 * kVector);
  e.def("width", "arith.constant 32 : i32");
  std::string zero =
      e.let(llvm::formatv("arith.constant dense<0.0> : {0}", acc), "zero");
  emitRowIndices();
  std::string n =
      e.apply(llvm::formatv("s0 * {0} + s1 floordiv 32", kWarps).str(),
              {"%bx", "%tx"}, "n");
  std::string k0 =
      e.apply(llvm::formatv("(s0 mod 32) * {0}", kVector).str(), {"%tx"}, "k");
  std::string lane = e.apply("s0 mod 32", {"%tx"}, "lane");
  // Whole warps leave together (n depends on the warp only): the shuffles
  // below see all 32 lanes.
  std::string live =
      e.let(llvm::formatv("arith.cmpi ult, {0}, {1} : index", n, cN), "live");
  e.open("scf.if " + live);
  std::string sums = emitDotProducts(n, k0, cK, step, zero);
  emitWarpSums(sums, lane, c0, n);
  e.close();
  e.line("gpu.terminator");
  e.close();
  e.line("return");
  e.close();
  return e.str();
}

/// The loop over K: this lane's products of column `n` of B with each row
/// of A, in vectors of 8 from `k0` on. Returns the loop's name.
std::string MatvecKernelBuilder::emitDotProducts(const std::string &n,
                                                 const std::string &k0,
                                                 const std::string &cK,
                                                 const std::string &step,
                                                 const std::string &zero) {
  std::string sums = e.fresh("sum");
  std::string iterArgs, types;
  std::vector<std::string> accs;
  for (int64_t m = 0; m < s.m; ++m) {
    accs.push_back(e.fresh("acc"));
    iterArgs += llvm::formatv("{0}{1} = {2}", m ? ", " : "", accs[m], zero);
    types += (m ? ", " : "") + acc;
  }
  std::string k = e.fresh("k");
  e.open(llvm::formatv("{0}:{1} = scf.for {2} = {3} to {4} step {5} "
                       "iter_args({6}) -> ({7})",
                       sums, s.m, k, k0, cK, step, iterArgs, types));
  std::string b = e.let(
      llvm::formatv("vector.load %B[{0}, {1}] : {2}, {3}", n, k, bType, half),
      "b");
  std::string bf =
      e.let(llvm::formatv("arith.extf {0} : {1} to {2}", b, half, acc), "bf");
  std::string yields;
  for (int64_t m = 0; m < s.m; ++m) {
    std::string a = e.let(llvm::formatv("vector.load %A[{0}, {1}] : {2}, {3}",
                                        rowIndex[m], k, aType, half),
                          "a");
    std::string af =
        e.let(llvm::formatv("arith.extf {0} : {1} to {2}", a, half, acc), "af");
    std::string next = e.let(
        llvm::formatv("vector.fma {0}, {1}, {2} : {3}", af, bf, accs[m], acc),
        "next");
    yields += (m ? ", " : "") + next;
  }
  e.line("scf.yield " + yields + " : " + types);
  e.close();
  return sums;
}

/// Each row's dot product (`sums`#m, a vector per lane) reduced over the
/// lanes of the warp; lane 0 adds it to C[m, n].
void MatvecKernelBuilder::emitWarpSums(const std::string &sums,
                                       const std::string &lane,
                                       const std::string &c0,
                                       const std::string &n) {
  std::string first = e.let(
      llvm::formatv("arith.cmpi eq, {0}, {1} : index", lane, c0), "first");
  for (int64_t m = 0; m < s.m; ++m) {
    std::string value = e.let(llvm::formatv("vector.reduction <add>, {0}#{1} "
                                            ": {2} into f32",
                                            sums, m, acc),
                              "dot");
    for (int64_t offset = 16; offset >= 1; offset /= 2) {
      std::string off =
          e.let(llvm::formatv("arith.constant {0} : i32", offset), "off");
      std::string other = e.fresh("sh");
      e.line(llvm::formatv("{0}, {0}ok = gpu.shuffle xor {1}, {2}, %width : "
                           "f32",
                           other, value, off));
      value = e.let(llvm::formatv("arith.addf {0}, {1} : f32", value, other),
                    "dot");
    }
    e.open("scf.if " + first);
    emitAccumulate(rowIndex[m], n, value);
    e.close();
  }
}

//===----------------------------------------------------------------------===//
// [K, N] B
//===----------------------------------------------------------------------===//

/// The host function for a [K, N] B, in two kernels.
///
/// 1. Block (g, s) computes partial sums of columns 256g .. 256g + 255 over
///    K rows [s R, (s + 1) R): lane l holds 8 consecutive columns (one
///    16-byte load a K row, each warp reading 512 contiguous bytes), warp w
///    the rows w, w + 8, ... (4 loads in flight a step); the 8 warps' sums
///    meet in workgroup memory, one row of A at a time, and the block writes
///    them to a scratch buffer P[s, m, n].
/// 2. A thread per element of C adds up its column of P in split order
///    (deterministic) and adds the sum to C.
///
/// Splitting K gives a matrix of few columns enough blocks (768 columns: 3
/// column groups x 88 splits) to keep memory busy. P is allocated and freed
/// around the kernels: a token-less `gpu.alloc` that gpu-async-region
/// threads into the stream order (`chained`), or a synchronous one. `rows`:
/// the K rows of one split (the plan's tile_k, from splitK).
std::string MatvecKernelBuilder::buildDirect(llvm::StringRef name, int64_t rows,
                                             bool chained) {
  splits = (s.k + rows - 1) / rows;
  pType = llvm::formatv("memref<{0}x{1}x{2}xf32>", splits, s.m, s.n);
  redType = llvm::formatv("memref<{0}x{1}xf32, #gpu.address_space<workgroup>>",
                          kWarps, kBlockColumns);
  emitHostFunction(name);
  e.def("groups", llvm::formatv("arith.constant {0} : index",
                                (s.n + kBlockColumns - 1) / kBlockColumns));
  e.def("splits", llvm::formatv("arith.constant {0} : index", splits));
  e.def("cells", llvm::formatv("arith.constant {0} : index",
                               (s.m * s.n + kThreads - 1) / kThreads));
  std::string p;
  if (chained) {
    p = e.let("gpu.alloc () : " + pType, "P");
  } else {
    std::string t0 = e.let("gpu.wait async", "t");
    std::string t1 = e.fresh("t");
    p = e.fresh("P");
    e.line(p + ", " + t1 + " = gpu.alloc async [" + t0 + "] () : " + pType);
    e.line("gpu.wait [" + t1 + "]");
  }
  emitPartialSums(rows, p);
  emitCombine(p);
  if (chained) {
    e.line("gpu.dealloc " + p + " : " + pType);
  } else {
    std::string t2 = e.let("gpu.wait async", "t");
    std::string t3 =
        e.let("gpu.dealloc async [" + t2 + "] " + p + " : " + pType, "t");
    e.line("gpu.wait [" + t3 + "]");
  }
  e.line("return");
  e.close();
  return e.str();
}

/// Kernel 1: partial sums of a block's columns over one split of K into
/// P[split].
void MatvecKernelBuilder::emitPartialSums(int64_t rows, const std::string &p) {
  emitLaunch("%groups", "%splits", "%red : " + redType);
  std::string sums = emitSplitLoop(rows);
  emitBlockSums(sums, p);
  e.line("gpu.terminator");
  e.close();
}

/// The loop over the K rows of the block's split, a warp's rows w, w + 8,
/// ...: this lane's sums of 8 columns for each row of A. Returns the loop's
/// name.
std::string MatvecKernelBuilder::emitSplitLoop(int64_t rows) {
  e.index(s.k); // unused: the loop ends at kEnd
  cN = e.index(s.n);
  std::string step = e.index(kWarps * kUnroll);
  std::string zero =
      e.let(llvm::formatv("arith.constant dense<0.0> : {0}", acc), "zero");
  zf = e.let("arith.constant 0.0 : f32", "zf");
  emitRowIndices();
  for (int64_t w = 0; w < kWarps; ++w)
    warpIndex.push_back(e.index(w));
  warp = e.apply("s0 floordiv 32", {"%tx"}, "warp");
  laneCol = e.apply(llvm::formatv("(s0 mod 32) * {0}", kVector).str(), {"%tx"},
                    "col");
  std::string n = e.apply(
      llvm::formatv("s0 * {0} + (s1 mod 32) * {1}", kBlockColumns, kVector)
          .str(),
      {"%bx", "%tx"}, "n");
  // Lanes past N read the last 8 columns (in bounds) and keep their sums to
  // themselves.
  std::string nr =
      e.let(llvm::formatv("affine.min affine_map<()[s0] -> (s0, {0})>()[{1}]",
                          s.n - kVector, n),
            "nr");
  std::string kStart =
      e.apply(llvm::formatv("s0 * {0} + s1 floordiv 32", rows).str(),
              {"%by", "%tx"}, "kStart");
  std::string kEnd = e.let(llvm::formatv("affine.min affine_map<()[s0] -> "
                                         "(s0 * {0} + {0}, {1})>()[%by]",
                                         rows, s.k),
                           "kEnd");
  std::string sums = e.fresh("sum"), kb = e.fresh("kb");
  std::vector<std::string> current;
  std::string iterArgs, types;
  for (int64_t m = 0; m < s.m; ++m) {
    current.push_back(e.fresh("acc"));
    iterArgs += llvm::formatv("{0}{1} = {2}", m ? ", " : "", current[m], zero);
    types += (m ? ", " : "") + acc;
  }
  e.open(llvm::formatv("{0}:{1} = scf.for {2} = {3} to {4} step {5} "
                       "iter_args({6}) -> ({7})",
                       sums, s.m, kb, kStart, kEnd, step, iterArgs, types));
  // The loads first, then the arithmetic: kUnroll weight loads in flight.
  std::vector<std::string> ks, bs;
  for (int64_t u = 0; u < kUnroll; ++u) {
    ks.push_back(
        e.apply(llvm::formatv("s0 + {0}", u * kWarps).str(), {kb}, "k"));
    bs.push_back(e.let(llvm::formatv("vector.load %B[{0}, {1}] : {2}, {3}",
                                     ks[u], nr, bType, half),
                       "b"));
  }
  for (int64_t u = 0; u < kUnroll; ++u) {
    std::string bf = e.let(
        llvm::formatv("arith.extf {0} : {1} to {2}", bs[u], half, acc), "bf");
    for (int64_t m = 0; m < s.m; ++m) {
      std::string a = e.let(llvm::formatv("memref.load %A[{0}, {1}] : {2}",
                                          rowIndex[m], ks[u], aType),
                            "a");
      std::string af =
          e.let(llvm::formatv("arith.extf {0} : f16 to f32", a), "af");
      std::string as = e.let(
          llvm::formatv("vector.broadcast {0} : f32 to {1}", af, acc), "as");
      current[m] = e.let(llvm::formatv("vector.fma {0}, {1}, {2} : {3}", as, bf,
                                       current[m], acc),
                         "p");
    }
  }
  std::string yields;
  for (int64_t m = 0; m < s.m; ++m)
    yields += (m ? ", " : "") + current[m];
  e.line("scf.yield " + yields + " : " + types);
  e.close();
  return sums;
}

/// The warps' sums, one row of A at a time: thread t then adds up column t
/// of the block over the 8 warps and stores it to P[split].
void MatvecKernelBuilder::emitBlockSums(const std::string &sums,
                                        const std::string &p) {
  std::string nt = e.apply(llvm::formatv("s0 * {0} + s1", kBlockColumns).str(),
                           {"%bx", "%tx"}, "nt");
  std::string own =
      e.let(llvm::formatv("arith.cmpi ult, {0}, {1} : index", nt, cN), "own");
  for (int64_t m = 0; m < s.m; ++m) {
    e.line(llvm::formatv("vector.store {0}#{1}, %red[{2}, {3}] : {4}, {5}",
                         sums, m, warp, laneCol, redType, acc));
    e.line("gpu.barrier");
    std::string total = emitSum(zf, kWarps, [&](int64_t w) {
      return e.let(llvm::formatv("memref.load %red[{0}, %tx] : {1}",
                                 warpIndex[w], redType));
    });
    e.open("scf.if " + own);
    e.line(llvm::formatv("memref.store {0}, {1}[%by, {2}, {3}] : {4}", total, p,
                         rowIndex[m], nt, pType));
    e.close();
    // The next row reuses the workgroup buffer.
    e.line("gpu.barrier");
  }
}

/// Kernel 2: C += the sum over splits, a thread per element.
void MatvecKernelBuilder::emitCombine(const std::string &p) {
  emitLaunch("%cells", "%one");
  std::string cMN = e.index(s.m * s.n);
  std::string zf = e.let("arith.constant 0.0 : f32", "zf");
  std::string i = e.apply(llvm::formatv("s0 * {0} + s1", kThreads).str(),
                          {"%bx", "%tx"}, "i");
  std::string inside = e.let(
      llvm::formatv("arith.cmpi ult, {0}, {1} : index", i, cMN), "inside");
  e.open("scf.if " + inside);
  std::string m =
      e.apply(llvm::formatv("s0 floordiv {0}", s.n).str(), {i}, "m");
  std::string n = e.apply(llvm::formatv("s0 mod {0}", s.n).str(), {i}, "n");
  std::string total = emitSum(zf, splits, [&](int64_t sp) {
    std::string split = e.index(sp);
    return e.let(llvm::formatv("memref.load {0}[{1}, {2}, {3}] : {4}", p, split,
                               m, n, pType));
  });
  emitAccumulate(m, n, total);
  e.close();
  e.line("gpu.terminator");
  e.close();
}

/// Whether a kernel takes `s`: at most kMaxRows rows; K in whole vectors of
/// 8 for an [N, K] B (16-byte aligned rows); for a [K, N] B, N in whole
/// vectors of 8 (at least one) and K in whole steps of the 8 warps' 4 rows.
bool isMatvec(const gpu_kernels::F16Matmul &s) {
  if (s.m < 1 || s.m > kMaxRows || s.n < 1)
    return false;
  if (s.transposedB)
    return s.k % kVector == 0;
  return s.n % kVector == 0 && s.k % (kWarps * kUnroll) == 0;
}

struct GpuMatvecPass : public tfm::impl::TfmGpuMatvecBase<GpuMatvecPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    auto matmuls =
        gpu_kernels::collectPlannedMatmuls(module, tfm::GpuKernelKind::matvec);
    if (failed(matmuls))
      return signalPassFailure();
    for (auto [matmul, shape, plan] : *matmuls) {
      std::optional<gpu_kernels::KernelPlan> fits =
          gpu_kernels::planMatvec(shape);
      if (!fits || !(*fits == plan)) {
        matmul.emitOpError("has a matvec plan the kernel cannot run: ")
            << plan;
        return signalPassFailure();
      }
      std::string name =
          llvm::formatv("tfm_matvec_{0}x{1}x{2}_{3}", shape.m, shape.n,
                        shape.k, shape.transposedB ? "nt" : "nn");
      func::FuncOp kernel = gpu_kernels::lookupOrParseKernel(
          symbols, name, matmul, "matvec",
          [&, s = shape, rows = plan.getTileK()] {
            MatvecKernelBuilder builder(s);
            return s.transposedB ? builder.buildTransposed(name)
                                 : builder.buildDirect(name, rows, async);
          });
      if (!kernel)
        return signalPassFailure();
      gpu_kernels::replaceWithKernelCall(matmul, kernel);
    }
  }
};
} // namespace

std::optional<gpu_kernels::KernelPlan>
gpu_kernels::planMatvec(const F16Matmul &f16) {
  if (!::isMatvec(f16))
    return std::nullopt;
  // [N, K]: a warp per output column, the whole K; [K, N]: 256 columns a
  // block over the K rows of one split.
  if (f16.transposedB)
    return KernelPlan{tfm::GpuKernelKind::matvec, f16.m, kWarps, f16.k, kWarps, 1};
  return KernelPlan{tfm::GpuKernelKind::matvec, f16.m, kBlockColumns,
                    ::splitK(f16).second, kWarps, 1};
}

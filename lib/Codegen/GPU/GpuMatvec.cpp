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
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUMATVEC
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
namespace gpu_kernels = mlir::tfm::gpu_kernels;
using gpu_kernels::apply;

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

/// `func.func private @name(%A, %B, %C) {` and the constants every kernel's
/// launch uses (%c1, %threads).
void emitHostFunction(llvm::raw_ostream &os, llvm::StringRef name,
                      llvm::StringRef aType, llvm::StringRef bType,
                      llvm::StringRef cType) {
  os << llvm::formatv("func.func private @{0}(%A: {1}, %B: {2}, %C: {3}) {{\n",
                      name, aType, bType, cType);
  os << "  %c1 = arith.constant 1 : index\n";
  os << llvm::formatv("  %threads = arith.constant {0} : index\n", kThreads);
}

/// `gpu.launch` over a `gridX` x `gridY` grid of %threads-thread blocks,
/// with `workgroup` attributions when not empty; opens the body.
void emitLaunch(llvm::raw_ostream &os, llvm::StringRef gridX,
                llvm::StringRef gridY, llvm::StringRef workgroup = "") {
  os << llvm::formatv("  gpu.launch blocks(%bx, %by, %bz) in (%x = {0}, %y = "
                      "{1}, %z = %c1) threads(%tx, %ty, %tz) in (%u = "
                      "%threads, %v = %c1, %w = %c1) ",
                      gridX, gridY);
  if (!workgroup.empty())
    os << "workgroup(" << workgroup << ") ";
  os << "{\n";
}

/// `count` f32 values added in order to `%zf`: `emitLoad(i, name)` writes
/// the ops that load the i-th into `name`. Returns the sum's name.
std::string
emitSum(llvm::raw_ostream &os, llvm::StringRef indent, llvm::StringRef prefix,
        int64_t count,
        llvm::function_ref<void(int64_t, llvm::StringRef)> emitLoad) {
  std::string total = "%zf";
  for (int64_t i = 0; i < count; ++i) {
    emitLoad(i, llvm::formatv("%{0}l{1}", prefix, i).str());
    std::string next = llvm::formatv("%{0}t{1}", prefix, i);
    os << indent
       << llvm::formatv("{0} = arith.addf {1}, %{2}l{3} : f32\n", next, total,
                        prefix, i);
    total = next;
  }
  return total;
}

/// `C[m, n] += value` for the row index `row` and column `col`.
void emitAccumulate(llvm::raw_ostream &os, llvm::StringRef indent,
                    llvm::StringRef cType, llvm::StringRef row,
                    llvm::StringRef col, llvm::StringRef value,
                    llvm::StringRef id) {
  os << indent
     << llvm::formatv("%old{0} = memref.load %C[{1}, {2}] : {3}\n", id, row,
                      col, cType);
  os << indent
     << llvm::formatv("%new{0} = arith.addf %old{0}, {1} : f32\n", id, value);
  os << indent
     << llvm::formatv("memref.store %new{0}, %C[{1}, {2}] : {3}\n", id, row,
                      col, cType);
}

/// The host function `name(A, B, C)` for a transposed ([N, K]) B: warp w of
/// block b computes column n = 8b + w for all M rows. Its lanes walk K in
/// vectors of 8 (lane l from 8l, 256 apart: each step one coalesced 512-byte
/// read of a weight row), then a vector reduction and a butterfly of
/// shuffles leave the dot products in every lane; lane 0 adds them to C.
std::string buildTransposedSource(llvm::StringRef name,
                                  const gpu_kernels::F16Matmul &s) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string aType = llvm::formatv("memref<{0}x{1}xf16>", s.m, s.k);
  std::string bType = llvm::formatv("memref<{0}x{1}xf16>", s.n, s.k);
  std::string cType = llvm::formatv("memref<{0}x{1}xf32>", s.m, s.n);
  std::string acc = llvm::formatv("vector<{0}xf32>", kVector);
  std::string half = llvm::formatv("vector<{0}xf16>", kVector);
  emitHostFunction(os, name, aType, bType, cType);
  os << llvm::formatv("  %grid = arith.constant {0} : index\n",
                      (s.n + kWarps - 1) / kWarps);
  emitLaunch(os, "%grid", "%c1");
  os << "    %c0 = arith.constant 0 : index\n";
  os << llvm::formatv("    %cK = arith.constant {0} : index\n", s.k);
  os << llvm::formatv("    %cN = arith.constant {0} : index\n", s.n);
  os << llvm::formatv("    %step = arith.constant {0} : index\n",
                      32 * kVector);
  os << "    %c32 = arith.constant 32 : i32\n";
  os << llvm::formatv("    %zero = arith.constant dense<0.0> : {0}\n", acc);
  for (int64_t m = 0; m < s.m; ++m)
    os << llvm::formatv("    %row{0} = arith.constant {0} : index\n", m);
  os << "    %n = "
     << apply(llvm::formatv("s0 * {0} + s1 floordiv 32", kWarps).str(),
              {"%bx", "%tx"})
     << "\n";
  os << "    %k0 = "
     << apply(llvm::formatv("(s0 mod 32) * {0}", kVector).str(), {"%tx"})
     << "\n";
  os << "    %lane = " << apply("s0 mod 32", {"%tx"}) << "\n";
  // Whole warps leave together (n depends on the warp only): the shuffles
  // below see all 32 lanes.
  os << "    %live = arith.cmpi ult, %n, %cN : index\n";
  os << "    scf.if %live {\n";
  std::string iterArgs, types, yields;
  for (int64_t m = 0; m < s.m; ++m) {
    iterArgs += llvm::formatv("{0}%acc{1} = %zero", m ? ", " : "", m);
    types += (m ? ", " : "") + acc;
  }
  os << llvm::formatv("      %sum:{0} = scf.for %k = %k0 to %cK step %step "
                      "iter_args({1}) -> ({2}) {{\n",
                      s.m, iterArgs, types);
  os << llvm::formatv("        %b = vector.load %B[%n, %k] : {0}, {1}\n",
                      bType, half);
  os << llvm::formatv("        %bf = arith.extf %b : {0} to {1}\n", half, acc);
  for (int64_t m = 0; m < s.m; ++m) {
    os << llvm::formatv(
        "        %a{0} = vector.load %A[%row{0}, %k] : {1}, {2}\n", m, aType,
        half);
    os << llvm::formatv("        %af{0} = arith.extf %a{0} : {1} to {2}\n", m,
                        half, acc);
    os << llvm::formatv(
        "        %next{0} = vector.fma %af{0}, %bf, %acc{0} : {1}\n", m, acc);
    yields += llvm::formatv("{0}%next{1}", m ? ", " : "", m);
  }
  os << "        scf.yield " << yields << " : " << types << "\n";
  os << "      }\n";
  os << "      %first = arith.cmpi eq, %lane, %c0 : index\n";
  for (int64_t m = 0; m < s.m; ++m) {
    std::string value = llvm::formatv("%dot{0}_0", m);
    os << llvm::formatv("      {0} = vector.reduction <add>, %sum#{1} : {2} "
                        "into f32\n",
                        value, m, acc);
    for (int64_t offset = 16, step = 1; offset >= 1; offset /= 2, ++step) {
      os << llvm::formatv("      %off{0}_{1} = arith.constant {2} : i32\n", m,
                          step, offset);
      os << llvm::formatv("      %sh{0}_{1}, %ok{0}_{1} = gpu.shuffle xor "
                          "{2}, %off{0}_{1}, %c32 : f32\n",
                          m, step, value);
      std::string next = llvm::formatv("%dot{0}_{1}", m, step);
      os << llvm::formatv("      {0} = arith.addf {1}, %sh{2}_{3} : f32\n",
                          next, value, m, step);
      value = next;
    }
    os << "      scf.if %first {\n";
    emitAccumulate(os, "        ", cType, llvm::formatv("%row{0}", m).str(),
                   "%n", value, std::to_string(m));
    os << "      }\n";
  }
  os << "    }\n";
  os << "    gpu.terminator\n  }\n  return\n}\n";
  return text;
}

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

/// The host function `name(A, B, C)` for a [K, N] B, in two kernels.
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
std::string buildDirectSource(llvm::StringRef name,
                              const gpu_kernels::F16Matmul &s, int64_t rows,
                              bool chained) {
  std::string text;
  llvm::raw_string_ostream os(text);
  int64_t splits = (s.k + rows - 1) / rows;
  std::string aType = llvm::formatv("memref<{0}x{1}xf16>", s.m, s.k);
  std::string bType = llvm::formatv("memref<{0}x{1}xf16>", s.k, s.n);
  std::string cType = llvm::formatv("memref<{0}x{1}xf32>", s.m, s.n);
  std::string pType =
      llvm::formatv("memref<{0}x{1}x{2}xf32>", splits, s.m, s.n);
  std::string redType = llvm::formatv(
      "memref<{0}x{1}xf32, #gpu.address_space<workgroup>>", kWarps,
      kBlockColumns);
  std::string acc = llvm::formatv("vector<{0}xf32>", kVector);
  std::string half = llvm::formatv("vector<{0}xf16>", kVector);
  emitHostFunction(os, name, aType, bType, cType);
  os << llvm::formatv("  %groups = arith.constant {0} : index\n",
                      (s.n + kBlockColumns - 1) / kBlockColumns);
  os << llvm::formatv("  %splits = arith.constant {0} : index\n", splits);
  os << llvm::formatv("  %cells = arith.constant {0} : index\n",
                      (s.m * s.n + kThreads - 1) / kThreads);
  if (chained) {
    os << "  %P = gpu.alloc () : " << pType << "\n";
  } else {
    os << "  %t0 = gpu.wait async\n";
    os << "  %P, %t1 = gpu.alloc async [%t0] () : " << pType << "\n";
    os << "  gpu.wait [%t1]\n";
  }
  // Kernel 1: partial sums.
  emitLaunch(os, "%groups", "%splits", "%red : " + redType);
  os << llvm::formatv("    %cK = arith.constant {0} : index\n", s.k);
  os << llvm::formatv("    %cN = arith.constant {0} : index\n", s.n);
  os << llvm::formatv("    %step = arith.constant {0} : index\n",
                      kWarps * kUnroll);
  os << llvm::formatv("    %zero = arith.constant dense<0.0> : {0}\n", acc);
  os << "    %zf = arith.constant 0.0 : f32\n";
  for (int64_t m = 0; m < s.m; ++m)
    os << llvm::formatv("    %row{0} = arith.constant {0} : index\n", m);
  for (int64_t w = 0; w < kWarps; ++w)
    os << llvm::formatv("    %cw{0} = arith.constant {0} : index\n", w);
  os << "    %warp = " << apply("s0 floordiv 32", {"%tx"}) << "\n";
  os << "    %col = "
     << apply(llvm::formatv("(s0 mod 32) * {0}", kVector).str(), {"%tx"})
     << "\n";
  os << "    %n = "
     << apply(llvm::formatv("s0 * {0} + (s1 mod 32) * {1}", kBlockColumns,
                            kVector)
                  .str(),
              {"%bx", "%tx"})
     << "\n";
  // Lanes past N read the last 8 columns (in bounds) and keep their sums to
  // themselves.
  os << llvm::formatv("    %nr = affine.min affine_map<()[s0] -> (s0, {0})>()"
                      "[%n]\n",
                      s.n - kVector);
  os << "    %kStart = "
     << apply(llvm::formatv("s0 * {0} + s1 floordiv 32", rows).str(),
              {"%by", "%tx"})
     << "\n";
  os << llvm::formatv("    %kEnd = affine.min affine_map<()[s0] -> (s0 * {0} "
                      "+ {0}, {1})>()[%by]\n",
                      rows, s.k);
  std::string iterArgs, types, yields;
  for (int64_t m = 0; m < s.m; ++m) {
    iterArgs += llvm::formatv("{0}%acc{1} = %zero", m ? ", " : "", m);
    types += (m ? ", " : "") + acc;
  }
  os << llvm::formatv("    %sum:{0} = scf.for %kb = %kStart to %kEnd step "
                      "%step iter_args({1}) -> ({2}) {{\n",
                      s.m, iterArgs, types);
  std::vector<std::string> current;
  for (int64_t m = 0; m < s.m; ++m)
    current.push_back(llvm::formatv("%acc{0}", m));
  // The loads first, then the arithmetic: kUnroll weight loads in flight.
  for (int64_t u = 0; u < kUnroll; ++u) {
    os << llvm::formatv("      %k{0} = ", u)
       << apply(llvm::formatv("s0 + {0}", u * kWarps).str(), {"%kb"}) << "\n";
    os << llvm::formatv("      %b{0} = vector.load %B[%k{0}, %nr] : {1}, {2}\n",
                        u, bType, half);
  }
  for (int64_t u = 0; u < kUnroll; ++u) {
    os << llvm::formatv("      %bf{0} = arith.extf %b{0} : {1} to {2}\n", u,
                        half, acc);
    for (int64_t m = 0; m < s.m; ++m) {
      os << llvm::formatv(
          "      %a{0}_{1} = memref.load %A[%row{1}, %k{0}] : {2}\n", u, m,
          aType);
      os << llvm::formatv(
          "      %af{0}_{1} = arith.extf %a{0}_{1} : f16 to f32\n", u, m);
      os << llvm::formatv("      %as{0}_{1} = vector.broadcast %af{0}_{1} : "
                          "f32 to {2}\n",
                          u, m, acc);
      std::string next = llvm::formatv("%p{0}_{1}", u, m);
      os << llvm::formatv("      {0} = vector.fma %as{1}_{2}, %bf{1}, {3} : "
                          "{4}\n",
                          next, u, m, current[m], acc);
      current[m] = next;
    }
  }
  for (int64_t m = 0; m < s.m; ++m)
    yields += (m ? ", " : "") + current[m];
  os << "      scf.yield " << yields << " : " << types << "\n";
  os << "    }\n";
  // The warps' sums, one row of A at a time: thread t then adds up column
  // t of the block over the 8 warps.
  os << "    %nt = "
     << apply(llvm::formatv("s0 * {0} + s1", kBlockColumns).str(),
              {"%bx", "%tx"})
     << "\n";
  os << "    %own = arith.cmpi ult, %nt, %cN : index\n";
  for (int64_t m = 0; m < s.m; ++m) {
    os << llvm::formatv("    vector.store %sum#{0}, %red[%warp, %col] : {1}, "
                        "{2}\n",
                        m, redType, acc);
    os << "    gpu.barrier\n";
    std::string total = emitSum(
        os, "    ", llvm::formatv("w{0}_", m).str(), kWarps,
        [&](int64_t w, llvm::StringRef part) {
          os << llvm::formatv("    {0} = memref.load %red[%cw{1}, %tx] : {2}\n",
                              part, w, redType);
        });
    os << "    scf.if %own {\n";
    os << llvm::formatv("      memref.store {0}, %P[%by, %row{1}, %nt] : {2}\n",
                        total, m, pType);
    os << "    }\n";
    // The next row reuses the workgroup buffer.
    os << "    gpu.barrier\n";
  }
  os << "    gpu.terminator\n  }\n";
  // Kernel 2: C += the sum over splits, a thread per element.
  emitLaunch(os, "%cells", "%c1");
  os << llvm::formatv("    %cMN = arith.constant {0} : index\n", s.m * s.n);
  os << "    %zf = arith.constant 0.0 : f32\n";
  os << "    %i = "
     << apply(llvm::formatv("s0 * {0} + s1", kThreads).str(), {"%bx", "%tx"})
     << "\n";
  os << "    %inside = arith.cmpi ult, %i, %cMN : index\n";
  os << "    scf.if %inside {\n";
  os << "      %m = " << apply(llvm::formatv("s0 floordiv {0}", s.n).str(),
                               {"%i"})
     << "\n";
  os << "      %n = " << apply(llvm::formatv("s0 mod {0}", s.n).str(), {"%i"})
     << "\n";
  std::string total = emitSum(
      os, "      ", "s", splits, [&](int64_t sp, llvm::StringRef part) {
        os << llvm::formatv("      %s{0} = arith.constant {0} : index\n", sp);
        os << llvm::formatv("      {0} = memref.load %P[%s{1}, %m, %n] : {2}\n",
                            part, sp, pType);
      });
  emitAccumulate(os, "      ", cType, "%m", "%n", total, "");
  os << "    }\n";
  os << "    gpu.terminator\n  }\n";
  if (chained) {
    os << "  gpu.dealloc %P : " << pType << "\n";
  } else {
    os << "  %t2 = gpu.wait async\n";
    os << "  %t3 = gpu.dealloc async [%t2] %P : " << pType << "\n";
    os << "  gpu.wait [%t3]\n";
  }
  os << "  return\n}\n";
  return text;
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
            return s.transposedB ? buildTransposedSource(name, s)
                                 : buildDirectSource(name, s, rows, async);
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

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

#include "tfm/Pipelines/Passes.h"

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

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUMATVEC
#include "tfm/Pipelines/Passes.h.inc"
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
/// [N, K] weight: f16 elements a lane loads at once (16 bytes).
constexpr int64_t kVector = 8;
/// [K, N] weight: K rows a warp reads per loop step (independent loads in
/// flight).
constexpr int64_t kUnroll = 4;

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
  os << llvm::formatv("func.func private @{0}(%A: {1}, %B: {2}, %C: {3}) {{\n",
                      name, aType, bType, cType);
  os << "  %c1 = arith.constant 1 : index\n";
  os << llvm::formatv("  %threads = arith.constant {0} : index\n", kThreads);
  os << llvm::formatv("  %grid = arith.constant {0} : index\n",
                      (s.n + kWarps - 1) / kWarps);
  os << "  gpu.launch blocks(%bx, %by, %bz) in (%x = %grid, %y = %c1, %z = "
        "%c1) threads(%tx, %ty, %tz) in (%u = %threads, %v = %c1, %w = %c1) "
        "{\n";
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

/// The host function `name(A, B, C)` for a [K, N] B: block b computes
/// columns 32b .. 32b + 31, lane l column 32b + l (consecutive lanes read
/// consecutive weights: one coalesced 64-byte read per K row). Warp w takes
/// the K rows w, w + 8, ... (4 rows a step); the 8 warps' partial sums meet
/// in workgroup memory, where warp m adds up row m.
std::string buildDirectSource(llvm::StringRef name,
                              const gpu_kernels::F16Matmul &s) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string aType = llvm::formatv("memref<{0}x{1}xf16>", s.m, s.k);
  std::string bType = llvm::formatv("memref<{0}x{1}xf16>", s.k, s.n);
  std::string cType = llvm::formatv("memref<{0}x{1}xf32>", s.m, s.n);
  std::string redType = llvm::formatv(
      "memref<{0}x{1}x32xf32, #gpu.address_space<workgroup>>", kWarps, s.m);
  os << llvm::formatv("func.func private @{0}(%A: {1}, %B: {2}, %C: {3}) {{\n",
                      name, aType, bType, cType);
  os << "  %c1 = arith.constant 1 : index\n";
  os << llvm::formatv("  %threads = arith.constant {0} : index\n", kThreads);
  os << llvm::formatv("  %grid = arith.constant {0} : index\n",
                      (s.n + 31) / 32);
  os << "  gpu.launch blocks(%bx, %by, %bz) in (%x = %grid, %y = %c1, %z = "
        "%c1) threads(%tx, %ty, %tz) in (%u = %threads, %v = %c1, %w = %c1) "
     << llvm::formatv("workgroup(%red : {0}) {{\n", redType);
  os << "    %c0 = arith.constant 0 : index\n";
  os << llvm::formatv("    %cK = arith.constant {0} : index\n", s.k);
  os << llvm::formatv("    %cN = arith.constant {0} : index\n", s.n);
  os << llvm::formatv("    %cM = arith.constant {0} : index\n", s.m);
  os << llvm::formatv("    %step = arith.constant {0} : index\n",
                      kWarps * kUnroll);
  os << "    %zf = arith.constant 0.0 : f32\n";
  for (int64_t m = 0; m < s.m; ++m)
    os << llvm::formatv("    %row{0} = arith.constant {0} : index\n", m);
  os << "    %warp = " << apply("s0 floordiv 32", {"%tx"}) << "\n";
  os << "    %lane = " << apply("s0 mod 32", {"%tx"}) << "\n";
  os << "    %n = " << apply("s0 * 32 + s1 mod 32", {"%bx", "%tx"}) << "\n";
  // Lanes past N read the last column (in bounds) and store nothing.
  os << llvm::formatv("    %nr = affine.min affine_map<()[s0] -> (s0, {0})>()"
                      "[%n]\n",
                      s.n - 1);
  std::string iterArgs, types, yields;
  for (int64_t m = 0; m < s.m; ++m) {
    iterArgs += llvm::formatv("{0}%acc{1} = %zf", m ? ", " : "", m);
    types += m ? ", f32" : "f32";
  }
  os << llvm::formatv("    %sum:{0} = scf.for %kb = %warp to %cK step %step "
                      "iter_args({1}) -> ({2}) {{\n",
                      s.m, iterArgs, types);
  std::vector<std::string> current;
  for (int64_t m = 0; m < s.m; ++m)
    current.push_back(llvm::formatv("%acc{0}", m));
  for (int64_t u = 0; u < kUnroll; ++u) {
    os << llvm::formatv("      %k{0} = ", u)
       << apply(llvm::formatv("s0 + {0}", u * kWarps).str(), {"%kb"}) << "\n";
    os << llvm::formatv("      %b{0} = memref.load %B[%k{0}, %nr] : {1}\n", u,
                        bType);
    os << llvm::formatv("      %bf{0} = arith.extf %b{0} : f16 to f32\n", u);
    for (int64_t m = 0; m < s.m; ++m) {
      os << llvm::formatv(
          "      %a{0}_{1} = memref.load %A[%row{1}, %k{0}] : {2}\n", u, m,
          aType);
      os << llvm::formatv(
          "      %af{0}_{1} = arith.extf %a{0}_{1} : f16 to f32\n", u, m);
      std::string next = llvm::formatv("%p{0}_{1}", u, m);
      os << llvm::formatv("      {0} = math.fma %af{1}_{2}, %bf{1}, {3} : "
                          "f32\n",
                          next, u, m, current[m]);
      current[m] = next;
    }
  }
  for (int64_t m = 0; m < s.m; ++m)
    yields += (m ? ", " : "") + current[m];
  os << "      scf.yield " << yields << " : " << types << "\n";
  os << "    }\n";
  for (int64_t m = 0; m < s.m; ++m)
    os << llvm::formatv("    memref.store %sum#{0}, %red[%warp, %row{0}, "
                        "%lane] : {1}\n",
                        m, redType);
  os << "    gpu.barrier\n";
  // Warp m (m < M) adds up row m's partial sums.
  os << "    %isRow = arith.cmpi ult, %warp, %cM : index\n";
  os << "    %isCol = arith.cmpi ult, %n, %cN : index\n";
  os << "    %store = arith.andi %isRow, %isCol : i1\n";
  os << "    scf.if %store {\n";
  std::string total = "%zf";
  for (int64_t w = 0; w < kWarps; ++w) {
    os << llvm::formatv("      %cw{0} = arith.constant {0} : index\n", w);
    os << llvm::formatv("      %part{0} = memref.load %red[%cw{0}, %warp, "
                        "%lane] : {1}\n",
                        w, redType);
    std::string next = llvm::formatv("%total{0}", w);
    os << llvm::formatv("      {0} = arith.addf {1}, %part{2} : f32\n", next,
                        total, w);
    total = next;
  }
  emitAccumulate(os, "      ", cType, "%warp", "%n", total, "");
  os << "    }\n";
  os << "    gpu.terminator\n  }\n  return\n}\n";
  return text;
}

/// Whether a kernel takes `s`: at most kMaxRows rows; K in whole vectors of
/// 8 for an [N, K] B (16-byte aligned rows), in whole steps of the 8 warps'
/// 4 rows for a [K, N] B.
bool isMatvec(const gpu_kernels::F16Matmul &s) {
  if (s.m < 1 || s.m > kMaxRows || s.n < 1)
    return false;
  return s.transposedB ? s.k % kVector == 0 : s.k % (kWarps * kUnroll) == 0;
}

struct GpuMatvecPass : public tfm::impl::TfmGpuMatvecBase<GpuMatvecPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<linalg::MatmulOp, gpu_kernels::F16Matmul>> matmuls;
    module.walk([&](linalg::MatmulOp matmul) {
      if (matmul->getParentOfType<gpu::LaunchOp>())
        return;
      std::optional<gpu_kernels::F16Matmul> shape =
          gpu_kernels::matchF16Matmul(matmul);
      if (shape && isMatvec(*shape))
        matmuls.push_back({matmul, *shape});
    });
    for (auto [matmul, shape] : matmuls) {
      std::string name =
          llvm::formatv("tfm_matvec_{0}x{1}x{2}_{3}", shape.m, shape.n,
                        shape.k, shape.transposedB ? "nt" : "nn");
      func::FuncOp kernel = gpu_kernels::lookupOrParseKernel(
          symbols, name, matmul, "matvec", [&, s = shape] {
            return s.transposedB ? buildTransposedSource(name, s)
                                 : buildDirectSource(name, s);
          });
      if (!kernel)
        return signalPassFailure();
      gpu_kernels::replaceWithKernelCall(matmul, kernel);
    }
  }
};
} // namespace

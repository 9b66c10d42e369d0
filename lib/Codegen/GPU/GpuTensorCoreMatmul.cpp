//===- GpuTensorCoreMatmul.cpp - f16 matmuls as mma.sync kernels ----------===//
//
// --tfm-gpu-tensor-core-matmul: see Passes.td. The kernel of each matmul
// shape is written as MLIR text (a host function around a gpu.launch),
// parsed, and called in place of the linalg.matmul. Index arithmetic is in
// affine.apply: convert-vector-to-gpu{use-nvgpu} rejects kernels with scalar
// arith.muli/addi next to the contractions.
//
//===----------------------------------------------------------------------===//
#include "GpuMatmulKernels.h"

#include "tfm/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
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
#define GEN_PASS_DEF_TFMGPUTENSORCOREMATMUL
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
namespace gpu_kernels = mlir::tfm::gpu_kernels;
using gpu_kernels::apply;

namespace {
/// Tiling of the kernel: a block computes BM x BN of C with WM x WN warps,
/// each warp (BM/WM) x (BN/WN) as 16x8 mma tiles; K advances by BK.
constexpr int64_t kBM = 64, kBN = 64, kBK = 32, kWM = 2, kWN = 2;
constexpr int64_t kThreads = kWM * kWN * 32;
constexpr int64_t kTilesM = kBM / kWM / 16, kTilesN = kBN / kWN / 8;
/// Elements one thread moves with one cp.async (16 bytes of f16).
constexpr int64_t kChunk = 8;

struct MatmulShape {
  int64_t m, n, k;
  bool transposedB; // B is [N, K]
  /// Row stride of C: n, or the full width when C is the first n columns of
  /// a wider matrix (the bulk of a split matmul).
  int64_t ldc;
};

/// `affine.apply` of `expr` over the symbols `syms`.
/// The host function `name(A, B, C)` launching the kernel for `shape`.
std::string buildKernelSource(llvm::StringRef name, const MatmulShape &s) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string aType = llvm::formatv("memref<{0}x{1}xf16>", s.m, s.k);
  std::string bType = s.transposedB
                          ? llvm::formatv("memref<{0}x{1}xf16>", s.n, s.k).str()
                          : llvm::formatv("memref<{0}x{1}xf16>", s.k, s.n).str();
  std::string cType =
      s.ldc == s.n
          ? llvm::formatv("memref<{0}x{1}xf32>", s.m, s.n).str()
          : llvm::formatv("memref<{0}x{1}xf32, strided<[{2}, 1]>>", s.m, s.n,
                          s.ldc)
                .str();
  std::string saType = llvm::formatv(
      "memref<2x{0}x{1}xf16, #gpu.address_space<workgroup>>", kBM, kBK);
  // B in shared memory keeps its global layout: [BK, BN] or [BN, BK].
  int64_t sbRows = s.transposedB ? kBN : kBK, sbCols = s.transposedB ? kBK : kBN;
  std::string sbType = llvm::formatv(
      "memref<2x{0}x{1}xf16, #gpu.address_space<workgroup>>", sbRows, sbCols);
  std::string acc = "vector<16x8xf32>";

  os << llvm::formatv("func.func private @{0}(%A: {1}, %B: {2}, %C: {3}) {{\n",
                      name, aType, bType, cType);
  os << "  %c1 = arith.constant 1 : index\n";
  os << llvm::formatv("  %threads = arith.constant {0} : index\n", kThreads);
  os << llvm::formatv("  %gx = arith.constant {0} : index\n", s.n / kBN);
  os << llvm::formatv("  %gy = arith.constant {0} : index\n", s.m / kBM);
  os << "  gpu.launch blocks(%bx, %by, %bz) in (%x = %gx, %y = %gy, %z = %c1) "
        "threads(%tx, %ty, %tz) in (%u = %threads, %v = %c1, %w = %c1) "
     << llvm::formatv("workgroup(%sa : {0}, %sb : {1}) {{\n", saType, sbType);
  os << "    %c0 = arith.constant 0 : index\n";
  for (int64_t kk = 0; kk < kBK; kk += 16)
    os << llvm::formatv("    %k{0} = arith.constant {0} : index\n", kk);
  os << llvm::formatv("    %cK = arith.constant {0} : index\n", s.k);
  os << llvm::formatv("    %cBK = arith.constant {0} : index\n", kBK);
  os << "    %zf = arith.constant 0.0 : f32\n";
  os << "    %zh = arith.constant 0.0 : f16\n";
  os << "    %m0 = " << apply(llvm::formatv("s0 * {0}", kBM).str(), {"%by"})
     << "\n";
  os << "    %n0 = " << apply(llvm::formatv("s0 * {0}", kBN).str(), {"%bx"})
     << "\n";
  os << "    %wm = "
     << apply(llvm::formatv("((s0 floordiv 32) floordiv {0}) * {1}", kWN,
                            kBM / kWM)
                  .str(),
              {"%tx"})
     << "\n";
  os << "    %wn = "
     << apply(llvm::formatv("((s0 floordiv 32) mod {0}) * {1}", kWN, kBN / kWN)
                  .str(),
              {"%tx"})
     << "\n";

  // Copy coordinates in the shared tiles: chunks of 8 along the rows.
  auto copyCoords = [&](llvm::StringRef prefix, int64_t rows, int64_t cols) {
    int64_t perRow = cols / kChunk;
    int64_t copies = rows * cols / kChunk / kThreads;
    for (int64_t c = 0; c < copies; ++c) {
      os << llvm::formatv("    %{0}r{1} = ", prefix, c)
         << apply(llvm::formatv("(s0 + {0}) floordiv {1}", c * kThreads,
                                perRow)
                      .str(),
                  {"%tx"})
         << "\n";
      os << llvm::formatv("    %{0}c{1} = ", prefix, c)
         << apply(llvm::formatv("((s0 + {0}) mod {1}) * {2}", c * kThreads,
                                perRow, kChunk)
                      .str(),
                  {"%tx"})
         << "\n";
    }
    return copies;
  };
  int64_t aCopies = copyCoords("a", kBM, kBK);
  int64_t bCopies = copyCoords("b", sbRows, sbCols);

  // Accumulators, loaded from C (the matmul accumulates into its output).
  for (int64_t i = 0; i < kTilesM; ++i)
    os << llvm::formatv("    %ci{0} = ", i)
       << apply(llvm::formatv("s0 + s1 + {0}", 16 * i).str(), {"%m0", "%wm"})
       << "\n";
  for (int64_t j = 0; j < kTilesN; ++j)
    os << llvm::formatv("    %cj{0} = ", j)
       << apply(llvm::formatv("s0 + s1 + {0}", 8 * j).str(), {"%n0", "%wn"})
       << "\n";
  std::string iterArgs, types;
  for (int64_t i = 0; i < kTilesM; ++i) {
    for (int64_t j = 0; j < kTilesN; ++j) {
      os << llvm::formatv("    %init{0}{1} = vector.transfer_read "
                          "%C[%ci{0}, %cj{1}], %zf {{in_bounds = [true, "
                          "true]} : {2}, {3}\n",
                          i, j, cType, acc);
      iterArgs += llvm::formatv("{0}%a{1}{2} = %init{1}{2}",
                                iterArgs.empty() ? "" : ", ", i, j);
      types += (types.empty() ? "" : ", ") + acc;
    }
  }
  // Two-stage pipeline: the tiles of step i + 1 are in flight (cp.async)
  // while step i is computed; shared memory holds two slots of each tile.
  // Slot of the tiles of the K step at `kb`: (kb / BK) mod 2.
  int counter = 0;
  auto emitCopies = [&](llvm::StringRef indent, llvm::StringRef kb,
                        llvm::StringRef slot) {
    std::string tokens;
    auto copies = [&](llvm::StringRef prefix, llvm::StringRef global,
                      llvm::StringRef globalType, llvm::StringRef shared,
                      llvm::StringRef sharedType, int64_t count,
                      llvm::StringRef rowBase, llvm::StringRef colBase) {
      for (int64_t c = 0; c < count; ++c, ++counter) {
        std::string row = llvm::formatv("%{0}r{1}", prefix, c);
        std::string col = llvm::formatv("%{0}c{1}", prefix, c);
        os << indent << llvm::formatv("%gr{0} = ", counter)
           << apply("s0 + s1", {rowBase.str(), row}) << "\n";
        os << indent << llvm::formatv("%gc{0} = ", counter)
           << apply("s0 + s1", {colBase.str(), col}) << "\n";
        os << indent
           << llvm::formatv("%t{0} = nvgpu.device_async_copy {1}[%gr{0}, "
                            "%gc{0}], {2}[{3}, {4}, {5}], {6} {{bypassL1} : "
                            "{7} to {8}\n",
                            counter, global, shared, slot, row, col, kChunk,
                            globalType, sharedType);
        tokens += llvm::formatv("{0}%t{1}", tokens.empty() ? "" : ", ",
                                counter);
      }
    };
    copies("a", "%A", aType, "%sa", saType, aCopies, "%m0", kb);
    if (s.transposedB)
      copies("b", "%B", bType, "%sb", sbType, bCopies, "%n0", kb);
    else
      copies("b", "%B", bType, "%sb", sbType, bCopies, kb, "%n0");
    os << indent
       << llvm::formatv("%group{0} = nvgpu.device_async_create_group {1}\n",
                        counter, tokens);
    return llvm::formatv("%group{0}", counter).str();
  };

  // 16x8x16 contractions on one slot; B is read as (n, k), transposed for
  // [K, N]. Returns the new accumulators.
  auto emitCompute = [&](llvm::StringRef indent, llvm::StringRef slot,
                         std::vector<std::vector<std::string>> current) {
    for (int64_t kk = 0; kk < kBK; kk += 16) {
      int id = counter++;
      for (int64_t i = 0; i < kTilesM; ++i) {
        os << indent << llvm::formatv("%ra{0}_{1} = ", id, i)
           << apply(llvm::formatv("s0 + {0}", 16 * i).str(), {"%wm"})
           << "\n";
        os << indent
           << llvm::formatv("%fa{0}_{1} = vector.transfer_read %sa[{2}, "
                            "%ra{0}_{1}, %k{3}], %zh {{in_bounds = [true, "
                            "true]} : {4}, vector<16x16xf16>\n",
                            id, i, slot, kk, saType);
      }
      for (int64_t j = 0; j < kTilesN; ++j) {
        os << indent << llvm::formatv("%rb{0}_{1} = ", id, j)
           << apply(llvm::formatv("s0 + {0}", 8 * j).str(), {"%wn"}) << "\n";
        if (s.transposedB)
          os << indent
             << llvm::formatv("%fb{0}_{1} = vector.transfer_read %sb[{2}, "
                              "%rb{0}_{1}, %k{3}], %zh {{in_bounds = [true, "
                              "true]} : {4}, vector<8x16xf16>\n",
                              id, j, slot, kk, sbType);
        else
          os << indent
             << llvm::formatv(
                    "%fb{0}_{1} = vector.transfer_read %sb[{2}, %k{3}, "
                    "%rb{0}_{1}], %zh {{in_bounds = [true, true], "
                    "permutation_map = affine_map<(d0, d1, d2) -> (d2, "
                    "d1)>} : {4}, vector<8x16xf16>\n",
                    id, j, slot, kk, sbType);
      }
      for (int64_t i = 0; i < kTilesM; ++i) {
        for (int64_t j = 0; j < kTilesN; ++j) {
          std::string next = llvm::formatv("%p{0}_{1}{2}", id, i, j);
          os << indent
             << llvm::formatv(
                    "{0} = vector.contract {{indexing_maps = [affine_map<(m, "
                    "n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, "
                    "affine_map<(m, n, k) -> (m, n)>], iterator_types = "
                    "[\"parallel\", \"parallel\", \"reduction\"], kind = "
                    "#vector.kind<add>} %fa{1}_{2}, %fb{1}_{3}, {4} : "
                    "vector<16x16xf16>, vector<8x16xf16> into {5}\n",
                    next, id, i, j, current[i][j], acc);
          current[i][j] = next;
        }
      }
    }
    return current;
  };

  std::vector<std::vector<std::string>> current(
      kTilesM, std::vector<std::string>(kTilesN));
  for (int64_t i = 0; i < kTilesM; ++i)
    for (int64_t j = 0; j < kTilesN; ++j)
      current[i][j] = llvm::formatv("%a{0}{1}", i, j);

  // Prologue: the tiles of step 0 into slot 0.
  std::string first = emitCopies("    ", "%c0", "%c0");
  // Steady state over all steps but the last: prefetch step i + 1, wait for
  // step i (one group may stay in flight), compute it.
  os << llvm::formatv("    %kLast = arith.constant {0} : index\n",
                      s.k - kBK);
  os << llvm::formatv("    %r:{0} = scf.for %kb = %c0 to %kLast step %cBK "
                      "iter_args({1}) -> ({2}) {{\n",
                      kTilesM * kTilesN, iterArgs, types);
  os << "      %slot = "
     << apply(llvm::formatv("(s0 floordiv {0}) mod 2", kBK).str(), {"%kb"})
     << "\n";
  os << "      %nextSlot = "
     << apply(llvm::formatv("(s0 floordiv {0} + 1) mod 2", kBK).str(),
              {"%kb"})
     << "\n";
  os << "      %kNext = "
     << apply(llvm::formatv("s0 + {0}", kBK).str(), {"%kb"}) << "\n";
  std::string next = emitCopies("      ", "%kNext", "%nextSlot");
  os << "      nvgpu.device_async_wait " << next << " {numGroups = 1 : i32}\n";
  os << "      gpu.barrier\n";
  std::vector<std::vector<std::string>> stepped =
      emitCompute("      ", "%slot", current);
  // The next prefetch overwrites this slot: every warp must be done with it.
  os << "      gpu.barrier\n";
  std::string yielded;
  for (int64_t i = 0; i < kTilesM; ++i)
    for (int64_t j = 0; j < kTilesN; ++j)
      yielded += (yielded.empty() ? "" : ", ") + stepped[i][j];
  os << "      scf.yield " << yielded << " : " << types << "\n";
  os << "    }\n";
  // Epilogue: the last step, already in flight.
  // (Any group token will do: the wait lowers to cp.async.wait_group 0.)
  os << "    nvgpu.device_async_wait " << first
     << " {numGroups = 0 : i32}\n";
  os << "    gpu.barrier\n";
  os << "    %lastSlot = arith.constant " << ((s.k / kBK - 1) % 2)
     << " : index\n";
  for (int64_t i = 0, n = 0; i < kTilesM; ++i)
    for (int64_t j = 0; j < kTilesN; ++j, ++n)
      current[i][j] = llvm::formatv("%r#{0}", n);
  std::vector<std::vector<std::string>> last =
      emitCompute("    ", "%lastSlot", current);
  for (int64_t i = 0; i < kTilesM; ++i)
    for (int64_t j = 0; j < kTilesN; ++j)
      os << llvm::formatv("    vector.transfer_write {0}, %C[%ci{1}, "
                          "%cj{2}] {{in_bounds = [true, true]} : {3}, {4}\n",
                          last[i][j], i, j, acc, cType);
  os << "    gpu.terminator\n  }\n  return\n}\n";
  return text;
}

/// The shape of `matmul` if the tensor-core kernel handles it whole.
std::optional<MatmulShape> matchMatmul(const gpu_kernels::F16Matmul &f16) {
  if (f16.m % kBM || f16.n % kBN || f16.k % kBK)
    return std::nullopt;
  return MatmulShape{f16.m, f16.n, f16.k, f16.transposedB, f16.n};
}

/// Columns of the kernel's part when `matmul` is split: an [N, K] weight
/// whose N is no multiple of the block (a vocabulary: 50257, 32000 + a few)
/// keeps its bulk on tensor cores. Its first N' rows are a contiguous [N', K]
/// weight; the bulk of C is then C's first N' columns (rows N apart). A
/// `[K, N]` B is not split: its rows would not stay 16-byte aligned for
/// cp.async.
std::optional<int64_t> splitColumns(const gpu_kernels::F16Matmul &f16) {
  if (!f16.transposedB || f16.m % kBM || f16.k % kBK || f16.n % kBN == 0 ||
      f16.n < kBN)
    return std::nullopt;
  return f16.n - f16.n % kBN;
}

/// `value` (a static 2-d memref) rows [r0, r0 + rows), columns [c0, c0 +
/// cols).
Value slice(OpBuilder &b, Location loc, Value value, int64_t r0, int64_t c0,
            int64_t rows, int64_t cols) {
  return memref::SubViewOp::create(b, loc, value,
                                   ArrayRef<OpFoldResult>{b.getIndexAttr(r0),
                                                          b.getIndexAttr(c0)},
                                   ArrayRef<OpFoldResult>{b.getIndexAttr(rows),
                                                          b.getIndexAttr(cols)},
                                   ArrayRef<OpFoldResult>{b.getIndexAttr(1),
                                                          b.getIndexAttr(1)});
}

/// Splits `matmul` (B [N, K]) at column `bulk` of C: the kernel `kernel`
/// computes C[:, :bulk] from B's first `bulk` rows, and a linalg.matmul on
/// the remaining rows and columns is left for the SIMT path.
void splitAndCall(linalg::MatmulOp matmul, const gpu_kernels::F16Matmul &f16,
                  int64_t bulk, func::FuncOp kernel) {
  OpBuilder b(matmul);
  Location loc = matmul.getLoc();
  Value a = matmul.getDpsInputs()[0], w = matmul.getDpsInputs()[1],
        c = matmul.getDpsInits()[0];
  // B's first rows are contiguous: the kernel takes them as an identity
  // [bulk, K] memref.
  Value wBulk = memref::CastOp::create(
      b, loc, MemRefType::get({bulk, f16.k}, b.getF16Type()),
      slice(b, loc, w, 0, 0, bulk, f16.k));
  Value cBulk = slice(b, loc, c, 0, 0, f16.m, bulk);
  func::CallOp::create(b, loc, kernel, ValueRange{a, wBulk, cBulk});
  Value wRest = slice(b, loc, w, bulk, 0, f16.n - bulk, f16.k);
  Value cRest = slice(b, loc, c, 0, bulk, f16.m, f16.n - bulk);
  Operation *rest = b.clone(*matmul);
  rest->setOperand(1, wRest);
  rest->setOperand(2, cRest);
  // The remaining columns are another kernel's, planned by nobody yet.
  rest->removeAttr(tfm::kGpuKernelAttrName);
  matmul.erase();
}

struct GpuTensorCoreMatmulPass
    : public tfm::impl::TfmGpuTensorCoreMatmulBase<GpuTensorCoreMatmulPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    auto matmuls =
        gpu_kernels::collectPlannedMatmuls(module, tfm::GpuKernelKind::mma_sync);
    if (failed(matmuls))
      return signalPassFailure();
    for (auto [matmul, f16, plan] : *matmuls) {
      std::optional<gpu_kernels::KernelPlan> fits =
          gpu_kernels::planTensorCoreMatmul(f16);
      if (!fits || !(*fits == plan)) {
        matmul.emitOpError("has an mma_sync plan the kernel cannot run: ")
            << plan;
        return signalPassFailure();
      }
      std::optional<MatmulShape> shape = matchMatmul(f16);
      std::optional<int64_t> bulk;
      if (!shape && (bulk = splitColumns(f16)))
        shape = MatmulShape{f16.m, *bulk, f16.k, true, f16.n};
      std::string name =
          llvm::formatv("tfm_mma_matmul_{0}x{1}x{2}_{3}", shape->m, shape->n,
                        shape->k, shape->transposedB ? "nt" : "nn");
      if (shape->ldc != shape->n)
        name += llvm::formatv("_ldc{0}", shape->ldc).str();
      func::FuncOp kernel = gpu_kernels::lookupOrParseKernel(
          symbols, name, matmul, "tensor-core",
          [&, s = *shape] { return buildKernelSource(name, s); });
      if (!kernel)
        return signalPassFailure();
      if (bulk)
        splitAndCall(matmul, f16, *bulk, kernel);
      else
        gpu_kernels::replaceWithKernelCall(matmul, kernel);
    }
  }
};
} // namespace

std::optional<gpu_kernels::KernelPlan>
gpu_kernels::planTensorCoreMatmul(const F16Matmul &f16) {
  if (!::matchMatmul(f16) && !::splitColumns(f16))
    return std::nullopt;
  // Two stages: cp.async double buffering.
  return KernelPlan{tfm::GpuKernelKind::mma_sync, kBM, kBN, kBK, kWM * kWN, 2};
}

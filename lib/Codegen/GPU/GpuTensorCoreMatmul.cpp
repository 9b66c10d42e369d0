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
#include "KernelEmitter.h"

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

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUTENSORCOREMATMUL
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
namespace gpu_kernels = mlir::tfm::gpu_kernels;
using gpu_kernels::KernelEmitter;

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

/// A warp's accumulators: [i][j] is its 16x8 tile (i, j).
using Tiles = std::vector<std::vector<std::string>>;
/// Where a thread's cp.async chunks go in a shared tile: (row, column).
using Chunks = std::vector<std::pair<std::string, std::string>>;

/// Writes the kernel for one shape: the prologue (block and warp offsets,
/// copy coordinates, accumulators loaded from C, the first K step in
/// flight), the main loop (prefetch step i + 1, compute step i) and the
/// epilogue (the last step, C stored). The prologue's values are members
/// that the later parts read.
class MmaSyncKernelBuilder {
public:
  explicit MmaSyncKernelBuilder(const MatmulShape &s);
  std::string build(llvm::StringRef name);

private:
  void emitLaunch(llvm::StringRef name);
  void emitIndices();
  Chunks emitChunks(int64_t rows, int64_t cols);
  Tiles emitLoadAccumulators();
  std::string emitCopies(const std::string &kb, const std::string &slot);
  void emitTileCopies(llvm::StringRef global, llvm::StringRef globalType,
                      llvm::StringRef shared, llvm::StringRef sharedType,
                      const Chunks &chunks, const std::string &rowBase,
                      const std::string &colBase, const std::string &slot,
                      std::string &tokens);
  Tiles emitCompute(const std::string &slot, Tiles current);
  std::string emitMainLoop(const Tiles &init);
  void emitEpilogue(const std::string &loop, const std::string &first);

  const MatmulShape &s;
  KernelEmitter e;
  std::string aType, bType, cType, saType, sbType;
  /// B in shared memory keeps its global layout: [BK, BN] or [BN, BK].
  int64_t sbRows, sbCols;
  /// The accumulators' type, and those of the loop's iter_args.
  std::string acc = "vector<16x8xf32>", accTypes;

  // Values of the prologue.
  std::string c0, cBK, zf, zh, m0, n0, wm, wn;
  /// The column of each k16 step within a K tile.
  std::vector<std::string> kSteps;
  Chunks aChunks, bChunks;
  /// C's row of tile row i and column of tile column j of this warp.
  std::vector<std::string> ci, cj;
};

MmaSyncKernelBuilder::MmaSyncKernelBuilder(const MatmulShape &s)
    : s(s), sbRows(s.transposedB ? kBN : kBK),
      sbCols(s.transposedB ? kBK : kBN) {
  aType = llvm::formatv("memref<{0}x{1}xf16>", s.m, s.k);
  bType = s.transposedB ? llvm::formatv("memref<{0}x{1}xf16>", s.n, s.k).str()
                        : llvm::formatv("memref<{0}x{1}xf16>", s.k, s.n).str();
  cType = s.ldc == s.n ? llvm::formatv("memref<{0}x{1}xf32>", s.m, s.n).str()
                       : llvm::formatv("memref<{0}x{1}xf32, strided<[{2}, 1]>>",
                                       s.m, s.n, s.ldc)
                             .str();
  saType = llvm::formatv("memref<2x{0}x{1}xf16, #gpu.address_space<workgroup>>",
                         kBM, kBK);
  sbType = llvm::formatv("memref<2x{0}x{1}xf16, #gpu.address_space<workgroup>>",
                         sbRows, sbCols);
  for (int64_t i = 0; i < kTilesM * kTilesN; ++i)
    accTypes += (i ? ", " : "") + acc;
}

std::string MmaSyncKernelBuilder::build(llvm::StringRef name) {
  emitLaunch(name);
  emitIndices();
  aChunks = emitChunks(kBM, kBK);
  bChunks = emitChunks(sbRows, sbCols);
  Tiles init = emitLoadAccumulators();
  // Prologue: the tiles of step 0 into slot 0.
  std::string first = emitCopies(c0, c0);
  std::string loop = emitMainLoop(init);
  emitEpilogue(loop, first);
  e.line("gpu.terminator");
  e.close();
  e.line("return");
  e.close();
  return e.str();
}

/// The host function and the launch: a block per BM x BN tile of C, the
/// two slots of the A and B tiles in workgroup memory.
void MmaSyncKernelBuilder::emitLaunch(llvm::StringRef name) {
  e.open(llvm::formatv("func.func private @{0}(%A: {1}, %B: {2}, %C: {3})",
                       name, aType, bType, cType));
  e.def("one", "arith.constant 1 : index");
  e.def("threads", llvm::formatv("arith.constant {0} : index", kThreads));
  e.def("gx", llvm::formatv("arith.constant {0} : index", s.n / kBN));
  e.def("gy", llvm::formatv("arith.constant {0} : index", s.m / kBM));
  e.open(llvm::formatv("gpu.launch blocks(%bx, %by, %bz) in (%x = %gx, %y = "
                       "%gy, %z = %one) threads(%tx, %ty, %tz) in (%u = "
                       "%threads, %v = %one, %w = %one) workgroup(%sa : {0}, "
                       "%sb : {1})",
                       saType, sbType));
}

/// Constants, and the offsets of the block's tile and the warp's part.
void MmaSyncKernelBuilder::emitIndices() {
  c0 = e.index(0);
  for (int64_t kk = 0; kk < kBK; kk += 16)
    kSteps.push_back(e.index(kk));
  e.index(s.k); // unused: the loop ends at kLast
  cBK = e.index(kBK);
  zf = e.let("arith.constant 0.0 : f32", "zf");
  zh = e.let("arith.constant 0.0 : f16", "zh");
  m0 = e.apply(llvm::formatv("s0 * {0}", kBM).str(), {"%by"}, "m");
  n0 = e.apply(llvm::formatv("s0 * {0}", kBN).str(), {"%bx"}, "n");
  wm = e.apply(
      llvm::formatv("((s0 floordiv 32) floordiv {0}) * {1}", kWN, kBM / kWM)
          .str(),
      {"%tx"}, "wm");
  wn = e.apply(
      llvm::formatv("((s0 floordiv 32) mod {0}) * {1}", kWN, kBN / kWN).str(),
      {"%tx"}, "wn");
}

/// Copy coordinates in a shared tile of `rows` x `cols`: chunks of 8 along
/// the rows.
Chunks MmaSyncKernelBuilder::emitChunks(int64_t rows, int64_t cols) {
  int64_t perRow = cols / kChunk;
  int64_t copies = rows * cols / kChunk / kThreads;
  Chunks chunks;
  for (int64_t c = 0; c < copies; ++c) {
    std::string row = e.apply(
        llvm::formatv("(s0 + {0}) floordiv {1}", c * kThreads, perRow).str(),
        {"%tx"}, "r");
    std::string col = e.apply(llvm::formatv("((s0 + {0}) mod {1}) * {2}",
                                            c * kThreads, perRow, kChunk)
                                  .str(),
                              {"%tx"}, "c");
    chunks.push_back({row, col});
  }
  return chunks;
}

/// Accumulators, loaded from C (the matmul accumulates into its output).
Tiles MmaSyncKernelBuilder::emitLoadAccumulators() {
  for (int64_t i = 0; i < kTilesM; ++i)
    ci.push_back(
        e.apply(llvm::formatv("s0 + s1 + {0}", 16 * i).str(), {m0, wm}, "ci"));
  for (int64_t j = 0; j < kTilesN; ++j)
    cj.push_back(
        e.apply(llvm::formatv("s0 + s1 + {0}", 8 * j).str(), {n0, wn}, "cj"));
  Tiles init(kTilesM, std::vector<std::string>(kTilesN));
  for (int64_t i = 0; i < kTilesM; ++i)
    for (int64_t j = 0; j < kTilesN; ++j)
      init[i][j] = e.let(llvm::formatv("vector.transfer_read %C[{0}, {1}], "
                                       "{2} {{in_bounds = [true, true]} : "
                                       "{3}, {4}",
                                       ci[i], cj[j], zf, cType, acc),
                         "init");
  return init;
}

/// The cp.async group loading the A and B tiles of the K step at `kb` into
/// `slot`. Two-stage pipeline: the tiles of step i + 1 are in flight while
/// step i is computed; shared memory holds two slots of each tile, the
/// tiles of the K step at `kb` in slot (kb / BK) mod 2.
std::string MmaSyncKernelBuilder::emitCopies(const std::string &kb,
                                             const std::string &slot) {
  std::string tokens;
  emitTileCopies("%A", aType, "%sa", saType, aChunks, m0, kb, slot, tokens);
  if (s.transposedB)
    emitTileCopies("%B", bType, "%sb", sbType, bChunks, n0, kb, slot, tokens);
  else
    emitTileCopies("%B", bType, "%sb", sbType, bChunks, kb, n0, slot, tokens);
  return e.let("nvgpu.device_async_create_group " + tokens, "group");
}

/// The cp.async copies of one tile: chunk (row, col) from `global` at
/// (rowBase + row, colBase + col); their tokens appended to `tokens`.
void MmaSyncKernelBuilder::emitTileCopies(
    llvm::StringRef global, llvm::StringRef globalType, llvm::StringRef shared,
    llvm::StringRef sharedType, const Chunks &chunks,
    const std::string &rowBase, const std::string &colBase,
    const std::string &slot, std::string &tokens) {
  for (const auto &[row, col] : chunks) {
    std::string gr = e.apply("s0 + s1", {rowBase, row}, "gr");
    std::string gc = e.apply("s0 + s1", {colBase, col}, "gc");
    std::string token = e.let(
        llvm::formatv("nvgpu.device_async_copy {0}[{1}, {2}], {3}[{4}, {5}, "
                      "{6}], {7} {{bypassL1} : {8} to {9}",
                      global, gr, gc, shared, slot, row, col, kChunk,
                      globalType, sharedType),
        "t");
    tokens += (tokens.empty() ? "" : ", ") + token;
  }
}

/// 16x8x16 contractions on one slot; B is read as (n, k), transposed for
/// [K, N]. Returns the new accumulators.
Tiles MmaSyncKernelBuilder::emitCompute(const std::string &slot,
                                        Tiles current) {
  for (const std::string &k : kSteps) {
    std::vector<std::string> fa, fb;
    for (int64_t i = 0; i < kTilesM; ++i) {
      std::string row =
          e.apply(llvm::formatv("s0 + {0}", 16 * i).str(), {wm}, "ra");
      fa.push_back(e.let(llvm::formatv("vector.transfer_read %sa[{0}, {1}, "
                                       "{2}], {3} {{in_bounds = [true, "
                                       "true]} : {4}, vector<16x16xf16>",
                                       slot, row, k, zh, saType),
                         "fa"));
    }
    for (int64_t j = 0; j < kTilesN; ++j) {
      std::string row =
          e.apply(llvm::formatv("s0 + {0}", 8 * j).str(), {wn}, "rb");
      if (s.transposedB)
        fb.push_back(e.let(llvm::formatv("vector.transfer_read %sb[{0}, "
                                         "{1}, {2}], {3} {{in_bounds = "
                                         "[true, true]} : {4}, "
                                         "vector<8x16xf16>",
                                         slot, row, k, zh, sbType),
                           "fb"));
      else
        fb.push_back(
            e.let(llvm::formatv("vector.transfer_read %sb[{0}, {1}, {2}], {3} "
                                "{{in_bounds = [true, true], permutation_map = "
                                "affine_map<(d0, d1, d2) -> (d2, d1)>} : {4}, "
                                "vector<8x16xf16>",
                                slot, k, row, zh, sbType),
                  "fb"));
    }
    for (int64_t i = 0; i < kTilesM; ++i) {
      for (int64_t j = 0; j < kTilesN; ++j) {
        current[i][j] = e.let(
            llvm::formatv(
                "vector.contract {{indexing_maps = [affine_map<(m, n, k) -> "
                "(m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, "
                "k) -> (m, n)>], iterator_types = [\"parallel\", "
                "\"parallel\", \"reduction\"], kind = #vector.kind<add>} "
                "{0}, {1}, {2} : vector<16x16xf16>, vector<8x16xf16> into "
                "{3}",
                fa[i], fb[j], current[i][j], acc),
            "p");
      }
    }
  }
  return current;
}

/// Steady state over all steps but the last: prefetch step i + 1, wait for
/// step i (one group may stay in flight), compute it. Returns the loop's
/// name (its results are the accumulators, in row-major tile order).
std::string MmaSyncKernelBuilder::emitMainLoop(const Tiles &init) {
  std::string kLast = e.index(s.k - kBK);
  std::string loop = e.fresh("r"), kb = e.fresh("kb");
  Tiles current(kTilesM, std::vector<std::string>(kTilesN));
  std::string iterArgs;
  for (int64_t i = 0; i < kTilesM; ++i) {
    for (int64_t j = 0; j < kTilesN; ++j) {
      current[i][j] = e.fresh("a");
      iterArgs += llvm::formatv("{0}{1} = {2}", iterArgs.empty() ? "" : ", ",
                                current[i][j], init[i][j]);
    }
  }
  e.open(llvm::formatv("{0}:{1} = scf.for {2} = {3} to {4} step {5} "
                       "iter_args({6}) -> ({7})",
                       loop, kTilesM * kTilesN, kb, c0, kLast, cBK, iterArgs,
                       accTypes));
  std::string slot =
      e.apply(llvm::formatv("(s0 floordiv {0}) mod 2", kBK).str(), {kb});
  std::string nextSlot =
      e.apply(llvm::formatv("(s0 floordiv {0} + 1) mod 2", kBK).str(), {kb});
  std::string kNext = e.apply(llvm::formatv("s0 + {0}", kBK).str(), {kb});
  std::string next = emitCopies(kNext, nextSlot);
  e.line("nvgpu.device_async_wait " + next + " {numGroups = 1 : i32}");
  e.line("gpu.barrier");
  Tiles stepped = emitCompute(slot, current);
  // The next prefetch overwrites this slot: every warp must be done with it.
  e.line("gpu.barrier");
  std::string yielded;
  for (int64_t i = 0; i < kTilesM; ++i)
    for (int64_t j = 0; j < kTilesN; ++j)
      yielded += (yielded.empty() ? "" : ", ") + stepped[i][j];
  e.line("scf.yield " + yielded + " : " + accTypes);
  e.close();
  return loop;
}

/// The last step, already in flight, then C = the accumulators.
void MmaSyncKernelBuilder::emitEpilogue(const std::string &loop,
                                        const std::string &first) {
  // (Any group token will do: the wait lowers to cp.async.wait_group 0.)
  e.line("nvgpu.device_async_wait " + first + " {numGroups = 0 : i32}");
  e.line("gpu.barrier");
  std::string lastSlot = e.index((s.k / kBK - 1) % 2);
  Tiles current(kTilesM, std::vector<std::string>(kTilesN));
  for (int64_t i = 0, n = 0; i < kTilesM; ++i)
    for (int64_t j = 0; j < kTilesN; ++j, ++n)
      current[i][j] = llvm::formatv("{0}#{1}", loop, n);
  Tiles last = emitCompute(lastSlot, current);
  for (int64_t i = 0; i < kTilesM; ++i)
    for (int64_t j = 0; j < kTilesN; ++j)
      e.line(llvm::formatv("vector.transfer_write {0}, %C[{1}, {2}] "
                           "{{in_bounds = [true, true]} : {3}, {4}",
                           last[i][j], ci[i], cj[j], acc, cType));
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
          [&, s = *shape] { return MmaSyncKernelBuilder(s).build(name); });
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

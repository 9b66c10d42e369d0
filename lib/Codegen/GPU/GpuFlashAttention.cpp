//===- GpuFlashAttention.cpp - tfm.attention as one FA2-style kernel ------===//
//
// --tfm-gpu-flash-attention and --tfm-gpu-flash-attention-kernels: see
// Passes.td. Each tfm.attention the kernel handles becomes f16 copies of
// q/k/v (linalg.generic, like tfm-gpu-contraction-dtype) and a call of a
// private function on tensors, one per attention shape, that calls a
// launcher declaration on the buffers of its arguments
// (bufferization.to_buffer / to_tensor, so the calling-convention stage
// bufferizes it like any other function). After bufferization the second
// pass defines each launcher: a gpu.launch of the kernel. Both are written
// as MLIR text and parsed, like the tensor-core matmul kernel.
//
// Fragment layouts (PTX ISA, mma.m16n8k16 with f16 A/B and f32 C; g =
// lane / 4, c = 2 * (lane % 4)); nvgpu's vectors hold one 32-bit register
// per row:
//   A vector<4x2xf16>: (g, c..c+1), (g+8, c..), (g, c+8..), (g+8, c+8..)
//   B vector<2x2xf16>: (k = c..c+1, n = g), (k = c+8.., n = g)
//   C vector<2x2xf32>: (g, c..c+1), (g+8, c..c+1)
// so the C fragments of two adjacent n8 score tiles, rounded to f16, are the
// A fragment of one k16 step of P V: P never leaves registers.
//
//===----------------------------------------------------------------------===//
#include "GpuMatmulKernels.h"
#include "tfm/Codegen/GPU/Passes.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUFLASHATTENTION
#define GEN_PASS_DEF_TFMGPUFLASHATTENTIONKERNELS
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using mlir::tfm::gpu_kernels::truncateToF16;

namespace {
/// Tiling: a block of kWarps warps handles kBM = 16 * kWarps query rows of
/// one (batch, head), each warp 16 rows for the whole key loop; keys advance
/// in tiles of keyTile(d) rows, double-buffered in shared memory.
constexpr int64_t kWarps = 4, kBM = 16 * kWarps;
/// Keys per tile: 64, or 32 for d = 128 (with 64, the 32 score and 16 P
/// registers more spill).
int64_t keyTile(int64_t headDim) { return headDim > 64 ? 32 : 64; }
constexpr int64_t kThreads = 32 * kWarps;
/// Row padding of the shared K/V tiles (f16 elements, 16 bytes): rows of
/// 128 or 256 bytes would put the 8 rows one ldmatrix reads in one bank.
constexpr int64_t kPad = 8;
/// Score given to masked keys (scaled, log2 domain): finite, so a row whose
/// keys are all masked so far gives exp2(0) instead of NaN, and the first
/// visible key's correction factor exp2(kMasked - m) wipes it.
constexpr const char *kMasked = "-1.0e+30";

struct AttentionShape {
  int64_t batch, heads, kvHeads, queries, keys, headDim;
  bool causal;
  double scale;
  /// Split-KV: blocks of one query tile split the key tiles this many ways,
  /// and a second kernel combines their partial results.
  int64_t splits = 1;

  std::string key() const {
    return llvm::formatv("{0}x{1}x{2}x{3}_{4}x{5}_{6}_{7:x}_{8}", batch,
                         heads, queries, headDim, kvHeads, keys,
                         causal ? "c" : "n", llvm::bit_cast<uint64_t>(scale),
                         splits);
  }
};

/// Writes MLIR text with fresh SSA names.
struct Emitter {
  llvm::raw_string_ostream &os;
  int counter = 0;
  std::string indent = "    ";

  std::string fresh(llvm::StringRef hint = "v") {
    return llvm::formatv("%{0}{1}", hint, counter++).str();
  }
  /// Emits `%x = <rhs>` and returns %x.
  std::string let(const std::string &rhs, llvm::StringRef hint = "v") {
    std::string name = fresh(hint);
    os << indent << name << " = " << rhs << "\n";
    return name;
  }
  void line(const std::string &text) { os << indent << text << "\n"; }
  /// A `type` (vector<NxMxT>) from N rows of vector<MxT>, by vector.insert
  /// into `zero` (n-D vector.from_elements and extract_strided_slice do not
  /// lower in the NVVM pipeline).
  std::string rows(const std::vector<std::string> &parts,
                   const std::string &rowType, const std::string &type,
                   std::string zero) {
    for (size_t i = 0; i < parts.size(); ++i)
      zero = let(llvm::formatv("vector.insert {0}, {1} [{2}] : {3} into {4}",
                               parts[i], zero, i, rowType, type));
    return zero;
  }
  std::string index(int64_t value) {
    return let(llvm::formatv("arith.constant {0} : index", value), "c");
  }
  std::string bin(llvm::StringRef op, const std::string &a,
                  const std::string &b, llvm::StringRef type = "index") {
    return let(llvm::formatv("{0} {1}, {2} : {3}", op, a, b, type));
  }
};

/// The private host function `name(q, k, v, offset) -> out` launching the
/// kernel for `s` (f16 q/k/v tensors, f32 result).
std::string buildKernelSource(llvm::StringRef name, const AttentionShape &s) {
  const int64_t d = s.headDim, rowStride = d + kPad, bn = keyTile(d);
  const int64_t queryTiles = (s.queries + kBM - 1) / kBM;
  const int64_t chunksPerRow = d / 8;
  const int64_t copiesPerThread = bn * chunksPerRow / kThreads;
  const int64_t qCopiesPerThread = kBM * chunksPerRow / kThreads;
  const int64_t tileBytes = 2 * bn * rowStride * 2; // two slots of f16
  // Q in registers for d = 64; for d = 128 (64 more registers) it is read
  // from shared memory with ldmatrix in every key tile instead: in registers
  // it spills.
  const bool qInShared = d > 64;
  const int64_t qBytes = qInShared ? kBM * rowStride * 2 : 0;
  const int64_t smemBytes = 2 * tileBytes + qBytes; // K, V (and Q)
  const double log2e = 1.4426950408889634;

  std::string qType = llvm::formatv("memref<{0}x{1}x{2}x{3}xf16>", s.batch,
                                    s.heads, s.queries, d);
  std::string kvType = llvm::formatv("memref<{0}x{1}x{2}x{3}xf16>", s.batch,
                                     s.kvHeads, s.keys, d);
  std::string oType = llvm::formatv("memref<{0}x{1}x{2}x{3}xf32>", s.batch,
                                    s.heads, s.queries, d);
  std::string wg = "#gpu.address_space<workgroup>";
  std::string sType =
      llvm::formatv("memref<2x{0}x{1}xf16, {2}>", bn, rowStride, wg);
  const char *acc = "vector<2x2xf32>";
  const char *aFrag = "vector<4x2xf16>";
  const char *bFrag = "vector<2x2xf16>";

  std::string text;
  llvm::raw_string_ostream os(text);
  Emitter e{os};
  const bool split = s.splits > 1;
  std::string poType = llvm::formatv("memref<{0}x{1}x{2}x{3}x{4}xf32>",
                                     s.splits, s.batch, s.heads, s.queries, d);
  std::string pmlType = llvm::formatv("memref<{0}x{1}x{2}x{3}x2xf32>",
                                      s.splits, s.batch, s.heads, s.queries);
  os << llvm::formatv("func.func private @{0}(%qm: {1}, %km: {2}, %vm: {2}, "
                      "%off: index, %om: {3}{4}) {{\n",
                      name, qType, kvType, oType,
                      split ? ", %po: " + poType + ", %pml: " + pmlType
                            : std::string());
  e.indent = "  ";
  e.line("%one = arith.constant 1 : index");
  e.line(llvm::formatv("%threads = arith.constant {0} : index", kThreads));
  e.line(llvm::formatv("%gx = arith.constant {0} : index", queryTiles));
  e.line(llvm::formatv("%gy = arith.constant {0} : index",
                       s.batch * s.heads));
  e.line(llvm::formatv("%gz = arith.constant {0} : index", s.splits));
  e.line(llvm::formatv("%smem = arith.constant {0} : i32", smemBytes));
  e.line("gpu.launch blocks(%bx, %by, %bz) in (%x = %gx, %y = %gy, %z = "
         "%gz) threads(%tx, %ty, %tz) in (%u = %threads, %w = %one, %t = "
         "%one) dynamic_shared_memory_size %smem {");
  e.indent = "    ";
  std::string c0 = e.index(0), c1 = e.index(1), c2 = e.index(2);
  std::string i1 = e.let("arith.constant 1 : i32"),
              i2 = e.let("arith.constant 2 : i32"),
              i32w = e.let("arith.constant 32 : i32");
  std::string zeroAcc =
      e.let(llvm::formatv("arith.constant dense<0.0> : {0}", acc));
  std::string zeroA =
      e.let(llvm::formatv("arith.constant dense<0.0> : {0}", aFrag));
  std::string zeroB =
      e.let(llvm::formatv("arith.constant dense<0.0> : {0}", bFrag));
  std::string maskedF = e.let(llvm::formatv("arith.constant {0} : f32",
                                            kMasked));
  std::string scaleF = e.let(llvm::formatv(
      "arith.constant {0:e9} : f32", s.scale * log2e));
  std::string zeroF = e.let("arith.constant 0.0 : f32");
  std::string oneF = e.let("arith.constant 1.0 : f32");

  // Shared memory: K slots then V slots.
  std::string raw = e.let(llvm::formatv(
      "gpu.dynamic_shared_memory : memref<?xi8, {0}>", wg));
  std::string sK = e.let(llvm::formatv("memref.view {0}[{1}][] : "
                                       "memref<?xi8, {2}> to {3}",
                                       raw, c0, wg, sType),
                         "sK");
  std::string vOffset = e.index(tileBytes);
  std::string sV = e.let(llvm::formatv("memref.view {0}[{1}][] : "
                                       "memref<?xi8, {2}> to {3}",
                                       raw, vOffset, wg, sType),
                         "sV");

  // Block and thread coordinates.
  std::string warp = e.bin("arith.divui", "%tx", e.index(32));
  std::string lane = e.bin("arith.remui", "%tx", e.index(32));
  std::string g = e.bin("arith.divui", lane, e.index(4));
  std::string c = e.bin("arith.muli", e.bin("arith.remui", lane, e.index(4)),
                        c2);
  // Causal: the heaviest query tiles (most keys) are launched first.
  std::string qt =
      s.causal ? e.bin("arith.subi", e.index(queryTiles - 1), "%bx") : "%bx";
  std::string q0 = e.bin("arith.muli", qt, e.index(kBM), "index");
  std::string bat = e.bin("arith.divui", "%by", e.index(s.heads));
  std::string head = e.bin("arith.remui", "%by", e.index(s.heads));
  std::string kvHead =
      e.bin("arith.divui", head, e.index(s.heads / s.kvHeads));
  std::string row0 = e.bin(
      "arith.addi", q0,
      e.bin("arith.addi", e.bin("arith.muli", warp, e.index(16)), g));
  std::string row1 = e.bin("arith.addi", row0, e.index(8));
  std::string lastQuery = e.index(s.queries - 1);
  // Rows past S load row S - 1 and are never stored.
  std::string row0c = e.bin("arith.minui", row0, lastQuery);
  std::string row1c = e.bin("arith.minui", row1, lastQuery);
  std::string lastKey = e.index(s.keys - 1);

  // Q, loaded once, as the A fragments of the d/16 k-steps of Q K^T.
  std::vector<std::string> qFrag;
  for (int64_t ks = 0; ks < (qInShared ? 0 : d / 16); ++ks) {
    std::string col = e.bin("arith.addi", c, e.index(ks * 16));
    std::string col8 = e.bin("arith.addi", c, e.index(ks * 16 + 8));
    std::string frag = zeroA;
    const std::string rows[4] = {row0c, row1c, row0c, row1c};
    const std::string cols[4] = {col, col, col8, col8};
    for (int r = 0; r < 4; ++r) {
      std::string part = e.let(llvm::formatv(
          "vector.load %qm[{0}, {1}, {2}, {3}] : {4}, vector<2xf16>", bat,
          head, rows[r], cols[r], qType));
      frag = e.let(llvm::formatv("vector.insert {0}, {1} [{2}] : "
                                 "vector<2xf16> into {3}",
                                 part, frag, r, aFrag));
    }
    qFrag.push_back(frag);
  }

  // Key tiles: [0, unmasked) need no mask, [unmasked, total) are masked.
  // Query row r (absolute position off + r) sees keys j <= off + r (causal)
  // and j < Skv.
  std::string tileKeys = e.index(bn);
  std::string unmasked, total;
  std::string bound0, bound1; // last visible key of rows 0 and 1
  if (s.causal) {
    std::string pos0 = e.bin("arith.addi", "%off", q0);
    unmasked = e.bin("arith.minui",
                     e.bin("arith.divui",
                           e.bin("arith.addi", pos0, c1), tileKeys),
                     e.index(s.keys / bn));
    std::string rowsEnd =
        e.bin("arith.minui", e.bin("arith.addi", q0, e.index(kBM)),
              e.index(s.queries));
    std::string keysEnd =
        e.bin("arith.minui", e.bin("arith.addi", "%off", rowsEnd),
              e.index(s.keys));
    total = e.bin("arith.divui",
                  e.bin("arith.addi", keysEnd, e.index(bn - 1)), tileKeys);
    bound0 = e.bin("arith.minui", e.bin("arith.addi", "%off", row0),
                   lastKey);
    bound1 = e.bin("arith.minui", e.bin("arith.addi", "%off", row1),
                   lastKey);
  } else {
    unmasked = e.index(s.keys / bn);
    total = e.index((s.keys + bn - 1) / bn);
    bound0 = bound1 = lastKey;
  }
  // Mask arithmetic in i32 (64-bit index math costs registers).
  bound0 = e.let(llvm::formatv("arith.index_cast {0} : index to i32", bound0));
  bound1 = e.let(llvm::formatv("arith.index_cast {0} : index to i32", bound1));
  std::string lastTile = e.bin("arith.subi", total, c1);

  // Copy coordinates: chunk i of this thread is row cr[i], column cc[i] of
  // a K/V tile (8 f16 = 16 bytes per cp.async).
  std::vector<std::string> cr, cc;
  for (int64_t i = 0; i < std::max(copiesPerThread, qCopiesPerThread); ++i) {
    std::string chunk = e.bin("arith.addi", "%tx", e.index(i * kThreads));
    cr.push_back(e.bin("arith.divui", chunk, e.index(chunksPerRow)));
    cc.push_back(e.bin("arith.muli",
                       e.bin("arith.remui", chunk, e.index(chunksPerRow)),
                       e.index(8)));
  }
  // ldmatrix addresses of this lane: K (x4, two k-steps of one n8 tile) and
  // V (x4 transposed, two n8 tiles of one k-step).
  std::string kRow = e.bin("arith.remui", lane, e.index(8));
  std::string kCol =
      e.bin("arith.muli", e.bin("arith.divui", lane, e.index(8)), e.index(8));
  std::string vRow = e.bin("arith.remui", lane, e.index(16));
  std::string vCol =
      e.bin("arith.muli", e.bin("arith.divui", lane, e.index(16)), e.index(8));

  // The cp.async group loading key tile `tile` (rows clamped to Skv - 1)
  // into `slot`.
  auto emitCopies = [&](const std::string &tile, const std::string &slot) {
    std::string base = e.bin("arith.muli", tile, tileKeys);
    std::string tokens;
    for (int64_t i = 0; i < copiesPerThread; ++i) {
      std::string grow =
          e.bin("arith.minui", e.bin("arith.addi", base, cr[i]), lastKey);
      for (auto [global, shared] :
           {std::pair<std::string, std::string>{"%km", sK}, {"%vm", sV}}) {
        std::string token = e.let(llvm::formatv(
            "nvgpu.device_async_copy {0}[{1}, {2}, {3}, {4}], {5}[{6}, {7}, "
            "{4}], 8 {{bypassL1} : {8} to {9}",
            global, bat, kvHead, grow, cc[i], shared, slot, cr[i], kvType,
            sType));
        tokens += (tokens.empty() ? "" : ", ") + token;
      }
    }
    return e.let("nvgpu.device_async_create_group " + tokens, "group");
  };

  // Q (d = 128): its own cp.async group, before tile 0's.
  std::string sQ, qRow;
  if (qInShared) {
    std::string qType2 =
        llvm::formatv("memref<{0}x{1}xf16, {2}>", kBM, rowStride, wg);
    sQ = e.let(llvm::formatv("memref.view {0}[{1}][] : memref<?xi8, {2}> to "
                             "{3}",
                             raw, e.index(2 * tileBytes), wg, qType2),
               "sQ");
    std::string tokens;
    for (int64_t i = 0; i < qCopiesPerThread; ++i) {
      std::string grow =
          e.bin("arith.minui", e.bin("arith.addi", q0, cr[i]), lastQuery);
      std::string token = e.let(llvm::formatv(
          "nvgpu.device_async_copy %qm[{0}, {1}, {2}, {3}], {4}[{5}, {3}], 8 "
          "{{bypassL1} : {6} to {7}",
          bat, head, grow, cc[i], sQ, cr[i], qType, qType2));
      tokens += (tokens.empty() ? "" : ", ") + token;
    }
    e.let("nvgpu.device_async_create_group " + tokens, "group");
    qRow = e.bin("arith.addi", e.bin("arith.muli", warp, e.index(16)), vRow);
  }
  // Split-KV: block z visits key tiles [z * per, (z + 1) * per) of the
  // tiles the query tile needs (possibly none).
  std::string lo = c0, hi = total, mid = unmasked;
  if (split) {
    const int64_t maxTiles = (s.keys + bn - 1) / bn;
    const int64_t per = (maxTiles + s.splits - 1) / s.splits;
    lo = e.bin("arith.muli", "%bz", e.index(per));
    std::string end = e.bin("arith.minui",
                            e.bin("arith.addi", lo, e.index(per)), total);
    mid = e.bin("arith.maxui", lo, e.bin("arith.minui", end, unmasked));
    hi = e.bin("arith.maxui", mid, end);
  }
  std::string firstGroup =
      split ? emitCopies(e.bin("arith.minui", lo, lastTile),
                         e.bin("arith.remui", lo, c2))
            : emitCopies(c0, c0);

  // Loop-carried state: row max and (per-thread partial) row sum of rows g
  // and g + 8, and the d/8 output accumulators.
  const int64_t outTiles = d / 8;
  std::vector<std::string> state = {maskedF, maskedF, zeroF, zeroF};
  for (int64_t i = 0; i < outTiles; ++i)
    state.push_back(zeroAcc);
  std::string stateTypes = "f32, f32, f32, f32";
  for (int64_t i = 0; i < outTiles; ++i)
    stateTypes += std::string(", ") + acc;

  // The B operand of one m16n8k16 mma.sync: rows 2 * half and 2 * half + 1
  // of an ldmatrix x4 load (K^T for the scores, V for the output).
  auto extractBOperand = [&](const std::string &frags, int half) {
    return e.rows(
        {e.let(llvm::formatv("vector.extract {0}[{1}] : vector<2xf16> from {2}",
                             frags, 2 * half, aFrag)),
         e.let(llvm::formatv("vector.extract {0}[{1}] : vector<2xf16> from {2}",
                             frags, 2 * half + 1, aFrag))},
        "vector<2xf16>", bFrag, zeroB);
  };
  // accumulator += a * b on one 16x8 f32 tile.
  auto emitMma = [&](const std::string &a, const std::string &b,
                     const std::string &accumulator) {
    return e.let(llvm::formatv(
        "nvgpu.mma.sync ({0}, {1}, {2}) {{mmaShape = [16, 8, 16]} : "
        "({3}, {4}, {5}) -> {5}",
        a, b, accumulator, aFrag, bFrag, acc));
  };

  auto emitLoop = [&](const std::string &lo, const std::string &hi,
                      bool masked) {
    std::string result = e.fresh("loop");
    std::vector<std::string> args;
    std::string iterArgs;
    for (size_t i = 0; i < state.size(); ++i) {
      args.push_back(e.fresh("s"));
      iterArgs += llvm::formatv("{0}{1} = {2}", i ? ", " : "", args[i],
                                state[i]);
    }
    std::string t = e.fresh("t");
    e.line(llvm::formatv("{0}:{1} = scf.for {2} = {3} to {4} step {5} "
                         "iter_args({6}) -> ({7}) {{",
                         result, state.size(), t, lo, hi, c1, iterArgs,
                         stateTypes));
    std::string outer = e.indent;
    e.indent += "  ";
    // Prefetch tile t + 1 (the last tile again at the end: simpler than a
    // conditional group, one redundant tile per block) while t is computed.
    std::string slot = e.bin("arith.remui", t, c2);
    std::string next = e.bin("arith.addi", t, c1);
    std::string nextSlot = e.bin("arith.remui", next, c2);
    std::string group =
        emitCopies(e.bin("arith.minui", next, lastTile), nextSlot);
    e.line(llvm::formatv("nvgpu.device_async_wait {0} {{numGroups = 1 : "
                         "i32}",
                         group));
    e.line("gpu.barrier");

    // S = Q K^T: bn / 8 score tiles of 16x8.
    std::vector<std::string> scores(bn / 8, zeroAcc);
    for (int64_t ks2 = 0; ks2 < d / 32; ++ks2) {
      std::string col = e.bin("arith.addi", kCol, e.index(ks2 * 32));
      std::string qa[2];
      for (int half = 0; half < 2; ++half) {
        if (!qInShared) {
          qa[half] = qFrag[2 * ks2 + half];
          continue;
        }
        std::string qCol =
            e.bin("arith.addi", vCol, e.index((2 * ks2 + half) * 16));
        qa[half] = e.let(llvm::formatv(
            "nvgpu.ldmatrix {0}[{1}, {2}] {{numTiles = 4 : i32, transpose = "
            "false} : memref<{3}x{4}xf16, {5}> -> {6}",
            sQ, qRow, qCol, kBM, rowStride, wg, aFrag));
      }
      for (int64_t n = 0; n < bn / 8; ++n) {
        std::string row = e.bin("arith.addi", kRow, e.index(n * 8));
        std::string frags = e.let(llvm::formatv(
            "nvgpu.ldmatrix {0}[{1}, {2}, {3}] {{numTiles = 4 : i32, "
            "transpose = false} : {4} -> {5}",
            sK, slot, row, col, sType, aFrag));
        for (int half = 0; half < 2; ++half)
          scores[n] =
              emitMma(qa[half], extractBOperand(frags, half), scores[n]);
      }
    }

    // Scaled scores (log2 domain), masked past the diagonal / Skv.
    std::string keyBase;
    if (masked)
      keyBase = e.let(llvm::formatv(
          "arith.index_cast {0} : index to i32",
          e.bin("arith.addi", e.bin("arith.muli", t, tileKeys), c)));
    const std::string bounds[2] = {bound0, bound1};
    std::vector<std::array<std::array<std::string, 2>, 2>> x(bn / 8);
    std::string rowMax[2];
    for (int64_t n = 0; n < bn / 8; ++n) {
      for (int half = 0; half < 2; ++half) {
        for (int el = 0; el < 2; ++el) {
          std::string raw = e.let(llvm::formatv(
              "vector.extract {0}[{1}, {2}] : f32 from {3}", scores[n], half,
              el, acc));
          std::string scaled = e.bin("arith.mulf", raw, scaleF, "f32");
          if (masked) {
            std::string key = e.bin(
                "arith.addi", keyBase,
                e.let(llvm::formatv("arith.constant {0} : i32", n * 8 + el)),
                "i32");
            std::string out = e.let(llvm::formatv(
                "arith.cmpi ugt, {0}, {1} : i32", key, bounds[half]));
            scaled = e.let(llvm::formatv("arith.select {0}, {1}, {2} : f32",
                                         out, maskedF, scaled));
          }
          x[n][half][el] = scaled;
          rowMax[half] = rowMax[half].empty()
                             ? scaled
                             : e.bin("arith.maximumf", rowMax[half], scaled,
                                     "f32");
        }
      }
    }
    // Row max across the quad that holds the row, then online softmax.
    std::string alpha[2], newMax[2], newSum[2];
    std::vector<std::array<std::array<std::string, 2>, 2>> p(bn / 8);
    for (int half = 0; half < 2; ++half) {
      for (const std::string &offset : {i1, i2}) {
        std::string other = e.fresh("sh");
        e.line(llvm::formatv("{0}, {0}ok = gpu.shuffle xor {1}, {2}, {3} : "
                             "f32",
                             other, rowMax[half], offset, i32w));
        rowMax[half] = e.bin("arith.maximumf", rowMax[half], other, "f32");
      }
      newMax[half] = e.bin("arith.maximumf", args[half], rowMax[half], "f32");
      alpha[half] = e.let(llvm::formatv(
          "math.exp2 {0} : f32",
          e.bin("arith.subf", args[half], newMax[half], "f32")));
      std::string sum;
      for (int64_t n = 0; n < bn / 8; ++n) {
        for (int el = 0; el < 2; ++el) {
          p[n][half][el] = e.let(llvm::formatv(
              "math.exp2 {0} : f32",
              e.bin("arith.subf", x[n][half][el], newMax[half], "f32")));
          sum = sum.empty() ? p[n][half][el]
                            : e.bin("arith.addf", sum, p[n][half][el], "f32");
        }
      }
      newSum[half] = e.bin("arith.addf",
                           e.bin("arith.mulf", args[2 + half], alpha[half],
                                 "f32"),
                           sum, "f32");
    }
    std::string alphaVec = e.rows(
        {e.let(llvm::formatv("vector.broadcast {0} : f32 to vector<2xf32>",
                             alpha[0])),
         e.let(llvm::formatv("vector.broadcast {0} : f32 to vector<2xf32>",
                             alpha[1]))},
        "vector<2xf32>", acc, zeroAcc);
    std::vector<std::string> out;
    for (int64_t i = 0; i < outTiles; ++i)
      out.push_back(
          e.bin("arith.mulf", args[4 + i], alphaVec, acc));

    // O += P V: P's f32 fragments rounded to f16 are the A operand.
    std::vector<std::string> pHalf(bn / 8 * 4);
    for (int64_t n = 0; n < bn / 8; ++n)
      for (int half = 0; half < 2; ++half)
        for (int el = 0; el < 2; ++el)
          pHalf[n * 4 + half * 2 + el] = e.let(llvm::formatv(
              "arith.truncf {0} : f32 to f16", p[n][half][el]));
    for (int64_t kk = 0; kk < bn / 16; ++kk) {
      std::vector<std::string> parts;
      for (int j = 0; j < 4; ++j)
        parts.push_back(e.let(llvm::formatv(
            "vector.from_elements {0}, {1} : vector<2xf16>",
            pHalf[kk * 8 + 2 * j], pHalf[kk * 8 + 2 * j + 1])));
      std::string a = e.rows(parts, "vector<2xf16>", aFrag, zeroA);
      std::string row = e.bin("arith.addi", vRow, e.index(kk * 16));
      for (int64_t dn = 0; dn < outTiles; dn += 2) {
        std::string col = e.bin("arith.addi", vCol, e.index(dn * 8));
        std::string frags = e.let(llvm::formatv(
            "nvgpu.ldmatrix {0}[{1}, {2}, {3}] {{numTiles = 4 : i32, "
            "transpose = true} : {4} -> {5}",
            sV, slot, row, col, sType, aFrag));
        for (int half = 0; half < 2; ++half)
          out[dn + half] =
              emitMma(a, extractBOperand(frags, half), out[dn + half]);
      }
    }
    // The next iteration's prefetch overwrites this slot.
    e.line("gpu.barrier");
    std::string yielded = newMax[0] + ", " + newMax[1] + ", " + newSum[0] +
                          ", " + newSum[1];
    for (const std::string &o : out)
      yielded += ", " + o;
    e.line(llvm::formatv("scf.yield {0} : {1}", yielded, stateTypes));
    e.indent = outer;
    e.line("}");
    for (size_t i = 0; i < state.size(); ++i)
      state[i] = llvm::formatv("{0}#{1}", result, i);
  };

  emitLoop(lo, mid, /*masked=*/false);
  emitLoop(mid, hi, /*masked=*/true);
  // The last (redundant) prefetch is still in flight.
  e.line(llvm::formatv("nvgpu.device_async_wait {0} {{numGroups = 0 : i32}",
                       firstGroup));

  // Normalise by the row sums (summed across the quad) and store rows < S.
  const std::string rows[2] = {row0, row1};
  for (int half = 0; half < 2; ++half) {
    std::string sum = state[2 + half];
    for (const std::string &offset : {i1, i2}) {
      std::string other = e.fresh("sh");
      e.line(llvm::formatv("{0}, {0}ok = gpu.shuffle xor {1}, {2}, {3} : f32",
                           other, sum, offset, i32w));
      sum = e.bin("arith.addf", sum, other, "f32");
    }
    std::string inside = e.let(llvm::formatv(
        "arith.cmpi ult, {0}, {1} : index", rows[half], e.index(s.queries)));
    if (split) {
      // Partial results: unnormalised O, row max and row sum.
      e.line(llvm::formatv("scf.if {0} {{", inside));
      std::string outer = e.indent;
      e.indent += "  ";
      for (int64_t dn = 0; dn < outTiles; ++dn) {
        std::string part = e.let(llvm::formatv(
            "vector.extract {0}[{1}] : vector<2xf32> from {2}",
            state[4 + dn], half, acc));
        std::string col = e.bin("arith.addi", c, e.index(dn * 8));
        e.line(llvm::formatv("vector.store {0}, %po[%bz, {1}, {2}, {3}, {4}] "
                             ": {5}, vector<2xf32>",
                             part, bat, head, rows[half], col, poType));
      }
      e.line(llvm::formatv("memref.store {0}, %pml[%bz, {1}, {2}, {3}, {4}] "
                           ": {5}",
                           state[half], bat, head, rows[half], c0, pmlType));
      e.line(llvm::formatv("memref.store {0}, %pml[%bz, {1}, {2}, {3}, {4}] "
                           ": {5}",
                           sum, bat, head, rows[half], c1, pmlType));
      e.indent = outer;
      e.line("}");
      continue;
    }
    std::string inv = e.bin("arith.divf", oneF, sum, "f32");
    std::string invVec = e.let(llvm::formatv(
        "vector.broadcast {0} : f32 to vector<2xf32>", inv));
    e.line(llvm::formatv("scf.if {0} {{", inside));
    std::string outer = e.indent;
    e.indent += "  ";
    for (int64_t dn = 0; dn < outTiles; ++dn) {
      std::string part = e.let(llvm::formatv(
          "vector.extract {0}[{1}] : vector<2xf32> from {2}",
          state[4 + dn], half, acc));
      std::string scaled = e.bin("arith.mulf", part, invVec, "vector<2xf32>");
      std::string col = e.bin("arith.addi", c, e.index(dn * 8));
      e.line(llvm::formatv("vector.store {0}, %om[{1}, {2}, {3}, {4}] : {5}, "
                           "vector<2xf32>",
                           scaled, bat, head, rows[half], col, oType));
    }
    e.indent = outer;
    e.line("}");
  }
  e.line("gpu.terminator");
  e.indent = "  ";
  e.line("}");
  if (split) {
    // Combine: a block per query row, a thread per column; partial results
    // weighted by exp2(m_i - max m).
    e.line(llvm::formatv("%rows = arith.constant {0} : index",
                         s.batch * s.heads * s.queries));
    e.line(llvm::formatv("%cols = arith.constant {0} : index", d));
    e.line("gpu.launch blocks(%cbx, %cby, %cbz) in (%cx = %rows, %cy = %one, "
           "%cz = %one) threads(%ctx, %cty, %ctz) in (%cu = %cols, %cw = "
           "%one, %ct = %one) {");
    e.indent = "    ";
    std::string c0 = e.index(0), c1 = e.index(1);
    std::string nSplits = e.index(s.splits);
    std::string r = e.bin("arith.remui", "%cbx", e.index(s.queries));
    std::string bh = e.bin("arith.divui", "%cbx", e.index(s.queries));
    std::string bat = e.bin("arith.divui", bh, e.index(s.heads));
    std::string head = e.bin("arith.remui", bh, e.index(s.heads));
    std::string init = e.let(llvm::formatv("arith.constant {0} : f32",
                                           kMasked));
    std::string zero = e.let("arith.constant 0.0 : f32");
    std::string mx = e.fresh("mx"), i = e.fresh("i"), acc = e.fresh("a");
    e.line(llvm::formatv("{0} = scf.for {1} = {2} to {3} step {4} "
                         "iter_args({5} = {6}) -> (f32) {{",
                         mx, i, c0, nSplits, c1, acc, init));
    e.indent = "      ";
    std::string m = e.let(llvm::formatv(
        "memref.load %pml[{0}, {1}, {2}, {3}, {4}] : {5}", i, bat, head, r,
        c0, pmlType));
    e.line(llvm::formatv("scf.yield {0} : f32",
                         e.bin("arith.maximumf", acc, m, "f32")));
    e.indent = "    ";
    e.line("}");
    std::string sums = e.fresh("sums"), j = e.fresh("i"),
                num = e.fresh("num"), den = e.fresh("den");
    e.line(llvm::formatv("{0}:2 = scf.for {1} = {2} to {3} step {4} "
                         "iter_args({5} = {6}, {7} = {6}) -> (f32, f32) {{",
                         sums, j, c0, nSplits, c1, num, zero, den));
    e.indent = "      ";
    std::string mj = e.let(llvm::formatv(
        "memref.load %pml[{0}, {1}, {2}, {3}, {4}] : {5}", j, bat, head, r,
        c0, pmlType));
    std::string lj = e.let(llvm::formatv(
        "memref.load %pml[{0}, {1}, {2}, {3}, {4}] : {5}", j, bat, head, r,
        c1, pmlType));
    std::string oj = e.let(llvm::formatv(
        "memref.load %po[{0}, {1}, {2}, {3}, %ctx] : {4}", j, bat, head, r,
        poType));
    std::string w = e.let(llvm::formatv(
        "math.exp2 {0} : f32", e.bin("arith.subf", mj, mx, "f32")));
    e.line(llvm::formatv(
        "scf.yield {0}, {1} : f32, f32",
        e.bin("arith.addf", num, e.bin("arith.mulf", oj, w, "f32"), "f32"),
        e.bin("arith.addf", den, e.bin("arith.mulf", lj, w, "f32"), "f32")));
    e.indent = "    ";
    e.line("}");
    std::string value = e.bin("arith.divf", sums + "#0", sums + "#1", "f32");
    e.line(llvm::formatv("memref.store {0}, %om[{1}, {2}, {3}, %ctx] : {4}",
                         value, bat, head, r, oType));
    e.line("gpu.terminator");
    e.indent = "  ";
    e.line("}");
  }
  e.line("return");
  os << "}\n";
  return text;
}

/// The private function `name(q, k, v, offset) -> out` on f16 tensors that
/// calls the launcher `launcher(q, k, v, offset, out)` on their buffers, and
/// the launcher's declaration (defined after bufferization: buffer
/// deallocation rejects the kernel's ops).
std::string buildWrapperSource(llvm::StringRef name, llvm::StringRef launcher,
                               const AttentionShape &s) {
  std::string qType = llvm::formatv("{0}x{1}x{2}x{3}", s.batch, s.heads,
                                    s.queries, s.headDim);
  std::string kvType = llvm::formatv("{0}x{1}x{2}x{3}", s.batch, s.kvHeads,
                                     s.keys, s.headDim);
  // Split-KV scratch: the partial O and (row max, row sum) of each split.
  std::string scratch, scratchArgs, scratchTypes;
  if (s.splits > 1) {
    std::string po = llvm::formatv("memref<{0}x{1}xf32>", s.splits, qType);
    std::string pml =
        llvm::formatv("memref<{0}x{1}x{2}x{3}x2xf32>", s.splits, s.batch,
                      s.heads, s.queries);
    scratch = llvm::formatv("  %po = memref.alloc() : {0}\n"
                            "  %pml = memref.alloc() : {1}\n",
                            po, pml);
    scratchArgs = ", %po, %pml";
    scratchTypes = ", " + po + ", " + pml;
  }
  return llvm::formatv(
      R"(func.func private @{0}(%q: tensor<{2}xf16>, %k: tensor<{3}xf16>,
    %v: tensor<{3}xf16>, %off: index) -> tensor<{2}xf32> {{
  %qm = bufferization.to_buffer %q read_only : tensor<{2}xf16> to memref<{2}xf16>
  %km = bufferization.to_buffer %k read_only : tensor<{3}xf16> to memref<{3}xf16>
  %vm = bufferization.to_buffer %v read_only : tensor<{3}xf16> to memref<{3}xf16>
  %om = memref.alloc() : memref<{2}xf32>
{6}  func.call @{1}(%qm, %km, %vm, %off, %om{7}) : (memref<{2}xf16>, memref<{3}xf16>, memref<{3}xf16>, index, memref<{2}xf32>{8}) -> ()
  %o = bufferization.to_tensor %om restrict writable : memref<{2}xf32> to tensor<{2}xf32>
  return %o : tensor<{2}xf32>
}
func.func private @{1}(memref<{2}xf16>, memref<{3}xf16>, memref<{3}xf16>, index, memref<{2}xf32>{8}) attributes {{tfm.flash_attention_kernel = {{causal = {4}, scale = {5:e16} : f64, splits = {9} : i64}}
)",
      name, launcher, qType, kvType, s.causal ? "true" : "false", s.scale,
      scratch, scratchArgs, scratchTypes, s.splits);
}

/// Split-KV for one query tile (decode, short chunks) over many keys when
/// (batch, head) blocks alone would leave most of a GPU idle: enough splits
/// for about kTargetBlocks blocks, at least two key tiles a split.
int64_t splitCount(const AttentionShape &s) {
  constexpr int64_t kTargetBlocks = 264; // two per SM of an H100/H200
  const int64_t queryTiles = (s.queries + kBM - 1) / kBM;
  const int64_t keyTiles = (s.keys + keyTile(s.headDim) - 1) /
                           keyTile(s.headDim);
  const int64_t blocks = s.batch * s.heads * queryTiles;
  if (queryTiles != 1 || keyTiles < 4 || blocks >= kTargetBlocks)
    return 1;
  return std::max<int64_t>(
      1, std::min({keyTiles / 2, (kTargetBlocks + blocks - 1) / blocks,
                   int64_t(32)}));
}

/// The shape of `op` if the kernel handles it.
std::optional<AttentionShape> matchAttention(tfm::AttentionOp op) {
  auto staticF32 = [](Value v) -> RankedTensorType {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape() || type.getRank() != 4 ||
        !type.getElementType().isF32())
      return {};
    return type;
  };
  RankedTensorType q = staticF32(op.getQuery()), k = staticF32(op.getKey()),
                   v = staticF32(op.getValue()),
                   o = staticF32(op.getResult());
  if (!q || !k || !v || !o)
    return std::nullopt;
  // Per-sequence offsets ([B] tensor), sliding windows and softcapped
  // scores keep the generic path.
  if (op.getSlidingWindow() || op.getLogitSoftcap())
    return std::nullopt;
  if (Value offset = op.getOffset(); offset && !offset.getType().isIndex())
    return std::nullopt;
  AttentionShape s{q.getDimSize(0), q.getDimSize(1), k.getDimSize(1),
                   q.getDimSize(2), k.getDimSize(2), q.getDimSize(3),
                   op.getCausal(), op.getScaleValue()};
  if (s.headDim != 64 && s.headDim != 128)
    return std::nullopt;
  if (v.getDimSize(3) != s.headDim || k.getDimSize(3) != s.headDim ||
      s.kvHeads == 0 || s.heads % s.kvHeads || s.queries == 0 || s.keys == 0)
    return std::nullopt;
  // The implicit offset Skv - S must be a position.
  if (!op.getOffset() && s.keys < s.queries)
    return std::nullopt;
  s.splits = splitCount(s);
  return s;
}

struct GpuFlashAttentionPass
    : public tfm::impl::TfmGpuFlashAttentionBase<GpuFlashAttentionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<tfm::AttentionOp, AttentionShape>> attentions;
    module.walk([&](tfm::AttentionOp op) {
      if (std::optional<AttentionShape> shape = matchAttention(op))
        attentions.push_back({op, *shape});
    });
    llvm::StringMap<func::FuncOp> wrappers;
    for (auto [op, shape] : attentions) {
      func::FuncOp &wrapper = wrappers[shape.key()];
      if (!wrapper) {
        std::string name = llvm::formatv(
            "tfm_flash_attention_{0}x{1}x{2}x{3}_kv{4}x{5}{6}_{7}",
            shape.batch, shape.heads, shape.queries, shape.headDim,
            shape.kvHeads, shape.keys, shape.causal ? "_causal" : "",
            wrappers.size() - 1);
        std::string source =
            buildWrapperSource(name, name + "_launch", shape);
        OwningOpRef<ModuleOp> parsed =
            parseSourceString<ModuleOp>(source, module.getContext());
        if (!parsed) {
          op.emitOpError("internal error: the flash-attention wrapper does "
                         "not parse");
          return signalPassFailure();
        }
        SmallVector<Operation *> funcs;
        for (Operation &f : parsed->getBody()->getOperations())
          funcs.push_back(&f);
        for (Operation *f : funcs) {
          auto clone = cast<func::FuncOp>(f->clone());
          symbols.insert(clone);
          if (!wrapper)
            wrapper = clone;
        }
      }
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value offset = op.getOffset();
      if (!offset)
        offset = arith::ConstantIndexOp::create(b, loc,
                                                shape.keys - shape.queries);
      auto call = func::CallOp::create(
          b, loc, wrapper,
          ValueRange{truncateToF16(b, loc, op.getQuery()),
                     truncateToF16(b, loc, op.getKey()),
                     truncateToF16(b, loc, op.getValue()), offset});
      op.getResult().replaceAllUsesWith(call.getResult(0));
      op.erase();
    }
  }
};

struct GpuFlashAttentionKernelsPass
    : public tfm::impl::TfmGpuFlashAttentionKernelsBase<
          GpuFlashAttentionKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto launcher :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      auto config = launcher->getAttrOfType<DictionaryAttr>(
          "tfm.flash_attention_kernel");
      if (!config || !launcher.isExternal())
        continue;
      FunctionType type = launcher.getFunctionType();
      auto q = dyn_cast<MemRefType>(type.getInput(0));
      auto k = dyn_cast<MemRefType>(type.getInput(1));
      auto causal = config.getAs<BoolAttr>("causal");
      auto scale = config.getAs<FloatAttr>("scale");
      auto splits = config.getAs<IntegerAttr>("splits");
      if (!q || !k || !causal || !scale || !splits ||
          splits.getInt() < 1 ||
          type.getNumInputs() != (splits.getInt() > 1 ? 7u : 5u)) {
        launcher.emitOpError("malformed tfm.flash_attention_kernel");
        return signalPassFailure();
      }
      AttentionShape s{q.getDimSize(0), q.getDimSize(1), k.getDimSize(1),
                       q.getDimSize(2), k.getDimSize(2), q.getDimSize(3),
                       causal.getValue(), scale.getValueAsDouble(),
                       splits.getInt()};
      std::string source = buildKernelSource(launcher.getSymName(), s);
      OwningOpRef<ModuleOp> parsed =
          parseSourceString<ModuleOp>(source, module.getContext());
      if (!parsed) {
        launcher.emitOpError("internal error: the flash-attention kernel "
                             "does not parse");
        return signalPassFailure();
      }
      auto definition = cast<func::FuncOp>(parsed->getBody()->front());
      launcher.getBody().takeBody(definition.getBody());
      launcher->removeAttr("tfm.flash_attention_kernel");
    }
  }
};
} // namespace

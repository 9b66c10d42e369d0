//===- FlashAttentionKernel.cpp - the FA2-style attention kernel as text --===//
//
// The launcher that --tfm-gpu-flash-attention-kernels defines for one
// attention shape (GpuFlashAttention.cpp): a gpu.launch of the kernel,
// written as MLIR text in three parts. The prologue computes the block's
// coordinates, views shared memory, loads Q, bounds the key tiles the block
// visits and starts loading the first; the key loop (one tile: S = Q K^T,
// online softmax, O += P V) is emitted twice, for the tiles that need no
// mask and for those that do; the epilogue normalises and stores the output
// rows. With split-KV the epilogue stores partial results instead, and a
// second launch combines them.
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
#include "FlashAttentionKernel.h"

#include "KernelEmitter.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>
#include <vector>

using namespace mlir;
using namespace mlir::tfm::gpu_kernels;

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

/// The m16n8k16 fragments (layouts above) and the shared address space.
constexpr const char *kAcc = "vector<2x2xf32>";
constexpr const char *kAFrag = "vector<4x2xf16>";
constexpr const char *kBFrag = "vector<2x2xf16>";
constexpr const char *kWorkgroup = "#gpu.address_space<workgroup>";

/// This lane's f32 values of a key tile's 16 x bn scores (or
/// probabilities): per 16x8 tile n, row half (g or g + 8) and element.
using TileValues = std::vector<std::array<std::array<std::string, 2>, 2>>;

/// A key tile's scaled (and masked) scores and this lane's row maxima.
struct Scores {
  TileValues x;
  std::array<std::string, 2> rowMax;
};

/// One online-softmax step: the tile's probabilities, and per row the
/// correction factor of the old state, the new max and the new sum.
struct SoftmaxStep {
  TileValues p;
  std::array<std::string, 2> alpha, newMax, newSum;
};

/// The key tiles a block visits: [lo, mid) unmasked, [mid, hi) masked.
struct KeyRange {
  std::string lo, mid, hi;
};

/// Writes the kernel for one shape. The prologue's values (constants,
/// coordinates, shared buffers, bounds) are members that the key loop and
/// the epilogue read.
class FlashKernelBuilder {
public:
  explicit FlashKernelBuilder(const AttentionShape &s);
  std::string build(llvm::StringRef name);

private:
  // Prologue.
  void emitLaunch(llvm::StringRef name);
  void emitConstants();
  void emitCoordinates();
  void emitQFragments();
  void emitKeyBounds();
  void emitCopyCoordinates();
  void emitSharedQ();
  KeyRange emitKeyRange();
  std::string emitCopies(const std::string &tile, const std::string &slot);
  // Key loop.
  void emitKeyLoop(const std::string &lo, const std::string &hi, bool masked);
  std::vector<std::string> emitScores(const std::string &slot);
  Scores emitScaledScores(const std::vector<std::string> &scores,
                          const std::string &t, bool masked);
  SoftmaxStep emitSoftmax(Scores scores, const std::vector<std::string> &args);
  std::vector<std::string> emitOutput(const SoftmaxStep &step,
                                      const std::vector<std::string> &args,
                                      const std::string &slot);
  std::string extractBOperand(const std::string &frags, int half);
  std::string emitMma(const std::string &a, const std::string &b,
                      const std::string &accumulator);
  std::string emitQuadReduce(llvm::StringRef op, std::string value);
  // Epilogue.
  void emitEpilogue();
  void emitPartialStores(int half, const std::string &row,
                         const std::string &sum, const std::string &inside);
  void emitStores(int half, const std::string &row, const std::string &sum,
                  const std::string &inside);
  void emitCombineKernel();

  const AttentionShape &s;
  KernelEmitter e;

  // Sizes.
  const int64_t d, rowStride, bn, queryTiles, chunksPerRow, copiesPerThread,
      qCopiesPerThread, tileBytes, outTiles;
  /// Q in registers for d = 64; for d = 128 (64 more registers) it is read
  /// from shared memory with ldmatrix in every key tile instead: in
  /// registers it spills.
  const bool qInShared;
  const bool split;

  // Types.
  std::string qType, kvType, oType, sType, poType, pmlType;

  // Constants.
  std::string c0, c1, c2, i1, i2, i32w, zeroAcc, zeroA, zeroB, maskedF, scaleF,
      zeroF, oneF;
  // Shared memory: two slots each of K and V (and Q for d = 128).
  std::string raw, sK, sV, sQ;
  // Coordinates of the block, the warp and the lane.
  std::string warp, lane, g, c, q0, bat, head, kvHead, row0, row1, row0c, row1c,
      lastQuery, lastKey;
  // Q as A fragments (d = 64).
  std::vector<std::string> qFrag;
  // Key tiles of the query tile, and the last key rows 0 and 1 see.
  std::string tileKeys, unmasked, total, bound0, bound1, lastTile;
  // cp.async chunks of this thread and ldmatrix addresses of this lane.
  std::vector<std::string> cr, cc;
  std::string kRow, kCol, vRow, vCol, qRow;
  // Loop-carried state: row max and (per-thread partial) row sum of rows g
  // and g + 8, and the d/8 output accumulators.
  std::vector<std::string> state;
  std::string stateTypes;
};

FlashKernelBuilder::FlashKernelBuilder(const AttentionShape &s)
    : s(s), d(s.headDim), rowStride(d + kPad), bn(keyTile(d)),
      queryTiles((s.queries + kBM - 1) / kBM), chunksPerRow(d / 8),
      copiesPerThread(bn * chunksPerRow / kThreads),
      qCopiesPerThread(kBM * chunksPerRow / kThreads),
      tileBytes(2 * bn * rowStride * 2), // two slots of f16
      outTiles(d / 8), qInShared(d > 64), split(s.splits > 1) {
  qType = llvm::formatv("memref<{0}x{1}x{2}x{3}xf16>", s.batch, s.heads,
                        s.queries, d);
  kvType = llvm::formatv("memref<{0}x{1}x{2}x{3}xf16>", s.batch, s.kvHeads,
                         s.keys, d);
  oType = llvm::formatv("memref<{0}x{1}x{2}x{3}xf32>", s.batch, s.heads,
                        s.queries, d);
  sType =
      llvm::formatv("memref<2x{0}x{1}xf16, {2}>", bn, rowStride, kWorkgroup);
  poType = llvm::formatv("memref<{0}x{1}x{2}x{3}x{4}xf32>", s.splits, s.batch,
                         s.heads, s.queries, d);
  pmlType = llvm::formatv("memref<{0}x{1}x{2}x{3}x2xf32>", s.splits, s.batch,
                          s.heads, s.queries);
}

std::string FlashKernelBuilder::build(llvm::StringRef name) {
  emitLaunch(name);
  emitConstants();
  emitCoordinates();
  emitQFragments();
  emitKeyBounds();
  emitCopyCoordinates();
  emitSharedQ();
  KeyRange range = emitKeyRange();
  std::string firstGroup =
      split ? emitCopies(e.bin("arith.minui", range.lo, lastTile),
                         e.bin("arith.remui", range.lo, c2))
            : emitCopies(c0, c0);

  state = {maskedF, maskedF, zeroF, zeroF};
  stateTypes = "f32, f32, f32, f32";
  for (int64_t i = 0; i < outTiles; ++i) {
    state.push_back(zeroAcc);
    stateTypes += std::string(", ") + kAcc;
  }
  emitKeyLoop(range.lo, range.mid, /*masked=*/false);
  emitKeyLoop(range.mid, range.hi, /*masked=*/true);
  // The last (redundant) prefetch is still in flight.
  e.line(llvm::formatv("nvgpu.device_async_wait {0} {{numGroups = 0 : i32}",
                       firstGroup));

  emitEpilogue();
  e.line("gpu.terminator");
  e.close();
  if (split)
    emitCombineKernel();
  e.line("return");
  e.close();
  return e.str();
}

//===----------------------------------------------------------------------===//
// Prologue
//===----------------------------------------------------------------------===//

/// The host function's signature and the kernel's launch: grid (query
/// tiles, batch x heads, splits).
void FlashKernelBuilder::emitLaunch(llvm::StringRef name) {
  const int64_t qBytes = qInShared ? kBM * rowStride * 2 : 0;
  const int64_t smemBytes = 2 * tileBytes + qBytes; // K, V (and Q)
  e.open(llvm::formatv("func.func private @{0}(%qm: {1}, %km: {2}, %vm: {2}, "
                       "%off: index, %om: {3}{4})",
                       name, qType, kvType, oType,
                       split ? ", %po: " + poType + ", %pml: " + pmlType
                             : std::string()));
  e.def("one", "arith.constant 1 : index");
  e.def("threads", llvm::formatv("arith.constant {0} : index", kThreads));
  e.def("gx", llvm::formatv("arith.constant {0} : index", queryTiles));
  e.def("gy", llvm::formatv("arith.constant {0} : index", s.batch * s.heads));
  e.def("gz", llvm::formatv("arith.constant {0} : index", s.splits));
  e.def("smem", llvm::formatv("arith.constant {0} : i32", smemBytes));
  e.open("gpu.launch blocks(%bx, %by, %bz) in (%x = %gx, %y = %gy, %z = "
         "%gz) threads(%tx, %ty, %tz) in (%u = %threads, %w = %one, %t = "
         "%one) dynamic_shared_memory_size %smem");
}

/// Constants, and the K and V slots in shared memory.
void FlashKernelBuilder::emitConstants() {
  const double log2e = 1.4426950408889634;
  c0 = e.index(0);
  c1 = e.index(1);
  c2 = e.index(2);
  i1 = e.let("arith.constant 1 : i32");
  i2 = e.let("arith.constant 2 : i32");
  i32w = e.let("arith.constant 32 : i32");
  zeroAcc = e.let(llvm::formatv("arith.constant dense<0.0> : {0}", kAcc));
  zeroA = e.let(llvm::formatv("arith.constant dense<0.0> : {0}", kAFrag));
  zeroB = e.let(llvm::formatv("arith.constant dense<0.0> : {0}", kBFrag));
  maskedF = e.let(llvm::formatv("arith.constant {0} : f32", kMasked));
  scaleF = e.let(llvm::formatv("arith.constant {0:e9} : f32", s.scale * log2e));
  zeroF = e.let("arith.constant 0.0 : f32");
  oneF = e.let("arith.constant 1.0 : f32");

  // Shared memory: K slots then V slots.
  raw = e.let(llvm::formatv("gpu.dynamic_shared_memory : memref<?xi8, {0}>",
                            kWorkgroup));
  sK = e.let(llvm::formatv("memref.view {0}[{1}][] : "
                           "memref<?xi8, {2}> to {3}",
                           raw, c0, kWorkgroup, sType),
             "sK");
  std::string vOffset = e.index(tileBytes);
  sV = e.let(llvm::formatv("memref.view {0}[{1}][] : "
                           "memref<?xi8, {2}> to {3}",
                           raw, vOffset, kWorkgroup, sType),
             "sV");
}

/// Block and thread coordinates.
void FlashKernelBuilder::emitCoordinates() {
  warp = e.bin("arith.divui", "%tx", e.index(32));
  lane = e.bin("arith.remui", "%tx", e.index(32));
  g = e.bin("arith.divui", lane, e.index(4));
  c = e.bin("arith.muli", e.bin("arith.remui", lane, e.index(4)), c2);
  // Causal: the heaviest query tiles (most keys) are launched first.
  std::string qt =
      s.causal ? e.bin("arith.subi", e.index(queryTiles - 1), "%bx") : "%bx";
  q0 = e.bin("arith.muli", qt, e.index(kBM), "index");
  bat = e.bin("arith.divui", "%by", e.index(s.heads));
  head = e.bin("arith.remui", "%by", e.index(s.heads));
  kvHead = e.bin("arith.divui", head, e.index(s.heads / s.kvHeads));
  row0 = e.bin("arith.addi", q0,
               e.bin("arith.addi", e.bin("arith.muli", warp, e.index(16)), g));
  row1 = e.bin("arith.addi", row0, e.index(8));
  lastQuery = e.index(s.queries - 1);
  // Rows past S load row S - 1 and are never stored.
  row0c = e.bin("arith.minui", row0, lastQuery);
  row1c = e.bin("arith.minui", row1, lastQuery);
  lastKey = e.index(s.keys - 1);
}

/// Q (d = 64), loaded once, as the A fragments of the d/16 k-steps of
/// Q K^T.
void FlashKernelBuilder::emitQFragments() {
  for (int64_t ks = 0; ks < (qInShared ? 0 : d / 16); ++ks) {
    std::string col = e.bin("arith.addi", c, e.index(ks * 16));
    std::string col8 = e.bin("arith.addi", c, e.index(ks * 16 + 8));
    std::string frag = zeroA;
    const std::string rows[4] = {row0c, row1c, row0c, row1c};
    const std::string cols[4] = {col, col, col8, col8};
    for (int r = 0; r < 4; ++r) {
      std::string part = e.let(llvm::formatv(
          "vector.load %qm[{0}, {1}, {2}, {3}] : {4}, vector<2xf16>", bat, head,
          rows[r], cols[r], qType));
      frag = e.let(llvm::formatv("vector.insert {0}, {1} [{2}] : "
                                 "vector<2xf16> into {3}",
                                 part, frag, r, kAFrag));
    }
    qFrag.push_back(frag);
  }
}

/// Key tiles: [0, unmasked) need no mask, [unmasked, total) are masked.
/// Query row r (absolute position off + r) sees keys j <= off + r (causal)
/// and j < Skv.
void FlashKernelBuilder::emitKeyBounds() {
  tileKeys = e.index(bn);
  if (s.causal) {
    std::string pos0 = e.bin("arith.addi", "%off", q0);
    unmasked =
        e.bin("arith.minui",
              e.bin("arith.divui", e.bin("arith.addi", pos0, c1), tileKeys),
              e.index(s.keys / bn));
    std::string rowsEnd =
        e.bin("arith.minui", e.bin("arith.addi", q0, e.index(kBM)),
              e.index(s.queries));
    std::string keysEnd = e.bin(
        "arith.minui", e.bin("arith.addi", "%off", rowsEnd), e.index(s.keys));
    total = e.bin("arith.divui", e.bin("arith.addi", keysEnd, e.index(bn - 1)),
                  tileKeys);
    bound0 = e.bin("arith.minui", e.bin("arith.addi", "%off", row0), lastKey);
    bound1 = e.bin("arith.minui", e.bin("arith.addi", "%off", row1), lastKey);
  } else {
    unmasked = e.index(s.keys / bn);
    total = e.index((s.keys + bn - 1) / bn);
    bound0 = bound1 = lastKey;
  }
  // Mask arithmetic in i32 (64-bit index math costs registers).
  bound0 = e.let(llvm::formatv("arith.index_cast {0} : index to i32", bound0));
  bound1 = e.let(llvm::formatv("arith.index_cast {0} : index to i32", bound1));
  lastTile = e.bin("arith.subi", total, c1);
}

void FlashKernelBuilder::emitCopyCoordinates() {
  // Copy coordinates: chunk i of this thread is row cr[i], column cc[i] of
  // a K/V tile (8 f16 = 16 bytes per cp.async).
  for (int64_t i = 0; i < std::max(copiesPerThread, qCopiesPerThread); ++i) {
    std::string chunk = e.bin("arith.addi", "%tx", e.index(i * kThreads));
    cr.push_back(e.bin("arith.divui", chunk, e.index(chunksPerRow)));
    cc.push_back(e.bin("arith.muli",
                       e.bin("arith.remui", chunk, e.index(chunksPerRow)),
                       e.index(8)));
  }
  // ldmatrix addresses of this lane: K (x4, two k-steps of one n8 tile) and
  // V (x4 transposed, two n8 tiles of one k-step).
  kRow = e.bin("arith.remui", lane, e.index(8));
  kCol =
      e.bin("arith.muli", e.bin("arith.divui", lane, e.index(8)), e.index(8));
  vRow = e.bin("arith.remui", lane, e.index(16));
  vCol =
      e.bin("arith.muli", e.bin("arith.divui", lane, e.index(16)), e.index(8));
}

/// Q (d = 128): its own cp.async group, before tile 0's.
void FlashKernelBuilder::emitSharedQ() {
  if (!qInShared)
    return;
  std::string qType2 =
      llvm::formatv("memref<{0}x{1}xf16, {2}>", kBM, rowStride, kWorkgroup);
  sQ = e.let(llvm::formatv("memref.view {0}[{1}][] : memref<?xi8, {2}> to "
                           "{3}",
                           raw, e.index(2 * tileBytes), kWorkgroup, qType2),
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

/// Split-KV: block z visits key tiles [z * per, (z + 1) * per) of the
/// tiles the query tile needs (possibly none).
KeyRange FlashKernelBuilder::emitKeyRange() {
  if (!split)
    return {c0, unmasked, total};
  const int64_t maxTiles = (s.keys + bn - 1) / bn;
  const int64_t per = (maxTiles + s.splits - 1) / s.splits;
  KeyRange range;
  range.lo = e.bin("arith.muli", "%bz", e.index(per));
  std::string end =
      e.bin("arith.minui", e.bin("arith.addi", range.lo, e.index(per)), total);
  range.mid =
      e.bin("arith.maxui", range.lo, e.bin("arith.minui", end, unmasked));
  range.hi = e.bin("arith.maxui", range.mid, end);
  return range;
}

/// The cp.async group loading key tile `tile` (rows clamped to Skv - 1)
/// into `slot`.
std::string FlashKernelBuilder::emitCopies(const std::string &tile,
                                           const std::string &slot) {
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
}

//===----------------------------------------------------------------------===//
// Key loop
//===----------------------------------------------------------------------===//

/// The scf.for over key tiles [lo, hi) carrying `state`, which then holds
/// the loop's results.
void FlashKernelBuilder::emitKeyLoop(const std::string &lo,
                                     const std::string &hi, bool masked) {
  std::string result = e.fresh("loop");
  std::vector<std::string> args;
  std::string iterArgs;
  for (size_t i = 0; i < state.size(); ++i) {
    args.push_back(e.fresh("s"));
    iterArgs += llvm::formatv("{0}{1} = {2}", i ? ", " : "", args[i], state[i]);
  }
  std::string t = e.fresh("t");
  e.open(llvm::formatv("{0}:{1} = scf.for {2} = {3} to {4} step {5} "
                       "iter_args({6}) -> ({7})",
                       result, state.size(), t, lo, hi, c1, iterArgs,
                       stateTypes));
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

  std::vector<std::string> scores = emitScores(slot);
  SoftmaxStep step = emitSoftmax(emitScaledScores(scores, t, masked), args);
  std::vector<std::string> out = emitOutput(step, args, slot);

  // The next iteration's prefetch overwrites this slot.
  e.line("gpu.barrier");
  std::string yielded = step.newMax[0] + ", " + step.newMax[1] + ", " +
                        step.newSum[0] + ", " + step.newSum[1];
  for (const std::string &o : out)
    yielded += ", " + o;
  e.line(llvm::formatv("scf.yield {0} : {1}", yielded, stateTypes));
  e.close();
  for (size_t i = 0; i < state.size(); ++i)
    state[i] = llvm::formatv("{0}#{1}", result, i);
}

/// S = Q K^T of the tile in `slot`: bn / 8 score tiles of 16x8.
std::vector<std::string>
FlashKernelBuilder::emitScores(const std::string &slot) {
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
          sQ, qRow, qCol, kBM, rowStride, kWorkgroup, kAFrag));
    }
    for (int64_t n = 0; n < bn / 8; ++n) {
      std::string row = e.bin("arith.addi", kRow, e.index(n * 8));
      std::string frags = e.let(llvm::formatv(
          "nvgpu.ldmatrix {0}[{1}, {2}, {3}] {{numTiles = 4 : i32, "
          "transpose = false} : {4} -> {5}",
          sK, slot, row, col, sType, kAFrag));
      for (int half = 0; half < 2; ++half)
        scores[n] = emitMma(qa[half], extractBOperand(frags, half), scores[n]);
    }
  }
  return scores;
}

/// Scaled scores (log2 domain), masked past the diagonal / Skv, and their
/// maxima over this lane's elements of each row.
Scores
FlashKernelBuilder::emitScaledScores(const std::vector<std::string> &scores,
                                     const std::string &t, bool masked) {
  std::string keyBase;
  if (masked)
    keyBase = e.let(llvm::formatv(
        "arith.index_cast {0} : index to i32",
        e.bin("arith.addi", e.bin("arith.muli", t, tileKeys), c)));
  const std::string bounds[2] = {bound0, bound1};
  Scores result;
  result.x.resize(bn / 8);
  for (int64_t n = 0; n < bn / 8; ++n) {
    for (int half = 0; half < 2; ++half) {
      for (int el = 0; el < 2; ++el) {
        std::string raw =
            e.let(llvm::formatv("vector.extract {0}[{1}, {2}] : f32 from {3}",
                                scores[n], half, el, kAcc));
        std::string scaled = e.bin("arith.mulf", raw, scaleF, "f32");
        if (masked) {
          std::string key = e.bin(
              "arith.addi", keyBase,
              e.let(llvm::formatv("arith.constant {0} : i32", n * 8 + el)),
              "i32");
          std::string out = e.let(llvm::formatv(
              "arith.cmpi ugt, {0}, {1} : i32", key, bounds[half]));
          scaled = e.let(llvm::formatv("arith.select {0}, {1}, {2} : f32", out,
                                       maskedF, scaled));
        }
        result.x[n][half][el] = scaled;
        std::string &rowMax = result.rowMax[half];
        rowMax = rowMax.empty()
                     ? scaled
                     : e.bin("arith.maximumf", rowMax, scaled, "f32");
      }
    }
  }
  return result;
}

/// Row max across the quad that holds the row, then online softmax against
/// the loop-carried max and sum (`args`).
SoftmaxStep
FlashKernelBuilder::emitSoftmax(Scores scores,
                                const std::vector<std::string> &args) {
  SoftmaxStep step;
  step.p.resize(bn / 8);
  for (int half = 0; half < 2; ++half) {
    std::string rowMax = emitQuadReduce("arith.maximumf", scores.rowMax[half]);
    step.newMax[half] = e.bin("arith.maximumf", args[half], rowMax, "f32");
    step.alpha[half] = e.let(
        llvm::formatv("math.exp2 {0} : f32", e.bin("arith.subf", args[half],
                                                   step.newMax[half], "f32")));
    std::string sum;
    for (int64_t n = 0; n < bn / 8; ++n) {
      for (int el = 0; el < 2; ++el) {
        std::string &p = step.p[n][half][el];
        p = e.let(llvm::formatv("math.exp2 {0} : f32",
                                e.bin("arith.subf", scores.x[n][half][el],
                                      step.newMax[half], "f32")));
        sum = sum.empty() ? p : e.bin("arith.addf", sum, p, "f32");
      }
    }
    step.newSum[half] =
        e.bin("arith.addf",
              e.bin("arith.mulf", args[2 + half], step.alpha[half], "f32"), sum,
              "f32");
  }
  return step;
}

/// The output accumulators (`args` from 4) rescaled by the correction
/// factors, plus P V for the V tile in `slot`.
std::vector<std::string>
FlashKernelBuilder::emitOutput(const SoftmaxStep &step,
                               const std::vector<std::string> &args,
                               const std::string &slot) {
  std::string alphaVec =
      e.rows({e.let(llvm::formatv("vector.broadcast {0} : f32 to vector<2xf32>",
                                  step.alpha[0])),
              e.let(llvm::formatv("vector.broadcast {0} : f32 to vector<2xf32>",
                                  step.alpha[1]))},
             "vector<2xf32>", kAcc, zeroAcc);
  std::vector<std::string> out;
  for (int64_t i = 0; i < outTiles; ++i)
    out.push_back(e.bin("arith.mulf", args[4 + i], alphaVec, kAcc));

  // O += P V: P's f32 fragments rounded to f16 are the A operand.
  std::vector<std::string> pHalf(bn / 8 * 4);
  for (int64_t n = 0; n < bn / 8; ++n)
    for (int half = 0; half < 2; ++half)
      for (int el = 0; el < 2; ++el)
        pHalf[n * 4 + half * 2 + el] = e.let(llvm::formatv(
            "arith.truncf {0} : f32 to f16", step.p[n][half][el]));
  for (int64_t kk = 0; kk < bn / 16; ++kk) {
    std::vector<std::string> parts;
    for (int j = 0; j < 4; ++j)
      parts.push_back(e.let(
          llvm::formatv("vector.from_elements {0}, {1} : vector<2xf16>",
                        pHalf[kk * 8 + 2 * j], pHalf[kk * 8 + 2 * j + 1])));
    std::string a = e.rows(parts, "vector<2xf16>", kAFrag, zeroA);
    std::string row = e.bin("arith.addi", vRow, e.index(kk * 16));
    for (int64_t dn = 0; dn < outTiles; dn += 2) {
      std::string col = e.bin("arith.addi", vCol, e.index(dn * 8));
      std::string frags = e.let(llvm::formatv(
          "nvgpu.ldmatrix {0}[{1}, {2}, {3}] {{numTiles = 4 : i32, "
          "transpose = true} : {4} -> {5}",
          sV, slot, row, col, sType, kAFrag));
      for (int half = 0; half < 2; ++half)
        out[dn + half] =
            emitMma(a, extractBOperand(frags, half), out[dn + half]);
    }
  }
  return out;
}

/// The B operand of one m16n8k16 mma.sync: rows 2 * half and 2 * half + 1
/// of an ldmatrix x4 load (K^T for the scores, V for the output).
std::string FlashKernelBuilder::extractBOperand(const std::string &frags,
                                                int half) {
  return e.rows(
      {e.let(llvm::formatv("vector.extract {0}[{1}] : vector<2xf16> from {2}",
                           frags, 2 * half, kAFrag)),
       e.let(llvm::formatv("vector.extract {0}[{1}] : vector<2xf16> from {2}",
                           frags, 2 * half + 1, kAFrag))},
      "vector<2xf16>", kBFrag, zeroB);
}

/// accumulator += a * b on one 16x8 f32 tile.
std::string FlashKernelBuilder::emitMma(const std::string &a,
                                        const std::string &b,
                                        const std::string &accumulator) {
  return e.let(llvm::formatv(
      "nvgpu.mma.sync ({0}, {1}, {2}) {{mmaShape = [16, 8, 16]} : "
      "({3}, {4}, {5}) -> {5}",
      a, b, accumulator, kAFrag, kBFrag, kAcc));
}

/// `value` combined by `op` (f32) over the 4 lanes of a quad, which hold
/// one row of a C fragment.
std::string FlashKernelBuilder::emitQuadReduce(llvm::StringRef op,
                                               std::string value) {
  for (const std::string &offset : {i1, i2}) {
    std::string other = e.fresh("sh");
    e.line(llvm::formatv("{0}, {0}ok = gpu.shuffle xor {1}, {2}, {3} : f32",
                         other, value, offset, i32w));
    value = e.bin(op, value, other, "f32");
  }
  return value;
}

//===----------------------------------------------------------------------===//
// Epilogue
//===----------------------------------------------------------------------===//

/// Normalise by the row sums (summed across the quad) and store rows < S;
/// with split-KV, store the partial results instead.
void FlashKernelBuilder::emitEpilogue() {
  const std::string rows[2] = {row0, row1};
  for (int half = 0; half < 2; ++half) {
    std::string sum = emitQuadReduce("arith.addf", state[2 + half]);
    std::string inside = e.let(llvm::formatv("arith.cmpi ult, {0}, {1} : index",
                                             rows[half], e.index(s.queries)));
    if (split)
      emitPartialStores(half, rows[half], sum, inside);
    else
      emitStores(half, rows[half], sum, inside);
  }
}

/// Partial results of row `row`: unnormalised O, row max and row sum.
void FlashKernelBuilder::emitPartialStores(int half, const std::string &row,
                                           const std::string &sum,
                                           const std::string &inside) {
  e.open(llvm::formatv("scf.if {0}", inside));
  for (int64_t dn = 0; dn < outTiles; ++dn) {
    std::string part =
        e.let(llvm::formatv("vector.extract {0}[{1}] : vector<2xf32> from {2}",
                            state[4 + dn], half, kAcc));
    std::string col = e.bin("arith.addi", c, e.index(dn * 8));
    e.line(llvm::formatv("vector.store {0}, %po[%bz, {1}, {2}, {3}, {4}] "
                         ": {5}, vector<2xf32>",
                         part, bat, head, row, col, poType));
  }
  e.line(llvm::formatv("memref.store {0}, %pml[%bz, {1}, {2}, {3}, {4}] "
                       ": {5}",
                       state[half], bat, head, row, c0, pmlType));
  e.line(llvm::formatv("memref.store {0}, %pml[%bz, {1}, {2}, {3}, {4}] "
                       ": {5}",
                       sum, bat, head, row, c1, pmlType));
  e.close();
}

/// Row `row` of O divided by its sum.
void FlashKernelBuilder::emitStores(int half, const std::string &row,
                                    const std::string &sum,
                                    const std::string &inside) {
  std::string inv = e.bin("arith.divf", oneF, sum, "f32");
  std::string invVec =
      e.let(llvm::formatv("vector.broadcast {0} : f32 to vector<2xf32>", inv));
  e.open(llvm::formatv("scf.if {0}", inside));
  for (int64_t dn = 0; dn < outTiles; ++dn) {
    std::string part =
        e.let(llvm::formatv("vector.extract {0}[{1}] : vector<2xf32> from {2}",
                            state[4 + dn], half, kAcc));
    std::string scaled = e.bin("arith.mulf", part, invVec, "vector<2xf32>");
    std::string col = e.bin("arith.addi", c, e.index(dn * 8));
    e.line(llvm::formatv("vector.store {0}, %om[{1}, {2}, {3}, {4}] : {5}, "
                         "vector<2xf32>",
                         scaled, bat, head, row, col, oType));
  }
  e.close();
}

/// Split-KV combine: a block per query row, a thread per column; partial
/// results weighted by exp2(m_i - max m).
void FlashKernelBuilder::emitCombineKernel() {
  e.def("rows", llvm::formatv("arith.constant {0} : index",
                              s.batch * s.heads * s.queries));
  e.def("cols", llvm::formatv("arith.constant {0} : index", d));
  e.open("gpu.launch blocks(%cbx, %cby, %cbz) in (%cx = %rows, %cy = %one, "
         "%cz = %one) threads(%ctx, %cty, %ctz) in (%cu = %cols, %cw = "
         "%one, %ct = %one)");
  std::string c0 = e.index(0), c1 = e.index(1);
  std::string nSplits = e.index(s.splits);
  std::string r = e.bin("arith.remui", "%cbx", e.index(s.queries));
  std::string bh = e.bin("arith.divui", "%cbx", e.index(s.queries));
  std::string bat = e.bin("arith.divui", bh, e.index(s.heads));
  std::string head = e.bin("arith.remui", bh, e.index(s.heads));
  std::string init = e.let(llvm::formatv("arith.constant {0} : f32", kMasked));
  std::string zero = e.let("arith.constant 0.0 : f32");
  std::string mx = e.fresh("mx"), i = e.fresh("i"), acc = e.fresh("a");
  e.open(llvm::formatv("{0} = scf.for {1} = {2} to {3} step {4} "
                       "iter_args({5} = {6}) -> (f32)",
                       mx, i, c0, nSplits, c1, acc, init));
  std::string m =
      e.let(llvm::formatv("memref.load %pml[{0}, {1}, {2}, {3}, {4}] : {5}", i,
                          bat, head, r, c0, pmlType));
  e.line(llvm::formatv("scf.yield {0} : f32",
                       e.bin("arith.maximumf", acc, m, "f32")));
  e.close();
  std::string sums = e.fresh("sums"), j = e.fresh("i"), num = e.fresh("num"),
              den = e.fresh("den");
  e.open(llvm::formatv("{0}:2 = scf.for {1} = {2} to {3} step {4} "
                       "iter_args({5} = {6}, {7} = {6}) -> (f32, f32)",
                       sums, j, c0, nSplits, c1, num, zero, den));
  std::string mj =
      e.let(llvm::formatv("memref.load %pml[{0}, {1}, {2}, {3}, {4}] : {5}", j,
                          bat, head, r, c0, pmlType));
  std::string lj =
      e.let(llvm::formatv("memref.load %pml[{0}, {1}, {2}, {3}, {4}] : {5}", j,
                          bat, head, r, c1, pmlType));
  std::string oj =
      e.let(llvm::formatv("memref.load %po[{0}, {1}, {2}, {3}, %ctx] : {4}", j,
                          bat, head, r, poType));
  std::string w = e.let(
      llvm::formatv("math.exp2 {0} : f32", e.bin("arith.subf", mj, mx, "f32")));
  e.line(llvm::formatv(
      "scf.yield {0}, {1} : f32, f32",
      e.bin("arith.addf", num, e.bin("arith.mulf", oj, w, "f32"), "f32"),
      e.bin("arith.addf", den, e.bin("arith.mulf", lj, w, "f32"), "f32")));
  e.close();
  std::string value = e.bin("arith.divf", sums + "#0", sums + "#1", "f32");
  e.line(llvm::formatv("memref.store {0}, %om[{1}, {2}, {3}, %ctx] : {4}",
                       value, bat, head, r, oType));
  e.line("gpu.terminator");
  e.close();
}
} // namespace

int64_t mlir::tfm::gpu_kernels::splitCount(const AttentionShape &s) {
  // Enough splits for about kTargetBlocks blocks, at least two key tiles a
  // split.
  constexpr int64_t kTargetBlocks = 264; // two per SM of an H100/H200
  const int64_t queryTiles = (s.queries + kBM - 1) / kBM;
  const int64_t keyTiles =
      (s.keys + keyTile(s.headDim) - 1) / keyTile(s.headDim);
  const int64_t blocks = s.batch * s.heads * queryTiles;
  if (queryTiles != 1 || keyTiles < 4 || blocks >= kTargetBlocks)
    return 1;
  return std::max<int64_t>(
      1, std::min({keyTiles / 2, (kTargetBlocks + blocks - 1) / blocks,
                   int64_t(32)}));
}

std::string
mlir::tfm::gpu_kernels::buildFlashAttentionKernel(llvm::StringRef name,
                                                  const AttentionShape &s) {
  return FlashKernelBuilder(s).build(name);
}

//===- TileAndVectorizeContractions.h - what its files share ----*- C++ -*-===//
//
// Private to tfm-tile-and-vectorize-contractions: what crosses between the
// files the pass is split into. The pass itself is in
// TileAndVectorizeContractions.cpp; the plan of each contraction and the
// choice of its form in ContractionPlanning.cpp; cache blocks, register
// tiles and the split of register tiles whose N is not a power of two in
// RegisterTiles.cpp; the bf16 K-pair form in Bf16PairForm.cpp. Helpers that
// other passes share too are in TilingUtils.h.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_CODEGEN_CPU_TILEANDVECTORIZECONTRACTIONS_H
#define TFM_LIB_CODEGEN_CPU_TILEANDVECTORIZECONTRACTIONS_H

#include "tfm/Codegen/CPU/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Value.h"

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <optional>

namespace mlir::tfm::codegen {

/// Which loops of a contraction play M (rows of the register tile), N (its
/// vector dimension, the output's innermost) and K (the reduction walked one
/// step at a time), and which input is B (the one indexed by N).
struct ContractionPlan {
  unsigned m, n, k, bInput;
  bool transposeB;
  /// Few rows against a transposed B: dot products along K instead (see
  /// vectorizeAsDotProducts).
  bool dotProducts = false;
  /// bf16 with K pairs interleaved (`bf16_pairs`): `k` walks the pairs and
  /// `pair`, the innermost loop of A and B, the two steps of each.
  bool pairs = false;
  unsigned pair = 0;
};

/// Fewest multiply-adds for which a contraction runs on threads: below,
/// waking the other threads costs more than they save (decode steps of small
/// models are dozens of such GEMVs).
inline constexpr int64_t kMinParallelMacs = int64_t(1) << 20;

/// The largest divisor of `n` that is at most `cap` (at least 1).
int64_t largestDivisor(int64_t n, int64_t cap);

/// The position of `e` when it is a loop dimension alone (d2: 2), else
/// nullopt.
std::optional<unsigned> dimPosition(AffineExpr e);

//===----------------------------------------------------------------------===//
// ContractionPlanning.cpp
//===----------------------------------------------------------------------===//

/// How `op`, a contraction planned with `tiling`, is tiled and vectorised;
/// failure for ops this pass leaves alone (not a static contraction
/// accumulating in f32 with its K step innermost, or few rows against a
/// transposed B too shallow for dot products).
FailureOr<ContractionPlan> planContraction(linalg::LinalgOp op,
                                           const ContractionTiling &tiling);

/// Tiles and vectorises `op` in the form `plan` chose: dot products, or
/// (B transposed or copied into K pairs first where needed) cache blocks
/// and register tiles with its elementwise epilogue fused into each block.
/// `pairCopies` holds the K-pair copies of sliced B made so far
/// (pairSlicedB).
void tileAndVectorize(RewriterBase &rewriter, linalg::LinalgOp op,
                      ContractionPlan plan, const ContractionTiling &tiling,
                      llvm::DenseMap<Value, Value> &pairCopies);

//===----------------------------------------------------------------------===//
// RegisterTiles.cpp
//===----------------------------------------------------------------------===//

/// Any M and N at full register-tile size: the bulk of M (a multiple of the
/// tile rows) and of N (a multiple of the full vector width) gets the full
/// register tile; what is left over along M gets a tile of the remaining
/// rows, along N the largest power-of-two width that fits, recursively. So
/// V = 50257 runs 50256 columns at full width and one as a narrow strip.
void tileAndVectorizeAnySize(RewriterBase &rewriter, linalg::LinalgOp op,
                             const ContractionPlan &plan,
                             const ContractionTiling &tiling,
                             linalg::GenericOp epilogue);

/// A register tile whose N is not a power of two (AVX2's 4 x 24: three
/// vectors per row) split into one contraction per row and per power-of-two
/// piece of N (N's largest power-of-two divisor), with the reads of its B
/// row and accumulator and the write of its accumulator split to match,
/// before the accumulators are hoisted: the K loop then carries one value
/// per register, <8 x f32> each. Left whole, LLVM legalises <24 x f32> by
/// halving it into twelves and widening those (shuffles and half-register
/// inserts in the K loop), and pieces per N alone (all rows of one piece
/// first) keep every row's broadcast live at once: 17 registers for 16,
/// spills. Row by row, a broadcast dies after its row's three FMAs. Only
/// the operands indexed by N are split: A's column of rows stays whole.
LogicalResult splitNonPowerOfTwoTiles(func::FuncOp func);

//===----------------------------------------------------------------------===//
// Bf16PairForm.cpp
//===----------------------------------------------------------------------===//

/// The register tile `tile` of a K-pair GEMM (plan.pairs: one pair of K
/// steps, `rows` x `cols` outputs) as AVX512-BF16 pair dot products: per row,
/// A's bf16 pair read as one i32 and broadcast; per `width` columns, B's
/// pairs read as one vector<2 width x bf16>; each accumulator vector
/// updated by x86vector.avx512.dot. The accumulator is read and written
/// whole, as the vectoriser's tiles are, so that the pair is hoisted out of
/// the K loop alike. A one-row tile may span several of B's panels
/// (`gemv_panels`): each panel's pairs are read from its own stream.
/// Fails (the tile is left as it is) on shapes it does not cover: columns
/// not a multiple of 4, or other loops not of extent 1.
LogicalResult vectorizeAsPairDots(RewriterBase &rewriter,
                                  linalg::GenericOp tile,
                                  const ContractionPlan &plan);

/// A bf16 contraction inside loops whose B is a [K, N] slice of a tensor T
/// [.., K', N] made outside them, in the K-pair form: T copied once, where it
/// is made, into [.., K'/2, N, 2] (`pairCopies` holds the copies made so
/// far), B read as the matching slice of that copy, A's innermost (K)
/// dimension read as [K/2, 2], and a new innermost reduction loop t of extent
/// 2 (k = 2 q + t). Attention's Q K^T (each key tile a slice of K^T [B, H,
/// dh, S], K = K' = dh) and P V (each value tile rows [ks, ks + tk) of V [B,
/// H, S, dv], its K offset ks a multiple of the key tile) take this form.
/// The copy is one pass over T for all the tiles that read it, made only
/// where enough rows of A read T to repay it. An f32 A whose values were
/// rounded through bf16 (roundedThroughBf16) is read as bf16. Returns the
/// new op, or null where it does not apply.
linalg::GenericOp pairSlicedB(RewriterBase &rewriter, linalg::GenericOp op,
                              const ContractionPlan &plan,
                              llvm::DenseMap<Value, Value> &pairCopies);

} // namespace mlir::tfm::codegen

#endif // TFM_LIB_CODEGEN_CPU_TILEANDVECTORIZECONTRACTIONS_H

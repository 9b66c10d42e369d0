//===- TilingUtils.h - tiling and vectorising helpers of the CPU codegen -*- C++ -*-===//
//
// Shared by the contraction code generator (TileAndVectorizeContractions.cpp,
// ContractionPlanning.cpp, RegisterTiles.cpp, Bf16PairForm.cpp,
// FirstKBlock.cpp, EpilogueFusion.cpp), the elementwise/reduction vectoriser
// (VectorizeElementwise.cpp) and the weight packer; defined in
// TilingUtils.cpp unless noted. All work on linalg ops with static shapes on
// tensors.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_PIPELINES_TILINGUTILS_H
#define TFM_LIB_PIPELINES_TILINGUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <utility>

namespace mlir::tfm::codegen {

/// Tiles `op` with `sizes` (0: not tiled) and returns the tiled op; with
/// `parallel`, the tile loop is one scf.forall (only parallel loops may be
/// tiled then).
FailureOr<linalg::LinalgOp> tile(RewriterBase &rewriter, linalg::LinalgOp op,
                                 ArrayRef<int64_t> sizes,
                                 bool parallel = false);

/// Vectorises `op` in place (static shapes: no masks); no-op on failure.
void vectorizeInPlace(RewriterBase &rewriter, Operation *op);

/// Hoists the register tile's accumulators out of `loop` (a K loop, or one
/// around it that passes them on): each vector read of a loop-carried
/// tensor and the write at the same loop-invariant place become a
/// loop-carried vector, read before the loop and written after it; other
/// subsets through hoistLoopInvariantSubsets (HoistAccumulators.cpp).
void hoistAccumulators(RewriterBase &rewriter, scf::ForOp loop);

/// Replaces the zero fill of each cache block's accumulator in `func` by
/// register tiles that start the block's first K block from zero vectors
/// (FirstKBlock.cpp). Runs after the tiles' accumulator reads are hoisted.
void startFirstKBlockFromZero(RewriterBase &rewriter, func::FuncOp func);

/// Narrowest vector of partial sums along K: a shallower K (or the rest of
/// one) stays a scalar loop, and a contraction this shallow does not take
/// the dot-product form at all.
inline constexpr int64_t kMinDotDepth = 4;

/// Vectorises the reduction over loop `k` (the last loop) of `op` as partial
/// sums `depth` wide (narrower for a remainder).
void vectorizeAsPartialSums(RewriterBase &rewriter, linalg::LinalgOp op,
                            unsigned k, int64_t depth);

/// Splits `op` along loop `dim` at the largest multiple of `tileSize` below
/// its extent: the bulk and the remainder (null when `tileSize` divides it).
std::pair<linalg::LinalgOp, linalg::LinalgOp>
splitOffRemainder(RewriterBase &rewriter, linalg::LinalgOp op, unsigned dim,
                  int64_t tileSize);

/// Whether `op` accumulates into one f32 output from f32, bf16 or f16
/// inputs: the contractions the CPU code generator tiles and vectorises
/// (half-precision operands are extended to f32 as they are loaded).
bool isF32Accumulation(linalg::LinalgOp op);

/// Whether `op` is a transpose that widens each element (`arith.extf`, its
/// body nothing else): one input read through a permutation, the output
/// whole, static tensors. The f32 A panels of half-precision GEMMs
/// (RegisterTiles.cpp), vectorized as transposes (VectorizeElementwise.cpp).
bool isWideningTranspose(linalg::GenericOp op);

/// Whether `op` runs outside every loop that runs in parallel (its outermost
/// tile loop may then be the parallel one). Sequential loops around it (the
/// loop over a mixture's experts) are no obstacle: each of their iterations
/// forks and joins once.
bool isOutsideParallelLoops(Operation *op);

/// The largest multiple of `inner` that divides `n` and is at most
/// max(cap, inner); `inner` divides `n`.
int64_t blockSize(int64_t n, int64_t inner, int64_t cap);

/// Whether `op` is outside parallel loops and has at least `minWork` iterations
/// (the product of its loop extents): enough to pay for waking other threads.
bool worthThreads(linalg::LinalgOp op, int64_t minWork);

/// Moves the chain of elementwise consumers of `contraction`'s result (bias,
/// activations, gating products, residual adds; through reshapes and the
/// slice of padded columns) into the contraction's output space and fuses
/// them into one generic over its parallel loops, reading its result through
/// the identity map. Returns that epilogue, or null when there is none
/// (EpilogueFusion.cpp).
linalg::GenericOp formEpilogue(RewriterBase &rewriter,
                               linalg::LinalgOp contraction);

/// Where `consumer` (a tile or a piece of an epilogue) reads a slice of
/// `contraction`'s result, computes the contraction (and its zero fill) on
/// that slice only, in place; erases `contraction` once nothing else reads
/// it. Returns the sliced contraction, or null.
linalg::LinalgOp fuseContractionInto(RewriterBase &rewriter,
                                     linalg::LinalgOp consumer,
                                     linalg::LinalgOp contraction);

/// Makes the zero fill of `contraction` (fused into a tile of `consumer`)
/// write into `consumer`'s output tile, so the tile needs no buffer of its own.
void accumulateInOutput(RewriterBase &rewriter, linalg::LinalgOp consumer,
                        linalg::LinalgOp contraction);

} // namespace mlir::tfm::codegen

#endif // TFM_LIB_PIPELINES_TILINGUTILS_H

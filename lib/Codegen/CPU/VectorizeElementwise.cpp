//===- VectorizeElementwise.cpp - SIMD code for the non-contraction ops ---===//
//
// tfm-vectorize-elementwise (tensors, after the contraction code generator):
// the linalg.generic ops that are not contractions -- bias adds, GELU, SiLU,
// SwiGLU's product, residual adds, RoPE, the norms' statistics and scaling,
// softmax and the online-softmax steps of flash attention -- become vector
// code along their innermost loop:
//
// - innermost loop parallel (elementwise): every other loop is tiled by 1
//   and the innermost by the vector width (two registers' worth of lanes
//   from `tfm.cpu_target`); a remainder gets a tile of its own size;
// - innermost loop a reduction (row max, row sum, mean and variance): the
//   other loops are tiled by 1 and the row reduced as partial sums, one
//   vector wide, combined once at the end (the same reassociation the dot
//   products of decode use).
//
// The epilogues of contractions (bias, activations, gating, residual adds)
// arrive here already tiled, one generic per GEMM cache block inside the
// block loop (EpilogueFusion.cpp), and are vectorised there, in the block.
//
// Rows of an op outside any parallel loop (at least kMinParallelRows of
// them) are an scf.forall: the pipeline runs them on threads like the GEMM
// blocks.
//
// Only ops whose operands all read the innermost loop with unit stride (or
// not at all: broadcasts) are vectorised that way. Transposes
// (linalg.transpose: the attention heads split and merged, the A panels of the
// GEMMs) become generics too: one that keeps the innermost dimension in place
// is a copy of contiguous rows (elementwise, above); one that moves it (or a
// transposing generic that widens each element) is tiled in lanes x lanes
// squares, read as rows of the input and written as rows of the output (a
// vector.transpose in registers), the squares an scf.forall when there are
// enough of them. Ops with gathers (embedding) or anything the vectoriser
// rejects stay scalar loops.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "CpuPlan.h"
#include "TilingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMVECTORIZEELEMENTWISE
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::codegen;

/// Whether every operand indexes the innermost loop only in its last
/// dimension, directly, or not at all.
static bool readsInnermostContiguously(linalg::GenericOp op) {
  unsigned last = op.getNumLoops() - 1;
  for (AffineMap map : op.getIndexingMapsArray()) {
    if (!map.isProjectedPermutation())
      return false;
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
      if (dim && dim.getPosition() == last && r != map.getNumResults() - 1)
        return false;
    }
  }
  return true;
}

static bool isCandidate(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      op.getNumLoops() == 0 || linalg::isaContractionOpInterface(op) ||
      !readsInnermostContiguously(op))
    return false;
  // Gathers (tensor.extract in the body) would need n-D extracts.
  bool gathers = false;
  op.getRegion().walk([&](tensor::ExtractOp) { gathers = true; });
  if (gathers)
    return false;
  // Only the innermost loop may be a reduction.
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  for (unsigned i = 0; i + 1 < iters.size(); ++i)
    if (iters[i] != utils::IteratorType::parallel)
      return false;
  return true;
}

/// Fewest rows (iterations of the loops outside the innermost), and fewest
/// elements, for which an outermost op's rows are shared among threads.
static constexpr int64_t kMinParallelRows = 16;
static constexpr int64_t kMinParallelElements = int64_t(1) << 16;

/// Whether the rows of `op` (all loops but the innermost) are an scf.forall.
static bool parallelRows(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t rows = 1;
  for (unsigned i = 0; i + 1 < ranges.size(); ++i)
    rows *= ranges[i];
  return rows >= kMinParallelRows && worthThreads(op, kMinParallelElements);
}

/// Elementwise: outer loops by 1, the innermost `width` at a time.
static void vectorizeParallel(RewriterBase &rewriter, linalg::LinalgOp op,
                              int64_t width) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned last = ranges.size() - 1;
  int64_t tile = std::min(width, ranges[last]);
  auto [bulk, rest] = splitOffRemainder(rewriter, op, last, tile);
  if (!bulk)
    return;
  if (rest)
    vectorizeParallel(rewriter, rest, width);
  SmallVector<int64_t> sizes(ranges.size(), 1);
  sizes[last] = tile;
  for (auto [size, range] : llvm::zip(sizes, ranges))
    if (size == range)
      size = 0;
  FailureOr<linalg::LinalgOp> tiled =
      codegen::tile(rewriter, bulk, sizes, parallelRows(bulk));
  if (succeeded(tiled))
    vectorizeInPlace(rewriter, *tiled);
}

/// Longest row, in vectors, reduced as one vector rather than partial sums.
static constexpr int64_t kMaxWholeRowVectors = 4;

/// Row reductions: outer loops by 1, the row as partial sums (or as one
/// vector when it is short).
static void vectorizeReduction(RewriterBase &rewriter, linalg::LinalgOp op,
                               int64_t width) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned last = ranges.size() - 1;
  SmallVector<int64_t> sizes(ranges.size(), 1);
  sizes[last] = 0;
  for (auto [size, range] : llvm::zip(sizes, ranges))
    if (size == range)
      size = 0;
  FailureOr<linalg::LinalgOp> tiled =
      codegen::tile(rewriter, op, sizes, parallelRows(op));
  if (failed(tiled))
    return;
  // A short row (flash attention's key tile, a decode step's scores) is one
  // vector reduction; partial sums pay off only over longer rows.
  if (ranges[last] <= kMaxWholeRowVectors * width)
    vectorizeInPlace(rewriter, *tiled);
  else
    vectorizeAsPartialSums(rewriter, *tiled, last, width);
}

/// Largest power of two <= `limit` that divides `extent`.
static int64_t powerOfTwoDivisor(int64_t extent, int64_t limit) {
  int64_t size = 1;
  while (size * 2 <= limit && extent % (size * 2) == 0)
    size *= 2;
  return size;
}

/// A transpose that moves the innermost dimension, generalised: out[.., i,
/// .., j] = in[.., j, .., i]. The output's last loop and the loop that reads
/// the input's last dimension are tiled by up to `lanes` (powers of two that
/// divide them), every other loop by 1: each tile reads `lanes` contiguous
/// input rows and writes `lanes` contiguous output rows.
static void vectorizeTranspose(RewriterBase &rewriter, linalg::GenericOp op,
                               int64_t lanes) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  AffineMap inputMap = op.getIndexingMapsArray().front();
  auto innerInput = dyn_cast<AffineDimExpr>(inputMap.getResults().back());
  if (!innerInput)
    return;
  unsigned last = ranges.size() - 1, readsInner = innerInput.getPosition();
  SmallVector<int64_t> sizes(ranges.size(), 1);
  sizes[last] = powerOfTwoDivisor(ranges[last], lanes);
  sizes[readsInner] = powerOfTwoDivisor(ranges[readsInner], lanes);
  // Squares narrower than a few lanes gain little over the scalar copy;
  // they still run on threads below.
  bool square = sizes[last] >= 4 && sizes[readsInner] >= 4;
  int64_t tiles = 1, elements = 1;
  for (auto [size, range] : llvm::zip(sizes, ranges)) {
    tiles *= range / size;
    elements *= range;
  }
  bool parallel = tiles >= kMinParallelRows &&
                  elements >= kMinParallelElements &&
                  isOutsideParallelLoops(op);
  if (!square && !parallel)
    return;
  for (auto [size, range] : llvm::zip(sizes, ranges))
    if (size == range)
      size = 0;
  FailureOr<linalg::LinalgOp> tiled = codegen::tile(
      rewriter, cast<linalg::LinalgOp>(op.getOperation()), sizes, parallel);
  if (succeeded(tiled) && square)
    vectorizeInPlace(rewriter, *tiled);
}

namespace {
struct VectorizeElementwisePass
    : public tfm::impl::TfmVectorizeElementwiseBase<VectorizeElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Two registers' worth of f32 lanes (8 without a target).
    int64_t width = 8;
    if (auto target = module->getAttrOfType<DictionaryAttr>(kCpuTargetAttrName))
      if (auto bits = target.getAs<IntegerAttr>("vector_bits"))
        width = std::max<int64_t>(8, 2 * bits.getInt() / 32);
    IRRewriter rewriter(&getContext());
    // Transposes as generics: those that keep the innermost dimension join
    // the elementwise ops below.
    SmallVector<linalg::TransposeOp> transposes;
    module.walk([&](linalg::TransposeOp op) {
      if (op.hasPureTensorSemantics() && !op.hasDynamicShape())
        transposes.push_back(op);
    });
    for (linalg::TransposeOp op : transposes) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, op);
      if (succeeded(generic) && !readsInnermostContiguously(*generic))
        vectorizeTranspose(rewriter, *generic, width / 2);
    }
    // Transposes that widen (the f32 A panels of half-precision GEMMs).
    SmallVector<linalg::GenericOp> widening;
    module.walk([&](linalg::GenericOp op) {
      if (isWideningTranspose(op) && !readsInnermostContiguously(op))
        widening.push_back(op);
    });
    for (linalg::GenericOp op : widening)
      vectorizeTranspose(rewriter, op, width / 2);
    SmallVector<linalg::GenericOp> work;
    module.walk([&](linalg::GenericOp op) {
      if (isCandidate(op))
        work.push_back(op);
    });
    for (linalg::GenericOp op : work) {
      rewriter.setInsertionPoint(op);
      auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
      if (op.getIteratorTypesArray().back() == utils::IteratorType::parallel)
        vectorizeParallel(rewriter, linalgOp, width);
      else
        vectorizeReduction(rewriter, linalgOp, width);
    }
  }
};
} // namespace

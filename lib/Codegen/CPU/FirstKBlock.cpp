//===- FirstKBlock.cpp - cache blocks that start from zero, not a fill ----===//
//
// Part of tfm-tile-and-vectorize-contractions (TileAndVectorizeContractions.cpp
// calls it last, after the register tiles' accumulator reads and writes are
// hoisted out of the K step loop): the zero fill of each cache block gives
// way to register tiles that start the first K block from zero vectors.
//
//===----------------------------------------------------------------------===//
#include "TilingUtils.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tfm;

/// The tensors that hold `accumulator`'s elements as they were before the
/// register tiles wrote any: `accumulator` and the iteration arguments of
/// the loops that start from one of those.
static SmallVector<Value> unwrittenAccumulators(Value accumulator) {
  SmallVector<Value> values = {accumulator};
  for (unsigned i = 0; i < values.size(); ++i)
    for (OpOperand &use : values[i].getUses())
      if (auto inner = dyn_cast<scf::ForOp>(use.getOwner()))
        if (BlockArgument arg = inner.getTiedLoopRegionIterArg(&use))
          values.push_back(arg);
  return values;
}

/// The register tiles' reads of the unwritten `accumulator`, or nothing when
/// it is read any other way. Each must be written back at the same indices
/// later in its block.
static SmallVector<vector::TransferReadOp>
registerTileReads(Value accumulator) {
  SmallVector<vector::TransferReadOp> reads;
  for (Value acc : unwrittenAccumulators(accumulator))
    for (Operation *user : acc.getUsers()) {
      // Passed on (nested loops, the K step loop's yield) or written.
      if (isa<scf::ForOp, scf::YieldOp, vector::TransferWriteOp>(user))
        continue;
      auto read = dyn_cast<vector::TransferReadOp>(user);
      if (!read || read.getBase() != acc)
        return {};
      bool writtenBack = llvm::any_of(
          read->getBlock()->getOperations(), [&](Operation &op) {
            auto write = dyn_cast<vector::TransferWriteOp>(&op);
            return write && read->isBeforeInBlock(write) &&
                   write.getVectorType() == read.getVectorType() &&
                   write.getIndices() == read.getIndices();
          });
      if (!writtenBack)
        return {};
      reads.push_back(read);
    }
  return reads;
}

/// Whether `loop` carries its init operand `init` through unchanged (a K
/// step loop whose accumulator lives in registers).
static bool passesThrough(scf::ForOp loop, OpOperand &init) {
  BlockArgument arg = loop.getTiedLoopRegionIterArg(&init);
  if (!arg || !arg.hasOneUse())
    return false;
  auto yield = dyn_cast<scf::YieldOp>(*arg.getUsers().begin());
  return yield && yield.getOperand(arg.getArgNumber() - 1) == arg;
}

/// Whether `value` is `iv` or computed from it.
static bool dependsOn(Value value, Value iv) {
  if (value == iv)
    return true;
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  // The op that computes `value` too (an offset row iv + 1 of a split
  // register tile), not only what feeds it.
  options.inclusive = true;
  (void)getBackwardSlice(value, &slice, options);
  return llvm::any_of(slice, [&](Operation *op) {
    return llvm::is_contained(op->getOperands(), iv);
  });
}

/// Replaces the zero fill of a cache block's accumulator by starting the
/// register tiles of the block's first K block from zero vectors.
///
/// A block is otherwise zeroed in a pass of its own right before its K loop
/// (one store per element, 2% of a 512x2048x5632 GEMM), and the first K
/// block's register tiles then load those zeros back. Each register tile
/// reads its accumulator once per K block before writing it (the read and
/// the write at the same indices, hoisted out of the K step loop), and the
/// tiles partition the block, so in the first K block every read sees the
/// fill's zeros: those reads become zero vectors -- under `iv == lower
/// bound` of the K block loop when there is one -- and the fill goes.
void codegen::startFirstKBlockFromZero(RewriterBase &rewriter,
                                     func::FuncOp func) {
  SmallVector<linalg::FillOp> fills;
  func.walk([&](linalg::FillOp fill) {
    if (fill.hasPureTensorSemantics() && !fill->use_empty() &&
        matchPattern(fill.getDpsInputOperand(0)->get(), m_PosZeroFloat()))
      fills.push_back(fill);
  });
  for (linalg::FillOp fill : fills) {
    // The block's K block loop or register tile loop carries the fill, or
    // a single register tile (the block's own size) reads and writes it
    // directly.
    Value accumulator = fill.getResult(0);
    scf::ForOp loop;
    if (fill->hasOneUse()) {
      OpOperand &use = *fill->getUses().begin();
      if ((loop = dyn_cast<scf::ForOp>(use.getOwner()))) {
        accumulator = loop.getTiedLoopRegionIterArg(&use);
        if (!accumulator)
          continue;
      }
    } else if (!llvm::all_of(fill->getUses(), [](OpOperand &use) {
                 auto inner = dyn_cast<scf::ForOp>(use.getOwner());
                 return !inner || passesThrough(inner, use);
               })) {
      continue;
    }
    SmallVector<vector::TransferReadOp> reads = registerTileReads(accumulator);
    if (reads.empty())
      continue;
    // A loop around a read whose induction variable does not feed the
    // read's indices revisits the same tile: the K block loop. Only `loop`,
    // the outermost, may be one (its first iteration reads zeros); any
    // other would read the tile again after writing it.
    bool revisits = false, valid = true;
    for (vector::TransferReadOp read : reads)
      for (Operation *parent = read->getParentOp();
           parent && !parent->isAncestor(fill); parent = parent->getParentOp()) {
        auto around = dyn_cast<scf::ForOp>(parent);
        if (!around || llvm::any_of(read.getIndices(), [&](Value index) {
              return dependsOn(index, around.getInductionVar());
            }))
          continue;
        if (around == loop)
          revisits = true;
        else
          valid = false;
      }
    if (!valid)
      continue;
    Value first;
    if (revisits) {
      rewriter.setInsertionPointToStart(loop.getBody());
      first = arith::CmpIOp::create(rewriter, loop.getLoc(),
                                    arith::CmpIPredicate::eq,
                                    loop.getInductionVar(),
                                    loop.getLowerBound());
    }
    for (vector::TransferReadOp read : reads) {
      rewriter.setInsertionPoint(read);
      VectorType type = read.getVectorType();
      auto zeros = [&](OpBuilder &b, Location l) -> Value {
        return arith::ConstantOp::create(b, l, type, b.getZeroAttr(type));
      };
      if (!first) {
        rewriter.replaceOp(read, zeros(rewriter, read.getLoc()));
        continue;
      }
      auto firstOrRead = scf::IfOp::create(
          rewriter, read.getLoc(), first,
          [&](OpBuilder &b, Location l) {
            scf::YieldOp::create(b, l, zeros(b, l));
          },
          [&](OpBuilder &b, Location l) {
            scf::YieldOp::create(b, l, b.clone(*read)->getResults());
          });
      rewriter.replaceOp(read, firstOrRead.getResults());
    }
    rewriter.replaceAllUsesWith(fill.getResult(0),
                                fill.getDpsInitOperand(0)->get());
    rewriter.eraseOp(fill);
  }
}

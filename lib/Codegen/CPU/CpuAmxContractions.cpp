//===- CpuAmxContractions.cpp - f32 GEMMs on AMX tiles as bf16x6 ----------===//
//
// tfm-cpu-amx-contractions (buffers, after bufferization, before the
// workspace is planned): each packed f32 GEMM that tfm-cpu-configure planned
// for AMX (`amx` in tfm.cpu_tiling) becomes code on AMX tiles. See Passes.td
// for the arithmetic (bf16x6: three bf16 parts per operand, the six part
// products whose order is at most 2) and why it is about as accurate as f32.
//
// The code for C[M, N] += A[M, K] * B[K, N] (B read from the packed panels
// P[j, k, r] = B[k, j * panel + r]):
//
//   As = workspace [3][ceil(M / 16)][K / 32][16][32] bf16 // A's parts, tiles
//   forall m in [0, M):  As[:, m, :] = split(A[m, :])
//                        Ap[m / 12, :, m % 12] = A[m, :]  // FMA path's A
//   Bs = [threads][3][Nb / 16][Kb / 2][32] bf16   // one per OpenMP thread
//   forall block in [0, N / Nb):                  // threads share blocks
//     t = omp_get_thread_num()
//     if the thread's costs say tiles (else: 12 x 32 FMA strips from Ap
//                                      and the panels; both timed):
//     for kb in [0, K) step Kb:
//       Bs[t] = split(B[kb : kb + Kb, block's Nb columns]), with the
//                   K pairs interleaved as the tiles read them (VNNI)
//       for mt in [0, M - M % 32) step 32, nt in [0, Nb) step 32:
//         c[2][2] = 16 x 16 tiles of C[mt : mt + 32, n0 + nt : n0 + nt + 32]
//         for ks in [0, Kb) step 32:                // c stays in tiles
//         for (i, j) in (0,0) (0,1) (0,2) (1,1) (1,0) (2,0):  // i + j <= 2
//           a[2] = As[i, mt : mt + 32, kb + ks : +32]  // if i changed
//           b[2] = Bs[t, j, nt / 16 .., ks / 2]        // if j changed
//           c[x][y] += a[x] * b[y]
//         store c
//       tfm_amx_gemm_rows(...)  // the last M % 32 rows, as above on one
//                               // or two tiles of fewer rows, not inlined
//
// Eight tile registers hold the 4 C, 2 A and 2 B tiles. A is split by rows
// in parallel, before the blocks; B's split is done once per call (a block
// holds all M rows). A GEMM in tfm-cpu-split-amx-weights' form has B bound
// as its parts, [3][N / 16][K / 2][32] in the tiles' order: it skips B's
// split and its buffer, and loads b[2] from the parts at column tile
// (n0 + nt) / 16 and pair (kb + ks) / 2. The code after the allocations is
// a kernel function shared by the GEMMs of one shape and operand types.
//
// The costs (choice=measured; the default, tiles, has none): per kernel and
// thread, the cycles a block took on tiles and with FMA. A thread takes the
// cheaper and times the other again every 32 blocks: on a core whose tile
// unit is shared with another hardware thread (another tenant's, on a cloud
// VM), tiles can run at half rate or less and FMA is then faster. Which path
// made a block then depends on the machine's load, so its last bits do too
// (both are f32 GEMMs in accuracy); choice=tiles, the default, gives the
// same bits on every run and thread count.
//
// The pass is here; the GEMMs it takes are matched in AmxMatch.cpp, and
// their code is built by AmxGemmBuilder (AmxKernel.h): the tile code in
// AmxKernel.cpp, the blocks' path (tiles, FMA, measured) in AmxChoice.cpp.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "AmxKernel.h"
#include "CpuPlan.h"

// Among them the dialects the pass depends on (Passes.td), which its
// generated base registers.
#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUAMXCONTRACTIONS
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
struct CpuAmxContractionsPass
    : public tfm::impl::TfmCpuAmxContractionsBase<CpuAmxContractionsPass> {
  using Base::Base;
  // On the module: the GEMMs' code declares arch_prctl there.
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<AmxPathChoice> path =
        llvm::StringSwitch<std::optional<AmxPathChoice>>(choice)
            .Case("measured", AmxPathChoice::Measured)
            .Case("tiles", AmxPathChoice::Tiles)
            .Case("fma", AmxPathChoice::Fma)
            .Default(std::nullopt);
    if (!path) {
      module.emitError() << "tfm-cpu-amx-contractions: choice must be "
                            "measured, tiles or fma, not '"
                         << choice << "'";
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::GenericOp, AmxContraction>> gemms;
    module.walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (std::optional<AmxContraction> shape = matchAmxContraction(op))
        gemms.emplace_back(op, *shape);
    });
    SymbolTable symbols(module);
    // One kernel function per GEMM shape and operand types, called by every
    // GEMM that has them (the 12 layers of a model share 4): the passes that
    // follow, and LLVM, see each unrolled kernel once (outlining and
    // deduplication come later in the pipeline).
    llvm::StringMap<func::FuncOp> kernels;
    for (auto [op, shape] : gemms) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      // tfm-cpu-split-amx-weights' form: C[M, J, panel / 16, 16] seen as
      // C[M, J, panel], as the kernel addresses it.
      SmallVector<ReassociationIndices> cPanels = {{0}, {1}, {2, 3}};
      SmallVector<ReassociationIndices> aRows = {{0}, {1, 2}};
      SmallVector<ReassociationIndices> partTiles = {{0, 1}, {2}, {3, 4}};
      Value c = op.getDpsInitOperand(0)->get();
      auto cType = cast<MemRefType>(c.getType());
      bool collapsible = true;
      if (shape.prepacked) {
        auto collapses = [](Value v, ArrayRef<ReassociationIndices> groups) {
          return memref::CollapseShapeOp::isGuaranteedCollapsible(
              cast<MemRefType>(v.getType()), groups);
        };
        collapsible = collapses(c, cPanels) &&
                      collapses(op.getDpsInputOperand(0)->get(), aRows);
        for (int64_t i = 1; i <= shape.parts; ++i)
          collapsible = collapsible &&
                        collapses(op.getDpsInputOperand(i)->get(), partTiles);
        if (collapsible)
          cType = memref::CollapseShapeOp::computeCollapsedType(cType, cPanels);
      }
      std::optional<int64_t> rowStride =
          collapsible ? getAmxRowStride(cType, shape.panel) : std::nullopt;
      if (!collapsible) {
        op.emitRemark("tfm-cpu-amx-contractions: an operand's split-weight "
                      "views do not collapse back to A[M, K], B's parts "
                      "[N / 16, K / 2, 32] or C[M, J, panel]; left to "
                      "scalar loops");
        op->removeAttr(kCpuTilingAttrName);
        continue;
      }
      if (!rowStride) {
        // The FMA path skipped it: without AMX it would run as scalar
        // loops, correct but slow. Say so rather than degrade silently.
        op.emitRemark("tfm-cpu-amx-contractions: C's layout is not tiles' "
                      "(rows a static stride apart, panels contiguous); left "
                      "to scalar loops");
        op->removeAttr(kCpuTilingAttrName);
        continue;
      }
      Value a = op.getDpsInputOperand(0)->get();
      SmallVector<Value> bOperand = {op.getDpsInputOperand(1)->get()};
      if (shape.prepacked) {
        // The views back to A[M, K] and B's parts [N / 16, K / 2, 32].
        a = memref::CollapseShapeOp::create(b, loc, a, aRows);
        bOperand.clear();
        for (int64_t i = 1; i <= shape.parts; ++i)
          bOperand.push_back(memref::CollapseShapeOp::create(
              b, loc, op.getDpsInputOperand(i)->get(), partTiles));
        c = memref::CollapseShapeOp::create(b, loc, c, cPanels);
      }
      // B exists only as its bf16 parts, or the operands are bf16 (the FMA
      // path reads f32): no FMA path to choose.
      AmxPathChoice gemmChoice = shape.prepacked || shape.parts == 1
                                     ? AmxPathChoice::Tiles
                                     : *path;
      AmxGemmBuilder caller(b, loc, shape, parallel, gemmChoice, symbols);
      SmallVector<Value> operands = {a};
      llvm::append_range(operands, bOperand);
      operands.push_back(c);
      llvm::append_range(operands, caller.allocateBuffers());
      std::string key;
      llvm::raw_string_ostream os(key);
      llvm::interleave(ValueRange(operands).getTypes(), os, ";");
      os << "|" << shape.blockCols << "x" << shape.blockDepth;
      func::FuncOp &kernel = kernels[key];
      if (!kernel) {
        kernel = caller.createKernelFunction(
            "tfm_amx_gemm", ValueRange(operands).getTypes());
        Block *body = &kernel.getBody().front();
        OpBuilder inside = OpBuilder::atBlockBegin(body);
        AmxGemmBuilder builder(inside, loc, shape, parallel, gemmChoice,
                               symbols);
        size_t nb = bOperand.size();
        ValueRange args = body->getArguments();
        if (failed(builder.buildKernel(args[0], args.slice(1, nb),
                                       args[nb + 1], args.drop_front(nb + 2),
                                       *rowStride)))
          return signalPassFailure();
        func::ReturnOp::create(inside, loc);
      }
      func::CallOp::create(b, loc, kernel, operands);
      op.erase();
    }
  }
};
} // namespace

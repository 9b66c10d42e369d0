//===- AmxKernel.h - the AMX GEMM code builder ------------------*- C++ -*-===//
//
// What the files of tfm-cpu-amx-contractions share: AmxGemmBuilder, which
// the pass (CpuAmxContractions.cpp) creates per GEMM and whose members are
// defined in AmxKernel.cpp (the tile code) and AmxChoice.cpp (the kernel's
// column blocks, the FMA path and the choice between the two), and the
// register block kBlock, which also bounds the GEMMs matched (AmxMatch.cpp).
// The code built is described at the top of CpuAmxContractions.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_CODEGEN_CPU_AMXKERNEL_H
#define TFM_LIB_CODEGEN_CPU_AMXKERNEL_H

#include "CpuPlan.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include <string>
#include <utility>

namespace mlir::tfm {

/// The register block: 2 x 2 C tiles.
inline constexpr int64_t kBlock = 32;
/// The FMA path's strips: 12 rows x 32 columns, 24 accumulators of the 32
/// AVX-512 registers.
inline constexpr int64_t kFmaRows = 12;

/// How a kernel picks between tiles and FMA for a block of columns.
enum class AmxPathChoice { Measured, Tiles, Fma };

/// Emits the code of one AMX GEMM in place of its linalg op.
class AmxGemmBuilder {
public:
  AmxGemmBuilder(OpBuilder &b, Location loc, const AmxContraction &shape,
                 bool parallel, AmxPathChoice choice, SymbolTable &symbols)
      : b(b), loc(loc), s(shape), parallel(parallel), choice(choice),
        symbols(symbols) {}

  /// A new private function of the module, internal in the object (two
  /// models linked into one program must not share, or clash on, kernels
  /// of different shapes), named `name` made unique, with an entry block.
  func::FuncOp createKernelFunction(StringRef name, TypeRange arguments);

  /// The workspace buffers of the kernel, where the builder is: A's parts
  /// and B's parts (tiles), then A in FMA strips (FMA).
  SmallVector<Value> allocateBuffers();
  /// The GEMM's code, where the builder is (a kernel function's body), for
  /// C's rows `rowStride` elements apart. `b` is the packed panels P, or
  /// (prepacked) B's three parts as [N / 16, K / 2, 32].
  LogicalResult buildKernel(Value a, ValueRange b, Value c, ValueRange buffers,
                            int64_t rowStride);

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i64(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value apply(AffineExpr e, ValueRange operands) {
    return affine::makeComposedAffineApply(b, loc, e,
                                           getAsOpFoldResult(operands));
  }
  /// Linux lets a process use AMX tile data only once it asked (arch_prctl
  /// ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); before, the first tile
  /// instruction faults. The code asks itself, so that it runs in any
  /// process (the runner, mlir-runner, a program linking an object): one
  /// system call per GEMM call (a fraction of a microsecond; the permission
  /// is the process's, for every thread). Its result is not checked: for
  /// the host, tfm-cpu-configure planned tiles only after the same request
  /// succeeded; code compiled for a named CPU and run where Linux refuses
  /// the tiles faults at the first one, like any code for a CPU it is not
  /// running on.
  void requestTilePermission();
  /// A call of the C function `name` (declared in the module if needed).
  Value callExternal(StringRef name, TypeRange results, ValueRange operands);
  /// omp_get_max_threads() or omp_get_thread_num() as an index.
  Value openmpIndex(StringRef function);
  /// The three bf16 parts of a vector of f32.
  /// The bf16 parts of a vector: three of f32, a bf16 vector itself.
  SmallVector<Value, kAmxF32Parts> split(Value v);
  void splitA(Value a, Value as, Value ap);
  void splitBBlock(Value p, Value bs, Value block, Value n0, Value kb);
  /// `bs`: the thread's buffer of B's parts, Bs (its `block`), or
  /// (prepacked) the three parts of the whole B.
  LogicalResult multiplyBlock(Value as, ValueRange bs, Value c,
                              Value cRowStride, Value block, Value n0,
                              Value kb);
  /// The column block [n0, n0 + Nb) on tiles: per K block, B's parts
  /// (unless prepacked), then multiplyBlock.
  LogicalResult multiplyBlockOnTiles(ValueRange bOperand, Value as, Value bs,
                                     Value c, Value cRowStride, Value slot,
                                     Value n0);
  /// The column block [n0, n0 + Nb) with f32 FMAs, from A's strips (Ap)
  /// and the packed panels as they are (no parts).
  void multiplyBlockWithFma(Value ap, Value p, Value c, Value n0);
  /// C[mt : mt + rows, 32 columns at n] += A[.., kb : kb + depth] * B[..],
  /// A read from its strips in `ap`.
  void fmaStrip(Value ap, Value p, Value c, Value kb, Value n, Value mt,
                int64_t rows, int64_t depth);
  /// The time-stamp counter (llvm.readcyclecounter: rdtsc on x86).
  Value readCycles();
  /// The path for the next block of this thread, from its costs in `state`
  /// (row `row`: cycles a block on tiles, with FMA, blocks run): whichever
  /// is cheaper, each measured first (kWarmupBlocks), and the other tried
  /// again every kProbeInterval blocks.
  /// Also whether this block's time replaces the path's cost (a probe of
  /// the dearer path, or warming up) rather than updating it.
  std::pair<Value, Value> chooseTiles(Value state, Value row);
  /// Records that a block took `cycles` on the chosen path.
  void recordCost(Value state, Value row, Value onTiles, Value replace,
                  Value cycles);
  /// C[mt : mt + sum(tileRows), n0 + nt : n0 + nt + 32] over the K block:
  /// one or two tiles of rows (tileRows) by two of 16 columns; returns its
  /// K-step loop, left to unroll.
  scf::ForOp multiplyTiles(Value as, ValueRange bs, Value c,
                           Value cRowStride, Value block, Value n0, Value kb,
                           Value mt, Value nt, ArrayRef<int64_t> tileRows);
  /// A loop over [0, upper) by `step` where the builder is; the builder
  /// moves into its body.
  Value beginLoop(int64_t upper, int64_t step = kBlock);

  OpBuilder &b;
  Location loc;
  AmxContraction s;
  /// Blocks run on OpenMP threads: B's parts get a buffer per thread.
  bool parallel;
  /// Tiles, FMA, or the faster as measured, for each block.
  AmxPathChoice choice;
  /// The kernel's cost state (a memref.global), with choice == Measured.
  std::string stateName;
  /// The module's, for the kernel functions.
  SymbolTable &symbols;
};

} // namespace mlir::tfm

#endif // TFM_LIB_CODEGEN_CPU_AMXKERNEL_H

//===- Kernels.h - micro-kernels the generated code calls -------*- C++ -*-===//
//
// Code that tfm generates calls a few hand-written micro-kernels by name (as
// IREE's CPU code calls its ukernels): those whose loop structure the
// contraction tiling does not plan, such as a quantized weight's two-level
// reduction (docs/design.md, "Quantized weights"). Each is compiled for
// several instruction sets; the compiler names the one its target plans
// (tfm-cpu-lower-quantized-matmuls), and each entry point runs the best
// variant this CPU can execute, so a module planned for a wider target than
// the host still runs.
//
// The engine resolves these names for the JIT from getKernelSymbols().
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_KERNELS_H
#define TFM_RUNTIME_KERNELS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::tfm::runtime {

/// The Q8_0 matmul's entry point for an instruction set ("sse2", "avx2",
/// "avx512"): tfm_q8_0_matmul_<isa>, declared with llvm.emit_c_interface,
/// so the symbol resolved is _mlir_ciface_tfm_q8_0_matmul_<isa>, taking
/// pointers to the memref descriptors of
///
///   A [M, K/32, 32] f32, V [J, K/32, 32, P] i8, S [J, K/32, P] f16,
///   C [M, J, P] f32
///
/// and then j0, j1 (index): C[m, j, r] += sum A[m, b, t] V[j, b, t, r]
/// S[j, b, r] for panels j in [j0, j1). P is 8, 16 or 32; A's and C's rows
/// are unit-stride, V and S contiguous.
inline constexpr llvm::StringLiteral kQ8_0MatmulPrefix = "tfm_q8_0_matmul_";
/// The Q4_0 matmul's, tfm_q4_0_matmul_<isa>: the same operands with V
/// [J, K/32, 16, P] i8, byte u of a block holding K steps u and u + 16 of
/// column r in its low and high nibble (each weight (q - 8) times its
/// block's scale).
inline constexpr llvm::StringLiteral kQ4_0MatmulPrefix = "tfm_q4_0_matmul_";

struct KernelSymbol {
  llvm::StringRef name;
  void *address;
};
/// Every kernel entry point, for the JIT's symbol table.
llvm::ArrayRef<KernelSymbol> getKernelSymbols();

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_KERNELS_H

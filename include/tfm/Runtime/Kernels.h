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
/// S[j, b, r] for panels j in [j0, j1). P is 8, 16 or 32 (wider panels are
/// left to loops); A's and C's rows are unit-stride, V and S contiguous.
inline constexpr llvm::StringLiteral kQ8_0MatmulPrefix = "tfm_q8_0_matmul_";
/// The Q4_0 matmul's, tfm_q4_0_matmul_<isa>: the same operands with V
/// [J, K/32, 16, P] i8, byte u of a block holding K steps u and u + 16 of
/// column r in its low and high nibble (each weight (q - 8) times its
/// block's scale).
inline constexpr llvm::StringLiteral kQ4_0MatmulPrefix = "tfm_q4_0_matmul_";
/// The Q4_K matmul's, tfm_q4_k_matmul_<isa>: V as Q4_0's (unsigned q), S
/// [J, K/256, 2, P] f16 (each super-block's d and dmin), then SC [J, K/32,
/// 2, P] i8 (each block's 6-bit scale sc and min m), C: each weight (d *
/// sc) * q - dmin * m, as llama.cpp dequantizes it.
inline constexpr llvm::StringLiteral kQ4_KMatmulPrefix = "tfm_q4_k_matmul_";
/// The Q5_K matmul's, tfm_q5_k_matmul_<isa>: V as Q8_0's (each byte an
/// unsigned 5-bit q), S and SC as Q4_K's.
inline constexpr llvm::StringLiteral kQ5_KMatmulPrefix = "tfm_q5_k_matmul_";
/// The Q6_K matmul's, tfm_q6_k_matmul_<isa>: V as Q8_0's (each byte an
/// unsigned 6-bit q), S [J, K/256, P] f16 (each super-block's d), then SC
/// [J, K/16, P] i8 (each 16 steps' signed scale), C: each weight (d * sc) *
/// (q - 32), as llama.cpp dequantizes it.
inline constexpr llvm::StringLiteral kQ6_KMatmulPrefix = "tfm_q6_k_matmul_";

/// GEMMs on int8 activations ("sse2", "avx2", "avx512": AVX-512 VNNI; lib/
/// Runtime/Kernels/Int8BlockMatmul.h). First, once per GEMM,
/// tfm_int8_quantize_rows_<isa>:
///
///   A [M, K/32, 32] f32, AMAX [M, K/32] f32 -> Q [M, K] i8,
///   D [M, K/32] f32, SUM [M, K/32] i32 (contiguous)
///
/// A's rows quantized per block of 32: d = AMAX / 127, q = roundeven(a /
/// d), sum = the block's sum of q. Then, per block of columns,
/// tfm_q8_0_int8_matmul_<isa> or tfm_q4_0_int8_matmul_<isa>:
///
///   Q, D, SUM, V [J, K/32, G, P, 4] i8, S [J, K/32, P] f16, C [M, J, P]
///   f32, then j0, j1, decode_vectors and prefetch (index)
///
/// with G = 8 (Q8_0: V[j, b, u, r, i] at K step 32 b + 4 u + i) or 4
/// (Q4_0: two 4-bit q a byte, steps 32 b + 4 u + i and 32 b + 16 + 4 u + i
/// in its low and high nibble): each block's products summed in int32 and
/// scaled by its two scales. A single row (decode) accumulates in
/// decode_vectors vector registers (tfm.cpu_target's `int8_decode_vectors`:
/// 8 or 4 on AVX-512, which then streams one 64-column panel at a time
/// rather than two; AVX2 takes 4, the tiles ignore it), and the values
/// are prefetched `prefetch` bytes ahead of their loads (tfm.cpu_target's
/// `int8_prefetch_packed` or `int8_prefetch_bytewise`; 0: no prefetch);
/// the floats depend on neither. tfm_q4_k_int8_matmul_<isa> takes Q4_K's S and
/// SC (as tfm_q4_k_matmul_) after V, its values as Q4_0's (G = 4);
/// tfm_q5_k_int8_matmul_<isa> Q5_K's, its values as Q8_0's (G = 8), and
/// tfm_q6_k_int8_matmul_<isa> Q6_K's, its values in 6 bits (G = 6:
/// mlir::tfm::isSixBitValues). Any P: the plans pack 32
/// (AVX2's int8 kernels, also on AVX-512 without VNNI; AVX-512 VNNI's
/// byte formats) or, for Q4_0 and Q4_K on AVX-512 VNNI, 64.
inline constexpr llvm::StringLiteral kInt8QuantizeRowsPrefix =
    "tfm_int8_quantize_rows_";
inline constexpr llvm::StringLiteral kQ8_0Int8MatmulPrefix =
    "tfm_q8_0_int8_matmul_";
inline constexpr llvm::StringLiteral kQ4_0Int8MatmulPrefix =
    "tfm_q4_0_int8_matmul_";
inline constexpr llvm::StringLiteral kQ4_KInt8MatmulPrefix =
    "tfm_q4_k_int8_matmul_";
inline constexpr llvm::StringLiteral kQ5_KInt8MatmulPrefix =
    "tfm_q5_k_int8_matmul_";
inline constexpr llvm::StringLiteral kQ6_KInt8MatmulPrefix =
    "tfm_q6_k_int8_matmul_";

struct KernelSymbol {
  llvm::StringRef name;
  void *address;
};
/// Every kernel entry point, for the JIT's symbol table.
llvm::ArrayRef<KernelSymbol> getKernelSymbols();

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_KERNELS_H

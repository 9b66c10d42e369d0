//===- CpuPlan.h - the CPU code generation plan and AMX matching -*- C++ -*-===//
//
// What the passes of the CPU pipeline share beyond their declarations in
// tfm/Codegen/CPU/Passes.td: the names of the attributes that carry the code
// generation plan and the plan's encoding.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_CODEGEN_CPU_CPUPLAN_H
#define TFM_LIB_CODEGEN_CPU_CPUPLAN_H

#include "tfm/Codegen/CPU/CpuTarget.h"
#include "tfm/Dialect/Tfm/IR/QuantizedParts.h"
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/IR/TfmAttrNames.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"

#include <optional>

#include <memory>

namespace mlir::tfm {

/// The `tfm.cpu_tiling` attribute of `tiling`, and back (std::nullopt when
/// `op` has none).
CpuTilingAttr tilingToAttr(MLIRContext *ctx, const ContractionTiling &tiling);
std::optional<ContractionTiling> tilingFromAttr(Operation *op);

/// An f32 GEMM that tfm-cpu-amx-contractions runs on AMX tiles: the packed
/// form `C[m, j, r] += A[m, k] * P[j, k, r]` (loops m, j, r, k), with K and
/// N = J * panel multiples of 32 and M at least 64, outside parallel loops,
/// planned with an `amx` field. Block sizes are the plan's, reduced to
/// divisors of N and K. Or, `prepacked`, tfm-cpu-split-amx-weights' form: B
/// read as its three bf16 parts S_i[j, rc, q, x, t] (loops m, j, rc, x, q,
/// t; A[m, q, t], C[m, j, rc, x]).
/// On a GEMM in tfm-cpu-split-amx-weights' form: its three B operands are
/// the bf16 split of f32 weights (w0 = bf16(w), w1 = bf16(w - w0), w2 =
/// bf16(w - w0 - w1)), as the runner binds them, so that the AMX kernel may
/// drop the part products below 2^-24 |a w|. Without it, a generic of that
/// form is left to loops.
inline constexpr llvm::StringLiteral kAmxWeightPartsAttrName =
    "tfm.amx_weight_parts";

/// On the GEMM tfm-cpu-pack-weights makes of a matmul whose weight is held
/// quantized: the block format ("q8_0"). The generic
///   C[m, j, r] += A[m, b, t] * (sitofp(V[j, b, t, r]) * extf(S[j, b, r]))
/// over (m, j, r, b, t) is exact (the product of an int8 and an f16 scale is
/// an f32), so loops could run it; tfm-cpu-lower-quantized-matmuls replaces
/// it by calls of the format's micro-kernel (tfm/Runtime/Kernels.h).
inline constexpr llvm::StringLiteral kQuantizedMatmulAttrName =
    "tfm.quantized_matmul";
/// On such a generic: its activations are quantized to int8 per block
/// (rewriteToQuantizedInt8 in CpuPackWeights.cpp).
inline constexpr llvm::StringLiteral kInt8ActivationsAttrName =
    "tfm.int8_activations";

/// The Q8_0 micro-kernel the module's target runs (tfm.cpu_target; the
/// host's without one): its instruction set ("avx512", "avx2", "sse2") and
/// the panel width its weights are packed in.
struct QuantizedKernelTarget {
  llvm::StringRef isa;
  /// Two vectors of f32: the f32 kernels' panel, and the int8 ones' but
  /// as getPanel widens it.
  int64_t panel;
  /// Int8 activations planned (`int8_dot` in tfm.cpu_target), and the
  /// instruction set of their kernel: "avx512" (VNNI) or "avx2".
  bool int8 = false;
  llvm::StringRef int8Isa;
  /// Their prefill on AMX-INT8 tiles (`amx_int8` in tfm.cpu_target).
  bool amxInt8 = false;
  /// Their decode GEMV's accumulator vectors (`int8_decode_vectors`).
  int64_t decodeVectors = 4;
  /// How far ahead (bytes) their kernels prefetch the values of formats
  /// packed below a byte a K step (`int8_prefetch_packed`: Q4_0, Q4_K,
  /// Q6_K) and of those a byte a step (`int8_prefetch_bytewise`: Q8_0,
  /// Q5_K); 0: none.
  int64_t prefetchPacked = kDefaultInt8Prefetch,
          prefetchBytewise = kDefaultInt8Prefetch;

  /// Whether `format`'s values take a byte a K step in the int8 kernels.
  static bool isBytewise(QuantFormat format) {
    return format == QuantFormat::q8_0 || format == QuantFormat::q5_k;
  }

  /// The prefetch distance of `format`'s values.
  int64_t getInt8Prefetch(QuantFormat format) const {
    return isBytewise(format) ? prefetchBytewise : prefetchPacked;
  }

  /// The int8 kernel's instruction set for a GEMM of `rows` rows over
  /// `format`'s weights: "amx" where tiles are planned and the rows make
  /// them pay (8 for Q8_0 and Q5_K; 32 for the nibble formats, which the
  /// tile kernel unpacks per panel, and Q6_K, two tile products a block:
  /// fewer measured slower; docs/design.md, "AMX-INT8 prefill"), else
  /// int8Isa.
  llvm::StringRef getInt8Isa(QuantFormat format, int64_t rows) const {
    if (!amxInt8)
      return int8Isa;
    return rows >= (isBytewise(format) ? 8 : 32) ? "amx" : int8Isa;
  }

  /// The panel width of a weight held in `format`. The int8 AVX-512 VNNI
  /// kernels take the formats with two K steps a byte (Q4_0, Q4_K) in
  /// panels of twice the width, so that a panel's block of 32 K steps is
  /// 1 KiB of values for every format: decode then streams two such panels
  /// at once rather than four of 512 bytes (Q4_0 decode on one thread about
  /// 6% faster). The int8 AVX2 kernels take every format in panels of 32
  /// columns, their decode tile's four vectors: one panel streamed at a
  /// time rather than two of 16 (decode 7-20% faster, prefill 12-20%) or
  /// half of one of 64 (slower; docs/design.md, "Int8 panels").
  int64_t getPanel(QuantFormat format) const {
    if (!int8)
      return panel;
    if (int8Isa == "avx2")
      return kAvx2Int8Panel;
    return isNibbleFormat(format) ? 2 * panel : panel;
  }
  static constexpr int64_t kAvx2Int8Panel = 32;
};
QuantizedKernelTarget getQuantizedKernelTarget(ModuleOp module);

/// AMX tile geometry: 16 rows of 64 bytes. C tiles are 16 x 16 f32, A tiles
/// 16 x 32 bf16, B tiles 16 K pairs x 16 columns, each column a pair of bf16
/// (VNNI order). An f32 operand is split into three bf16 parts.
inline constexpr int64_t kAmxTileRows = 16;
inline constexpr int64_t kAmxTileF32Cols = 16;
inline constexpr int64_t kAmxTileBf16Cols = 32;
inline constexpr int64_t kAmxVnniPair = 2;
inline constexpr int64_t kAmxF32Parts = 3;

struct AmxContraction {
  int64_t m = 0, n = 0, k = 0, panel = 0;
  int64_t blockCols = 0, blockDepth = 0;
  bool prepacked = false;
  /// bf16 parts per operand: 3 for f32 GEMMs (bf16x6), 1 for bf16 ones.
  int64_t parts = 3;
};
/// `op` (a linalg op on tensors or buffers) as such a GEMM, or nullopt.
std::optional<AmxContraction> matchAmxContraction(Operation *op);
/// The row stride (elements) of C[M, J, panel] when its tiles can be loaded
/// and stored: rows a static stride apart, each panel's row contiguous.
std::optional<int64_t> getAmxRowStride(MemRefType cType, int64_t panel);

/// Marks the functions tfm-outline-loop-nests creates until they are
/// llvm.func (tfm-deduplicate-outlined-functions merges only these).
inline constexpr llvm::StringLiteral kOutlinedLoopNestAttr =
    "tfm.outlined_loop_nest";

} // namespace mlir::tfm

#endif // TFM_LIB_CODEGEN_CPU_CPUPLAN_H

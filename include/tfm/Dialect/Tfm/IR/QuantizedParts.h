//===- QuantizedParts.h - the arguments a quantized weight is bound as -*- C++
//-*-===//
//
// A weight held quantized (#tfm.quant) is bound on the CPU as two or three
// arguments in the GEMM micro-kernels' panel layout: its values and its
// scales, and for the K formats its super-blocks' scales. Their `format`
// names (tfm.param_pack), element types and shapes are written here once;
// tfm-cpu-pack-weights makes the arguments, tfm-cpu-lower-quantized-matmuls
// checks what its kernels index, and the runtime's entry signature checks
// what the binder fills.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_DIALECT_TFM_IR_QUANTIZEDPARTS_H
#define TFM_DIALECT_TFM_IR_QUANTIZEDPARTS_H

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <utility>

namespace mlir::tfm {

/// One of the arguments a quantized weight is bound as.
enum class QuantizedPart {
  /// The integers: a byte a K step, or two (Q4_0, Q4_K: nibbles), or Q6_K's
  /// in 6 bits (isSixBitValues).
  Values,
  /// Q8_0, Q4_0: each block's f16 scale. Q4_K, Q5_K: each sub-block of 32's
  /// 6-bit scale and min (bytes); Q6_K: each 16's signed scale (a byte).
  Scales,
  /// The K formats' super-blocks of 256: f16 d and dmin (Q4_K, Q5_K) or d.
  Super,
};

/// The parts of `format` in the order tfm-cpu-pack-weights inserts them
/// after the weight: the values, the f16 scales (the super-blocks' for the
/// K formats), then the K formats' byte scales.
llvm::SmallVector<QuantizedPart, 3> getQuantizedParts(QuantFormat format);

/// The tfm.param_pack `format` naming a part ("q4_k_super", ...), and back.
llvm::StringRef getQuantizedPartName(QuantFormat format, QuantizedPart part);
std::optional<std::pair<QuantFormat, QuantizedPart>>
parseQuantizedPartName(llvm::StringRef name);

/// Whether a part holds f16 scales (as their bits); else bytes.
bool isF16QuantizedPart(QuantFormat format, QuantizedPart part);

/// Whether `format` keeps two K steps a byte (Q4_0, Q4_K).
bool isNibbleFormat(QuantFormat format);

/// Whether `format`'s values are held in 6 bits, a Q4_0 nibble and a 2-bit
/// high part, when `group` K steps of a column are stored together: Q6_K
/// for int8 dot products (group 4). Each block's 32 steps of a column are
/// then six quads of 4 bytes, in two groups of three: quad 3 g holds the
/// high bits of nibble quads u = 2 g and 2 g + 1, which follow it (quads
/// u + 1 + u / 2). Byte i of nibble quad u holds steps c = 4 u + i and c +
/// 16 in its low and high nibble (their low 4 bits, as Q4_0's), byte i of
/// quad 3 (u / 2) their high 2 bits, step c's at bit 4 (u % 2) and step c
/// + 16's two above. Each quad read in order of address: docs/design.md,
/// "Q6_K in 6 bits".
bool isSixBitValues(QuantFormat format, int64_t group);

/// The bytes one block of 32 K steps of a column takes in the values: 16
/// (nibbles), 24 (isSixBitValues) or 32.
int64_t getBlockValueBytes(QuantFormat format, int64_t group);

/// The shape of a part of a weight of `panels` panels of `panel` columns and
/// `k` steps along its blocks; `group` (1 or 4, values only) K steps of a
/// column stored together for int8 dot products:
///   values  [J, K/32, B/group, P(, group)], B = getBlockValueBytes;
///   scales  Q8_0/Q4_0 [J, K/32, P]; Q4_K/Q5_K [J, K/32, 2, P] (sc, m);
///           Q6_K [J, K/16, P];
///   super   Q4_K/Q5_K [J, K/256, 2, P] (d, dmin); Q6_K [J, K/256, P].
llvm::SmallVector<int64_t, 5>
getQuantizedPartShape(QuantFormat format, QuantizedPart part, int64_t panels,
                      int64_t k, int64_t panel, int64_t group = 1);

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_IR_QUANTIZEDPARTS_H

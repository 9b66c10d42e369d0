//===- EntrySignature.h - what a tfm entry function expects ------*- C++ -*-===//
//
// Reads, before any lowering, what an entry function needs from the caller:
// each argument's role (a `tfm.param` weight, possibly fused from several
// tensors by --tfm-fuse-qkv; a `tfm.input` tensor; an `index` value; a
// `tfm.kv_cache` buffer updated in place), name, element type and static
// shape, and each result's `tfm.output` (or `tfm.kv_cache`) name. This is what lets a runner bind weight files and arrays
// by name and check them before compiling anything.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_ENTRYSIGNATURE_H
#define TFM_RUNTIME_ENTRYSIGNATURE_H

#include "tfm/Runtime/DType.h"
#include "tfm/Runtime/Quantize.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
namespace tfm::runtime {

/// How a parameter is packed from its weight-file tensor (`tfm.param_pack`,
/// see tfm/Pipelines/Pipelines.h): P[j, k, r] = W(k, j * panel + r), zero
/// past N, with W(k, n) = W[k, n] (in_out) or W[n, k] (out_in).
///
/// With `amxParts` = 3 (`format = "amx_bf16x3"`) the f32 weight is bound as
/// its three bf16 parts in AMX tiles' order instead, [3, J * panel / 16, K /
/// 2, 32]: S[i, n / 16, k / 2, 2 (n % 16) + k % 2] = part i of W(k, n), w =
/// w0 + w1 + w2, w0 = bf16(w), w1 = bf16(w - w0), w2 = bf16(w - w0 - w1).
/// With `amxParts` = 1 (`format = "amx_bf16"`) a bf16 weight is bound in
/// that order as it is, [1, J * panel / 16, K / 2, 32].
///
/// With `kPairs` (`format = "bf16_pairs"`) a bf16 weight is bound in panels
/// with its K pairs interleaved, [J, K / 2, panel, 2]: P[j, k / 2, r, k % 2]
/// = W(k, j * panel + r), zero past N (AVX512-BF16's pair dot products).
///
/// With a quantized part (`format = "q8_0_values"` or `"q8_0_scales"`) the
/// weight is bound as one part of its Q8_0 blocks along K (tfm/Runtime/
/// Quantize.h), column n being W(:, n), in panels: its int8 values [J, K /
/// 32, 32, panel], V[j, b, t, r] at K step 32 b + t of column j * panel +
/// r, or its scales' f16 bits [J, K / 32, panel]; zero past N. Q4_0's
/// (`"q4_0_values"`, `"q4_0_scales"`) likewise, its values [J, K / 32, 16,
/// panel] bytes as llama.cpp's blocks hold them (byte u of block b: K steps
/// 32 b + u and 32 b + 16 + u in its low and high nibble). Q4_K's in three
/// parts: its values as Q4_0's (`"q4_k_values"`, each block of 32 a
/// sub-block), its sub-blocks' 6-bit scale and min [J, K / 32, 2, panel]
/// (`"q4_k_scales"`, bytes: sc then m) and its super-blocks' f16 d and
/// dmin [J, K / 256, 2, panel] (`"q4_k_super"`). Q6_K's likewise: its 6-bit
/// q as Q8_0's values, a byte a K step (`"q6_k_values"`; with `group` = 4
/// in 6 bits, [J, K / 32, 6, panel, 4]: mlir::tfm::isSixBitValues), the
/// signed 8-bit scale of each 16 weights [J, K / 16, panel]
/// (`"q6_k_scales"`) and its super-blocks' f16 d [J, K / 256, panel]
/// (`"q6_k_super"`). Q5_K's: its
/// 5-bit q as Q8_0's values (`"q5_k_values"`) with Q4_K's scales and mins
/// and super-blocks (`"q5_k_scales"`, `"q5_k_super"`). With `group`
/// = 4 (`group
/// = 4`: the int8 kernels') the values of four consecutive bytes of a
/// column's block are adjacent: [J, K / 32, 8 (Q4_0, Q4_K: 4; Q6_K: 6),
/// panel, 4], V[j, b, u, r, i] byte 4 u + i of column r's block b.
struct PackedLayout {
  /// Which part of a quantized weight's blocks an argument holds.
  enum class QuantPart { None, Values, Scales, Super };
  bool outIn = false;
  int64_t panel = 1;
  int64_t amxParts = 0;
  bool kPairs = false;
  BlockFormat blockFormat = BlockFormat::None;
  QuantPart quantPart = QuantPart::None;
  /// Consecutive value bytes of a column kept together (1 or 4).
  int64_t group = 1;
  /// Q6_K's values in 6 bits (mlir::tfm::isSixBitValues of the format and
  /// group).
  bool sixBitValues = false;
  /// The tensor's shape in the weight file (after concatenating any parts).
  llvm::SmallVector<int64_t, 2> fileShape;
};

/// The values an index or integer input may take, derived from the ops that
/// index memory with it (see EntryResources.h); `why` says which op and
/// buffer give the bound.
struct InputRange {
  int64_t min = 0, max = 0;
  std::string why;
};

/// `tfm.param_shard` (a tensor-parallel module's parameter): the argument
/// is the slice of its weight-file tensor that rank `r` of `ranks` binds --
/// along `axis`, from each consecutive piece `i` (`pieces[i]` long, cut in
/// `shards[i]` blocks) block `r * shards[i] / ranks`, concatenated.
struct ShardSlice {
  int64_t axis = 0;
  int64_t ranks = 1;
  llvm::SmallVector<int64_t, 3> pieces, shards;
};

struct EntryArgument {
  enum class Kind { Param, Input, Index, KVCache };
  Kind kind;
  /// `tfm.param` / `tfm.input` / `tfm.kv_cache` value, or `arg<N>` when none
  /// is present.
  std::string name;
  /// For a parameter fused by --tfm-fuse-qkv (`tfm.param_parts`): the weight
  /// file tensors to concatenate along `concatAxis`.
  std::vector<std::string> parts;
  int64_t concatAxis = 0;
  /// Set for a parameter read in panel layout; `shape` is then the packed
  /// shape.
  std::optional<PackedLayout> packed;
  /// The element type of the weight-file tensor this argument is bound
  /// from: `dtype`, except for AMX parts (bf16 parts of an f32 weight).
  DType fileDType() const {
    if (quantAxis >= 0 ||
        (packed && packed->quantPart != PackedLayout::QuantPart::None))
      return DType::F32;
    return packed && packed->amxParts == 3 ? DType::F32 : dtype;
  }
  /// `tfm.param_quant` on an argument bound as it is (not packed): the
  /// dimension its blocks run along (else -1). Its value is the
  /// dequantized weights, so it is bound quantized and dequantized again.
  int64_t quantAxis = -1;
  /// Its block format.
  BlockFormat quantFormat = BlockFormat::None;
  /// Set for a rank's slice of a tensor-parallel parameter.
  std::optional<ShardSlice> shard;
  /// `tfm.param_rank_names`: the weight-file tensor each rank binds (an
  /// expert-parallel tfm.moe's experts), `name` being rank 0's; empty when
  /// every rank binds `name`.
  std::vector<std::string> rankNames;
  /// `tfm.param_rounded`: the compiler narrowed this parameter's type (f32
  /// weights read as f16); any float tensor is bound rounded to `dtype`.
  bool rounded = false;
  /// Element type and shape; unused for Kind::Index.
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t, 4> shape;
  /// For inputs (index values, integer tensors of ids): the valid range of
  /// every value, when the IR bounds it (deriveInputRanges).
  std::optional<InputRange> range;
};

struct EntryResult {
  /// `tfm.output` value, `tfm.kv_cache` value, or `result<N>`.
  std::string name;
  /// A KV cache result is the updated cache argument `cacheArgument`: it has
  /// no out-parameter of its own (see tfm/Pipelines/Pipelines.h).
  bool isKVCache = false;
  unsigned cacheArgument = 0;
  DType dtype;
  llvm::SmallVector<int64_t, 4> shape;
};

struct EntrySignature {
  std::string function;
  std::vector<EntryArgument> arguments;
  std::vector<EntryResult> results;
};

/// The signature of `entry` in `module`. An empty `entry` picks `forward`, or
/// else the only public function. Errors (unknown entry, listing the public
/// functions; dynamic shapes; unsupported types; duplicate names) say which
/// argument or result is at fault.
llvm::Expected<EntrySignature> getEntrySignature(ModuleOp module,
                                                 llvm::StringRef entry);

} // namespace tfm::runtime
} // namespace mlir

#endif // TFM_RUNTIME_ENTRYSIGNATURE_H

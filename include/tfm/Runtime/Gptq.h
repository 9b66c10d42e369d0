//===- Gptq.h - GPTQ and AWQ linears as llama.cpp blocks --------*- C++ -*-===//
//
// A Hugging Face directory quantized by GPTQ (AutoGPTQ / optimum, the
// "gptq" checkpoint format; config.json's quantization_config) stores each
// quantized nn.Linear `P` as
//
//   P.qweight  int32 [K * bits / 32, N]   the integers q, packed along K
//                                          (row k's in bits (k % (32 /
//                                          bits)) * bits of word k / (32 /
//                                          bits))
//   P.scales   f16   [K / G, N]           one scale per group of G rows
//   P.qzeros   int32 [K / G, N * bits / 32]  each group's zero point minus
//                                          one, packed along N
//   P.g_idx    int32 [K]                  each row's group (optional)
//
// and its weight is W[n, k] = scales[g, n] * (q[k, n] - (qzeros[g, n] +
// 1)), g = g_idx[k]. AWQ (AutoAWQ's GEMM version) stores 4-bit
//
//   P.qweight  int32 [K, N / 8]           packed along N: columns 8w .. 8w+7
//                                          in word w's nibbles 0 4 1 5 2 6 3 7
//   P.qzeros   int32 [K / G, N / 8]       zero points as they are, packed
//                                          the same way
//   P.scales   f16   [K / G, N]
//
// with W[n, k] = scales[g, n] * (q[k, n] - zero[g, n]), g = k / G.
// compressed-tensors' "pack-quantized" format (llm-compressor, vLLM's w4a16
// and w8a16) stores
//
//   P.weight_packed      int32 [N, K * bits / 32]  packed along K in order,
//                                                  each q + 2^(bits-1)
//   P.weight_scale       f16/bf16/f32 [N, K / G]
//   P.weight_shape       int64 [2]                 [N, K]
//   P.weight_zero_point  int32 [N * bits / 32, K / G]  (asymmetric only)
//                                                  packed along N likewise
//
// with W[n, k] = scale[n, g] * (q[n, k] - zero[n, g]). Symmetric
// weights -- the zero point 2^(bits-1) everywhere -- without act-order (g =
// k / G) are exactly llama.cpp's Q4_0 (bits 4: (q - 8) * d) or Q8_0 (bits
// 8: (q - 128) * d) with each block of 32 taking its group's scale. Any
// other 4-bit zero point is Q8_0 exactly: the int8 q - zero times the
// group's scale, at 34 bytes per 32 weights rather than 18. tfm reads such
// a linear as a tensor `P.weight` of those blocks and binds it as it binds
// a GGUF file's (docs/design.md, "GPTQ and AWQ checkpoints").
//
// With act-order (GPTQ's desc_act; compressed-tensors' actorder "group",
// whose P.weight_g_idx is g_idx) g_idx puts the rows of each group
// anywhere; sorted by group (stably), each group is G consecutive rows
// again. `P.weight` then holds the rows in that order, and `P.input_order`
// (int32 [K], row r of the sorted weight being input row input_order[r])
// says how the importer's tfm.permute_features reorders the linear's input
// to match: x W = x[order] W[order]. Anything else is refused by name.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_GPTQ_H
#define TFM_RUNTIME_GPTQ_H

#include "tfm/Runtime/TensorFile.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace mlir::tfm::runtime {

class Checkpoint;

/// How a checkpoint packs its linears' integers (config.json's
/// `quantization_config`).
struct PackedIntFormat {
  enum class Method { Gptq, Awq, CompressedTensors };
  Method method = Method::Gptq;
  /// 4 or 8 (AWQ: 4).
  int64_t bits = 4;
  /// Input rows per scale and zero point; -1: one group per column.
  int64_t groupSize = 128;
  /// Act-order (GPTQ's `desc_act`, compressed-tensors' `actorder:
  /// "group"`): each linear's g_idx assigns its rows to groups in another
  /// order than theirs.
  bool actOrder = false;
};

/// The GPTQ or AWQ linears of `checkpoint` (every tensor named `P.qweight`)
/// as block tensors `P.weight` ([N, K]: Q4_0 for symmetric 4-bit weights,
/// else Q8_0), each validated now (types, shapes, 8-bit zero points
/// symmetric, g_idx the rows' own groups) and its blocks built when first
/// looked up (dropped by releasePages, rebuilt if read again). The names of
/// the tensors they are built from go to `components`. Errors name the
/// tensor and what is wrong.
llvm::Expected<std::unique_ptr<TensorFile>>
makeGptqTensors(const Checkpoint &checkpoint, const PackedIntFormat &format,
                llvm::StringSet<> &components);

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_GPTQ_H

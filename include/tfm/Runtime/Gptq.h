//===- Gptq.h - a GPTQ checkpoint's linears as llama.cpp blocks --*- C++ -*-===//
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
// 1)), g = g_idx[k]. Symmetric GPTQ without act-order -- the zero point
// 2^(bits-1) for every group, g = k / G -- is exactly llama.cpp's Q4_0
// (bits 4: (q - 8) * d) or Q8_0 (bits 8: (q - 128) * d) with each block of
// 32 taking its group's scale, so tfm reads such a linear as a tensor
// `P.weight` of those blocks and binds it as it binds a GGUF file's
// (docs/design.md, "GPTQ checkpoints"). Anything else is refused by name.
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

/// The GPTQ linears of `checkpoint` (every tensor named `P.qweight`) as
/// block tensors `P.weight` ([N, K], Q4_0 for `bits` 4, Q8_0 for 8), each
/// validated now (types, shapes, every zero point symmetric, g_idx the
/// rows' own groups) and its blocks built when first looked up (dropped by
/// releasePages, rebuilt if read again). The names of the tensors they are
/// built from go to `components`. Errors name the tensor and what is wrong.
/// `groupSize` -1: one group per column.
llvm::Expected<std::unique_ptr<TensorFile>>
makeGptqTensors(const Checkpoint &checkpoint, int64_t bits, int64_t groupSize,
                llvm::StringSet<> &components);

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_GPTQ_H

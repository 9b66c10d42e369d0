//===- FusedExperts.h - transformers 5's fused expert tensors ---*- C++ -*-===//
//
// transformers 5 holds a mixture of experts' weights as two 3-D parameters
// per layer, and `save_pretrained(save_original_format=False)` writes them
// so (the default save splits them back into transformers 4's names):
//
//   <layer>.mlp.experts.gate_up_proj  [E, 2m, d]  expert e's gate rows
//                                                 [0, m), then its up rows
//   <layer>.mlp.experts.down_proj     [E, d, m]
//   <layer>.mlp.gate.weight           [E, d]      the router
//
// (models/*/modeling_*.py's `*Experts`, conversion_mapping.py). Each
// expert's gate, up and down matrix is a contiguous run of those bytes, so
// tfm reads such a checkpoint as the per-expert tensors its families bind,
// views of the file's bytes with no copy (docs/design.md, "Checkpoint
// layouts").
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_FUSEDEXPERTS_H
#define TFM_RUNTIME_FUSEDEXPERTS_H

#include "tfm/Runtime/TensorFile.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace mlir::tfm::runtime {

class Checkpoint;

/// How a family names its experts' tensors in the per-expert layout:
/// `<layer>.<module>.experts.<e>.<gate|up|down>` and the router
/// `<layer>.<module>.gate.weight` (Mixtral: module "block_sparse_moe",
/// parts "w1.weight", "w3.weight", "w2.weight"; Qwen3-MoE: "mlp",
/// "gate_proj.weight", ...).
struct ExpertTensorNames {
  llvm::StringRef module;
  llvm::StringRef gate, up, down;
};

/// Mixtral's (w1 the gate, w3 up, w2 down, under block_sparse_moe) and
/// Qwen's MoE models' names: the one definition the families' table and the
/// GGUF reader share.
inline constexpr ExpertTensorNames kMixtralExpertNames = {
    "block_sparse_moe", "w1.weight", "w3.weight", "w2.weight"};
inline constexpr ExpertTensorNames kQwenMoEExpertNames = {
    "mlp", "gate_proj.weight", "up_proj.weight", "down_proj.weight"};

/// Views of `checkpoint`'s fused expert tensors (every
/// `<layer>.mlp.experts.gate_up_proj`, with its `down_proj`) under the
/// per-expert names `names` gives, and of the router under `names.module`
/// when that is not "mlp". Each pair is checked now (3-D, plain elements,
/// one type, [E, 2m, d] against [E, d, m]). The fused tensors' names (and a
/// renamed router's) go to `replaced`. None found: an empty file.
llvm::Expected<std::unique_ptr<TensorFile>>
makeFusedExpertViews(const Checkpoint &checkpoint,
                     const ExpertTensorNames &names,
                     llvm::StringSet<> &replaced);

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_FUSEDEXPERTS_H

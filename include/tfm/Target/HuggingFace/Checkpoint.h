//===- Checkpoint.h - Hugging Face checkpoints and imported models -*- C++ -*-===//
//
// What ties an imported model (ImportModel.h) to the checkpoint it runs on:
// the prefix its tensor names carry, and the element types the tensors are
// stored in, recorded on the parameters for the ledger.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TARGET_HUGGINGFACE_CHECKPOINT_H
#define TFM_TARGET_HUGGINGFACE_CHECKPOINT_H

#include "tfm/Target/HuggingFace/ModelConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::tfm {
namespace runtime {
class Checkpoint;
} // namespace runtime
namespace hf {

/// What to prepend to a parameter name to find its tensor: GPT2LMHeadModel
/// checkpoints name the body's tensors "transformer.h.0...", GPT2Model ones
/// (and tfm's parameters) "h.0...". The checkpoint tells which.
std::string getCheckpointNamePrefix(const ModelConfig &config,
                                    const runtime::Checkpoint &file);

/// Reads the fused expert tensors of a checkpoint transformers 5 saved with
/// `save_original_format=False` (tfm/Runtime/FusedExperts.h) as the
/// per-expert tensors `config`'s family binds. A no-op for a family without
/// experts or a checkpoint without fused ones.
llvm::Error readFusedExperts(const ModelConfig &config,
                             runtime::Checkpoint &checkpoint);

/// Whether checkpoint tensor `name` is not a parameter of the model, as
/// Hugging Face's loaders ignore it: a tied LM head saved anyway, the rotary
/// frequencies of older checkpoints, and what the family adds (GPT-2's and
/// GPT-NeoX's causal-mask buffers). `prefix` is getCheckpointNamePrefix's.
bool isIgnoredTensor(llvm::StringRef name, llvm::StringRef prefix,
                     const ModelConfig &config);

/// Sets `tfm.param_dtype` on every parameter of `module` whose tensor in
/// `checkpoint` has another float type than the argument (a bf16 checkpoint
/// of an f32 model), so that the ledger counts the checkpoint's bytes.
void annotateParamDTypes(ModuleOp module,
                         const runtime::Checkpoint &checkpoint,
                         llvm::StringRef namePrefix);

} // namespace hf
} // namespace mlir::tfm

#endif // TFM_TARGET_HUGGINGFACE_CHECKPOINT_H

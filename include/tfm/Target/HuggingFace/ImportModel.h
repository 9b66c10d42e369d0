//===- ImportModel.h - whole tfm models from Hugging Face configs -*- C++ -*-===//
//
// Builds the tfm module of a whole causal LM (embedding, decoder blocks, final
// norm, LM head) from a checked ModelConfig, at static sizes chosen by the
// caller. Parameters are `tfm.param` arguments named as in the model's
// Hugging Face checkpoint (GPT-2 without the `transformer.` prefix), so a
// runner can bind a .safetensors file by name.
//
// Entry points (or one decoder layer: ImportOptions::block):
//   @forward(input_ids [B,S], params...) -> logits [B,S,V]
// and, when a KV cache length S_max is given, the generation entries
//   @prefill(input_ids [B,S], %pos, params..., caches...) -> logits, caches...
//   @decode (input_ids [B,1], %pos, params..., caches...) -> logits, caches...
// where `%pos: index {tfm.input = "position"}` is the position of the first
// token and each layer i has two cache arguments [B, Hkv, S_max, dh] with
// argument attribute `tfm.kv_cache = "<i>.key"` / `"<i>.value"`, returned
// updated (result attribute `tfm.kv_cache` with the same name) after the
// layer's new keys (after RoPE) and values were written at `pos` with
// tfm.kv_cache_write. Attention then reads the whole cache with
// `offset = pos`: causality masks the slots not written yet.
//
// With `perSequencePositions` (ragged batches), @decode takes
// `%positions: tensor<Bxi64> {tfm.input = "positions"}` instead: each
// sequence's token is written at, embedded at and attends from its own
// position. @prefill keeps one position: right-padded prompts of different
// lengths share each chunk's positions, and causality already keeps every
// real token from seeing the padding after it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TARGET_HUGGINGFACE_IMPORTMODEL_H
#define TFM_TARGET_HUGGINGFACE_IMPORTMODEL_H

#include "tfm/Runtime/DType.h"
#include "tfm/Target/HuggingFace/ModelConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>

namespace mlir {
class MLIRContext;
namespace tfm::hf {

struct ImportOptions {
  /// B.
  int64_t batch = 1;
  /// S of @forward and @prefill; 0 picks min(128, context length).
  int64_t seqLen = 0;
  /// S_max of the KV cache; 0 emits @forward only.
  int64_t kvCacheLength = 0;
  /// @decode takes a position per sequence (ragged batches) rather than one.
  bool perSequencePositions = false;
  /// longrope: rotate by the long factors (true) or the short ones (false)
  /// whatever the entries' lengths; unset, by the longest sequence an entry
  /// serves (its prompt, or generation's KV cache). transformers picks them
  /// per forward call, which a generation that crosses the original context
  /// follows with two sets of entries (HuggingFaceModel::generate).
  std::optional<bool> longRoPEFactors;
  /// @prefill returns the logits of one position per sequence, [B, 1, V],
  /// chosen by its `logit_positions` argument ([B] of i64, a row of the
  /// chunk each), rather than of all S: generation reads only each prompt's
  /// last position, and the LM head of every position is most of a short
  /// model's prefill (tfm.gather_positions).
  bool prefillLastLogits = false;
  /// The type activations, parameters and KV caches are computed and held
  /// in: f32, bf16 or f16. Half-precision models still accumulate and keep
  /// statistics in f32 (the lowering's rule), and return f32 logits: the
  /// LM head's output rounded to the compute type as Hugging Face's is,
  /// then widened (tfm.convert).
  runtime::DType computeType = runtime::DType::F32;
  /// When set, only decoder layer `block` is built instead of the entries:
  /// `@<model_type>_block_<layer>(hidden [B,S,d], params...) -> hidden`, a
  /// `tfm.block` function (no KV cache) for the ledger and for studying one
  /// layer's code.
  std::optional<int64_t> block;
};

/// The sequence length `options` resolve to for `config`.
int64_t getSeqLen(const ModelConfig &config, const ImportOptions &options);

/// Builds and verifies the module. Errors (sizes that do not fit the model's
/// context, non-positive sizes, a compute type that is not a float of 16 or
/// 32 bits) read "<option>: <what is wrong>". The context
/// must have the tfm and func dialects loaded.
llvm::Expected<OwningOpRef<ModuleOp>>
importModel(MLIRContext &context, const ModelConfig &config,
            const ImportOptions &options);

} // namespace tfm::hf
} // namespace mlir

#endif // TFM_TARGET_HUGGINGFACE_IMPORTMODEL_H

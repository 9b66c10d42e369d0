//===- Qwen.cpp - Qwen 2, Qwen 3 and Qwen3-MoE ----------------------------===//
//
// Qwen2ForCausalLM, Qwen3ForCausalLM and Qwen3MoeForCausalLM: read here,
// built by the Llama family's block (Families/Llama.cpp): q/k/v biases
// (Qwen 2), per-head q/k RMSNorms (Qwen 3), sliding windows from
// max_window_layers on, and (Qwen3-MoE) sparse layers of experts.
//
//===----------------------------------------------------------------------===//
#include "Families.h"
#include "tfm/Runtime/Json.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::hf;

//===----------------------------------------------------------------------===//
// config.json
//===----------------------------------------------------------------------===//

/// Qwen2 always has q/k/v biases and no o_proj bias; Qwen3 has per-head q/k
/// RMSNorm and Llama's `attention_bias`. Both slide a window over the layers
/// from `max_window_layers` on, when `use_sliding_window` turns it on (as
/// transformers 5's Qwen2Config derives `layer_types`; a `layer_types` in
/// the file overrides that rule in readLayerTypes). transformers 4.46's
/// eager/sdpa mask applied `sliding_window` to every layer even when it was
/// off, which is not the model its authors trained; published Qwen2/2.5
/// configs set it to at least max_position_embeddings, where it masks
/// nothing.
static void readQwenExtras(FieldReader &r, ModelConfig &c) {
  bool qwen3 =
      c.family == ModelFamily::Qwen3 || c.family == ModelFamily::Qwen3MoE;
  if (qwen3) {
    c.qkNorm = true;
    c.attentionBias = r.boolOr("attention_bias", false);
  } else {
    c.qkvBias = true;
  }
  bool useWindow = r.boolOr("use_sliding_window", false);
  int64_t window =
      r.isNull("sliding_window") ? 0 : r.sizeOr("sliding_window", 4096);
  int64_t firstSlidingLayer = r.isNull("max_window_layers")
                                  ? 28
                                  : r.sizeOr("max_window_layers", 28);
  // Qwen2-VL's multimodal RoPE sections; Qwen2.5 configs say false.
  r.rejectTrue("use_mrope", "tfm implements 1-D RoPE (multimodal RoPE "
                            "sections are Qwen2-VL's); it must be false");
  if (!useWindow)
    return;
  if (window == 0)
    return r.fail("sliding_window", "null, but use_sliding_window is true; "
                                    "give the window's size");
  c.slidingWindow = window;
  // Qwen3-MoE slides every layer (transformers 5 has no layer_types for it
  // and ignores max_window_layers).
  if (c.family == ModelFamily::Qwen3MoE)
    firstSlidingLayer = 0;
  c.slidingLayers.assign(c.numLayers, false);
  for (int64_t i = firstSlidingLayer; i < c.numLayers; ++i)
    c.slidingLayers[i] = true;
}

/// Qwen3MoeConfig: a layer is sparse unless `mlp_only_layers` lists it or
/// (i + 1) is not a multiple of `decoder_sparse_step`; sparse layers have
/// `num_experts` experts of width `moe_intermediate_size`, dense ones an
/// MLP of `intermediate_size`. transformers 5 names the count
/// `num_local_experts` (its attribute_map), 4.x `num_experts`.
static void readQwen3MoEExtras(FieldReader &r, ModelConfig &c) {
  StringRef type = "qwen3_moe";
  bool modern = r.lookup("num_local_experts") != nullptr;
  c.numExperts = r.requiredCount(modern ? "num_local_experts" : "num_experts",
                                 type, kMaxExperts);
  if (modern && r.lookup("num_experts"))
    if (r.sizeOr("num_experts", c.numExperts) != c.numExperts)
      r.fail("num_experts", llvm::formatv("disagrees with num_local_experts = "
                                          "{0}",
                                          c.numExperts));
  c.numExpertsPerToken = r.requiredSize("num_experts_per_tok", type);
  c.expertIntermediateSize = r.requiredSize("moe_intermediate_size", type);
  c.normalizeTopK = r.boolOr("norm_topk_prob", false);
  int64_t step = r.sizeOr("decoder_sparse_step", 1);
  c.sparseLayers.assign(c.numLayers, false);
  for (int64_t i = 0; i < c.numLayers; ++i)
    c.sparseLayers[i] = (i + 1) % step == 0;
  if (const json::Value *value = r.lookup("mlp_only_layers")) {
    const json::Array *layers = value->getAsArray();
    if (!layers)
      return r.fail("mlp_only_layers",
                    "expected an array of layer indices, got " +
                        describe(*value));
    for (auto [i, entry] : llvm::enumerate(*layers)) {
      std::optional<int64_t> layer = mlir::tfm::runtime::getJsonInteger(entry);
      if (!layer || *layer < 0 || *layer >= c.numLayers)
        return r.fail(llvm::formatv("mlp_only_layers[{0}]", i).str(),
                      llvm::formatv("expected a layer index below "
                                    "num_hidden_layers = {0}, got {1}",
                                    c.numLayers, describe(entry)));
      c.sparseLayers[*layer] = false;
    }
  }
  (void)r.lookup("router_aux_loss_coef");
}

/// Qwen2Config and Qwen3Config default num_key_value_heads to 32; Qwen3's
/// head_dim defaults to 128 rather than d / H.
void mlir::tfm::hf::readQwen2Config(FieldReader &r, ModelConfig &c) {
  LlamaLikeDefaults defaults;
  defaults.kvHeads = 32;
  readLlamaLike(r, c, defaults, readQwenExtras);
}

void mlir::tfm::hf::readQwen3Config(FieldReader &r, ModelConfig &c) {
  LlamaLikeDefaults defaults;
  defaults.kvHeads = 32;
  defaults.headDim = 128;
  readLlamaLike(r, c, defaults, readQwenExtras);
}

void mlir::tfm::hf::readQwen3MoEConfig(FieldReader &r, ModelConfig &c) {
  LlamaLikeDefaults defaults;
  defaults.kvHeads = 32;
  defaults.expertsKey = "num_experts";
  readLlamaLike(r, c, defaults, [](FieldReader &r, ModelConfig &c) {
    readQwenExtras(r, c);
    readQwen3MoEExtras(r, c);
  });
}


//===- ModelConfig.h - a Hugging Face config.json, checked ------*- C++ -*-===//
//
// The architecture described by a Hugging Face `config.json`, reduced to what
// changes the math of a decoder-only model, after every field has been checked.
//
// Reading is strict where being lenient would build a different model than
// PyTorch runs: a field whose value tfm cannot honour (an unknown RoPE
// scaling or layer type, quantized weights, GPT-2's per-layer attention
// scaling, ...) is an error naming the field, as is a missing size
// or a value of the wrong JSON type, and so is a field that changes the math
// in another family where this family does not read it (a Mistral
// `sliding_window` in a llama config). Fields known not to change inference
// (dropouts, token ids, `architectures`, `torch_dtype`, ...) are accepted
// silently; any other field is accepted with a warning, since the importer
// cannot know what it means.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TARGET_HUGGINGFACE_MODELCONFIG_H
#define TFM_TARGET_HUGGINGFACE_MODELCONFIG_H

#include "tfm/Runtime/Gptq.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::tfm::hf {

/// The Hugging Face architectures tfm imports.
enum class ModelFamily {
  /// GPT2LMHeadModel: learned positions, pre-LN LayerNorm, fused c_attn,
  /// GELU MLP, Conv1D weights stored [in, out].
  GPT2,
  /// LlamaForCausalLM: RMSNorm, RoPE, GQA, SwiGLU MLP, nn.Linear [out, in].
  Llama,
  /// MixtralForCausalLM: Llama's attention with a top-k sparse MoE MLP.
  Mixtral,
  /// MistralForCausalLM: Llama with an optional sliding-window attention.
  Mistral,
  /// Qwen2ForCausalLM (Qwen2, Qwen2.5): Llama with q/k/v biases (no o_proj
  /// bias).
  Qwen2,
  /// Qwen3ForCausalLM: Llama with a per-head RMSNorm of q and k before RoPE
  /// (`q_norm`, `k_norm`) and an independent `head_dim`.
  Qwen3,
  /// GemmaForCausalLM: Llama's layout with a GeGLU MLP, RMSNorm scaled by
  /// (1 + w), embeddings times sqrt(d), a tied head.
  Gemma,
  /// Phi3ForCausalLM: Llama's math with fused qkv_proj and gate_up_proj.
  Phi3,
  /// GPTNeoXForCausalLM (Pythia): LayerNorm, partial rotary, a QKV weight
  /// interleaved per head, parallel or sequential residual, untied embed_out.
  GPTNeoX,
  /// OPTForCausalLM: learned positions offset by 2, ReLU MLP, pre- or
  /// post-LN blocks, optional project_in/project_out.
  OPT,
  /// Gemma2ForCausalLM: Gemma with a norm after each sublayer too
  /// (pre/post "sandwich" norms), local (sliding) and global layers
  /// alternating, tanh softcapping of attention scores and final logits,
  /// and a softmax scale from `query_pre_attn_scalar`.
  Gemma2,
  /// Gemma3ForCausalLM (`gemma3_text`): Gemma 2's layers with per-head
  /// (1 + w) q/k RMSNorms, five local layers per global one, and a RoPE
  /// base of their own on the local layers (`rope_local_base_freq`).
  Gemma3,
  /// Qwen3MoeForCausalLM: Qwen3's attention with sparse MoE layers (softmax
  /// over all experts, top-k, renormalised only with `norm_topk_prob`) and
  /// dense ones (`mlp_only_layers`, `decoder_sparse_step`).
  Qwen3MoE,
  /// Olmo2ForCausalLM: Llama with norms after the sublayers instead of
  /// before them, and RMSNorms of the whole q and k projections.
  Olmo2,
};

/// Hugging Face `rope_scaling` / `rope_parameters.rope_type`: how the RoPE
/// frequencies are derived from `theta`.
enum class RoPEScaling {
  /// "default" or absent: inv_freq[i] = theta^(-2i/dh).
  None,
  /// "linear": every frequency divided by `factor` (positions interpolated).
  Linear,
  /// "llama3": low frequencies divided by `factor`, high ones kept, a smooth
  /// blend between (Llama 3.1 / 3.2).
  Llama3,
  /// "yarn" (Qwen2.5, DeepSeek-distilled models): frequencies blended
  /// between interpolated and original by a ramp over the dimensions set by
  /// `beta_fast`/`beta_slow`, cos and sin times an attention factor.
  Yarn,
  /// "longrope" (Phi-3/3.5 128k; Phi-3's "su"): per-dimension `short_factor`
  /// or `long_factor` divisors, the long ones once a sequence is longer than
  /// `original_max_position_embeddings`; cos and sin times an attention
  /// factor.
  LongRoPE,
  /// "gguf_rope_freqs", tfm's own: per-dimension `factors` dividing each
  /// frequency, llama.cpp's `rope_freqs` tensor (how its converter stores
  /// Llama 3.1's scaling in a GGUF file; GgufModel.cpp writes it).
  FreqFactors,
};

/// The MLP activation (GPT-2's `activation_function`, Llama's `hidden_act`).
enum class Activation {
  /// `gelu_new` / `gelu_pytorch_tanh` / `gelu_fast`: the tanh approximation.
  GeluTanh,
  /// `gelu`: the exact erf form.
  GeluExact,
  /// `silu`: the SwiGLU gate of Llama and Mixtral.
  SiLU,
  /// `relu`: OPT.
  ReLU,
};

struct ModelConfig {
  ModelFamily family = ModelFamily::GPT2;
  /// `model_type` as written in the file.
  std::string modelType;

  int64_t vocabSize = 0;
  /// d: `n_embd` / `hidden_size`.
  int64_t hiddenSize = 0;
  int64_t numLayers = 0;
  int64_t numHeads = 0;
  /// Hkv: `num_key_value_heads`, or `numHeads` (GPT-2 is always MHA).
  int64_t numKVHeads = 0;
  /// dh: Llama/Mixtral `head_dim`, or `hiddenSize / numHeads`.
  int64_t headDim = 0;
  /// m: the MLP (or each expert's) width.
  int64_t intermediateSize = 0;
  /// The context length, and the name of the field it came from
  /// (`n_positions`, `n_ctx` or `max_position_embeddings`) for messages.
  int64_t maxPositions = 0;
  std::string maxPositionsField;

  /// LayerNorm / RMSNorm epsilon.
  double normEps = 0;
  /// RoPE base (Llama, Mixtral).
  double ropeTheta = 10000.0;
  /// RoPE frequency scaling and its settings (`factor` for linear and
  /// llama3; the others for llama3 only).
  RoPEScaling ropeScaling = RoPEScaling::None;
  double ropeFactor = 1.0;
  double ropeLowFreqFactor = 1.0;
  double ropeHighFreqFactor = 4.0;
  int64_t ropeOriginalMaxPositions = 0;
  /// yarn: the rotations that bound the blended dimensions, and whether the
  /// bounds are rounded outwards to whole dimensions (`truncate`).
  double ropeBetaFast = 32.0;
  double ropeBetaSlow = 1.0;
  bool ropeTruncate = true;
  /// longrope: one divisor per rotated pair, for sequences up to
  /// ropeOriginalMaxPositions (short) and beyond (long).
  std::vector<double> ropeShortFactor, ropeLongFactor;
  /// gguf_rope_freqs' divisors, one per rotated pair.
  std::vector<double> ropeFreqFactors;
  /// yarn and longrope: what cos and sin are multiplied by (1 otherwise).
  double ropeAttentionFactor = 1.0;
  /// The sliding window (Mistral and Phi-3 `sliding_window`, Qwen's with
  /// `use_sliding_window`): a query of a sliding layer attends to its last W
  /// positions (itself included); 0 for full causal attention everywhere.
  int64_t slidingWindow = 0;
  /// Per layer (numLayers entries once parsed): whether the layer attends
  /// through `slidingWindow` ("sliding_attention" in transformers 5's
  /// `layer_types`; Qwen's layers from `max_window_layers` on; every layer
  /// of a Mistral or Phi-3 with a window).
  std::vector<bool> slidingLayers;
  /// Qwen2: biases on q/k/v_proj only (`attentionBias` puts them on o_proj
  /// too).
  bool qkvBias = false;
  /// Qwen3: per-head RMSNorm of queries and keys before RoPE.
  bool qkNorm = false;
  Activation activation = Activation::GeluTanh;
  /// Whether the LM head reuses the token embedding matrix.
  bool tieWordEmbeddings = false;
  /// Llama: biases on q/k/v/o_proj (`attention_bias`) and on
  /// gate/up/down_proj (`mlp_bias`). GPT-2 always has biases.
  bool attentionBias = false;
  bool mlpBias = false;
  /// GPT-2 `scale_attn_weights`: false means no 1/sqrt(dh) softmax scale.
  bool scaleAttnWeights = true;

  /// Mixtral, Qwen3-MoE: experts per layer and experts run per token.
  int64_t numExperts = 0;
  int64_t numExpertsPerToken = 0;
  /// Qwen3-MoE: each expert's width (`moe_intermediate_size`;
  /// intermediateSize is the dense layers'), whether the top-k weights are
  /// renormalised, and which layers are sparse (numLayers entries).
  int64_t expertIntermediateSize = 0;
  bool normalizeTopK = true;
  std::vector<bool> sparseLayers;

  /// Gemma 2/3: tanh softcapping of the attention scores and of the final
  /// logits (`c * tanh(x / c)`; 0: none), and the softmax scale
  /// `query_pre_attn_scalar^-1/2` (0: 1/sqrt(dh)).
  double attnLogitSoftcap = 0;
  double finalLogitSoftcap = 0;
  double queryPreAttnScalar = 0;
  /// Gemma 3: the RoPE base of the local (sliding) layers, which take no
  /// RoPE scaling; the global layers use ropeTheta and the scaling.
  double ropeLocalTheta = 0;

  /// Rotated elements of each head (GPT-NeoX `rotary_pct`); 0: all of dh.
  int64_t rotaryDims = 0;
  /// GPT-NeoX `use_parallel_residual`: x + attn(ln1(x)) + mlp(ln2(x)).
  bool parallelResidual = false;
  /// OPT `do_layer_norm_before`: false makes blocks post-LN.
  bool normBeforeBlock = true;
  /// OPT: whether the decoder ends in a final LayerNorm.
  bool finalNorm = true;
  /// OPT `word_embed_proj_dim`: the embedding width, projected to and from
  /// hiddenSize when it differs.
  int64_t wordEmbedProjDim = 0;
  /// Learned position rows skipped before position 0 (OPT: 2).
  int64_t positionOffset = 0;

  /// The sliding window of layer `layer`, or 0 where it attends to every
  /// earlier position.
  int64_t getLayerWindow(int64_t layer) const {
    return layer >= 0 && size_t(layer) < slidingLayers.size() &&
                   slidingLayers[layer]
               ? slidingWindow
               : 0;
  }

  /// Fields present in the file that the importer does not know; they were
  /// ignored, and the caller should say so.
  std::vector<std::string> unknownFields;

  /// `quantization_config` of a GPTQ or AWQ checkpoint: its linear layers
  /// stored as `qweight`/`qzeros`/`scales` (and GPTQ's `g_idx`), in `bits`
  /// with one f16 scale and zero point per `groupSize` input rows
  /// (tfm/Runtime/Gptq.h).
  std::optional<runtime::PackedIntFormat> packedInts;
};

/// The `dh/2` RoPE inverse frequencies of `config`, in f32 and computed as
/// transformers does (`_compute_default_rope_parameters` and the scaled
/// variants; yarn and longrope as in transformers 5), for configs whose
/// `ropeScaling` is not None. `maxLength` is the longest sequence the
/// frequencies serve: longrope takes its long factors beyond
/// `original_max_position_embeddings`, as transformers does by the largest
/// position of a forward pass.
std::vector<float> computeRoPEInverseFrequencies(const ModelConfig &config,
                                                 int64_t maxLength = 0);

/// Parses and checks the text of a `config.json`. Errors read
/// "<field>: <what is wrong>" (or "invalid JSON: ..."), for the caller to
/// prefix with the file name.
llvm::Expected<ModelConfig> parseModelConfig(llvm::StringRef jsonText);

/// "gpt2", "llama", "mixtral", "mistral", "qwen2", "qwen3", "gemma", "phi3",
/// "gpt_neox", "opt", "gemma2", "gemma3_text", "qwen3_moe", "olmo2".
llvm::StringRef getFamilyName(ModelFamily family);

} // namespace mlir::tfm::hf

#endif // TFM_TARGET_HUGGINGFACE_MODELCONFIG_H

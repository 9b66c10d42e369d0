//===- ModelConfig.h - a Hugging Face config.json, checked ------*- C++ -*-===//
//
// The architecture described by a Hugging Face `config.json`, reduced to what
// changes the math of a decoder-only model, after every field has been checked.
//
// Reading is strict where being lenient would build a different model than
// PyTorch runs: a field whose value tfm cannot honour (yarn RoPE scaling,
// Qwen's per-layer sliding windows, quantized weights, GPT-2's per-layer
// attention scaling, ...) is an error naming the field, as is a missing size
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
  /// Mistral and Phi-3 `sliding_window`: each query attends to its last W
  /// positions (itself included); 0 for full causal attention.
  int64_t slidingWindow = 0;
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

  /// Mixtral: experts per layer and experts run per token.
  int64_t numExperts = 0;
  int64_t numExpertsPerToken = 0;

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

  /// Fields present in the file that the importer does not know; they were
  /// ignored, and the caller should say so.
  std::vector<std::string> unknownFields;
};

/// The `dh/2` RoPE inverse frequencies of `config`, in f32 and computed as
/// transformers 4.46 does (`_compute_default_rope_parameters` and the scaled
/// variants), for configs whose `ropeScaling` is not None.
std::vector<float> computeRoPEInverseFrequencies(const ModelConfig &config);

/// Parses and checks the text of a `config.json`. Errors read
/// "<field>: <what is wrong>" (or "invalid JSON: ..."), for the caller to
/// prefix with the file name.
llvm::Expected<ModelConfig> parseModelConfig(llvm::StringRef jsonText);

/// "gpt2", "llama", "mixtral", "mistral", "qwen2", "qwen3", "gemma", "phi3",
/// "gpt_neox", "opt".
llvm::StringRef getFamilyName(ModelFamily family);

} // namespace mlir::tfm::hf

#endif // TFM_TARGET_HUGGINGFACE_MODELCONFIG_H

//===- ModelConfig.h - a Hugging Face config.json, checked ------*- C++ -*-===//
//
// The architecture described by a Hugging Face `config.json`, reduced to what
// changes the math of a decoder-only model, after every field has been checked.
//
// Reading is strict where being lenient would build a different model than
// PyTorch runs: a field whose value tfm cannot honour (RoPE scaling, a
// sliding window, quantized weights, GPT-2's per-layer attention scaling, ...)
// is an error naming the field, as is a missing size or a value of the wrong
// JSON type. Fields known not to change inference (dropouts, token ids,
// `architectures`, `torch_dtype`, ...) are accepted silently; any other field
// is accepted with a warning, since the importer cannot know what it means.
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
  /// Phi-3 `sliding_window`: keys more than this many positions back are
  /// masked; 0 when absent. Imports whose sequences never reach that far
  /// are exact without a windowed mask; ImportModel checks it.
  int64_t slidingWindow = 0;

  /// Fields present in the file that the importer does not know; they were
  /// ignored, and the caller should say so.
  std::vector<std::string> unknownFields;
};

/// Parses and checks the text of a `config.json`. Errors read
/// "<field>: <what is wrong>" (or "invalid JSON: ..."), for the caller to
/// prefix with the file name.
llvm::Expected<ModelConfig> parseModelConfig(llvm::StringRef jsonText);

/// "gpt2", "llama", "mixtral", "gemma", "phi3", "gpt_neox", "opt".
llvm::StringRef getFamilyName(ModelFamily family);

} // namespace mlir::tfm::hf

#endif // TFM_TARGET_HUGGINGFACE_MODELCONFIG_H

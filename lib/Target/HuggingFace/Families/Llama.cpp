//===- Llama.cpp - Llama, Mistral and Mixtral -----------------------------===//
//
// LlamaForCausalLM, MistralForCausalLM and MixtralForCausalLM, and the
// Llama-like reader and decoder block the Qwen and OLMo 2 families build on:
// RMSNorms, separate q/k/v projections with GQA, RoPE, and a SwiGLU MLP or
// (Mixtral) a mixture of SwiGLU experts.
//
//===----------------------------------------------------------------------===//
#include "Families.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::hf;

//===----------------------------------------------------------------------===//
// config.json
//===----------------------------------------------------------------------===//

static void readLlamaExtras(FieldReader &r, ModelConfig &c) {
  c.attentionBias = r.boolOr("attention_bias", false);
  c.mlpBias = r.boolOr("mlp_bias", false);
  int64_t tp = r.sizeOr("pretraining_tp", 1);
  if (tp > 1)
    r.fail("pretraining_tp",
           llvm::formatv("{0} is not supported: it splits the projections "
                         "into slices whose sum only approximates the "
                         "unsplit model; it must be 1",
                         tp));
}

static void readMixtralExtras(FieldReader &r, ModelConfig &c) {
  c.numExperts = r.requiredCount("num_local_experts", "mixtral", kMaxExperts);
  c.numExpertsPerToken = r.requiredSize("num_experts_per_tok", "mixtral");
  r.rejectNonNull("sliding_window",
                  "tfm implements full causal attention for mixtral "
                  "(sliding_window must be null)");
}

/// MistralConfig defaults `sliding_window` to 4096; null means full causal
/// attention.
static void readMistralExtras(FieldReader &r, ModelConfig &c) {
  c.slidingWindow = r.isNull("sliding_window")
                        ? 0
                        : r.sizeOr("sliding_window", 4096);
}

void mlir::tfm::hf::readLlamaLike(FieldReader &r, ModelConfig &c,
                                  const LlamaLikeDefaults &defaults,
                                  void (*readExtras)(FieldReader &,
                                                     ModelConfig &)) {
  StringRef type = c.modelType;
  readDecoderSizes(r, c, type);
  c.numKVHeads = r.sizeOr("num_key_value_heads",
                          defaults.kvHeads ? defaults.kvHeads : c.numHeads);
  bool explicitHeadDim =
      r.lookup("head_dim") != nullptr || defaults.headDim != 0;
  c.headDim = r.sizeOr("head_dim", defaults.headDim
                                       ? defaults.headDim
                                       : c.hiddenSize / c.numHeads);
  c.normEps = r.numberOr("rms_norm_eps", defaults.normEps,
                         /*positive=*/true, /*below=*/1.0);

  readActivation(r, c, "hidden_act", "silu",
                 {{"silu", Activation::SiLU}, {"swish", Activation::SiLU}},
                 "silu for " + type);

  readRoPE(r, c, defaults.ropeTheta);
  c.tieWordEmbeddings = r.boolOr("tie_word_embeddings", false);
  readExtras(r, c);

  if (r.failed())
    return;
  checkHeads(r, c, explicitHeadDim, " (and no head_dim is given)");
  checkEvenRoPEHead(r, c, explicitHeadDim ? "head_dim" : "num_attention_heads");
  if (r.failed())
    return;
  if (!defaults.expertsKey.empty() && c.numExpertsPerToken > c.numExperts)
    return r.fail("num_experts_per_tok",
                  llvm::formatv("{0} exceeds {1} = {2}", c.numExpertsPerToken,
                                defaults.expertsKey, c.numExperts));
}

// LlamaConfig: num_key_value_heads None -> MHA.
void mlir::tfm::hf::readLlamaConfig(FieldReader &r, ModelConfig &c) {
  readLlamaLike(r, c, LlamaLikeDefaults{}, readLlamaExtras);
}

void mlir::tfm::hf::readMistralConfig(FieldReader &r, ModelConfig &c) {
  LlamaLikeDefaults defaults;
  defaults.kvHeads = 8;
  readLlamaLike(r, c, defaults, readMistralExtras);
}

void mlir::tfm::hf::readMixtralConfig(FieldReader &r, ModelConfig &c) {
  LlamaLikeDefaults defaults;
  defaults.kvHeads = 8;
  defaults.normEps = 1e-5;
  defaults.ropeTheta = 1e6;
  defaults.expertsKey = "num_local_experts";
  readLlamaLike(r, c, defaults, readMixtralExtras);
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

/// Llama, Mistral, Mixtral, Qwen 2 and 3, Qwen3-MoE (the block below, its
/// MLP a mixture of experts in Mixtral and Qwen3-MoE's sparse layers) and
/// OLMo 2 (its own block).
Value EntryBuilder::buildLlama() {
  int64_t d = c.hiddenSize;
  Value h = embedTokens("model.embed_tokens", d);
  h = decoderLayers(h);
  h = rmsNorm(h, "model.norm", /*unitOffset=*/false);
  return lmHead(h, "lm_head", d);
}

Value EntryBuilder::llamaBlock(int64_t layer, Value h) {
  std::string p = llvm::formatv("model.layers.{0}.", layer).str();
  std::string attn = p + "self_attn";
  int64_t d = c.hiddenSize, m = c.intermediateSize, dh = c.headDim;
  int64_t qWidth = c.numHeads * dh, kvWidth = c.numKVHeads * dh;
  const WeightLayout outIn = WeightLayout::out_in;

  // Attention: separate q/k/v projections; k and v have Hkv heads (GQA/MQA)
  // and the head size need not be d / H. Qwen2 has biases on q/k/v only.
  bool qkvBias = c.attentionBias || c.qkvBias;
  Value x = rmsNorm(h, p + "input_layernorm", /*unitOffset=*/false);
  Value q = linear(x, attn + ".q_proj", d, qWidth, outIn, qkvBias);
  Value k = linear(x, attn + ".k_proj", d, kvWidth, outIn, qkvBias);
  Value v = linear(x, attn + ".v_proj", d, kvWidth, outIn, qkvBias);
  Value a = selfAttention(layer, attn, q, k, v,
                          c.qkNorm ? Positions::NormedRotary
                                   : Positions::Rotary);
  a = linear(a, attn + ".o_proj", qWidth, d, outIn, c.attentionBias);
  h = residual(h, a, attn + ".residual");

  x = rmsNorm(h, p + "post_attention_layernorm", /*unitOffset=*/false);
  bool sparse = c.family == ModelFamily::Mixtral ||
                (c.family == ModelFamily::Qwen3MoE && c.sparseLayers[layer]);
  if (sparse) {
    // Router [E, d], then per expert its gate, up and down weights (Mixtral's
    // w1, w3, w2; Qwen3-MoE's of width moe_intermediate_size): tfm.moe's
    // operand order, under the family's names.
    const runtime::ExpertTensorNames &names = getFamily(c.family).experts;
    std::string moe = p + names.module.str();
    int64_t me =
        c.family == ModelFamily::Mixtral ? m : c.expertIntermediateSize;
    Value router = param(moe + ".gate.weight", {c.numExperts, d});
    SmallVector<Value> experts;
    for (int64_t e = 0; e < c.numExperts; ++e) {
      std::string expert = llvm::formatv("{0}.experts.{1}.", moe, e).str();
      experts.push_back(param(expert + names.gate, {me, d}));
      experts.push_back(param(expert + names.up, {me, d}));
      experts.push_back(param(expert + names.down, {d, me}));
    }
    x = MoEOp::create(b, loc(moe), x.getType(), x, router, experts,
                      /*first_expert=*/Value(),
                      static_cast<uint64_t>(c.numExpertsPerToken),
                      c.normalizeTopK);
    return residual(h, x, moe + ".residual");
  }
  std::string mlp = p + "mlp";
  x = swigluMLP(x, mlp, m);
  return residual(h, x, mlp + ".residual");
}

//===- Gemma.cpp - Gemma, Gemma 2 and Gemma 3 (text) ----------------------===//
//
// GemmaForCausalLM, Gemma2ForCausalLM and Gemma3ForCausalLM (gemma3_text):
// embeddings scaled by sqrt(d), (1 + w) RMSNorms and a GeGLU MLP; Gemma 2
// and 3 add sandwich norms, softcapping, local/global layers and (Gemma 3)
// per-head q/k norms.
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

/// GemmaConfig: head_dim defaults to 256 whatever d is; the MLP activation
/// is `hidden_activation`, and transformers ignores `hidden_act` (falling
/// back to the tanh GELU) when that is absent.
/// The sizes, norm and MLP activation every Gemma generation reads alike.
static void readGemmaCommon(FieldReader &r, ModelConfig &c, StringRef type) {
  readDecoderSizes(r, c, type);
  // GemmaConfig's default (16) is not "one per query head": a config that
  // leaves it out means a different model than its heads suggest.
  c.numKVHeads = r.requiredSize("num_key_value_heads", type);
  c.headDim = r.sizeOr("head_dim", 256);
  c.normEps = r.numberOr("rms_norm_eps", 1e-6, /*positive=*/true,
                         /*below=*/1.0);
  // Read for the record only: GemmaMLP does not look at it.
  (void)r.lookup("hidden_act");
  readActivation(r, c, "hidden_activation", "gelu_pytorch_tanh",
                 {{"gelu_pytorch_tanh", Activation::GeluTanh},
                  {"gelu_new", Activation::GeluTanh},
                  {"gelu_fast", Activation::GeluTanh},
                  {"gelu", Activation::GeluExact}},
                 "gelu_pytorch_tanh, gelu_new, gelu_fast and gelu for " + type);
}

void mlir::tfm::hf::readGemmaConfig(FieldReader &r, ModelConfig &c) {
  StringRef type = "gemma";
  readGemmaCommon(r, c, type);
  rejectRoPEScaling(r, type);
  readRoPE(r, c, 10000.0);
  c.tieWordEmbeddings = r.boolOr("tie_word_embeddings", true);
  c.attentionBias = r.boolOr("attention_bias", false);
  if (r.failed())
    return;
  checkHeads(r, c, /*explicitHeadDim=*/true);
  checkEvenRoPEHead(r, c, "head_dim");
}

/// Gemma 3's RoPE in transformers 5: `rope_parameters` nested by layer
/// type, {"full_attention": {...}, "sliding_attention": {...}}; the local
/// layers' object may only give a base. Returns false when the object is
/// not nested (read as the flat layout by readRoPE).
static bool readNestedGemma3RoPE(FieldReader &r, ModelConfig &c) {
  const json::Value *value = r.lookup("rope_parameters");
  const json::Object *object = value ? value->getAsObject() : nullptr;
  if (!object || !(object->get("full_attention") ||
                   object->get("sliding_attention")))
    return false;
  for (const auto &entry : *object) {
    StringRef key = entry.first;
    const json::Object *inner = entry.second.getAsObject();
    std::string field = ("rope_parameters." + key).str();
    if (key != "full_attention" && key != "sliding_attention") {
      r.fail(field, "is not a layer type; gemma3_text nests "
                    "\"full_attention\" and \"sliding_attention\"");
      return true;
    }
    if (!inner) {
      r.fail(field, "expected an object, got " + describe(entry.second));
      return true;
    }
    if (key == "full_attention") {
      readRoPEObject(r, field, *inner, c, /*withTheta=*/true);
      continue;
    }
    // The local layers' RoPE: a base and no scaling.
    ModelConfig local = c;
    local.ropeTheta = c.ropeLocalTheta;
    readRoPEObject(r, field, *inner, local, /*withTheta=*/true);
    if (!r.failed() && local.ropeScaling != RoPEScaling::None)
      r.fail(field, "a scaling of the local layers' RoPE is not supported; "
                    "transformers scales only the global layers");
    c.ropeLocalTheta = local.ropeTheta;
  }
  return true;
}

/// Gemma2Config and Gemma3TextConfig: Gemma's sizes with sandwich norms,
/// softcapping and alternating local/global layers. Where transformers 4.x
/// and 5.x default a field differently (Gemma 2's query_pre_attn_scalar:
/// 224 and 256) the file must give it; published configs all do.
static void readGemma2Or3(FieldReader &r, ModelConfig &c) {
  bool gemma3 = c.family == ModelFamily::Gemma3;
  std::string type = c.modelType;
  readGemmaCommon(r, c, type);
  if (gemma3) {
    c.queryPreAttnScalar = r.numberOr("query_pre_attn_scalar", 256,
                                      /*positive=*/true);
  } else if (!r.lookup("query_pre_attn_scalar")) {
    r.fail("query_pre_attn_scalar",
           "missing; transformers 4.x and 5.x default it differently (224 "
           "and 256), so a gemma2 config must give it");
  } else {
    c.queryPreAttnScalar =
        r.numberOr("query_pre_attn_scalar", 256, /*positive=*/true);
  }
  // Null turns softcapping off; Gemma 2 caps by default, Gemma 3 does not.
  auto softcap = [&](StringRef key, double gemma2Default) {
    if (r.isNull(key))
      return 0.0;
    return r.numberOr(key, gemma3 ? 0.0 : gemma2Default, /*positive=*/true);
  };
  c.attnLogitSoftcap = softcap("attn_logit_softcapping", 50.0);
  c.finalLogitSoftcap = softcap("final_logit_softcapping", 30.0);
  // transformers' Gemma3Attention keeps attn_logit_softcapping but never
  // applies it (4.57 and 5.17 alike): the checkpoints were trained and are
  // run without it.
  if (gemma3)
    c.attnLogitSoftcap = 0;
  c.slidingWindow =
      r.isNull("sliding_window") ? 0 : r.sizeOr("sliding_window", 4096);
  // Early Gemma 2 configs (9B, 27B) repeat the window as
  // `sliding_window_size`, which transformers does not read.
  if (r.lookup("sliding_window_size") &&
      r.sizeOr("sliding_window_size", c.slidingWindow) != c.slidingWindow)
    r.fail("sliding_window_size",
           llvm::formatv("disagrees with sliding_window = {0}",
                         c.slidingWindow));
  // The default layer types: Gemma 2 slides the even layers; Gemma 3 all but
  // every sliding_window_pattern-th.
  // (transformers 5 writes layer_types, and the pattern as
  // `_sliding_window_pattern` beside it.)
  int64_t pattern =
      gemma3 ? r.sizeOr("sliding_window_pattern",
                        r.sizeOr("_sliding_window_pattern", 6))
             : 2;
  if (c.slidingWindow > 0) {
    c.slidingLayers.assign(c.numLayers, false);
    for (int64_t i = 0; i < c.numLayers; ++i)
      c.slidingLayers[i] = (i + 1) % pattern != 0;
  }
  if (gemma3) {
    c.ropeTheta = 1e6;
    c.ropeLocalTheta =
        r.numberOr("rope_local_base_freq", 10000.0, /*positive=*/true);
    if (!readNestedGemma3RoPE(r, c))
      readRoPE(r, c, 1e6);
    r.rejectTrue("use_bidirectional_attention",
                 "bidirectional attention is EmbeddingGemma's; tfm builds "
                 "causal decoders");
  } else {
    readRoPE(r, c, 10000.0);
  }
  c.tieWordEmbeddings = r.boolOr("tie_word_embeddings", true);
  c.attentionBias = r.boolOr("attention_bias", false);
  (void)r.lookup("cache_implementation");
  if (r.failed())
    return;
  checkHeads(r, c, /*explicitHeadDim=*/true);
  checkEvenRoPEHead(r, c, "head_dim");
}

void mlir::tfm::hf::readGemma2Config(FieldReader &r, ModelConfig &c) {
  readGemma2Or3(r, c);
}

void mlir::tfm::hf::readGemma3Config(FieldReader &r, ModelConfig &c) {
  readGemma2Or3(r, c);
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

/// Gemma: Llama's layout with embeddings scaled by sqrt(d) (GemmaModel's
/// `normalizer`), (1 + w) RMSNorms and a GeGLU MLP.
Value EntryBuilder::buildGemma() {
  int64_t d = c.hiddenSize;
  Value h = embedTokens(
      "model.embed_tokens", d,
      b.getF32FloatAttr(static_cast<float>(std::sqrt(double(d)))));
  h = decoderLayers(h);
  h = rmsNorm(h, "model.norm", /*unitOffset=*/true);
  return lmHead(h, "lm_head", d);
}

/// A Gemma layer. Gemma 2 and 3 add a (1 + w) RMSNorm after each sublayer
/// as well as before it ("sandwich" norms), the softmax scale
/// query_pre_attn_scalar^-1/2, softcapped scores (Gemma 2; attend reads
/// it), and per-head q/k norms (Gemma 3). Local layers differ only in their
/// window and (Gemma 3) RoPE base: attend and rope read them per layer.
Value EntryBuilder::gemmaBlock(int64_t layer, Value h) {
  std::string p = llvm::formatv("model.layers.{0}.", layer).str();
  std::string attn = p + "self_attn", mlp = p + "mlp";
  int64_t d = c.hiddenSize;
  int64_t qWidth = c.numHeads * c.headDim, kvWidth = c.numKVHeads * c.headDim;
  const WeightLayout outIn = WeightLayout::out_in;
  bool sandwich = c.family != ModelFamily::Gemma;

  Value x = rmsNorm(h, p + "input_layernorm", /*unitOffset=*/true);
  Value q = linear(x, attn + ".q_proj", d, qWidth, outIn, c.attentionBias);
  Value k = linear(x, attn + ".k_proj", d, kvWidth, outIn, c.attentionBias);
  Value v = linear(x, attn + ".v_proj", d, kvWidth, outIn, c.attentionBias);
  FloatAttr scale;
  if (sandwich)
    scale = b.getF32FloatAttr(
        static_cast<float>(1.0 / std::sqrt(c.queryPreAttnScalar)));
  Value a = selfAttention(layer, attn, q, k, v,
                          c.family == ModelFamily::Gemma3
                              ? Positions::NormedRotary
                              : Positions::Rotary,
                          scale);
  a = linear(a, attn + ".o_proj", qWidth, d, outIn, c.attentionBias);
  if (sandwich)
    a = rmsNorm(a, p + "post_attention_layernorm", /*unitOffset=*/true);
  h = residual(h, a, attn + ".residual");

  // Gemma's pre-MLP norm is named for where it sits after the attention.
  x = rmsNorm(h,
              p + (sandwich ? "pre_feedforward_layernorm"
                            : "post_attention_layernorm"),
              /*unitOffset=*/true);
  x = gegluMLP(x, mlp);
  if (sandwich)
    x = rmsNorm(x, p + "post_feedforward_layernorm", /*unitOffset=*/true);
  return residual(h, x, mlp + ".residual");
}

Value EntryBuilder::gegluMLP(Value x, const Twine &module) {
  std::string mlp = module.str();
  int64_t d = c.hiddenSize, m = c.intermediateSize;
  const WeightLayout outIn = WeightLayout::out_in;
  Value gate = linear(x, mlp + ".gate_proj", d, m, outIn, false);
  Value up = linear(x, mlp + ".up_proj", d, m, outIn, false);
  x = GeGLUOp::create(b, loc(mlp + ".act"), gate.getType(), gate, up,
                      c.activation == Activation::GeluExact
                          ? GeluApproximation::none
                          : GeluApproximation::tanh);
  return linear(x, mlp + ".down_proj", m, d, outIn, false);
}

//===- GPTNeoX.cpp - GPT-NeoX (gpt_neox) ----------------------------------===//
//
// GPTNeoXForCausalLM (Pythia): LayerNorms, partial rotary, a fused
// query_key_value in [H, 3, dh] order, parallel or sequential residuals.
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

/// GPTNeoXConfig: `rotary_pct` and `rotary_emb_base` are the settings;
/// transformers 4.46 also writes them as `partial_rotary_factor` and
/// `rope_theta`, which must then agree.
void mlir::tfm::hf::readGPTNeoXConfig(FieldReader &r, ModelConfig &c) {
  StringRef type = "gpt_neox";
  readDecoderSizes(r, c, type);
  c.normEps = r.numberOr("layer_norm_eps", 1e-5, /*positive=*/true,
                         /*below=*/1.0);
  readActivation(r, c, "hidden_act", "gelu",
                 {{"gelu", Activation::GeluExact},
                  {"gelu_new", Activation::GeluTanh},
                  {"gelu_pytorch_tanh", Activation::GeluTanh},
                  {"gelu_fast", Activation::GeluTanh},
                  {"relu", Activation::ReLU}},
                 "gelu, gelu_new, gelu_pytorch_tanh, gelu_fast and relu for "
                 "gpt_neox");
  // The rotated fraction and the base, each given up to three times:
  // GPT-NeoX's own rotary_pct / rotary_emb_base, transformers 5's
  // rope_parameters (which writes no rotary_* fields), and the generic
  // partial_rotary_factor / rope_theta that 4.46 writes beside them. The
  // first given is used, in that order; the others must agree.
  std::optional<double> ropeFraction, ropeBase;
  if (const json::Value *value = r.lookup("rope_parameters")) {
    const json::Object *object = value->getAsObject();
    if (!object)
      return r.fail("rope_parameters",
                    "expected an object, got " + describe(*value));
    ModelConfig given = c;
    given.ropeTheta = 0;
    std::optional<double> fraction = readRoPEObject(
        r, "rope_parameters", *object, given, /*withTheta=*/true);
    if (r.failed())
      return;
    if (given.ropeScaling != RoPEScaling::None)
      return r.fail("rope_parameters", "tfm implements unscaled RoPE for "
                                       "gpt_neox (rope_type must be "
                                       "'default')");
    if (given.ropeTheta > 0)
      ropeBase = given.ropeTheta;
    ropeFraction = fraction;
  }
  auto firstGiven = [&](std::initializer_list<std::pair<StringRef, std::optional<double>>> sources,
                        double defaultValue) -> double {
    std::optional<std::pair<StringRef, double>> chosen;
    for (const auto &[key, value] : sources) {
      if (!value)
        continue;
      if (!chosen)
        chosen = {key, *value};
      else if (*value != chosen->second)
        r.fail(key, llvm::formatv("{0} disagrees with {1} = {2}",
                                  llvm::format("%g", *value), chosen->first,
                                  llvm::format("%g", chosen->second)));
    }
    return chosen ? chosen->second : defaultValue;
  };
  auto optionalNumber = [&](StringRef key) -> std::optional<double> {
    if (!r.lookup(key))
      return std::nullopt;
    return r.numberOr(key, 1.0, /*positive=*/true);
  };
  // Without rope_parameters (transformers 4.x), the rotary_* defaults are
  // what the model uses, whatever a generic field beside them says.
  bool modern = ropeFraction || ropeBase;
  auto orDefault = [&](std::optional<double> value, double defaultValue) {
    return value || modern ? value : std::optional<double>(defaultValue);
  };
  double pct = firstGiven({{"rotary_pct",
                            orDefault(optionalNumber("rotary_pct"), 0.25)},
                           {"rope_parameters.partial_rotary_factor",
                            ropeFraction},
                           {"partial_rotary_factor",
                            optionalNumber("partial_rotary_factor")}},
                          0.25);
  if (pct > 1.0)
    r.fail("rotary_pct",
           llvm::formatv("{0} exceeds 1: it is the rotated fraction of each "
                         "head",
                         llvm::format("%g", pct)));
  c.ropeTheta = firstGiven(
      {{"rotary_emb_base",
        orDefault(optionalNumber("rotary_emb_base"), 10000.0)},
       {"rope_parameters.rope_theta", ropeBase},
       {"rope_theta", optionalNumber("rope_theta")}},
      10000.0);
  r.rejectNonNull("rope_scaling", "tfm implements unscaled RoPE for gpt_neox "
                                  "(rope_scaling must be null)");
  c.parallelResidual = r.boolOr("use_parallel_residual", true);
  c.attentionBias = r.boolOr("attention_bias", true);
  c.mlpBias = true;
  c.tieWordEmbeddings = r.boolOr("tie_word_embeddings", false);
  if (r.failed())
    return;
  c.numKVHeads = c.numHeads;
  checkHeads(r, c, /*explicitHeadDim=*/false);
  if (r.failed())
    return;
  c.headDim = c.hiddenSize / c.numHeads;
  // int(head_size * rotary_pct), as GPTNeoXAttention.rotary_ndims.
  c.rotaryDims = static_cast<int64_t>(double(c.headDim) * pct);
  if (c.rotaryDims < 2 || c.rotaryDims % 2 != 0)
    r.fail("rotary_pct",
           llvm::formatv("{0} of a head size of {1} rotates {2} elements; "
                         "RoPE needs an even number of at least 2",
                         llvm::format("%g", pct), c.headDim, c.rotaryDims));
}

/// The causal-mask buffers of every attention, kept by checkpoints saved by
/// older transformers, and embed_out saved although tied.
bool mlir::tfm::hf::isGPTNeoXIgnoredTensor(StringRef name, StringRef,
                                           const ModelConfig &c) {
  return (c.tieWordEmbeddings && name == "embed_out.weight") ||
         name.ends_with(".attention.bias") ||
         name.ends_with(".attention.masked_bias");
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

/// GPT-NeoX (Pythia): LayerNorms, partial rotary, an untied embed_out.
Value EntryBuilder::buildGPTNeoX() {
  int64_t d = c.hiddenSize;
  Value h = embedTokens("gpt_neox.embed_in", d);
  h = decoderLayers(h);
  h = layerNorm(h, "gpt_neox.final_layer_norm", d);
  return lmHead(h, "embed_out", d);
}

Value EntryBuilder::gptNeoXBlock(int64_t layer, Value h) {
  std::string p = llvm::formatv("gpt_neox.layers.{0}.", layer).str();
  std::string attn = p + "attention", mlp = p + "mlp";
  int64_t d = c.hiddenSize, m = c.intermediateSize;
  const WeightLayout outIn = WeightLayout::out_in;

  // query_key_value's output is [H, 3, dh] per token: a grouped split with
  // one group per head gives Q, K and V as [B, S, H*dh].
  Value x = layerNorm(h, p + "input_layernorm", d);
  Value qkv = linear(x, attn + ".query_key_value", d, 3 * d, outIn,
                     c.attentionBias);
  auto part = tensor({batch, seqLen, d});
  auto split = SplitOp::create(b, loc(attn + ".split_qkv"),
                               TypeRange{part, part, part}, qkv,
                               static_cast<uint64_t>(c.numHeads));
  Value a = selfAttention(layer, attn, split.getResult(0), split.getResult(1),
                          split.getResult(2), Positions::Rotary);
  a = linear(a, attn + ".dense", d, d, outIn, c.attentionBias);

  // Parallel: x + attn(ln1(x)) + mlp(ln2(x)); sequential: the MLP reads
  // the stream after the attention's residual.
  Value afterAttention = residual(h, a, attn + ".residual");
  x = layerNorm(c.parallelResidual ? h : afterAttention,
                p + "post_attention_layernorm", d);
  x = linear(x, mlp + ".dense_h_to_4h", d, m, outIn, true);
  x = activation(x, mlp + ".act");
  x = linear(x, mlp + ".dense_4h_to_h", m, d, outIn, true);
  return residual(afterAttention, x, mlp + ".residual");
}

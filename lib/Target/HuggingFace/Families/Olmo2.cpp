//===- Olmo2.cpp - OLMo 2 (olmo2) -----------------------------------------===//
//
// Olmo2ForCausalLM: Llama's embedding, final norm and head; no norm
// before the sublayers, RMSNorms of the whole q and k projections and of
// each sublayer's output.
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

void mlir::tfm::hf::readOlmo2Config(FieldReader &r, ModelConfig &c) {
  LlamaLikeDefaults defaults;
  defaults.normEps = 1e-5;
  readLlamaLike(r, c, defaults, [](FieldReader &r, ModelConfig &c) {
    c.attentionBias = r.boolOr("attention_bias", false);
  });
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

/// OLMo 2 (Llama's embedding, final norm and head): no norm before the
/// sublayers; RMSNorms of the whole q and k projections ([H*dh] and
/// [Hkv*dh] weights) before the heads are split, and of each sublayer's
/// output before its residual add.
Value EntryBuilder::olmo2Block(int64_t layer, Value h) {
  std::string p = llvm::formatv("model.layers.{0}.", layer).str();
  std::string attn = p + "self_attn";
  int64_t d = c.hiddenSize, dh = c.headDim;
  int64_t qWidth = c.numHeads * dh, kvWidth = c.numKVHeads * dh;
  const WeightLayout outIn = WeightLayout::out_in;

  Value q = linear(h, attn + ".q_proj", d, qWidth, outIn, c.attentionBias);
  Value k = linear(h, attn + ".k_proj", d, kvWidth, outIn, c.attentionBias);
  Value v = linear(h, attn + ".v_proj", d, kvWidth, outIn, c.attentionBias);
  q = rmsNorm(q, attn + ".q_norm", /*unitOffset=*/false, qWidth);
  k = rmsNorm(k, attn + ".k_norm", /*unitOffset=*/false, kvWidth);
  Value a = selfAttention(layer, attn, q, k, v, Positions::Rotary);
  a = linear(a, attn + ".o_proj", qWidth, d, outIn, c.attentionBias);
  a = rmsNorm(a, p + "post_attention_layernorm", /*unitOffset=*/false);
  h = residual(h, a, attn + ".residual");

  std::string mlp = p + "mlp";
  Value x = swigluMLP(h, mlp, c.intermediateSize);
  x = rmsNorm(x, p + "post_feedforward_layernorm", /*unitOffset=*/false);
  return residual(h, x, mlp + ".residual");
}

//===- GPT2.cpp - GPT-2 (gpt2) --------------------------------------------===//
//
// GPT2LMHeadModel: learned positions, LayerNorms, Conv1D projections
// (weights [in, out]) with a fused c_attn, and a GELU MLP.
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

void mlir::tfm::hf::readGPT2Config(FieldReader &r, ModelConfig &c) {
  c.vocabSize = r.requiredSize("vocab_size", "gpt2");
  c.hiddenSize = r.requiredSize("n_embd", "gpt2");
  c.numLayers = r.requiredCount("n_layer", "gpt2", kMaxLayers);
  c.numHeads = r.requiredSize("n_head", "gpt2");
  // transformers sizes wpe by n_positions; n_ctx is its legacy spelling,
  // used only when n_positions is absent.
  bool hasCtx = r.lookup("n_ctx") != nullptr;
  if (r.lookup("n_positions") || !hasCtx) {
    c.maxPositionsField = "n_positions";
    c.maxPositions = r.requiredSize("n_positions", "gpt2");
  } else {
    c.maxPositionsField = "n_ctx";
    c.maxPositions = r.requiredSize("n_ctx", "gpt2");
  }
  c.intermediateSize = r.sizeOr("n_inner", 4 * c.hiddenSize);
  c.normEps = r.numberOr("layer_norm_epsilon", 1e-5, /*positive=*/true,
                         /*below=*/1.0);

  readActivation(r, c, "activation_function", "gelu_new",
                 {{"gelu_new", Activation::GeluTanh},
                  {"gelu_pytorch_tanh", Activation::GeluTanh},
                  {"gelu_fast", Activation::GeluTanh},
                  {"gelu", Activation::GeluExact}},
                 "gelu_new, gelu_pytorch_tanh, gelu_fast and gelu");

  // GPT2LMHeadModel ties lm_head to wte unless the config says otherwise.
  c.tieWordEmbeddings = r.boolOr("tie_word_embeddings", true);
  c.scaleAttnWeights = r.boolOr("scale_attn_weights", true);
  r.rejectTrue("scale_attn_by_inverse_layer_idx",
               "it scales each layer's attention by 1/(layer+1), which "
               "tfm.attention does not model");
  r.rejectTrue("reorder_and_upcast_attn",
               "tfm does not model the reordered, upcast attention");
  r.rejectTrue("add_cross_attention",
               "cross-attention needs an encoder; tfm builds decoder-only "
               "models");

  if (r.failed())
    return;
  if (c.hiddenSize % c.numHeads != 0)
    return r.fail("n_head", llvm::formatv("{0} heads do not divide n_embd = {1}",
                                          c.numHeads, c.hiddenSize));
  c.numKVHeads = c.numHeads;
  c.headDim = c.hiddenSize / c.numHeads;
}

/// GPT2Attention's causal-mask buffers, saved by older transformers.
bool mlir::tfm::hf::isGPT2IgnoredTensor(StringRef name, StringRef prefix,
                                        const ModelConfig &) {
  return name.starts_with((prefix + "h.").str()) &&
         (name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias"));
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

Value EntryBuilder::buildGPT2() {
  int64_t d = c.hiddenSize;
  Value h = embedTokens("wte", d);
  h = PositionEmbeddingOp::create(b, loc("wpe"), h.getType(), h,
                                  param("wpe.weight", {c.maxPositions, d}),
                                  pos);
  h = decoderLayers(h);
  h = layerNorm(h, "ln_f", d);
  return lmHead(h, "lm_head", d);
}

Value EntryBuilder::gpt2Block(int64_t layer, Value h) {
  std::string p = llvm::formatv("h.{0}.", layer).str();
  std::string attn = p + "attn";
  int64_t d = c.hiddenSize, m = c.intermediateSize;

  // Attention: one fused c_attn (Conv1D, [d, 3d]) split into q, k, v.
  Value x = layerNorm(h, p + "ln_1", d);
  Value qkv = linear(x, attn + ".c_attn", d, 3 * d, WeightLayout::in_out,
                     /*hasBias=*/true);
  auto part = tensor({batch, seqLen, d});
  auto split = SplitOp::create(b, loc(attn + ".split_qkv"),
                               TypeRange{part, part, part}, qkv);
  // scale_attn_weights = false: GPT2Attention skips the 1/sqrt(dh) scale.
  FloatAttr scale = c.scaleAttnWeights ? FloatAttr() : b.getF32FloatAttr(1.0f);
  Value a = selfAttention(layer, attn, split.getResult(0), split.getResult(1),
                          split.getResult(2), Positions::None, scale);
  a = linear(a, attn + ".c_proj", d, d, WeightLayout::in_out, true);
  h = residual(h, a, attn + ".residual");

  // MLP: c_fc, GELU, c_proj.
  x = layerNorm(h, p + "ln_2", d);
  x = linear(x, p + "mlp.c_fc", d, m, WeightLayout::in_out, true);
  x = GeluOp::create(b, loc(p + "mlp.act"), x,
                     c.activation == Activation::GeluExact
                         ? GeluApproximation::none
                         : GeluApproximation::tanh);
  x = linear(x, p + "mlp.c_proj", m, d, WeightLayout::in_out, true);
  return residual(h, x, p + "mlp.residual");
}

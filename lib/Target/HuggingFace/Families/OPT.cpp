//===- OPT.cpp - OPT (opt) ------------------------------------------------===//
//
// OPTForCausalLM: learned positions from row 2, optional projections
// between the embedding width and d, pre- or post-LN blocks.
//
//===----------------------------------------------------------------------===//
#include "Families.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::hf;

//===----------------------------------------------------------------------===//
// config.json
//===----------------------------------------------------------------------===//

/// OPTConfig. The learned position table has max_position_embeddings + 2
/// rows: OPT's positions start at row 2.
void mlir::tfm::hf::readOPTConfig(FieldReader &r, ModelConfig &c) {
  StringRef type = "opt";
  readDecoderSizes(r, c, type, "ffn_dim");
  c.wordEmbedProjDim = r.sizeOr("word_embed_proj_dim", c.hiddenSize);
  c.positionOffset = 2;
  // nn.LayerNorm's default: OPTConfig has no epsilon field.
  c.normEps = 1e-5;
  readActivation(r, c, "activation_function", "relu",
                 {{"relu", Activation::ReLU},
                  {"gelu", Activation::GeluExact},
                  {"gelu_new", Activation::GeluTanh},
                  {"gelu_pytorch_tanh", Activation::GeluTanh},
                  {"gelu_fast", Activation::GeluTanh}},
                 "relu, gelu, gelu_new, gelu_pytorch_tanh and gelu_fast for "
                 "opt");
  c.normBeforeBlock = r.boolOr("do_layer_norm_before", true);
  // OPTDecoder builds the final LayerNorm only for pre-LN models.
  bool removeFinalNorm = r.boolOr("_remove_final_layer_norm", false);
  c.finalNorm = c.normBeforeBlock && !removeFinalNorm;
  c.attentionBias = c.mlpBias = r.boolOr("enable_bias", true);
  if (!r.boolOr("layer_norm_elementwise_affine", true))
    r.fail("layer_norm_elementwise_affine",
           "false is not supported: tfm's LayerNorm has a scale and a bias");
  c.tieWordEmbeddings = r.boolOr("tie_word_embeddings", true);
  // Training-time layer dropping, off at inference.
  (void)r.lookup("layerdrop");
  (void)r.lookup("init_std");
  if (r.failed())
    return;
  c.numKVHeads = c.numHeads;
  checkHeads(r, c, /*explicitHeadDim=*/false);
  c.headDim = c.hiddenSize / c.numHeads;
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

/// OPT: learned positions read from row 2 on, optional projections between
/// the embedding width and d, pre- or post-LN blocks.
Value EntryBuilder::buildOPT() {
  int64_t d = c.hiddenSize, e = c.wordEmbedProjDim;
  std::string dec = "model.decoder.";
  Value h = embedTokens(dec + "embed_tokens", e);
  if (e != d)
    h = linear(h, dec + "project_in", e, d, WeightLayout::out_in, false);
  // OPTLearnedPositionalEmbedding: position p reads row p + 2.
  Value offset = arith::ConstantIndexOp::create(b, loc(dec + "embed_positions"),
                                                c.positionOffset);
  if (pos)
    offset = arith::AddIOp::create(b, loc(dec + "embed_positions"), pos, offset);
  h = PositionEmbeddingOp::create(
      b, loc(dec + "embed_positions"), h.getType(), h,
      param(dec + "embed_positions.weight",
            {c.maxPositions + c.positionOffset, d}),
      offset);
  h = decoderLayers(h);
  if (c.finalNorm)
    h = layerNorm(h, dec + "final_layer_norm", d);
  if (e != d)
    h = linear(h, dec + "project_out", d, e, WeightLayout::out_in, false);
  return lmHead(h, "lm_head", e);
}

Value EntryBuilder::optBlock(int64_t layer, Value h) {
  std::string p = llvm::formatv("model.decoder.layers.{0}.", layer).str();
  std::string attn = p + "self_attn";
  int64_t d = c.hiddenSize, m = c.intermediateSize;
  const WeightLayout outIn = WeightLayout::out_in;
  bool preLN = c.normBeforeBlock;

  Value x = preLN ? layerNorm(h, p + "self_attn_layer_norm", d) : h;
  Value q = linear(x, attn + ".q_proj", d, d, outIn, c.attentionBias);
  Value k = linear(x, attn + ".k_proj", d, d, outIn, c.attentionBias);
  Value v = linear(x, attn + ".v_proj", d, d, outIn, c.attentionBias);
  Value a = selfAttention(layer, attn, q, k, v, Positions::None);
  a = linear(a, attn + ".out_proj", d, d, outIn, c.attentionBias);
  h = residual(h, a, attn + ".residual");
  if (!preLN)
    h = layerNorm(h, p + "self_attn_layer_norm", d);

  x = preLN ? layerNorm(h, p + "final_layer_norm", d) : h;
  x = linear(x, p + "fc1", d, m, outIn, c.mlpBias);
  x = activation(x, p + "act");
  x = linear(x, p + "fc2", m, d, outIn, c.mlpBias);
  h = residual(h, x, p + "mlp.residual");
  if (!preLN)
    h = layerNorm(h, p + "final_layer_norm", d);
  return h;
}

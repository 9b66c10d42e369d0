//===- Phi3.cpp - Phi-3 (phi3) --------------------------------------------===//
//
// Phi3ForCausalLM: Llama's math with fused qkv_proj and gate_up_proj.
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

/// Phi3Config (transformers 4.46): the head size is always d / H, and its
/// long-context RoPE variants (`su`, `longrope`) are not implemented.
void mlir::tfm::hf::readPhi3Config(FieldReader &r, ModelConfig &c) {
  StringRef type = "phi3";
  readDecoderSizes(r, c, type);
  c.numKVHeads = r.sizeOr("num_key_value_heads", c.numHeads);
  c.normEps = r.numberOr("rms_norm_eps", 1e-5, /*positive=*/true,
                         /*below=*/1.0);
  readActivation(r, c, "hidden_act", "silu",
                 {{"silu", Activation::SiLU}, {"swish", Activation::SiLU}},
                 "silu for phi3");
  // Phi-3's long-context checkpoints (128k) use longrope ("su" in the
  // first ones); readRoPE reads every scaling transformers 5 gives Phi-3.
  readRoPE(r, c, 10000.0);
  // Only the long-context scalings use it.
  (void)r.lookup("original_max_position_embeddings");
  double partial = r.numberOr("partial_rotary_factor", 1.0, /*positive=*/true);
  if (partial != 1.0)
    r.fail("partial_rotary_factor",
           llvm::formatv("{0} is not supported for phi3: transformers 4.46 "
                         "rotates whole heads; it must be 1",
                         llvm::format("%g", partial)));
  r.rejectTrue("attention_bias",
               "Phi-3's qkv_proj and o_proj have no biases");
  c.slidingWindow = r.sizeOr("sliding_window", 0);
  c.tieWordEmbeddings = r.boolOr("tie_word_embeddings", false);
  if (r.failed())
    return;
  checkHeads(r, c, /*explicitHeadDim=*/false);
  c.headDim = c.hiddenSize / c.numHeads;
  checkEvenRoPEHead(r, c, "num_attention_heads");
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

/// Phi-3: Llama's math, with the checkpoint's fused projections used as they
/// are: one qkv_proj GEMM split into Q, K and V, one gate_up_proj GEMM split
/// into the gate and up halves.
Value EntryBuilder::buildPhi3() {
  int64_t d = c.hiddenSize;
  Value h = embedTokens("model.embed_tokens", d);
  h = decoderLayers(h);
  h = rmsNorm(h, "model.norm", /*unitOffset=*/false);
  return lmHead(h, "lm_head", d);
}

Value EntryBuilder::phi3Block(int64_t layer, Value h) {
  std::string p = llvm::formatv("model.layers.{0}.", layer).str();
  std::string attn = p + "self_attn", mlp = p + "mlp";
  int64_t d = c.hiddenSize, m = c.intermediateSize;
  int64_t qWidth = c.numHeads * c.headDim, kvWidth = c.numKVHeads * c.headDim;
  const WeightLayout outIn = WeightLayout::out_in;

  Value x = rmsNorm(h, p + "input_layernorm", /*unitOffset=*/false);
  Value qkv = linear(x, attn + ".qkv_proj", d, qWidth + 2 * kvWidth, outIn,
                     /*hasBias=*/false);
  auto split = SplitOp::create(
      b, loc(attn + ".split_qkv"),
      TypeRange{tensor({batch, seqLen, qWidth}), tensor({batch, seqLen, kvWidth}),
                tensor({batch, seqLen, kvWidth})},
      qkv);
  Value a = selfAttention(layer, attn, split.getResult(0), split.getResult(1),
                          split.getResult(2), Positions::Rotary);
  a = linear(a, attn + ".o_proj", qWidth, d, outIn, false);
  h = residual(h, a, attn + ".residual");

  x = rmsNorm(h, p + "post_attention_layernorm", /*unitOffset=*/false);
  Value gateUp = linear(x, mlp + ".gate_up_proj", d, 2 * m, outIn, false);
  auto half = tensor({batch, seqLen, m});
  auto halves = SplitOp::create(b, loc(mlp + ".split_gate_up"),
                                TypeRange{half, half}, gateUp);
  x = SwiGLUOp::create(b, loc(mlp + ".act"), half, halves.getResult(0),
                       halves.getResult(1));
  x = linear(x, mlp + ".down_proj", m, d, outIn, false);
  return residual(h, x, mlp + ".residual");
}

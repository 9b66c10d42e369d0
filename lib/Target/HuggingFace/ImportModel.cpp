//===- ImportModel.cpp - whole tfm models from Hugging Face configs -------===//
//
// One EntryBuilder builds one entry function (@forward, @prefill or
// @decode). Parameter arguments are created on first use, so each op names
// the checkpoint tensors it reads in one place and the argument list follows
// the order of the model; a tied LM head simply reads the embedding's
// argument again. Every op gets a NameLoc spelled like the Hugging Face
// module it stands for ("h.0.attn.c_attn"), which the ledger uses as its
// label and diagnostics point at.
//
//===----------------------------------------------------------------------===//
#include "tfm/Target/HuggingFace/ImportModel.h"
#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::hf;

int64_t mlir::tfm::hf::getSeqLen(const ModelConfig &config,
                                 const ImportOptions &options) {
  return options.seqLen > 0 ? options.seqLen
                            : std::min<int64_t>(128, config.maxPositions);
}

namespace {
enum class Entry { Forward, Prefill, Decode };

class EntryBuilder {
public:
  EntryBuilder(MLIRContext &context, const ModelConfig &config,
               const ImportOptions &options, Entry entry)
      : b(&context), c(config), entry(entry), batch(options.batch),
        seqLen(entry == Entry::Decode ? 1 : getSeqLen(config, options)),
        cacheLength(options.kvCacheLength),
        perSequencePositions(options.perSequencePositions &&
                             entry == Entry::Decode),
        elementType(getComputeType(context, options.computeType)) {}

  /// The MLIR type of a compute type importModel accepted.
  static FloatType getComputeType(MLIRContext &context, runtime::DType dtype) {
    Builder b(&context);
    switch (dtype) {
    case runtime::DType::BF16: return b.getBF16Type();
    case runtime::DType::F16: return b.getF16Type();
    default: return b.getF32Type();
    }
  }

  func::FuncOp build();

private:
  //===--- Arguments -------------------------------------------------------===//

  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elementType);
  }
  Location loc(const Twine &name) {
    return NameLoc::get(b.getStringAttr(name));
  }

  /// Inserts argument `index` with the one attribute `attrName` =
  /// `attrValue`, located at (and so printed as) `locName` or `attrValue`.
  Value addArgument(unsigned index, Type type, StringRef attrName,
                    StringRef attrValue, StringRef locName = {}) {
    Value arg = body->insertArgument(
        index, type, loc(locName.empty() ? attrValue : locName));
    argAttrs.insert(argAttrs.begin() + index,
                    b.getDictionaryAttr(b.getNamedAttr(
                        attrName, b.getStringAttr(attrValue))));
    return arg;
  }

  /// The `tfm.param` argument for checkpoint tensor `name`, created (after the
  /// inputs and the parameters so far) on first use.
  Value param(const Twine &name, ArrayRef<int64_t> shape) {
    std::string key = name.str();
    if (Value existing = params.lookup(key)) {
      assert(cast<RankedTensorType>(existing.getType()).getShape() == shape &&
             "one checkpoint tensor read with two shapes");
      return existing;
    }
    Value arg = addArgument(paramEnd++, tensor(shape), kParamAttrName, key);
    params[key] = arg;
    return arg;
  }

  //===--- Shared pieces ---------------------------------------------------===//

  /// `module.weight` (and `module.bias`) applied to the last dimension.
  Value linear(Value x, const Twine &module, int64_t in, int64_t out,
               WeightLayout layout, bool hasBias) {
    std::string name = module.str();
    SmallVector<int64_t, 2> weightShape =
        layout == WeightLayout::in_out ? SmallVector<int64_t, 2>{in, out}
                                       : SmallVector<int64_t, 2>{out, in};
    Value weight = param(name + ".weight", weightShape);
    Value bias = hasBias ? param(name + ".bias", {out}) : Value();
    return LinearOp::create(b, loc(name), withLastDim(x, out), x, weight, bias,
                            layout);
  }

  RankedTensorType withLastDim(Value x, int64_t size) {
    SmallVector<int64_t, 4> shape(cast<RankedTensorType>(x.getType()).getShape());
    shape.back() = size;
    return tensor(shape);
  }

  Value splitHeads(Value x, int64_t heads, const Twine &name) {
    return SplitHeadsOp::create(b, loc(name),
                                tensor({batch, heads, seqLen, c.headDim}), x,
                                b.getI64IntegerAttr(heads));
  }

  Value residual(Value stream, Value branch, const Twine &name) {
    return ResidualAddOp::create(b, loc(name), stream.getType(), stream,
                                 branch);
  }

  /// Attention of `q` over `k`/`v` (heads layout). In the generation entries
  /// the new keys and values first go into layer `layer`'s caches at `pos`,
  /// and the attention reads the whole cache from position `pos` on.
  Value attend(int64_t layer, StringRef prefix, Value q, Value k, Value v,
               FloatAttr scale) {
    if (entry != Entry::Forward) {
      auto cacheType =
          tensor({batch, c.numKVHeads, cacheLength, c.headDim});
      k = writeCache(layer, "key", cacheType, k, prefix);
      v = writeCache(layer, "value", cacheType, v, prefix);
    }
    auto attention =
        AttentionOp::create(b, loc(prefix + ".attention"), q.getType(), q, k,
                            v, pos, b.getBoolAttr(true), scale);
    if (IntegerAttr window = slidingWindow(layer, k))
      attention.setSlidingWindowAttr(window);
    if (c.attnLogitSoftcap > 0)
      attention.setLogitSoftcapAttr(b.getF32FloatAttr(c.attnLogitSoftcap));
    return attention;
  }

  /// Layer `layer`'s sliding window for attention over `keys`, or null
  /// where it has none or the window cannot mask anything (no query is W
  /// positions past a key of the tensor).
  IntegerAttr slidingWindow(int64_t layer, Value keys) {
    int64_t keyLength = cast<RankedTensorType>(keys.getType()).getDimSize(2);
    int64_t window = c.getLayerWindow(layer);
    if (window <= 0 || window >= keyLength)
      return {};
    return b.getI64IntegerAttr(window);
  }

  /// RoPE of heads `x` in layer `layer`: the config's scaled frequencies
  /// when it has a scaling, else plain RoPE from theta; only the first
  /// c.rotaryDims elements of each head when set (partial rotary). Gemma 3's
  /// local layers rotate by their own base, unscaled.
  Value rope(Value x, const Twine &name, int64_t layer) {
    if (c.ropeLocalTheta > 0 && c.getLayerWindow(layer) > 0)
      return RoPEOp::create(b, loc(name), x.getType(), x, pos,
                            b.getF32FloatAttr(c.ropeLocalTheta));
    auto op = RoPEOp::create(b, loc(name), x.getType(), x, pos,
                             b.getF32FloatAttr(c.ropeTheta));
    if (c.ropeScaling != RoPEScaling::None) {
      // The longest sequence this entry serves: its prompt, or the KV
      // cache of generation (longrope's factors depend on it).
      int64_t maxLength = entry == Entry::Forward ? seqLen : cacheLength;
      if (!ropeInvFreq)
        ropeInvFreq = b.getDenseF32ArrayAttr(
            computeRoPEInverseFrequencies(c, maxLength));
      op.setInvFreqAttr(ropeInvFreq);
    }
    if (c.ropeAttentionFactor != 1.0)
      op.setAttentionFactorAttr(b.getF32FloatAttr(c.ropeAttentionFactor));
    if (c.rotaryDims && c.rotaryDims != c.headDim)
      op.setRotaryDimsAttr(b.getI64IntegerAttr(c.rotaryDims));
    return op;
  }

  Value writeCache(int64_t layer, StringRef which, RankedTensorType type,
                   Value update, StringRef prefix) {
    std::string name = llvm::formatv("{0}.{1}", layer, which).str();
    // Caches go last, after every parameter.
    Value cache = addArgument(body->getNumArguments(), type, kKVCacheAttrName,
                              name, "kv_cache." + name);
    Value written =
        KVCacheWriteOp::create(b, loc(prefix + "." + which + "_cache"), type,
                               cache, update, pos);
    cacheResults.push_back(written);
    cacheNames.push_back(name);
    return written;
  }

  //===--- Pieces the families share (section "Decoder pieces") -----------===//

  /// How self-attention treats the heads of q and k before attending.
  enum class Positions { None, Rotary, NormedRotary };
  Value selfAttention(int64_t layer, StringRef attn, Value q, Value k, Value v,
                      Positions positions, FloatAttr scale = {});
  Value rmsNorm(Value x, const Twine &name, bool unitOffset,
                int64_t width = 0);
  Value layerNorm(Value x, const Twine &name, int64_t width);
  Value activation(Value x, const Twine &name);
  /// The token embedding `module` ([V, width], `scale`d), remembered as the
  /// tied LM head's weight.
  Value embedTokens(const Twine &module, int64_t width, FloatAttr scale = {});
  /// `num_hidden_layers` applications of `block`.
  Value decoderLayers(Value h, Value (EntryBuilder::*block)(int64_t, Value));
  /// The LM head `module` over [B, S, width]: the embedding when tied, else
  /// its own `module.weight` [V, width].
  Value lmHead(Value h, StringRef module, int64_t width);
  /// Llama's gated SiLU MLP `module` (gate_proj, up_proj, down_proj) of
  /// width `m`.
  Value swigluMLP(Value x, const Twine &module, int64_t m);

  //===--- Families --------------------------------------------------------===//

  Value buildGPT2();
  Value gpt2Block(int64_t layer, Value h);
  Value buildLlama();
  Value llamaBlock(int64_t layer, Value h);
  Value buildGemma();
  Value gemmaBlock(int64_t layer, Value h);
  Value gemma2Block(int64_t layer, Value h);
  Value olmo2Block(int64_t layer, Value h);
  Value buildPhi3();
  Value phi3Block(int64_t layer, Value h);
  Value buildGPTNeoX();
  Value gptNeoXBlock(int64_t layer, Value h);
  Value buildOPT();
  Value optBlock(int64_t layer, Value h);

  OpBuilder b;
  const ModelConfig &c;
  Entry entry;
  int64_t batch, seqLen, cacheLength;
  /// `pos` is a [B] tensor of each sequence's position, not one index.
  bool perSequencePositions;
  /// Of every float tensor: parameters, activations, KV caches.
  FloatType elementType;

  Block *body = nullptr;
  SmallVector<DictionaryAttr> argAttrs;
  unsigned paramEnd = 0;
  llvm::StringMap<Value> params;
  Value ids, pos;
  SmallVector<Value> cacheResults;
  SmallVector<std::string> cacheNames;
  DenseF32ArrayAttr ropeInvFreq;
  /// The token embedding table (embedTokens), read again by a tied head.
  Value embedWeight;
};
} // namespace

//===----------------------------------------------------------------------===//
// Decoder pieces
//===----------------------------------------------------------------------===//

/// Splits q [B, S, H*dh] and k, v [B, S, Hkv*dh] into heads; with
/// `NormedRotary` RMS-normalises each query and key head (Qwen3's and
/// Gemma 3's q_norm / k_norm, weights [dh]), with `Rotary` or
/// `NormedRotary` rotates them (the config's RoPE); attends (`scale`: null
/// for 1/sqrt(dh)) and merges the heads back: [B, S, H*dh].
Value EntryBuilder::selfAttention(int64_t layer, StringRef attn, Value q,
                                  Value k, Value v, Positions positions,
                                  FloatAttr scale) {
  q = splitHeads(q, c.numHeads, attn + ".split_heads_q");
  k = splitHeads(k, c.numKVHeads, attn + ".split_heads_k");
  v = splitHeads(v, c.numKVHeads, attn + ".split_heads_v");
  if (positions == Positions::NormedRotary) {
    // Gemma 3's norms scale by (1 + w), as all of Gemma's.
    bool unitOffset = c.family == ModelFamily::Gemma3;
    q = rmsNorm(q, attn + ".q_norm", unitOffset, c.headDim);
    k = rmsNorm(k, attn + ".k_norm", unitOffset, c.headDim);
  }
  if (positions != Positions::None) {
    q = rope(q, attn + ".rope_q", layer);
    k = rope(k, attn + ".rope_k", layer);
  }
  Value a = attend(layer, attn, q, k, v, scale);
  return MergeHeadsOp::create(b, loc(attn + ".merge_heads"),
                              tensor({batch, seqLen, c.numHeads * c.headDim}),
                              a);
}

/// RMSNorm `name` over the last dimension (`width`, default d), its weight
/// `name.weight`; with `unitOffset`, scaled by (1 + w) (Gemma).
Value EntryBuilder::rmsNorm(Value x, const Twine &name, bool unitOffset,
                            int64_t width) {
  std::string module = name.str();
  return RMSNormOp::create(b, loc(module), x.getType(), x,
                           param(module + ".weight",
                                 {width ? width : c.hiddenSize}),
                           b.getF32FloatAttr(c.normEps),
                           unitOffset ? b.getUnitAttr() : nullptr);
}

Value EntryBuilder::layerNorm(Value x, const Twine &name, int64_t width) {
  std::string module = name.str();
  return LayerNormOp::create(b, loc(module), x.getType(), x,
                             param(module + ".weight", {width}),
                             param(module + ".bias", {width}),
                             b.getF32FloatAttr(c.normEps));
}

Value EntryBuilder::embedTokens(const Twine &module, int64_t width,
                               FloatAttr scale) {
  std::string name = module.str();
  embedWeight = param(name + ".weight", {c.vocabSize, width});
  return EmbeddingOp::create(b, loc(name), tensor({batch, seqLen, width}), ids,
                             embedWeight, scale);
}

Value EntryBuilder::decoderLayers(Value h,
                                  Value (EntryBuilder::*block)(int64_t, Value)) {
  for (int64_t i = 0; i < c.numLayers; ++i)
    h = (this->*block)(i, h);
  return h;
}

Value EntryBuilder::lmHead(Value h, StringRef module, int64_t width) {
  Value weight = c.tieWordEmbeddings
                     ? embedWeight
                     : param(module + ".weight", {c.vocabSize, width});
  auto head =
      LMHeadOp::create(b, loc(module), tensor({batch, seqLen, c.vocabSize}),
                       h, weight, WeightLayout::out_in,
                       c.finalLogitSoftcap > 0
                           ? b.getF32FloatAttr(c.finalLogitSoftcap)
                           : FloatAttr());
  return head;
}

Value EntryBuilder::swigluMLP(Value x, const Twine &module, int64_t m) {
  std::string mlp = module.str();
  int64_t d = c.hiddenSize;
  const WeightLayout outIn = WeightLayout::out_in;
  Value gate = linear(x, mlp + ".gate_proj", d, m, outIn, c.mlpBias);
  Value up = linear(x, mlp + ".up_proj", d, m, outIn, c.mlpBias);
  x = SwiGLUOp::create(b, loc(mlp + ".act"), gate.getType(), gate, up);
  return linear(x, mlp + ".down_proj", m, d, outIn, c.mlpBias);
}

/// The MLP activation of an ungated MLP (GPT-NeoX, OPT).
Value EntryBuilder::activation(Value x, const Twine &name) {
  if (c.activation == Activation::ReLU)
    return ReluOp::create(b, loc(name), x);
  return GeluOp::create(b, loc(name), x,
                        c.activation == Activation::GeluExact
                            ? GeluApproximation::none
                            : GeluApproximation::tanh);
}

//===----------------------------------------------------------------------===//
// GPT-2
//===----------------------------------------------------------------------===//

Value EntryBuilder::buildGPT2() {
  int64_t d = c.hiddenSize;
  Value h = embedTokens("wte", d);
  h = PositionEmbeddingOp::create(b, loc("wpe"), h.getType(), h,
                                  param("wpe.weight", {c.maxPositions, d}),
                                  pos);
  h = decoderLayers(h, &EntryBuilder::gpt2Block);
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

//===----------------------------------------------------------------------===//
// Llama and Mixtral
//===----------------------------------------------------------------------===//

Value EntryBuilder::buildLlama() {
  int64_t d = c.hiddenSize;
  Value h = embedTokens("model.embed_tokens", d);
  h = decoderLayers(h, c.family == ModelFamily::Olmo2
                           ? &EntryBuilder::olmo2Block
                           : &EntryBuilder::llamaBlock);
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
  if (c.family == ModelFamily::Qwen3MoE && c.sparseLayers[layer]) {
    // Router [E, d] and per expert gate_proj, up_proj, down_proj (width
    // moe_intermediate_size): tfm.moe's operand order.
    std::string moe = p + "mlp";
    int64_t me = c.expertIntermediateSize;
    Value router = param(moe + ".gate.weight", {c.numExperts, d});
    SmallVector<Value> experts;
    for (int64_t e = 0; e < c.numExperts; ++e) {
      std::string expert = llvm::formatv("{0}.experts.{1}.", moe, e).str();
      experts.push_back(param(expert + "gate_proj.weight", {me, d}));
      experts.push_back(param(expert + "up_proj.weight", {me, d}));
      experts.push_back(param(expert + "down_proj.weight", {d, me}));
    }
    x = MoEOp::create(b, loc(moe), x.getType(), x, router, experts,
                      static_cast<uint64_t>(c.numExpertsPerToken),
                      c.normalizeTopK);
    return residual(h, x, moe + ".residual");
  }
  if (c.family == ModelFamily::Mixtral) {
    // Router [E, d], then per expert w1 (gate), w3 (up), w2 (down): the
    // operand order of tfm.moe.
    std::string moe = p + "block_sparse_moe";
    Value router = param(moe + ".gate.weight", {c.numExperts, d});
    SmallVector<Value> experts;
    for (int64_t e = 0; e < c.numExperts; ++e) {
      std::string expert = llvm::formatv("{0}.experts.{1}.", moe, e).str();
      experts.push_back(param(expert + "w1.weight", {m, d}));
      experts.push_back(param(expert + "w3.weight", {m, d}));
      experts.push_back(param(expert + "w2.weight", {d, m}));
    }
    x = MoEOp::create(b, loc(moe), x.getType(), x, router, experts,
                      static_cast<uint64_t>(c.numExpertsPerToken));
    return residual(h, x, moe + ".residual");
  }
  std::string mlp = p + "mlp";
  x = swigluMLP(x, mlp, m);
  return residual(h, x, mlp + ".residual");
}

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

//===----------------------------------------------------------------------===//
// Gemma, Phi-3, GPT-NeoX and OPT
//===----------------------------------------------------------------------===//

/// Gemma: Llama's layout with embeddings scaled by sqrt(d) (GemmaModel's
/// `normalizer`), (1 + w) RMSNorms and a GeGLU MLP.
Value EntryBuilder::buildGemma() {
  int64_t d = c.hiddenSize;
  Value h = embedTokens(
      "model.embed_tokens", d,
      b.getF32FloatAttr(static_cast<float>(std::sqrt(double(d)))));
  h = decoderLayers(h, c.family == ModelFamily::Gemma
                           ? &EntryBuilder::gemmaBlock
                           : &EntryBuilder::gemma2Block);
  h = rmsNorm(h, "model.norm", /*unitOffset=*/true);
  return lmHead(h, "lm_head", d);
}

Value EntryBuilder::gemmaBlock(int64_t layer, Value h) {
  std::string p = llvm::formatv("model.layers.{0}.", layer).str();
  std::string attn = p + "self_attn", mlp = p + "mlp";
  int64_t d = c.hiddenSize, m = c.intermediateSize;
  int64_t qWidth = c.numHeads * c.headDim, kvWidth = c.numKVHeads * c.headDim;
  const WeightLayout outIn = WeightLayout::out_in;

  Value x = rmsNorm(h, p + "input_layernorm", /*unitOffset=*/true);
  Value q = linear(x, attn + ".q_proj", d, qWidth, outIn, c.attentionBias);
  Value k = linear(x, attn + ".k_proj", d, kvWidth, outIn, c.attentionBias);
  Value v = linear(x, attn + ".v_proj", d, kvWidth, outIn, c.attentionBias);
  Value a = selfAttention(layer, attn, q, k, v, Positions::Rotary);
  a = linear(a, attn + ".o_proj", qWidth, d, outIn, c.attentionBias);
  h = residual(h, a, attn + ".residual");

  x = rmsNorm(h, p + "post_attention_layernorm", /*unitOffset=*/true);
  Value gate = linear(x, mlp + ".gate_proj", d, m, outIn, false);
  Value up = linear(x, mlp + ".up_proj", d, m, outIn, false);
  x = GeGLUOp::create(b, loc(mlp + ".act"), gate.getType(), gate, up,
                      c.activation == Activation::GeluExact
                          ? GeluApproximation::none
                          : GeluApproximation::tanh);
  x = linear(x, mlp + ".down_proj", m, d, outIn, false);
  return residual(h, x, mlp + ".residual");
}

/// Gemma 2 and 3: Gemma's embedding and MLP with a (1 + w) RMSNorm after
/// each sublayer as well as before it, softmax scale
/// query_pre_attn_scalar^-1/2, softcapped scores and logits (Gemma 2), and
/// per-head q/k norms (Gemma 3). Local layers differ only in their window
/// and (Gemma 3) RoPE base: attend and rope read them per layer.
Value EntryBuilder::gemma2Block(int64_t layer, Value h) {
  std::string p = llvm::formatv("model.layers.{0}.", layer).str();
  std::string attn = p + "self_attn", mlp = p + "mlp";
  int64_t d = c.hiddenSize, m = c.intermediateSize;
  int64_t qWidth = c.numHeads * c.headDim, kvWidth = c.numKVHeads * c.headDim;
  const WeightLayout outIn = WeightLayout::out_in;

  Value x = rmsNorm(h, p + "input_layernorm", /*unitOffset=*/true);
  Value q = linear(x, attn + ".q_proj", d, qWidth, outIn, c.attentionBias);
  Value k = linear(x, attn + ".k_proj", d, kvWidth, outIn, c.attentionBias);
  Value v = linear(x, attn + ".v_proj", d, kvWidth, outIn, c.attentionBias);
  FloatAttr scale = b.getF32FloatAttr(
      static_cast<float>(1.0 / std::sqrt(c.queryPreAttnScalar)));
  Value a = selfAttention(layer, attn, q, k, v,
                          c.family == ModelFamily::Gemma3
                              ? Positions::NormedRotary
                              : Positions::Rotary,
                          scale);
  a = linear(a, attn + ".o_proj", qWidth, d, outIn, c.attentionBias);
  a = rmsNorm(a, p + "post_attention_layernorm", /*unitOffset=*/true);
  h = residual(h, a, attn + ".residual");

  x = rmsNorm(h, p + "pre_feedforward_layernorm", /*unitOffset=*/true);
  Value gate = linear(x, mlp + ".gate_proj", d, m, outIn, false);
  Value up = linear(x, mlp + ".up_proj", d, m, outIn, false);
  x = GeGLUOp::create(b, loc(mlp + ".act"), gate.getType(), gate, up,
                      c.activation == Activation::GeluExact
                          ? GeluApproximation::none
                          : GeluApproximation::tanh);
  x = linear(x, mlp + ".down_proj", m, d, outIn, false);
  x = rmsNorm(x, p + "post_feedforward_layernorm", /*unitOffset=*/true);
  return residual(h, x, mlp + ".residual");
}

/// Phi-3: Llama's math, with the checkpoint's fused projections used as they
/// are: one qkv_proj GEMM split into Q, K and V, one gate_up_proj GEMM split
/// into the gate and up halves.
Value EntryBuilder::buildPhi3() {
  int64_t d = c.hiddenSize;
  Value h = embedTokens("model.embed_tokens", d);
  h = decoderLayers(h, &EntryBuilder::phi3Block);
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

/// GPT-NeoX (Pythia): LayerNorms, partial rotary, an untied embed_out.
Value EntryBuilder::buildGPTNeoX() {
  int64_t d = c.hiddenSize;
  Value h = embedTokens("gpt_neox.embed_in", d);
  h = decoderLayers(h, &EntryBuilder::gptNeoXBlock);
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
  h = decoderLayers(h, &EntryBuilder::optBlock);
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

//===----------------------------------------------------------------------===//
// Entry functions
//===----------------------------------------------------------------------===//

func::FuncOp EntryBuilder::build() {
  StringRef name = entry == Entry::Forward   ? "forward"
                   : entry == Entry::Prefill ? "prefill"
                                             : "decode";
  // The block is built detached and moved into the function at the end, once
  // the argument list (grown as parameters are first used) is known.
  auto block = std::make_unique<Block>();
  body = block.get();
  ids = addArgument(0, RankedTensorType::get({batch, seqLen}, b.getI64Type()),
                    kInputAttrName, "input_ids");
  if (perSequencePositions)
    pos = addArgument(1, RankedTensorType::get({batch}, b.getI64Type()),
                      kInputAttrName, "positions");
  else if (entry != Entry::Forward)
    pos = addArgument(1, b.getIndexType(), kInputAttrName, "position");
  paramEnd = body->getNumArguments();

  b.setInsertionPointToStart(body);
  Value logits;
  switch (c.family) {
  case ModelFamily::GPT2:
    logits = buildGPT2();
    break;
  case ModelFamily::Llama:
  case ModelFamily::Mixtral:
  case ModelFamily::Mistral:
  case ModelFamily::Qwen2:
  case ModelFamily::Qwen3:
  case ModelFamily::Qwen3MoE:
  case ModelFamily::Olmo2:
    logits = buildLlama();
    break;
  case ModelFamily::Gemma:
  case ModelFamily::Gemma2:
  case ModelFamily::Gemma3:
    logits = buildGemma();
    break;
  case ModelFamily::Phi3:
    logits = buildPhi3();
    break;
  case ModelFamily::GPTNeoX:
    logits = buildGPTNeoX();
    break;
  case ModelFamily::OPT:
    logits = buildOPT();
    break;
  }

  // Logits leave in f32 whatever the compute type (ImportOptions).
  auto logitsType = cast<RankedTensorType>(logits.getType());
  if (!logitsType.getElementType().isF32())
    logits = ConvertOp::create(b, loc("logits"),
                               logitsType.clone(b.getF32Type()), logits);
  SmallVector<Value> results{logits};
  SmallVector<Attribute> resultAttrs{b.getDictionaryAttr(
      b.getNamedAttr(kOutputAttrName, b.getStringAttr("logits")))};
  for (auto [cache, cacheName] : llvm::zip(cacheResults, cacheNames)) {
    results.push_back(cache);
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(kKVCacheAttrName, b.getStringAttr(cacheName))));
  }
  func::ReturnOp::create(b, loc("return"), results);

  auto fn = func::FuncOp::create(
      loc(name), name,
      b.getFunctionType(body->getArgumentTypes(), ValueRange(results).getTypes()));
  fn.getBody().push_back(block.release());
  fn.setAllArgAttrs(ArrayRef<DictionaryAttr>(argAttrs));
  fn.setAllResultAttrs(resultAttrs);
  return fn;
}

static llvm::Error optionError(const Twine &message) {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument), message);
}

llvm::Expected<OwningOpRef<ModuleOp>>
mlir::tfm::hf::importModel(MLIRContext &context, const ModelConfig &config,
                           const ImportOptions &options) {
  if (options.batch < 1)
    return optionError(
        llvm::formatv("--batch: must be positive, got {0}", options.batch));
  if (options.seqLen < 0)
    return optionError(
        llvm::formatv("--seq-len: must be positive, got {0}", options.seqLen));
  if (options.kvCacheLength < 0)
    return optionError(llvm::formatv("--kv-cache: must be positive, got {0}",
                                     options.kvCacheLength));
  if (options.computeType != runtime::DType::F32 &&
      options.computeType != runtime::DType::BF16 &&
      options.computeType != runtime::DType::F16)
    return optionError(llvm::formatv("--dtype: expected f32, bf16 or f16, got {0}",
                                     runtime::getDTypeName(options.computeType)));
  int64_t seqLen = getSeqLen(config, options);
  if (seqLen > config.maxPositions)
    return optionError(llvm::formatv(
        "--seq-len: {0} exceeds the model's context length ({1} = {2})",
        seqLen, config.maxPositionsField, config.maxPositions));
  if (options.kvCacheLength > config.maxPositions)
    return optionError(llvm::formatv(
        "--kv-cache: {0} exceeds the model's context length ({1} = {2})",
        options.kvCacheLength, config.maxPositionsField, config.maxPositions));
  if (options.kvCacheLength && options.kvCacheLength < seqLen)
    return optionError(llvm::formatv(
        "--kv-cache: a cache of {0} positions cannot hold the {1} tokens of "
        "one prefill (--seq-len)",
        options.kvCacheLength, seqLen));

  // OPT's position offset is index arithmetic; callers load tfm and func.
  context.loadDialect<arith::ArithDialect>();
  OpBuilder b(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(
      NameLoc::get(b.getStringAttr(config.modelType)));
  SmallVector<Entry> entries{Entry::Forward};
  if (options.kvCacheLength)
    entries.append({Entry::Prefill, Entry::Decode});
  for (Entry entry : entries)
    module->push_back(EntryBuilder(context, config, options, entry).build());

  // The builder is meant to produce valid IR for every accepted config; a
  // failure here is an importer bug, reported rather than printed as IR.
  if (failed(verify(*module)))
    return optionError("internal error: the imported module does not verify");
  return module;
}

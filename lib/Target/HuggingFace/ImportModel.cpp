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
                             entry == Entry::Decode) {}

  func::FuncOp build();

private:
  //===--- Arguments -------------------------------------------------------===//

  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
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
    if (IntegerAttr window = slidingWindow(k))
      attention.setSlidingWindowAttr(window);
    return attention;
  }

  /// The model's sliding window for attention over `keys`, or null where
  /// there is none or it cannot mask anything (no query is W positions past
  /// a key of the tensor).
  IntegerAttr slidingWindow(Value keys) {
    int64_t keyLength = cast<RankedTensorType>(keys.getType()).getDimSize(2);
    if (c.slidingWindow <= 0 || c.slidingWindow >= keyLength)
      return {};
    return b.getI64IntegerAttr(c.slidingWindow);
  }

  /// RoPE of heads `x`: the config's scaled frequencies when it has a
  /// scaling, else plain RoPE from theta.
  Value rope(Value x, const Twine &name) {
    auto op = RoPEOp::create(b, loc(name), x.getType(), x, pos,
                             b.getF32FloatAttr(c.ropeTheta));
    if (c.ropeScaling != RoPEScaling::None) {
      if (!ropeInvFreq)
        ropeInvFreq = b.getDenseF32ArrayAttr(computeRoPEInverseFrequencies(c));
      op.setInvFreqAttr(ropeInvFreq);
    }
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

  //===--- Families --------------------------------------------------------===//

  Value buildGPT2();
  Value gpt2Block(int64_t layer, Value h);
  Value buildLlama();
  Value llamaBlock(int64_t layer, Value h);

  OpBuilder b;
  const ModelConfig &c;
  Entry entry;
  int64_t batch, seqLen, cacheLength;
  /// `pos` is a [B] tensor of each sequence's position, not one index.
  bool perSequencePositions;

  Block *body = nullptr;
  SmallVector<DictionaryAttr> argAttrs;
  unsigned paramEnd = 0;
  llvm::StringMap<Value> params;
  Value ids, pos;
  SmallVector<Value> cacheResults;
  SmallVector<std::string> cacheNames;
  DenseF32ArrayAttr ropeInvFreq;
};
} // namespace

//===----------------------------------------------------------------------===//
// GPT-2
//===----------------------------------------------------------------------===//

Value EntryBuilder::buildGPT2() {
  int64_t d = c.hiddenSize;
  Value wte = param("wte.weight", {c.vocabSize, d});
  Value h = EmbeddingOp::create(b, loc("wte"), tensor({batch, seqLen, d}), ids,
                                wte);
  h = PositionEmbeddingOp::create(b, loc("wpe"), h.getType(), h,
                                  param("wpe.weight", {c.maxPositions, d}),
                                  pos);
  for (int64_t i = 0; i < c.numLayers; ++i)
    h = gpt2Block(i, h);
  h = LayerNormOp::create(b, loc("ln_f"), h.getType(), h,
                          param("ln_f.weight", {d}), param("ln_f.bias", {d}),
                          b.getF32FloatAttr(c.normEps));
  Value head = c.tieWordEmbeddings ? wte : param("lm_head.weight", {c.vocabSize, d});
  return LMHeadOp::create(b, loc("lm_head"), tensor({batch, seqLen, c.vocabSize}),
                          h, head, WeightLayout::out_in);
}

Value EntryBuilder::gpt2Block(int64_t layer, Value h) {
  std::string p = llvm::formatv("h.{0}.", layer).str();
  std::string attn = p + "attn";
  int64_t d = c.hiddenSize, m = c.intermediateSize;
  auto layerNorm = [&](Value x, StringRef name) -> Value {
    return LayerNormOp::create(b, loc(p + name), x.getType(), x,
                               param(p + name + ".weight", {d}),
                               param(p + name + ".bias", {d}),
                               b.getF32FloatAttr(c.normEps));
  };

  // Attention: one fused c_attn (Conv1D, [d, 3d]) split into q, k, v.
  Value x = layerNorm(h, "ln_1");
  Value qkv = linear(x, attn + ".c_attn", d, 3 * d, WeightLayout::in_out,
                     /*hasBias=*/true);
  auto part = tensor({batch, seqLen, d});
  auto split = SplitOp::create(b, loc(attn + ".split_qkv"),
                               TypeRange{part, part, part}, qkv);
  Value q = splitHeads(split.getResult(0), c.numHeads, attn + ".split_heads_q");
  Value k = splitHeads(split.getResult(1), c.numHeads, attn + ".split_heads_k");
  Value v = splitHeads(split.getResult(2), c.numHeads, attn + ".split_heads_v");
  // scale_attn_weights = false: GPT2Attention skips the 1/sqrt(dh) scale.
  FloatAttr scale = c.scaleAttnWeights ? FloatAttr() : b.getF32FloatAttr(1.0f);
  Value a = attend(layer, attn, q, k, v, scale);
  a = MergeHeadsOp::create(b, loc(attn + ".merge_heads"), part, a);
  a = linear(a, attn + ".c_proj", d, d, WeightLayout::in_out, true);
  h = residual(h, a, attn + ".residual");

  // MLP: c_fc, GELU, c_proj.
  x = layerNorm(h, "ln_2");
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
  Value embed = param("model.embed_tokens.weight", {c.vocabSize, d});
  Value h = EmbeddingOp::create(b, loc("model.embed_tokens"),
                                tensor({batch, seqLen, d}), ids, embed);
  for (int64_t i = 0; i < c.numLayers; ++i)
    h = llamaBlock(i, h);
  h = RMSNormOp::create(b, loc("model.norm"), h.getType(), h,
                        param("model.norm.weight", {d}),
                        b.getF32FloatAttr(c.normEps));
  Value head =
      c.tieWordEmbeddings ? embed : param("lm_head.weight", {c.vocabSize, d});
  return LMHeadOp::create(b, loc("lm_head"),
                          tensor({batch, seqLen, c.vocabSize}), h, head,
                          WeightLayout::out_in);
}

Value EntryBuilder::llamaBlock(int64_t layer, Value h) {
  std::string p = llvm::formatv("model.layers.{0}.", layer).str();
  std::string attn = p + "self_attn";
  int64_t d = c.hiddenSize, m = c.intermediateSize, dh = c.headDim;
  int64_t qWidth = c.numHeads * dh, kvWidth = c.numKVHeads * dh;
  auto rmsNorm = [&](Value x, StringRef name) -> Value {
    return RMSNormOp::create(b, loc(p + name), x.getType(), x,
                             param(p + name + ".weight", {d}),
                             b.getF32FloatAttr(c.normEps));
  };
  // Qwen3: RMSNorm of each query/key head (weight [dh]) before RoPE.
  auto headNorm = [&](Value x, StringRef name) -> Value {
    std::string module = attn + "." + name.str();
    return RMSNormOp::create(b, loc(module), x.getType(), x,
                             param(module + ".weight", {dh}),
                             b.getF32FloatAttr(c.normEps));
  };
  const WeightLayout outIn = WeightLayout::out_in;

  // Attention: separate q/k/v projections; k and v have Hkv heads (GQA/MQA)
  // and the head size need not be d / H. Qwen2 has biases on q/k/v only.
  bool qkvBias = c.attentionBias || c.qkvBias;
  Value x = rmsNorm(h, "input_layernorm");
  Value q = linear(x, attn + ".q_proj", d, qWidth, outIn, qkvBias);
  Value k = linear(x, attn + ".k_proj", d, kvWidth, outIn, qkvBias);
  Value v = linear(x, attn + ".v_proj", d, kvWidth, outIn, qkvBias);
  q = splitHeads(q, c.numHeads, attn + ".split_heads_q");
  k = splitHeads(k, c.numKVHeads, attn + ".split_heads_k");
  v = splitHeads(v, c.numKVHeads, attn + ".split_heads_v");
  if (c.qkNorm) {
    q = headNorm(q, "q_norm");
    k = headNorm(k, "k_norm");
  }
  q = rope(q, attn + ".rope_q");
  k = rope(k, attn + ".rope_k");
  Value a = attend(layer, attn, q, k, v, FloatAttr());
  a = MergeHeadsOp::create(b, loc(attn + ".merge_heads"),
                           tensor({batch, seqLen, qWidth}), a);
  a = linear(a, attn + ".o_proj", qWidth, d, outIn, c.attentionBias);
  h = residual(h, a, attn + ".residual");

  x = rmsNorm(h, "post_attention_layernorm");
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
  Value gate = linear(x, mlp + ".gate_proj", d, m, outIn, c.mlpBias);
  Value up = linear(x, mlp + ".up_proj", d, m, outIn, c.mlpBias);
  x = SwiGLUOp::create(b, loc(mlp + ".act"), gate.getType(), gate, up);
  x = linear(x, mlp + ".down_proj", m, d, outIn, c.mlpBias);
  return residual(h, x, mlp + ".residual");
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
                    "tfm.input", "input_ids");
  if (perSequencePositions)
    pos = addArgument(1, RankedTensorType::get({batch}, b.getI64Type()),
                      "tfm.input", "positions");
  else if (entry != Entry::Forward)
    pos = addArgument(1, b.getIndexType(), "tfm.input", "position");
  paramEnd = body->getNumArguments();

  b.setInsertionPointToStart(body);
  Value logits =
      c.family == ModelFamily::GPT2 ? buildGPT2() : buildLlama();

  SmallVector<Value> results{logits};
  SmallVector<Attribute> resultAttrs{b.getDictionaryAttr(
      b.getNamedAttr("tfm.output", b.getStringAttr("logits")))};
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

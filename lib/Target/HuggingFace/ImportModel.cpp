//===- ImportModel.cpp - whole tfm models from Hugging Face configs -------===//
//
// The pieces every family's builder uses (EntryBuilder.h) and the entry
// functions around them; each family's layers are in Families/.
//
//===----------------------------------------------------------------------===//
#include "tfm/Target/HuggingFace/ImportModel.h"

#include "EntryBuilder.h"
#include "Families/Families.h"

#include "tfm/Runtime/Error.h"

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
                             embedWeight, /*first_row=*/Value(), scale);
}

/// The decoder layers; a generation prefill that returns one position's
/// logits per sequence then keeps only that position (the final norm and the
/// LM head are per position).
Value EntryBuilder::decoderLayers(Value h) {
  auto block = getFamily(c.family).block;
  for (int64_t i = 0; i < c.numLayers; ++i)
    h = (this->*block)(i, h);
  if (!lastLogits)
    return h;
  auto type = cast<RankedTensorType>(h.getType());
  return GatherPositionsOp::create(
      b, loc("logit_rows"),
      type.clone({type.getDimSize(0), 1, type.getDimSize(2)}), h, logitRows);
}

Value EntryBuilder::lmHead(Value h, StringRef module, int64_t width) {
  Value weight = c.tieWordEmbeddings
                     ? embedWeight
                     : param(module + ".weight", {c.vocabSize, width});
  int64_t rows = cast<RankedTensorType>(h.getType()).getDimSize(1);
  auto head = LMHeadOp::create(
      b, loc(module), tensor({batch, rows, c.vocabSize}), h, weight,
      WeightLayout::out_in,
      c.finalLogitSoftcap > 0 ? b.getF32FloatAttr(c.finalLogitSoftcap)
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
// Entry functions
//===----------------------------------------------------------------------===//

func::FuncOp EntryBuilder::build() {
  std::string name = entry == Entry::Forward   ? "forward"
                     : entry == Entry::Prefill ? "prefill"
                     : entry == Entry::Decode
                         ? "decode"
                         : llvm::formatv("{0}_block_{1}", c.modelType,
                                         blockLayer)
                               .str();
  // The block is built detached and moved into the function at the end, once
  // the argument list (grown as parameters are first used) is known.
  auto block = std::make_unique<Block>();
  body = block.get();
  if (entry == Entry::Block)
    return buildBlockFunction(name, std::move(block));
  ids = addArgument(0, RankedTensorType::get({batch, seqLen}, b.getI64Type()),
                    kInputAttrName, "input_ids");
  if (perSequencePositions)
    pos = addArgument(1, RankedTensorType::get({batch}, b.getI64Type()),
                      kInputAttrName, "positions");
  else if (usesCache())
    pos = addArgument(1, b.getIndexType(), kInputAttrName, "position");
  if (lastLogits)
    logitRows = addArgument(body->getNumArguments(),
                            RankedTensorType::get({batch}, b.getI64Type()),
                            kInputAttrName, "logit_positions");
  paramEnd = body->getNumArguments();

  b.setInsertionPointToStart(body);
  Value logits = (this->*getFamily(c.family).buildLogits)();

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

func::FuncOp EntryBuilder::buildBlockFunction(StringRef name,
                                              std::unique_ptr<Block> block) {
  Value hidden = addArgument(0, tensor({batch, seqLen, c.hiddenSize}),
                             kInputAttrName, "hidden");
  paramEnd = body->getNumArguments();
  b.setInsertionPointToStart(body);
  Value h = (this->*getFamily(c.family).block)(blockLayer, hidden);
  func::ReturnOp::create(b, loc("return"), h);
  auto fn = func::FuncOp::create(
      loc(name), name, b.getFunctionType(body->getArgumentTypes(), h.getType()));
  fn.getBody().push_back(block.release());
  fn.setAllArgAttrs(ArrayRef<DictionaryAttr>(argAttrs));
  fn.setResultAttr(0, kOutputAttrName, b.getStringAttr("hidden"));
  fn->setAttr(kBlockAttrName, b.getUnitAttr());
  return fn;
}

static llvm::Error optionError(const Twine &message) {
  return runtime::makeError(message);
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
  if (options.block) {
    if (*options.block < 0 || *options.block >= config.numLayers)
      return optionError(llvm::formatv(
          "--block: layer {0} is out of range: the model has {1} layers",
          *options.block, config.numLayers));
    if (options.kvCacheLength)
      return optionError("--block: a single layer is built without a KV "
                         "cache; drop --kv-cache");
  }
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
  if (options.block)
    entries = {Entry::Block};
  for (Entry entry : entries)
    module->push_back(EntryBuilder(context, config, options, entry).build());

  // The builder is meant to produce valid IR for every accepted config; a
  // failure here is an importer bug, reported rather than printed as IR.
  if (failed(verify(*module)))
    return optionError("internal error: the imported module does not verify");
  return module;
}

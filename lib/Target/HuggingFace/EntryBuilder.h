//===- EntryBuilder.h - builds one entry function of a model ----*- C++ -*-===//
//
// One EntryBuilder builds one entry function (@forward, @prefill or
// @decode). Parameter arguments are created on first use, so each op names
// the checkpoint tensors it reads in one place and the argument list follows
// the order of the model; a tied LM head simply reads the embedding's
// argument again. Every op gets a NameLoc spelled like the Hugging Face
// module it stands for ("h.0.attn.c_attn"), which the ledger uses as its
// label and diagnostics point at.
//
// The shared pieces (arguments, attention, norms, MLPs, the LM head) are
// defined in ImportModel.cpp; each family's builder in Families/.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_TARGET_HUGGINGFACE_ENTRYBUILDER_H
#define TFM_LIB_TARGET_HUGGINGFACE_ENTRYBUILDER_H

#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Target/HuggingFace/ImportModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::tfm::hf {

/// The entry functions, and one decoder layer as a `tfm.block`.
enum class Entry { Forward, Prefill, Decode, Block };

class EntryBuilder {
public:
  EntryBuilder(MLIRContext &context, const ModelConfig &config,
               const ImportOptions &options, Entry entry)
      : b(&context), c(config), entry(entry), batch(options.batch),
        seqLen(entry == Entry::Decode ? 1 : getSeqLen(config, options)),
        blockLayer(options.block.value_or(0)),
        cacheLength(options.kvCacheLength),
        prefillLength(getSeqLen(config, options)),
        raggedBatch(options.perSequencePositions),
        lastLogits(options.prefillLastLogits && entry == Entry::Prefill),
        longRoPEFactors(options.longRoPEFactors),
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

  //===--- Families: one per entry of the table in Families.cpp ------------===//
  // Each builds the entry's body from the token ids to the logits, in its
  // Families/<family>.cpp.

  Value buildGPT2();
  Value buildLlama();
  Value buildGemma();
  Value buildPhi3();
  Value buildGPTNeoX();
  Value buildOPT();

  // Their decoder layers: `h` after layer `layer`.
  Value gpt2Block(int64_t layer, Value h);
  Value llamaBlock(int64_t layer, Value h);
  Value olmo2Block(int64_t layer, Value h);
  Value gemmaBlock(int64_t layer, Value h);
  Value phi3Block(int64_t layer, Value h);
  Value gptNeoXBlock(int64_t layer, Value h);
  Value optBlock(int64_t layer, Value h);

private:
  //===--- Arguments -------------------------------------------------------===//

  /// The generation entries, which keep their keys and values in caches.
  bool usesCache() const {
    return entry == Entry::Prefill || entry == Entry::Decode;
  }

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
    return param(name, tensor(shape));
  }
  /// The same for a tensor of `type` (not the model's float type).
  Value param(const Twine &name, RankedTensorType type) {
    std::string key = name.str();
    if (Value existing = params.lookup(key)) {
      assert(existing.getType() == type &&
             "one checkpoint tensor read with two types");
      return existing;
    }
    Value arg = addArgument(paramEnd++, type, kParamAttrName, key);
    params[key] = arg;
    return arg;
  }

  //===--- Shared pieces ---------------------------------------------------===//

  /// `module.weight` (and `module.bias`) applied to the last dimension. In
  /// an act-order GPTQ checkpoint the weight's input rows are held sorted
  /// by group and the input is reordered alike by `module.input_order`
  /// (tfm/Runtime/Gptq.h).
  Value linear(Value x, const Twine &module, int64_t in, int64_t out,
               WeightLayout layout, bool hasBias) {
    std::string name = module.str();
    if (c.packedInts && c.packedInts->actOrder)
      x = PermuteFeaturesOp::create(
          b, loc(name + ".input_order"), x.getType(), x,
          param(name + ".input_order",
                RankedTensorType::get({in}, b.getI32Type())));
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
    int64_t slots = getCacheSlots(layer);
    bool ring = usesCache() && slots < cacheLength;
    if (usesCache()) {
      auto cacheType = tensor({batch, c.numKVHeads, slots, c.headDim});
      k = writeCache(layer, "key", cacheType, k, prefix, ring);
      v = writeCache(layer, "value", cacheType, v, prefix, ring);
    }
    auto attention =
        AttentionOp::create(b, loc(prefix + ".attention"), q.getType(), q, k,
                            v, pos, b.getBoolAttr(true), scale);
    if (ring) {
      attention.setSlidingWindowAttr(
          b.getI64IntegerAttr(c.getLayerWindow(layer)));
      attention.setRingCache(true);
    } else if (IntegerAttr window = slidingWindow(layer, k)) {
      attention.setSlidingWindowAttr(window);
    }
    if (c.attnLogitSoftcap > 0)
      attention.setLogitSoftcapAttr(b.getF32FloatAttr(c.attnLogitSoftcap));
    return attention;
  }

  /// The slots of layer `layer`'s KV caches: the whole generation's
  /// `cacheLength`, or for a sliding layer of window W a ring of W + S - 1
  /// (S the prefill chunk: the decode entry's single query needs W, and a
  /// chunk's first query still sees W - 1 keys before it while the chunk
  /// writes its S), when that is shorter. Both entries share the caches, so
  /// both size them by the chunk. A ragged batch keeps whole caches: the
  /// padding a short sequence's prefill writes past its end would wrap onto
  /// keys its decoding still sees.
  int64_t getCacheSlots(int64_t layer) const {
    int64_t window = c.getLayerWindow(layer);
    if (window <= 0 || raggedBatch)
      return cacheLength;
    return std::min(cacheLength, window + prefillLength - 1);
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
      int64_t maxLength = usesCache() ? cacheLength : seqLen;
      if (longRoPEFactors)
        maxLength = c.ropeOriginalMaxPositions + (*longRoPEFactors ? 1 : 0);
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
                   Value update, StringRef prefix, bool ring) {
    std::string name = llvm::formatv("{0}.{1}", layer, which).str();
    // Caches go last, after every parameter.
    Value cache = addArgument(body->getNumArguments(), type, kKVCacheAttrName,
                              name, "kv_cache." + name);
    Value written =
        KVCacheWriteOp::create(b, loc(prefix + "." + which + "_cache"), type,
                               cache, update, pos, ring);
    cacheResults.push_back(written);
    cacheNames.push_back(name);
    return written;
  }

  //===--- Pieces the families share (ImportModel.cpp) ---------------------===//

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
  /// `num_hidden_layers` applications of the family's decoder layer.
  Value decoderLayers(Value h);
  /// A Block entry: the family's layer `blockLayer` from hidden to hidden.
  func::FuncOp buildBlockFunction(StringRef name, std::unique_ptr<Block> block);
  /// The LM head `module` over [B, S, width]: the embedding when tied, else
  /// its own `module.weight` [V, width].
  Value lmHead(Value h, StringRef module, int64_t width);
  /// Llama's gated SiLU MLP `module` (gate_proj, up_proj, down_proj) of
  /// width `m`.
  Value swigluMLP(Value x, const Twine &module, int64_t m);
  /// Gemma's GeGLU MLP `module` (gate_proj, up_proj, down_proj, no biases).
  Value gegluMLP(Value x, const Twine &module);

  OpBuilder b;
  const ModelConfig &c;
  Entry entry;
  int64_t batch, seqLen, blockLayer, cacheLength;
  /// S of @prefill (seqLen there), which sizes the ring caches of both
  /// generation entries.
  int64_t prefillLength;
  /// A ragged batch's entries (whole caches for every layer).
  bool raggedBatch;
  /// ImportOptions::prefillLastLogits, for this entry: the logits of the
  /// rows `logitRows` only.
  bool lastLogits;
  /// ImportOptions::longRoPEFactors.
  std::optional<bool> longRoPEFactors;
  /// `pos` is a [B] tensor of each sequence's position, not one index.
  bool perSequencePositions;
  /// Of every float tensor: parameters, activations, KV caches.
  FloatType elementType;

  Block *body = nullptr;
  SmallVector<DictionaryAttr> argAttrs;
  unsigned paramEnd = 0;
  llvm::StringMap<Value> params;
  Value ids, pos, logitRows;
  SmallVector<Value> cacheResults;
  SmallVector<std::string> cacheNames;
  DenseF32ArrayAttr ropeInvFreq;
  /// The token embedding table (embedTokens), read again by a tied head.
  Value embedWeight;
};
} // namespace mlir::tfm::hf

#endif // TFM_LIB_TARGET_HUGGINGFACE_ENTRYBUILDER_H

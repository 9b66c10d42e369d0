//===- GgufModel.cpp - a GGUF file as a Hugging Face model ----------------===//
//
// The tables here are llama.cpp's (src/llama-arch.cpp's tensor names and
// metadata keys; convert_hf_to_gguf.py's choices), read in reverse.
//
//===----------------------------------------------------------------------===//
#include "tfm/Runtime/GgufModel.h"
#include "tfm/Runtime/Error.h"
#include "tfm/Runtime/FusedExperts.h"
#include "tfm/Runtime/Gguf.h"
#include "tfm/Runtime/Quantize.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstring>
#include <optional>

using namespace mlir::tfm::runtime;
using llvm::Error;
using llvm::Expected;
namespace json = llvm::json;


bool mlir::tfm::runtime::isGgufPath(llvm::StringRef path) {
  return path.ends_with(".gguf");
}

/// RoPE factors (Llama 3.1's divisors, Phi-3's long and short factors):
/// read into the config, not parameters.
static constexpr llvm::StringLiteral kRopeFreqsTensor = "rope_freqs.weight";
static constexpr llvm::StringLiteral kRopeLongTensor =
    "rope_factors_long.weight";
static constexpr llvm::StringLiteral kRopeShortTensor =
    "rope_factors_short.weight";

/// The `pairs` finite positive F32 values of RoPE factor tensor `tensor`.
static Expected<json::Array> readRoPEFactors(const GgufFile &file,
                                             const GgufTensor &tensor,
                                             uint64_t pairs) {
  if (tensor.type->name != "F32" || tensor.shape.size() != 1 ||
      uint64_t(tensor.shape[0]) != pairs)
    return makeError(file.getPath(),
                     "tensor '{0}' is {1} of shape {2}: RoPE frequency "
                     "factors are F32, one per rotated pair ({3})",
                     tensor.name, tensor.type->name, formatShape(tensor.shape),
                     pairs);
  json::Array factors;
  for (uint64_t i = 0; i < pairs; ++i) {
    float f;
    std::memcpy(&f, tensor.data + 4 * i, 4);
    if (!std::isfinite(f) || f <= 0)
      return makeError(file.getPath(),
                       "tensor '{0}' holds {1} at {2}: RoPE frequency "
                       "factors divide frequencies and must be finite and "
                       "positive",
                       tensor.name, f, i);
    factors.push_back(double(f));
  }
  return factors;
}

namespace {
/// A llama.cpp architecture tfm builds, and the Hugging Face model it is.
struct Architecture {
  llvm::StringRef name;
  llvm::StringRef modelType;
  llvm::StringRef hfClass;
  /// convert_hf_to_gguf.py's LlamaModel permutes the rows of Q and K so
  /// that ggml's RoPE on adjacent pairs computes what rotate_half does on
  /// halves; tfm's RoPE is the Hugging Face one, so they are permuted back.
  bool permutedQK;
  /// Phi-3 keeps Hugging Face's fused gate_up_proj as `ffn_up` (and its
  /// fused qkv_proj as `attn_qkv`).
  bool fusedGateUp;
  /// The family reads `sliding_window` (Phi-3): `attention.sliding_window`
  /// is its value. Elsewhere the key is refused.
  bool slidingWindow;
  /// convert_hf_to_gguf.py's GemmaModel stores each norm's weight plus one
  /// (ggml's norm multiplies by it, Gemma's by 1 + w): read back minus one.
  bool normsPlusOne;
  /// Gemma 2 and 3: a norm before and after each sublayer. llama.cpp's
  /// `ffn_norm` is then the pre-MLP norm, not Llama's post-attention one,
  /// and `post_attention_norm` / `post_ffw_norm` the sublayers' output norms.
  bool sandwichNorms = false;
  /// rope.freq_base when the file has none (Gemma 3: 1e6 for the global
  /// layers).
  double defaultRopeTheta = 10000.0;
};
} // namespace

static const Architecture kArchitectures[] = {
    {"llama", "llama", "LlamaForCausalLM", true, false, false, false},
    {"qwen2", "qwen2", "Qwen2ForCausalLM", false, false, false, false},
    {"qwen3", "qwen3", "Qwen3ForCausalLM", false, false, false, false},
    {"phi3", "phi3", "Phi3ForCausalLM", false, true, true, false},
    {"gemma", "gemma", "GemmaForCausalLM", false, false, false, true},
    {"gemma2", "gemma2", "Gemma2ForCausalLM", false, false, true, true, true},
    {"gemma3", "gemma3_text", "Gemma3ForCausalLM", false, false, true, true,
     true, 1e6},
    {"qwen3moe", "qwen3_moe", "Qwen3MoeForCausalLM", false, false, false,
     false},
};

namespace {
/// The Hugging Face model of an architecture's files whose layers hold
/// experts (`<arch>.expert_count`): llama.cpp's converter writes Mixtral as
/// `llama`. Its router is `blk.N.ffn_gate_inp`, its experts 3-D
/// `ffn_{gate,up,down}_exps` [E, rows, cols], read as views of each expert
/// under `names` (the family's own, tfm/Runtime/FusedExperts.h).
struct ExpertModel {
  llvm::StringRef arch, modelType, hfClass;
  /// The config field of the expert count.
  llvm::StringRef countField;
  ExpertTensorNames names;
};
} // namespace

static const ExpertModel kExpertModels[] = {
    {"llama", "mixtral", "MixtralForCausalLM", "num_local_experts",
     kMixtralExpertNames},
    {"qwen3moe", "qwen3_moe", "Qwen3MoeForCausalLM", "num_experts",
     kQwenMoEExpertNames},
};

/// The expert model of `file` (of `arch`), null when its layers are dense;
/// an error when it has experts tfm does not build.
static Expected<const ExpertModel *> getExpertModel(const GgufFile &file,
                                                    const Architecture &arch) {
  std::string key = (arch.name + ".expert_count").str();
  Expected<std::optional<uint64_t>> count = file.getUnsigned(key);
  if (!count)
    return count.takeError();
  if (!*count || **count == 0)
    return nullptr;
  for (const ExpertModel &model : kExpertModels)
    if (model.arch == arch.name)
      return &model;
  return makeError(file.getPath(),
                   "{0}: experts are not supported for {1} GGUF models", key,
                   arch.name);
}

/// The file's architecture, or an error naming it.
static Expected<const Architecture *> getArchitecture(const GgufFile &file) {
  Expected<std::optional<llvm::StringRef>> name =
      file.getString("general.architecture");
  if (!name)
    return name.takeError();
  if (!*name)
    return makeError(file.getPath(), "no general.architecture: not a model "
                                     "(llama.cpp's converter writes it)");
  for (const Architecture &arch : kArchitectures)
    if (arch.name == **name)
      return &arch;
  return makeError(file.getPath(),
                   "general.architecture '{0}': tfm reads GGUF models of "
                   "architecture llama, qwen2, qwen3, qwen3moe, phi3, gemma, "
                   "gemma2 and gemma3",
                   **name);
}

/// llama.cpp's per-layer tensor names (after "blk.N.") -> Hugging Face's
/// (after "model.layers.N.").
static const std::pair<llvm::StringRef, llvm::StringRef> kLayerTensors[] = {
    {"attn_norm.weight", "input_layernorm.weight"},
    {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_q.bias", "self_attn.q_proj.bias"},
    {"attn_k.weight", "self_attn.k_proj.weight"},
    {"attn_k.bias", "self_attn.k_proj.bias"},
    {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_qkv.weight", "self_attn.qkv_proj.weight"},
    {"attn_v.bias", "self_attn.v_proj.bias"},
    {"attn_output.weight", "self_attn.o_proj.weight"},
    {"attn_q_norm.weight", "self_attn.q_norm.weight"},
    {"attn_k_norm.weight", "self_attn.k_norm.weight"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"},
    {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},
    {"ffn_down.weight", "mlp.down_proj.weight"},
};
/// Gemma 2's and 3's norms (sandwichNorms), before kLayerTensors.
static const std::pair<llvm::StringRef, llvm::StringRef> kSandwichNorms[] = {
    {"post_attention_norm.weight", "post_attention_layernorm.weight"},
    {"ffn_norm.weight", "pre_feedforward_layernorm.weight"},
    {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"},
};
static const std::pair<llvm::StringRef, llvm::StringRef> kModelTensors[] = {
    {"token_embd.weight", "model.embed_tokens.weight"},
    {"output_norm.weight", "model.norm.weight"},
    {"output.weight", "lm_head.weight"},
};

/// The Hugging Face name of GGUF tensor `name` of a model of `arch` (with
/// experts named `experts`, if any); empty if it has none. The experts' 3-D
/// tensors are split apart (GgufTensors::addExperts).
static std::string getHuggingFaceName(llvm::StringRef name,
                                      const Architecture &arch,
                                      const ExpertModel *experts) {
  for (auto [gguf, hf] : kModelTensors)
    if (name == gguf)
      return hf.str();
  llvm::StringRef rest = name;
  unsigned layer;
  if (!rest.consume_front("blk.") || rest.consumeInteger(10, layer) ||
      !rest.consume_front("."))
    return {};
  if (experts && rest == "ffn_gate_inp.weight")
    return llvm::formatv("model.layers.{0}.{1}.gate.weight", layer,
                         experts->names.module)
        .str();
  if (arch.fusedGateUp && rest == "ffn_up.weight")
    return llvm::formatv("model.layers.{0}.mlp.gate_up_proj.weight", layer)
        .str();
  if (arch.sandwichNorms)
    for (auto [gguf, hf] : kSandwichNorms)
      if (rest == gguf)
        return llvm::formatv("model.layers.{0}.{1}", layer, hf).str();
  for (auto [gguf, hf] : kLayerTensors)
    if (rest == gguf)
      return llvm::formatv("model.layers.{0}.{1}", layer, hf).str();
  return {};
}

Expected<std::string>
mlir::tfm::runtime::getGgufConfigJson(const GgufFile &file) {
  Expected<const Architecture *> arch = getArchitecture(file);
  if (!arch)
    return arch.takeError();
  std::string prefix = ((*arch)->name + ".").str();
  llvm::StringRef path = file.getPath();
  json::Object config;
  config["model_type"] = (*arch)->modelType;
  config["architectures"] = json::Array{(*arch)->hfClass};
  config["hidden_act"] = "silu";
  config["torch_dtype"] = "float32";
  Error error = Error::success();
  // Reads `prefix + key` with `get` (absent: nullopt; required: an error),
  // and sets config field `field` (if named) to its value; errors gather in
  // `error`.
  auto read = [&](auto get, llvm::StringRef key, llvm::StringRef field,
                  bool required) {
    auto value = (file.*get)(prefix + key.str());
    using Value = std::decay_t<decltype(**value)>;
    if (!value) {
      error = llvm::joinErrors(std::move(error), value.takeError());
      return std::optional<Value>();
    }
    if (!*value && required)
      error = llvm::joinErrors(
          std::move(error),
          makeError(path, "no {0}{1} (the model's {2})", prefix, key, field));
    if (*value && !field.empty()) {
      if constexpr (std::is_integral_v<Value>)
        config[field] = int64_t(std::min<uint64_t>(**value, INT64_MAX));
      else
        config[field] = **value;
    }
    return std::optional<Value>(*value);
  };
  auto count = [&](llvm::StringRef key, llvm::StringRef field, bool required) {
    return read(&GgufFile::getUnsigned, key, field, required);
  };
  auto real = [&](llvm::StringRef key, llvm::StringRef field, bool required) {
    return read(&GgufFile::getFloat, key, field, required);
  };
  count("embedding_length", "hidden_size", true);
  count("block_count", "num_hidden_layers", true);
  count("feed_forward_length", "intermediate_size", true);
  std::optional<uint64_t> heads =
      count("attention.head_count", "num_attention_heads", true);
  if (!count("attention.head_count_kv", "num_key_value_heads", false) &&
      heads)
    config["num_key_value_heads"] = int64_t(*heads);
  count("context_length", "max_position_embeddings", true);
  real("attention.layer_norm_rms_epsilon", "rms_norm_eps", true);
  if (!real("rope.freq_base", "rope_theta", false))
    config["rope_theta"] = (*arch)->defaultRopeTheta;
  std::optional<uint64_t> keyLength =
      count("attention.key_length", "head_dim", false);
  std::optional<uint64_t> valueLength =
      count("attention.value_length", "", false);
  std::optional<uint64_t> ropeDims = count("rope.dimension_count", "", false);
  if (error)
    return std::move(error);
  (void)error;
  if (valueLength && keyLength && *valueLength != *keyLength)
    return makeError(path,
                     "{0}attention.value_length {1} differs from "
                     "{0}attention.key_length {2}: tfm's attention has one "
                     "head size",
                     prefix, *valueLength, *keyLength);
  uint64_t hidden = uint64_t(*config.getInteger("hidden_size"));
  uint64_t headDim =
      keyLength ? *keyLength : (heads && *heads ? hidden / *heads : 0);
  if (ropeDims && *ropeDims != headDim)
    return makeError(path,
                     "{0}rope.dimension_count {1} is not the head size {2}: "
                     "RoPE on part of a head is not built for {3} models",
                     prefix, *ropeDims, headDim, (*arch)->name);
  if ((*arch)->slidingWindow)
    count("attention.sliding_window", "sliding_window", false);
  if ((*arch)->sandwichNorms) {
    // Absent, the family's defaults are llama.cpp's too (Gemma 2 caps at
    // 50 and 30, Gemma 3 not at all).
    real("attn_logit_softcapping", "attn_logit_softcapping", false);
    real("final_logit_softcapping", "final_logit_softcapping", false);
    // The files do not store query_pre_attn_scalar: llama.cpp scales by
    // 1/sqrt(head size), but by 1/sqrt(d / heads) for the 27B models (46
    // and 62 layers), whose configs give that.
    std::optional<int64_t> layers = config.getInteger("num_hidden_layers");
    bool is27B =
        layers && ((*arch)->name == "gemma2" ? *layers == 46 : *layers == 62);
    if (heads && *heads)
      config["query_pre_attn_scalar"] =
          is27B || !keyLength ? int64_t(hidden / *heads) : int64_t(*keyLength);
  }
  if (error)
    return std::move(error);
  Expected<const ExpertModel *> experts = getExpertModel(file, **arch);
  if (!experts)
    return experts.takeError();
  if (*experts) {
    config["model_type"] = (*experts)->modelType;
    config["architectures"] = json::Array{(*experts)->hfClass};
    count("expert_count", (*experts)->countField, true);
    count("expert_used_count", "num_experts_per_tok", true);
    if ((*experts)->modelType == "qwen3_moe") {
      // What llama.cpp's qwen3moe graph does: every layer sparse, the
      // chosen experts' weights renormalised.
      count("expert_feed_forward_length", "moe_intermediate_size", true);
      config["norm_topk_prob"] = true;
      config["decoder_sparse_step"] = 1;
      config["mlp_only_layers"] = json::Array{};
    }
    if (error)
      return std::move(error);
  }
  for (llvm::StringRef key :
       {"attention.sliding_window", "rope.scaling.attn_factor",
        "rope.scaling.yarn_log_multiplier"})
    if (file.getValue(prefix + key.str()) &&
        !(key == "attention.sliding_window" && (*arch)->slidingWindow) &&
        !(key == "rope.scaling.attn_factor" && file.lookup(kRopeLongTensor)))
      return makeError(path, "{0}{1}: not supported for {2} GGUF models yet",
                       prefix, key, (*arch)->name);
  Expected<std::optional<llvm::StringRef>> scaling =
      file.getString(prefix + "rope.scaling.type");
  if (!scaling)
    return scaling.takeError();
  if (*scaling && **scaling != "none") {
    json::Object rope;
    if (**scaling != "linear" && **scaling != "yarn")
      return makeError(path,
                       "{0}rope.scaling.type '{1}': tfm reads none, linear "
                       "and yarn",
                       prefix, **scaling);
    rope["rope_type"] = **scaling;
    Expected<std::optional<double>> factor =
        file.getFloat(prefix + "rope.scaling.factor");
    if (!factor)
      return factor.takeError();
    if (*factor)
      rope["factor"] = **factor;
    Expected<std::optional<uint64_t>> original =
        file.getUnsigned(prefix + "rope.scaling.original_context_length");
    if (!original)
      return original.takeError();
    if (*original)
      rope["original_max_position_embeddings"] = int64_t(**original);
    config["rope_scaling"] = std::move(rope);
  }
  // The vocabulary is the embedding's rows, whatever the token list says.
  const GgufTensor *embedding = file.lookup("token_embd.weight");
  if (!embedding || embedding->shape.size() != 2)
    return makeError(path, "no 2-D tensor 'token_embd.weight' (the token "
                           "embedding)");
  config["vocab_size"] = embedding->shape[0];
  config["tie_word_embeddings"] = file.lookup("output.weight") == nullptr;
  // RoPE scalings stored as tensors of one factor per rotated pair: Llama
  // 3.1's divisors (generate_extra_tensors, no metadata) and Phi-3 128k's
  // long and short factors (with the original context and attention factor
  // as metadata).
  const GgufTensor *freqs = file.lookup(kRopeFreqsTensor);
  const GgufTensor *longFactors = file.lookup(kRopeLongTensor);
  const GgufTensor *shortFactors = file.lookup(kRopeShortTensor);
  if ((freqs || longFactors || shortFactors) && config.get("rope_scaling"))
    return makeError(path,
                     "tensor '{0}' and {1}rope.scaling.type: two RoPE "
                     "scalings",
                     freqs         ? kRopeFreqsTensor
                     : longFactors ? kRopeLongTensor
                                   : kRopeShortTensor,
                     prefix);
  if (freqs) {
    Expected<json::Array> factors = readRoPEFactors(file, *freqs, headDim / 2);
    if (!factors)
      return factors.takeError();
    config["rope_scaling"] = json::Object{{"rope_type", "gguf_rope_freqs"},
                                          {"factors", std::move(*factors)}};
  }
  if (longFactors || shortFactors) {
    if ((*arch)->name != "phi3" || !longFactors || !shortFactors)
      return makeError(path,
                       "tensor '{0}': long and short RoPE factors are read "
                       "for phi3 GGUF models, both of them",
                       longFactors ? kRopeLongTensor : kRopeShortTensor);
    Expected<json::Array> longArray =
        readRoPEFactors(file, *longFactors, headDim / 2);
    if (!longArray)
      return longArray.takeError();
    Expected<json::Array> shortArray =
        readRoPEFactors(file, *shortFactors, headDim / 2);
    if (!shortArray)
      return shortArray.takeError();
    Expected<std::optional<uint64_t>> original =
        file.getUnsigned(prefix + "rope.scaling.original_context_length");
    if (!original)
      return original.takeError();
    if (!*original)
      return makeError(path,
                       "no {0}rope.scaling.original_context_length beside "
                       "tensor '{1}': longrope picks its factors by it",
                       prefix, kRopeLongTensor);
    json::Object rope{
        {"rope_type", "longrope"},
        {"long_factor", std::move(*longArray)},
        {"short_factor", std::move(*shortArray)},
        {"original_max_position_embeddings", int64_t(**original)}};
    Expected<std::optional<double>> attention =
        file.getFloat(prefix + "rope.scaling.attn_factor");
    if (!attention)
      return attention.takeError();
    if (*attention)
      rope["attention_factor"] = **attention;
    config["rope_scaling"] = std::move(rope);
  }
  for (auto [key, field] :
       {std::pair<llvm::StringRef, llvm::StringRef>{
            "tokenizer.ggml.bos_token_id", "bos_token_id"},
        {"tokenizer.ggml.eos_token_id", "eos_token_id"},
        {"tokenizer.ggml.padding_token_id", "pad_token_id"}}) {
    Expected<std::optional<uint64_t>> id = file.getUnsigned(key);
    if (!id)
      return id.takeError();
    if (*id)
      config[field] = int64_t(std::min<uint64_t>(**id, INT64_MAX));
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(std::move(config));
  return text;
}

Expected<std::string>
mlir::tfm::runtime::readGgufConfigJson(llvm::StringRef path) {
  Expected<std::unique_ptr<GgufFile>> file = GgufFile::open(path);
  if (!file)
    return file.takeError();
  return getGgufConfigJson(**file);
}

namespace {
/// A GGUF file's tensors under their Hugging Face names.
class GgufTensors : public TensorFile {
public:
  static Expected<std::unique_ptr<TensorFile>>
  create(std::unique_ptr<GgufFile> file);

  llvm::StringRef getPath() const override { return file->getPath(); }
  const TensorView *lookup(llvm::StringRef name) const override;
  llvm::ArrayRef<TensorView> getTensors() const override { return views; }
  void releasePages(const TensorView &view) const override;

private:
  /// Adds the view of `tensor` as `name`.
  Error add(const GgufTensor &tensor, std::string name);
  /// Adds layer `layer`'s 3-D expert tensor `tensor` as one view per expert,
  /// `<module>.experts.<e>.<part>` of `names`.
  Error addExperts(const GgufTensor &tensor, unsigned layer,
                   llvm::StringRef part, const ExpertTensorNames &names);
  /// Marks view `i` as stored with convert_hf_to_gguf.py's permutation of
  /// `heads` heads (TensorView::interleavedHeads): readers undo it.
  Error markInterleaved(size_t i, uint64_t heads);

  /// A Q5_0 tensor's view is held as Q8_0 blocks (widenQ5_0ToQ8_0: the
  /// same weights), made when it is looked up and freed with its pages;
  /// its data is null until then.
  struct Widened {
    const char *source;
    uint64_t sourceBytes;
    std::unique_ptr<char[]> blocks;
  };

  std::unique_ptr<GgufFile> file;
  mutable std::vector<TensorView> views;
  llvm::StringMap<size_t> index;
  /// By view index.
  mutable llvm::DenseMap<size_t, Widened> widened;
};
} // namespace

const TensorView *GgufTensors::lookup(llvm::StringRef name) const {
  auto it = index.find(name);
  if (it == index.end())
    return nullptr;
  TensorView &view = views[it->second];
  auto pending = widened.find(it->second);
  if (pending != widened.end() && !view.data) {
    Widened &w = pending->second;
    w.blocks.reset(new char[view.numBytes]);
    widenQ5_0ToQ8_0(w.source, int64_t(w.sourceBytes / 22), w.blocks.get());
    view.data = w.blocks.get();
  }
  return &view;
}

void GgufTensors::releasePages(const TensorView &view) const {
  auto pending = widened.find(size_t(&view - views.data()));
  if (pending == widened.end()) {
    file->releasePages(view.data, view.numBytes);
    return;
  }
  Widened &w = pending->second;
  w.blocks.reset();
  views[pending->first].data = nullptr;
  file->releasePages(w.source, w.sourceBytes);
}

Error GgufTensors::addExperts(const GgufTensor &tensor, unsigned layer,
                              llvm::StringRef part,
                              const ExpertTensorNames &names) {
  if (Error err = add(tensor, tensor.name))
    return err;
  TensorView whole = views.back();
  views.pop_back();
  index.erase(whole.name);
  if (whole.shape.size() != 3 || whole.shape[0] < 1)
    return makeError(file->getPath(),
                     "tensor '{0}' ({1}) is not 3-D: a layer's experts are "
                     "[E, rows, cols]",
                     tensor.name, formatShape(whole.shape));
  // Each expert's rows (of elements or of blocks) are a contiguous run.
  int64_t experts = whole.shape[0];
  uint64_t bytes = whole.numBytes / uint64_t(experts);
  std::optional<Widened> wide;
  if (auto it = widened.find(views.size()); it != widened.end()) {
    wide = std::move(it->second);
    widened.erase(it);
  }
  for (int64_t e = 0; e < experts; ++e) {
    TensorView view = whole;
    view.name = llvm::formatv("model.layers.{0}.{1}.experts.{2}.{3}", layer,
                              names.module, e, part)
                    .str();
    view.shape = {whole.shape[1], whole.shape[2]};
    view.data = wide ? nullptr : whole.data + uint64_t(e) * bytes;
    view.numBytes = bytes;
    if (wide) {
      uint64_t sourceBytes = wide->sourceBytes / uint64_t(experts);
      widened[views.size()] = {wide->source + uint64_t(e) * sourceBytes,
                               sourceBytes, nullptr};
    }
    if (!index.try_emplace(view.name, views.size()).second)
      return makeError(file->getPath(), "tensor '{0}' is named twice",
                       view.name);
    views.push_back(std::move(view));
  }
  return Error::success();
}

Error GgufTensors::add(const GgufTensor &tensor, std::string name) {
  TensorView view;
  view.name = std::move(name);
  view.shape = tensor.shape;
  view.data = tensor.data;
  view.numBytes = tensor.numBytes;
  view.dtype = DType::F32;
  llvm::StringRef type = tensor.type->name;
  if (type == "F16")
    view.dtype = DType::F16;
  else if (type == "BF16")
    view.dtype = DType::BF16;
  else if (type == "F64")
    view.dtype = DType::F64;
  else if (type == "I8")
    view.dtype = DType::I8;
  else if (type == "I16")
    view.dtype = DType::I16;
  else if (type == "I32")
    view.dtype = DType::I32;
  else if (type == "I64")
    view.dtype = DType::I64;
  else if (type == "Q8_0")
    view.blocks = BlockFormat::Q8_0;
  else if (type == "Q5_0")
    view.blocks = BlockFormat::Q8_0; // widened when looked up
  else if (type == "Q4_1")
    view.blocks = BlockFormat::Q4_1;
  else if (type == "Q5_1")
    view.blocks = BlockFormat::Q5_1;
  else if (type == "Q4_0")
    view.blocks = BlockFormat::Q4_0;
  else if (type == "Q4_K")
    view.blocks = BlockFormat::Q4_K;
  else if (type == "Q5_K")
    view.blocks = BlockFormat::Q5_K;
  else if (type == "Q6_K")
    view.blocks = BlockFormat::Q6_K;
  else if (type != "F32")
    return makeError(file->getPath(),
                     "tensor '{0}' is {1}: tfm reads F32, F16, BF16, Q8_0, "
                     "Q5_0, Q5_1, Q4_0, Q4_1, Q4_K, Q5_K and Q6_K tensors",
                     tensor.name, type);
  if (!index.try_emplace(view.name, views.size()).second)
    return makeError(file->getPath(), "tensor '{0}' is named twice",
                     view.name);
  if (type == "Q5_0") {
    widened[views.size()] = {tensor.data, tensor.numBytes, nullptr};
    view.data = nullptr;
    view.numBytes = tensor.numBytes / 22 * 34;
  }
  views.push_back(std::move(view));
  return Error::success();
}

Error GgufTensors::markInterleaved(size_t i, uint64_t heads) {
  TensorView &view = views[i];
  uint64_t rows = uint64_t(view.shape[0]);
  if (view.shape.size() != 2 || heads == 0 || rows % heads != 0 ||
      rows / heads % 2 != 0)
    return makeError(file->getPath(),
                     "tensor '{0}' ({1}) does not hold {2} heads of an even "
                     "size",
                     view.name, formatShape(view.shape), heads);
  view.interleavedHeads = int64_t(heads);
  return Error::success();
}

Expected<std::unique_ptr<TensorFile>>
GgufTensors::create(std::unique_ptr<GgufFile> file) {
  Expected<const Architecture *> arch = getArchitecture(*file);
  if (!arch)
    return arch.takeError();
  llvm::StringRef path = file->getPath();
  std::unique_ptr<GgufTensors> tensors(new GgufTensors());
  tensors->file = std::move(file);
  const GgufFile &gguf = *tensors->file;
  Expected<const ExpertModel *> experts = getExpertModel(gguf, **arch);
  if (!experts)
    return experts.takeError();
  for (const GgufTensor &tensor : gguf.getTensors()) {
    if (tensor.name == kRopeFreqsTensor || tensor.name == kRopeLongTensor ||
        tensor.name == kRopeShortTensor)
      continue; // The config's RoPE scaling (getGgufConfigJson).
    if (*experts) {
      llvm::StringRef rest = tensor.name;
      unsigned layer;
      if (rest.consume_front("blk.") && !rest.consumeInteger(10, layer) &&
          rest.consume_front(".")) {
        const ExpertTensorNames &names = (*experts)->names;
        llvm::StringRef part = llvm::StringSwitch<llvm::StringRef>(rest)
                                   .Case("ffn_gate_exps.weight", names.gate)
                                   .Case("ffn_up_exps.weight", names.up)
                                   .Case("ffn_down_exps.weight", names.down)
                                   .Default("");
        if (!part.empty()) {
          if (Error err = tensors->addExperts(tensor, layer, part, names))
            return std::move(err);
          continue;
        }
      }
    }
    std::string name = getHuggingFaceName(tensor.name, **arch, *experts);
    // A tensor llama.cpp's tables do not name keeps its own name: the
    // engine warns that nothing uses it.
    if (Error err =
            tensors->add(tensor, name.empty() ? tensor.name : std::move(name)))
      return std::move(err);
  }
  if ((*arch)->normsPlusOne)
    for (TensorView &view : tensors->views) {
      if (!llvm::StringRef(view.name).ends_with("norm.weight"))
        continue;
      if (view.dtype != DType::F32 || view.blocks != BlockFormat::None)
        return makeError(path,
                         "tensor '{0}' is {1}: a Gemma norm is stored as F32 "
                         "(its weight plus one)",
                         view.name, view.getStorageName());
      view.storedPlusOne = true;
    }
  if ((*arch)->permutedQK) {
    std::string prefix = ((*arch)->name + ".").str();
    Expected<std::optional<uint64_t>> heads =
        gguf.getUnsigned(prefix + "attention.head_count");
    if (!heads)
      return heads.takeError();
    Expected<std::optional<uint64_t>> kvHeads =
        gguf.getUnsigned(prefix + "attention.head_count_kv");
    if (!kvHeads)
      return kvHeads.takeError();
    if (!*heads)
      return makeError(path, "no {0}attention.head_count", prefix);
    uint64_t q = **heads, kv = kvHeads->value_or(q);
    for (size_t i = 0; i < tensors->views.size(); ++i) {
      llvm::StringRef name = tensors->views[i].name;
      if (name.ends_with(".self_attn.q_proj.weight"))
        if (Error err = tensors->markInterleaved(i, q))
          return std::move(err);
      if (name.ends_with(".self_attn.k_proj.weight"))
        if (Error err = tensors->markInterleaved(i, kv))
          return std::move(err);
    }
  }
  return std::unique_ptr<TensorFile>(std::move(tensors));
}

Expected<std::unique_ptr<TensorFile>>
mlir::tfm::runtime::makeGgufTensors(std::unique_ptr<GgufFile> file) {
  return GgufTensors::create(std::move(file));
}

Expected<std::unique_ptr<TensorFile>>
mlir::tfm::runtime::openGgufTensors(llvm::StringRef path) {
  Expected<std::unique_ptr<GgufFile>> file = GgufFile::open(path);
  if (!file)
    return file.takeError();
  return GgufTensors::create(std::move(*file));
}

//===- ModelConfig.cpp - reading a Hugging Face config.json ---------------===//
//
// Mirrors the defaults of transformers' GPT2Config, LlamaConfig,
// MixtralConfig, MistralConfig, Qwen2Config and Qwen3Config for optional
// fields, but requires the sizes: a config.json
// saved by transformers always has them, so a missing one means a broken or
// foreign file rather than "use the class default".
//
//===----------------------------------------------------------------------===//
#include "tfm/Target/HuggingFace/ModelConfig.h"
#include "tfm/Runtime/Limits.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace mlir::tfm::hf;
using llvm::ArrayRef;
using llvm::StringRef;
using llvm::Twine;
namespace json = llvm::json;

llvm::StringRef mlir::tfm::hf::getFamilyName(ModelFamily family) {
  switch (family) {
  case ModelFamily::GPT2:
    return "gpt2";
  case ModelFamily::Llama:
    return "llama";
  case ModelFamily::Mixtral:
    return "mixtral";
  case ModelFamily::Mistral:
    return "mistral";
  case ModelFamily::Qwen2:
    return "qwen2";
  case ModelFamily::Qwen3:
    return "qwen3";
  case ModelFamily::Gemma:
    return "gemma";
  case ModelFamily::Phi3:
    return "phi3";
  case ModelFamily::GPTNeoX:
    return "gpt_neox";
  case ModelFamily::OPT:
    return "opt";
  case ModelFamily::Gemma2:
    return "gemma2";
  case ModelFamily::Gemma3:
    return "gemma3_text";
  case ModelFamily::Qwen3MoE:
    return "qwen3_moe";
  case ModelFamily::Olmo2:
    return "olmo2";
  }
  llvm_unreachable("unknown model family");
}

/// Sizes become tensor dimensions whose products (V*d, B*S*V, ...) must stay
/// far from int64 overflow.
static constexpr int64_t kMaxSize = (int64_t(1) << 31) - 1;
/// Layers and experts each become IR and compiled code: the largest
/// published models have ~130 layers and 256 experts, and a hostile count
/// (num_hidden_layers: 100000) would build IR for minutes before any other
/// check.
static constexpr int64_t kMaxLayers = 1024;
static constexpr int64_t kMaxExperts = 1024;

/// Fields that do not change the math of inference, in any of the families:
/// training-only settings, token ids, generation defaults, bookkeeping.
static constexpr StringRef kNeutralFields[] = {
    "_attn_implementation_autoset", "_name_or_path", "architectures",
    "auto_map", "bad_words_ids", "chunk_size_feed_forward", "do_sample",
    "dtype", "early_stopping", "finetuning_task", "forced_bos_token_id",
    "forced_eos_token_id", "gradient_checkpointing", "id2label",
    "initializer_range", "is_decoder", "is_encoder_decoder", "label2id",
    "length_penalty", "max_length", "min_length", "model_type", "name_or_path",
    "no_repeat_ngram_size", "num_beams", "num_return_sequences",
    "output_attentions", "output_hidden_states", "output_router_logits",
    "prefix", "problem_type", "pruned_heads", "remove_invalid_values",
    "repetition_penalty", "return_dict", "router_aux_loss_coef",
    "router_jitter_noise", "task_specific_params", "temperature",
    "tie_encoder_decoder", "tokenizer_class", "top_k", "top_p", "torch_dtype",
    "torchscript", "transformers_version", "use_cache", "use_return_dict"};

/// Fields that change the math in some Hugging Face decoder family. A family
/// that implements one reads it; in any other config it is an error, not an
/// "unknown field" warning: a Mistral config renamed to llama must not lose
/// its sliding window silently. Null and false mean "off" and are accepted.
static constexpr StringRef kMathFields[] = {
    "alibi", "attention_bias", "attention_multiplier", "attn_logit_softcapping",
    "clip_qkv", "do_layer_norm_before", "embedding_multiplier",
    "final_logit_softcapping", "hidden_activation", "layer_types",
    "logits_scaling", "max_window_layers", "mlp_bias", "multi_query",
    "new_decoder_architecture", "parallel_attn", "partial_rotary_factor",
    "qk_layernorm", "query_pre_attn_scalar", "residual_multiplier",
    "rope_parameters", "rope_scaling", "rotary_emb_base", "rotary_pct",
    "scale_embedding", "sliding_window", "use_parallel_residual",
    "use_qk_norm", "use_sliding_window"};

/// The model types parseModelConfig accepts, for messages.
static constexpr const char *kImportedTypes =
    "gpt2, llama, mixtral, mistral, qwen2, qwen3, qwen3_moe, gemma, gemma2, "
    "gemma3_text, phi3, gpt_neox, olmo2 and opt";

/// Name patterns of neutral fields: dropout probabilities (`attn_pdrop`,
/// `attention_dropout`), special token ids, and the `summary_*` settings of
/// GPT-2's double-heads model, which the causal LM does not build.
static bool isNeutralByPattern(StringRef key) {
  return key.ends_with("_pdrop") || key.ends_with("dropout") ||
         key.ends_with("_token_id") || key.ends_with("_token_ids") ||
         key.starts_with("summary_");
}

/// "a string", "an array", ... for messages about composite values; scalars
/// are quoted as written.
static std::string describe(const json::Value &value) {
  switch (value.kind()) {
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  default:
    return llvm::formatv("{0}", value).str();
  }
}

namespace {
/// Reads fields of the top-level object, remembering which it understood and
/// the first error. Reading goes on after an error (returning defaults) so
/// that callers stay linear; only the first error is reported.
class FieldReader {
public:
  explicit FieldReader(const json::Object &object) : object(object) {}

  /// The value of `key`, or null when it is absent or JSON `null` (which
  /// transformers reads as "use the default" as well).
  const json::Value *lookup(StringRef key) {
    understood.insert(key);
    const json::Value *value = object.get(key);
    return value && value->kind() != json::Value::Null ? value : nullptr;
  }

  /// Whether `key` is present with the value JSON `null` (where absent and
  /// null differ: a class default that null turns off).
  bool isNull(StringRef key) {
    understood.insert(key);
    const json::Value *value = object.get(key);
    return value && value->kind() == json::Value::Null;
  }

  void fail(StringRef key, const Twine &what) {
    if (error.empty())
      error = (key + ": " + what).str();
  }
  bool failed() const { return !error.empty(); }
  const std::string &getError() const { return error; }

  /// A size: a positive integer; missing is an error.
  int64_t requiredSize(StringRef key, StringRef modelType) {
    const json::Value *value = lookup(key);
    if (!value) {
      fail(key, "missing; a " + modelType + " config must give it");
      return 1;
    }
    return toSize(key, *value).value_or(1);
  }

  /// A size with a default, for fields transformers defaults too.
  int64_t sizeOr(StringRef key, int64_t defaultValue) {
    const json::Value *value = lookup(key);
    return value ? toSize(key, *value).value_or(defaultValue) : defaultValue;
  }

  /// A finite number in [0, below) (epsilons: below 1, or every output is
  /// the bias); `positive` excludes 0 (RoPE theta). JSON numbers beyond the
  /// double range (1e400) parse as infinity.
  double numberOr(StringRef key, double defaultValue, bool positive = false,
                  double below = HUGE_VAL) {
    const json::Value *value = lookup(key);
    if (!value)
      return defaultValue;
    std::optional<double> number = value->getAsNumber();
    if (!number || !std::isfinite(*number) || *number < 0 ||
        (positive && *number == 0) || *number >= below) {
      std::string bound;
      if (std::isfinite(below))
        bound = llvm::formatv(" below {0}", llvm::format("%g", below)).str();
      fail(key, Twine("expected a finite ") +
                    (positive ? "positive" : "non-negative") + " number" +
                    bound + ", got " + describe(*value));
      return defaultValue;
    }
    return *number;
  }

  /// A size that also becomes a count of IR blocks: at most `limit`.
  int64_t requiredCount(StringRef key, StringRef modelType, int64_t limit) {
    int64_t n = requiredSize(key, modelType);
    if (n > limit) {
      fail(key, llvm::formatv("{0} exceeds tfm's limit of {1}", n, limit));
      return 1;
    }
    return n;
  }

  bool boolOr(StringRef key, bool defaultValue) {
    const json::Value *value = lookup(key);
    if (!value)
      return defaultValue;
    std::optional<bool> flag = value->getAsBoolean();
    if (!flag) {
      fail(key, "expected true or false, got " + describe(*value));
      return defaultValue;
    }
    return *flag;
  }

  std::string stringOr(StringRef key, StringRef defaultValue) {
    const json::Value *value = lookup(key);
    if (!value)
      return defaultValue.str();
    std::optional<StringRef> text = value->getAsString();
    if (!text) {
      fail(key, "expected a string, got " + describe(*value));
      return defaultValue.str();
    }
    return text->str();
  }

  /// A flag tfm cannot honour when true: `true` is an error saying `why`.
  void rejectTrue(StringRef key, const Twine &why) {
    if (boolOr(key, false))
      fail(key, "true is not supported: " + why);
  }

  /// A field tfm cannot honour unless it is absent or null.
  void rejectNonNull(StringRef key, const Twine &why) {
    if (const json::Value *value = lookup(key))
      fail(key, describe(*value) + " is not supported: " + why);
  }

  /// Fails on the first (sorted) field of kMathFields that the family's
  /// reader did not read and that is set to something other than null or
  /// false.
  void rejectUnreadMathFields(StringRef modelType) {
    for (StringRef key : kMathFields) {
      const json::Value *value = object.get(key);
      if (understood.contains(key) || !value ||
          value->kind() == json::Value::Null ||
          value->getAsBoolean() == std::optional<bool>(false))
        continue;
      return fail(key, describe(*value) +
                           " is not supported for model_type '" + modelType +
                           "': it changes the model's math in other "
                           "families, and tfm would build the model as if "
                           "it were absent");
    }
  }

  /// Fields present in the file that nothing read and that are not known to
  /// be neutral, sorted (json::Object is unordered).
  std::vector<std::string> getUnknownFields() const {
    std::vector<std::string> unknown;
    for (const auto &entry : object) {
      StringRef key = entry.first;
      if (!understood.contains(key) && !llvm::is_contained(kNeutralFields, key) &&
          !isNeutralByPattern(key))
        unknown.push_back(key.str());
    }
    std::sort(unknown.begin(), unknown.end());
    return unknown;
  }

private:
  std::optional<int64_t> toSize(StringRef key, const json::Value &value) {
    std::optional<int64_t> size = value.getAsInteger();
    if (!size || *size < 1 || *size > kMaxSize) {
      fail(key, "expected a positive integer below 2^31, got " +
                    describe(value));
      return std::nullopt;
    }
    return size;
  }

  const json::Object &object;
  llvm::StringSet<> understood;
  std::string error;
};
} // namespace

/// Quantized checkpoints store other tensors (int weights, scales) under the
/// same names: importing them as f32 would silently mean the wrong weights.
static void readCommonRejections(FieldReader &r) {
  r.rejectNonNull("quantization_config",
                  "quantized checkpoints are not supported; tfm reads float "
                  "weights");
}

/// A family's activation field: `known` maps each accepted name to tfm's
/// activation; any other name is an error listing `supported`.
static void readActivation(FieldReader &r, ModelConfig &c, StringRef key,
                           StringRef defaultName,
                           ArrayRef<std::pair<StringRef, Activation>> known,
                           const Twine &supported) {
  std::string act = r.stringOr(key, defaultName);
  for (const auto &[name, activation] : known) {
    if (act == name) {
      c.activation = activation;
      return;
    }
  }
  r.fail(key, "unsupported activation '" + act + "' (tfm supports " +
                  supported + ")");
}

/// The sizes every family but GPT-2 reads under the same names (OPT names
/// its MLP width `ffn_dim`); missing ones are errors naming `type`.
static void readDecoderSizes(FieldReader &r, ModelConfig &c, StringRef type,
                             StringRef intermediateKey = "intermediate_size") {
  c.vocabSize = r.requiredSize("vocab_size", type);
  c.hiddenSize = r.requiredSize("hidden_size", type);
  c.numLayers = r.requiredCount("num_hidden_layers", type, kMaxLayers);
  c.numHeads = r.requiredSize("num_attention_heads", type);
  c.intermediateSize = r.requiredSize(intermediateKey, type);
  c.maxPositionsField = "max_position_embeddings";
  c.maxPositions = r.requiredSize("max_position_embeddings", type);
}

static void readGPT2(FieldReader &r, ModelConfig &c) {
  c.family = ModelFamily::GPT2;
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
  readCommonRejections(r);

  if (r.failed())
    return;
  if (c.hiddenSize % c.numHeads != 0)
    return r.fail("n_head", llvm::formatv("{0} heads do not divide n_embd = {1}",
                                          c.numHeads, c.hiddenSize));
  c.numKVHeads = c.numHeads;
  c.headDim = c.hiddenSize / c.numHeads;
}

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

namespace {
/// The RoPE settings of one JSON object: `rope_scaling` (transformers 4.x,
/// alongside a top-level `rope_theta`) or `rope_parameters` (transformers 5,
/// which holds `rope_theta` too). Every key must be understood: an unknown
/// one may change the frequencies.
class RoPEObjectReader {
public:
  RoPEObjectReader(FieldReader &r, StringRef field, const json::Object &object)
      : r(r), field(field), object(object) {}

  /// Fills `c`'s RoPE scaling (and theta, when `withTheta`).
  void read(ModelConfig &c, bool withTheta) {
    // transformers reads `rope_type`, falling back to the legacy `type`:
    // two that disagree leave the intended scaling unknown.
    std::optional<StringRef> modern = object.getString("rope_type");
    std::optional<StringRef> legacy = object.getString("type");
    seen.insert("rope_type");
    seen.insert("type");
    for (StringRef key : {"rope_type", "type"})
      if (const json::Value *v = object.get(key); v && !v->getAsString())
        return fail(key, "expected a string, got " + describe(*v));
    if (modern && legacy && *modern != *legacy)
      return r.fail(field, "\"rope_type\": \"" + *modern +
                               "\" and \"type\": \"" + *legacy +
                               "\" disagree; give one of them");
    StringRef kind = modern ? *modern : legacy ? *legacy : "";
    // Phi3Config renames the names of its early long-context checkpoints.
    if (c.family == ModelFamily::Phi3 && (kind == "su" || kind == "yarn"))
      kind = "longrope";
    if (withTheta) {
      if (std::optional<double> theta = positive("rope_theta", /*required=*/false))
        c.ropeTheta = *theta;
      // transformers 5 moves partial_rotary_factor in here too; the family
      // reader decides what it may be (readRoPE's caller).
      partial = positive("partial_rotary_factor", /*required=*/false);
      if (partial && *partial > 1.0)
        fail("partial_rotary_factor",
             llvm::formatv("{0} exceeds 1: it is the rotated fraction of "
                           "each head",
                           llvm::format("%g", *partial)));
    }
    if (kind.empty() || kind == "default") {
      // {"rope_type": "default"} is transformers' spelling of "no scaling".
      c.ropeScaling = RoPEScaling::None;
    } else if (kind == "dynamic") {
      // Dynamic NTK recomputes the frequencies only once a position passes
      // max_position_embeddings (transformers' _dynamic_frequency_update);
      // tfm never runs past the context, where it equals plain RoPE.
      c.ropeScaling = RoPEScaling::None;
      positive("factor", /*required=*/true);
    } else if (kind == "linear") {
      c.ropeScaling = RoPEScaling::Linear;
      c.ropeFactor = positive("factor", /*required=*/true).value_or(1.0);
    } else if (kind == "llama3") {
      c.ropeScaling = RoPEScaling::Llama3;
      c.ropeFactor = positive("factor", /*required=*/true).value_or(1.0);
      c.ropeLowFreqFactor =
          positive("low_freq_factor", /*required=*/true).value_or(1.0);
      c.ropeHighFreqFactor =
          positive("high_freq_factor", /*required=*/true).value_or(4.0);
      c.ropeOriginalMaxPositions =
          size("original_max_position_embeddings").value_or(1);
      if (!r.failed() && !(c.ropeHighFreqFactor > c.ropeLowFreqFactor))
        return fail("high_freq_factor",
                    llvm::formatv("{0} must exceed low_freq_factor = {1}",
                                  c.ropeHighFreqFactor, c.ropeLowFreqFactor));
    } else if (kind == "yarn") {
      readYarn(c);
    } else if (kind == "longrope") {
      readLongRoPE(c);
    } else {
      return r.fail(field,
                    "'" + kind + "' RoPE scaling is not supported; tfm "
                    "implements 'default', 'linear', 'llama3', 'yarn', "
                    "'longrope' and 'dynamic' (which equals 'default' "
                    "within the context length)");
    }
    for (const auto &entry : object)
      if (!seen.contains(entry.first))
        fail(entry.first, "is not supported with rope_type '" +
                              (kind.empty() ? StringRef("default") : kind) +
                              "'; tfm does not know how it changes RoPE");
  }

  /// `partial_rotary_factor` of a rope_parameters object, if it gives one.
  std::optional<double> getPartialRotaryFactor() const { return partial; }

private:
  void fail(StringRef key, const Twine &what) {
    r.fail((field + "." + key).str(), what);
  }

  /// The context the scaling extends: the object's
  /// `original_max_position_embeddings`, else the top-level field (Phi-3's
  /// place for it; PhiConfig defaults it to 4096), else
  /// max_position_embeddings, as transformers 5 fills it in.
  int64_t originalContext(const ModelConfig &c) {
    seen.insert("original_max_position_embeddings");
    if (const json::Value *v = object.get("original_max_position_embeddings");
        v && v->kind() != json::Value::Null)
      return size("original_max_position_embeddings").value_or(1);
    int64_t fallback = c.family == ModelFamily::Phi3 ? 4096 : c.maxPositions;
    return r.sizeOr("original_max_position_embeddings", fallback);
  }

  /// transformers' get_mscale: 0.1 * m * ln(s) + 1 for s > 1.
  static double yarnMscale(double scale, double m) {
    return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0;
  }

  /// transformers 5's _compute_yarn_parameters: an explicit `factor` wins
  /// (transformers 4.51 replaced it by max/original when the original was
  /// given); the ramp's context is the original one.
  void readYarn(ModelConfig &c) {
    c.ropeScaling = RoPEScaling::Yarn;
    c.ropeOriginalMaxPositions = originalContext(c);
    std::optional<double> factor = positive("factor", /*required=*/false);
    c.ropeFactor = factor ? *factor
                          : double(c.maxPositions) /
                                double(c.ropeOriginalMaxPositions);
    // `or` in transformers: 0 or null take the defaults too.
    c.ropeBetaFast = nonNegative("beta_fast").value_or(0);
    if (c.ropeBetaFast == 0)
      c.ropeBetaFast = 32;
    c.ropeBetaSlow = nonNegative("beta_slow").value_or(0);
    if (c.ropeBetaSlow == 0)
      c.ropeBetaSlow = 1;
    seen.insert("truncate");
    if (const json::Value *v = object.get("truncate");
        v && v->kind() != json::Value::Null) {
      if (std::optional<bool> flag = v->getAsBoolean())
        c.ropeTruncate = *flag;
      else
        fail("truncate", "expected true or false, got " + describe(*v));
    }
    double mscale = nonNegative("mscale").value_or(0);
    double mscaleAllDim = nonNegative("mscale_all_dim").value_or(0);
    if (std::optional<double> given =
            positive("attention_factor", /*required=*/false))
      c.ropeAttentionFactor = *given;
    else if (mscale != 0 && mscaleAllDim != 0)
      c.ropeAttentionFactor = yarnMscale(c.ropeFactor, mscale) /
                              yarnMscale(c.ropeFactor, mscaleAllDim);
    else
      c.ropeAttentionFactor = yarnMscale(c.ropeFactor, 1.0);
  }

  /// transformers 5's _compute_longrope_parameters: factor = max/original
  /// unless given; attention factor sqrt(1 + ln(factor)/ln(original)).
  void readLongRoPE(ModelConfig &c) {
    c.ropeScaling = RoPEScaling::LongRoPE;
    c.ropeOriginalMaxPositions = originalContext(c);
    std::optional<double> factor = positive("factor", /*required=*/false);
    c.ropeFactor = factor ? *factor
                          : double(c.maxPositions) /
                                double(c.ropeOriginalMaxPositions);
    c.ropeShortFactor = factors("short_factor");
    c.ropeLongFactor = factors("long_factor");
    if (std::optional<double> given =
            positive("attention_factor", /*required=*/false))
      c.ropeAttentionFactor = *given;
    else if (c.ropeFactor <= 1.0 || c.ropeOriginalMaxPositions <= 1)
      c.ropeAttentionFactor = 1.0;
    else
      c.ropeAttentionFactor =
          std::sqrt(1.0 + std::log(c.ropeFactor) /
                              std::log(double(c.ropeOriginalMaxPositions)));
  }

  /// A required array of finite positive numbers (longrope's divisors; its
  /// length is checked against the head size once that is known).
  std::vector<double> factors(StringRef key) {
    seen.insert(key);
    const json::Value *value = object.get(key);
    if (!value || value->kind() == json::Value::Null) {
      fail(key, "missing; this rope_type needs it");
      return {};
    }
    const json::Array *array = value->getAsArray();
    if (!array || array->empty() || array->size() > size_t(kMaxSize)) {
      fail(key, "expected a non-empty array of numbers, got " +
                    describe(*value));
      return {};
    }
    std::vector<double> result;
    for (auto [i, element] : llvm::enumerate(*array)) {
      std::optional<double> number = element.getAsNumber();
      if (!number || !std::isfinite(*number) || *number <= 0) {
        fail(llvm::formatv("{0}[{1}]", key, i).str(),
             "expected a finite positive number, got " + describe(element));
        return {};
      }
      result.push_back(*number);
    }
    return result;
  }

  std::optional<double> nonNegative(StringRef key) {
    seen.insert(key);
    const json::Value *value = object.get(key);
    if (!value || value->kind() == json::Value::Null)
      return std::nullopt;
    std::optional<double> number = value->getAsNumber();
    if (!number || !std::isfinite(*number) || *number < 0) {
      fail(key, "expected a finite non-negative number, got " +
                    describe(*value));
      return std::nullopt;
    }
    return number;
  }

  std::optional<double> positive(StringRef key, bool required) {
    seen.insert(key);
    const json::Value *value = object.get(key);
    if (!value || value->kind() == json::Value::Null) {
      if (required)
        fail(key, "missing; this rope_type needs it");
      return std::nullopt;
    }
    std::optional<double> number = value->getAsNumber();
    if (!number || !std::isfinite(*number) || *number <= 0) {
      fail(key, "expected a finite positive number, got " + describe(*value));
      return std::nullopt;
    }
    return number;
  }

  std::optional<int64_t> size(StringRef key) {
    seen.insert(key);
    const json::Value *value = object.get(key);
    if (!value || value->kind() == json::Value::Null) {
      fail(key, "missing; this rope_type needs it");
      return std::nullopt;
    }
    std::optional<int64_t> n = value->getAsInteger();
    if (!n || *n < 1 || *n > kMaxSize) {
      fail(key, "expected a positive integer below 2^31, got " +
                    describe(*value));
      return std::nullopt;
    }
    return n;
  }

  FieldReader &r;
  StringRef field;
  const json::Object &object;
  llvm::StringSet<> seen;
  std::optional<double> partial;
};
} // namespace

/// RoPE settings. transformers 4.x writes `rope_theta` and `rope_scaling`;
/// 5.x groups them as `rope_parameters`. Both layouts read the same way;
/// scalings tfm does not implement (yarn, longrope, ...) are errors rather
/// than a silent mismatch.
/// Families that rotate whole heads: a rope_parameters
/// `partial_rotary_factor` must be 1 (transformers 5 writes Phi-3's so).
static void readRoPE(FieldReader &r, ModelConfig &c, double defaultTheta) {
  c.ropeTheta = r.numberOr("rope_theta", defaultTheta, /*positive=*/true);
  for (StringRef field : {"rope_scaling", "rope_parameters"}) {
    const json::Value *value = r.lookup(field);
    if (!value)
      continue;
    const json::Object *object = value->getAsObject();
    if (!object)
      return r.fail(field, "expected an object, got " + describe(*value));
    RoPEObjectReader reader(r, field, *object);
    reader.read(c, /*withTheta=*/field == "rope_parameters");
    std::optional<double> partial = reader.getPartialRotaryFactor();
    if (!r.failed() && partial && *partial != 1.0)
      r.fail("rope_parameters.partial_rotary_factor",
             llvm::formatv("{0} is not supported for model_type '{1}': tfm "
                           "rotates whole heads there; it must be 1",
                           llvm::format("%g", *partial), c.modelType));
  }
}

/// longrope's divisors: one per rotated pair, checked once the family
/// reader knows the head size.
static void checkRoPEFactors(FieldReader &r, const ModelConfig &c) {
  if (r.failed() || c.ropeScaling != RoPEScaling::LongRoPE)
    return;
  size_t pairs = size_t(c.rotaryDims ? c.rotaryDims : c.headDim) / 2;
  for (auto [key, factors] :
       {std::pair<StringRef, const std::vector<double> *>{
            "short_factor", &c.ropeShortFactor},
        {"long_factor", &c.ropeLongFactor}})
    if (factors->size() != pairs)
      return r.fail(("rope_scaling." + key).str(),
                    llvm::formatv("{0} divisors for heads that rotate {1} "
                                  "pairs (head_dim / 2); give one per pair",
                                  factors->size(), pairs));
}

std::vector<float>
mlir::tfm::hf::computeRoPEInverseFrequencies(const ModelConfig &c,
                                             int64_t maxLength) {
  // As torch computes them, in f32: 1 / base^(float(2i) / dh) with the base
  // rounded to f32, then the variant's adjustment with its Python-float
  // settings rounded to f32 where they meet the f32 tensor.
  int64_t dh = c.headDim;
  std::vector<float> invFreq;
  for (int64_t i = 0; i < dh; i += 2) {
    float exponent = static_cast<float>(i) / static_cast<float>(dh);
    invFreq.push_back(1.0f / std::pow(static_cast<float>(c.ropeTheta), exponent));
  }
  float factor = static_cast<float>(c.ropeFactor);
  switch (c.ropeScaling) {
  case RoPEScaling::None:
    break;
  case RoPEScaling::Linear:
    for (float &f : invFreq)
      f /= factor;
    break;
  case RoPEScaling::Llama3: {
    // transformers' _compute_llama3_parameters.
    double oldContext = static_cast<double>(c.ropeOriginalMaxPositions);
    float lowWavelen = static_cast<float>(oldContext / c.ropeLowFreqFactor);
    float highWavelen = static_cast<float>(oldContext / c.ropeHighFreqFactor);
    float low = static_cast<float>(c.ropeLowFreqFactor);
    float span = static_cast<float>(c.ropeHighFreqFactor - c.ropeLowFreqFactor);
    float twoPi = static_cast<float>(2 * M_PI);
    for (float &f : invFreq) {
      float wavelen = twoPi / f;
      if (wavelen > lowWavelen) {
        f = f / factor;
      } else if (!(wavelen < highWavelen)) {
        float smooth =
            (static_cast<float>(oldContext) / wavelen - low) / span;
        f = (1.0f - smooth) * f / factor + smooth * f;
      }
    }
    break;
  }
  case RoPEScaling::Yarn: {
    // _compute_yarn_parameters: the dimension at which a wavelength makes
    // `rotations` turns over the original context, in Python floats.
    double base = c.ropeTheta, dim = double(dh);
    double context = double(c.ropeOriginalMaxPositions);
    auto correctionDim = [&](double rotations) {
      return dim * std::log(context / (rotations * 2 * M_PI)) /
             (2 * std::log(base));
    };
    double low = correctionDim(c.ropeBetaFast);
    double high = correctionDim(c.ropeBetaSlow);
    if (c.ropeTruncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, dim - 1);
    if (low == high)
      high += 0.001;
    float lowF = float(low), spanF = float(high - low);
    for (auto [i, f] : llvm::enumerate(invFreq)) {
      // pos_freq = base^(2i/dh); interpolation multiplies it by factor
      // first, in f32 as torch does.
      float exponent = static_cast<float>(2 * i) / static_cast<float>(dh);
      float posFreq = std::pow(static_cast<float>(c.ropeTheta), exponent);
      float extrapolation = 1.0f / posFreq;
      float interpolation = 1.0f / (factor * posFreq);
      float ramp = std::clamp((float(i) - lowF) / spanF, 0.0f, 1.0f);
      float extrapolationWeight = 1.0f - ramp;
      f = interpolation * (1.0f - extrapolationWeight) +
          extrapolation * extrapolationWeight;
    }
    break;
  }
  case RoPEScaling::LongRoPE: {
    // 1 / (ext * base^(2i/dh)) in f32, ext the long factors past the
    // original context.
    const std::vector<double> &ext = maxLength > c.ropeOriginalMaxPositions
                                         ? c.ropeLongFactor
                                         : c.ropeShortFactor;
    for (auto [i, f] : llvm::enumerate(invFreq)) {
      float exponent = static_cast<float>(2 * i) / static_cast<float>(dh);
      float power = std::pow(static_cast<float>(c.ropeTheta), exponent);
      f = 1.0f / (static_cast<float>(i < ext.size() ? ext[i] : 1.0) * power);
    }
    break;
  }
  }
  return invFreq;
}

//===----------------------------------------------------------------------===//
// Llama-like families: what each adds to Llama's decoder
//===----------------------------------------------------------------------===//

static void readLlamaExtras(FieldReader &r, ModelConfig &c) {
  c.attentionBias = r.boolOr("attention_bias", false);
  c.mlpBias = r.boolOr("mlp_bias", false);
  int64_t tp = r.sizeOr("pretraining_tp", 1);
  if (tp > 1)
    r.fail("pretraining_tp",
           llvm::formatv("{0} is not supported: it splits the projections "
                         "into slices whose sum only approximates the "
                         "unsplit model; it must be 1",
                         tp));
}

static void readMixtralExtras(FieldReader &r, ModelConfig &c) {
  c.numExperts = r.requiredCount("num_local_experts", "mixtral", kMaxExperts);
  c.numExpertsPerToken = r.requiredSize("num_experts_per_tok", "mixtral");
  r.rejectNonNull("sliding_window",
                  "tfm implements full causal attention for mixtral "
                  "(sliding_window must be null)");
}

/// MistralConfig defaults `sliding_window` to 4096; null means full causal
/// attention.
static void readMistralExtras(FieldReader &r, ModelConfig &c) {
  c.slidingWindow = r.isNull("sliding_window")
                        ? 0
                        : r.sizeOr("sliding_window", 4096);
}

/// Qwen2 always has q/k/v biases and no o_proj bias; Qwen3 has per-head q/k
/// RMSNorm and Llama's `attention_bias`. Both slide a window over the layers
/// from `max_window_layers` on, when `use_sliding_window` turns it on (as
/// transformers 5's Qwen2Config derives `layer_types`; a `layer_types` in
/// the file overrides that rule in readLayerTypes). transformers 4.46's
/// eager/sdpa mask applied `sliding_window` to every layer even when it was
/// off, which is not the model its authors trained; published Qwen2/2.5
/// configs set it to at least max_position_embeddings, where it masks
/// nothing.
static void readQwenExtras(FieldReader &r, ModelConfig &c) {
  bool qwen3 =
      c.family == ModelFamily::Qwen3 || c.family == ModelFamily::Qwen3MoE;
  if (qwen3) {
    c.qkNorm = true;
    c.attentionBias = r.boolOr("attention_bias", false);
  } else {
    c.qkvBias = true;
  }
  bool useWindow = r.boolOr("use_sliding_window", false);
  int64_t window =
      r.isNull("sliding_window") ? 0 : r.sizeOr("sliding_window", 4096);
  int64_t firstSlidingLayer = r.isNull("max_window_layers")
                                  ? 28
                                  : r.sizeOr("max_window_layers", 28);
  // Qwen2-VL's multimodal RoPE sections; Qwen2.5 configs say false.
  r.rejectTrue("use_mrope", "tfm implements 1-D RoPE (multimodal RoPE "
                            "sections are Qwen2-VL's); it must be false");
  if (!useWindow)
    return;
  if (window == 0)
    return r.fail("sliding_window", "null, but use_sliding_window is true; "
                                    "give the window's size");
  c.slidingWindow = window;
  // Qwen3-MoE slides every layer (transformers 5 has no layer_types for it
  // and ignores max_window_layers).
  if (c.family == ModelFamily::Qwen3MoE)
    firstSlidingLayer = 0;
  c.slidingLayers.assign(c.numLayers, false);
  for (int64_t i = firstSlidingLayer; i < c.numLayers; ++i)
    c.slidingLayers[i] = true;
}

/// Qwen3MoeConfig: a layer is sparse unless `mlp_only_layers` lists it or
/// (i + 1) is not a multiple of `decoder_sparse_step`; sparse layers have
/// `num_experts` experts of width `moe_intermediate_size`, dense ones an
/// MLP of `intermediate_size`. transformers 5 names the count
/// `num_local_experts` (its attribute_map), 4.x `num_experts`.
static void readQwen3MoEExtras(FieldReader &r, ModelConfig &c) {
  StringRef type = "qwen3_moe";
  bool modern = r.lookup("num_local_experts") != nullptr;
  c.numExperts = r.requiredCount(modern ? "num_local_experts" : "num_experts",
                                 type, kMaxExperts);
  if (modern && r.lookup("num_experts"))
    if (r.sizeOr("num_experts", c.numExperts) != c.numExperts)
      r.fail("num_experts", llvm::formatv("disagrees with num_local_experts = "
                                          "{0}",
                                          c.numExperts));
  c.numExpertsPerToken = r.requiredSize("num_experts_per_tok", type);
  c.expertIntermediateSize = r.requiredSize("moe_intermediate_size", type);
  c.normalizeTopK = r.boolOr("norm_topk_prob", false);
  int64_t step = r.sizeOr("decoder_sparse_step", 1);
  c.sparseLayers.assign(c.numLayers, false);
  for (int64_t i = 0; i < c.numLayers; ++i)
    c.sparseLayers[i] = (i + 1) % step == 0;
  if (const json::Value *value = r.lookup("mlp_only_layers")) {
    const json::Array *layers = value->getAsArray();
    if (!layers)
      return r.fail("mlp_only_layers",
                    "expected an array of layer indices, got " +
                        describe(*value));
    for (auto [i, entry] : llvm::enumerate(*layers)) {
      std::optional<int64_t> layer = entry.getAsInteger();
      if (!layer || *layer < 0 || *layer >= c.numLayers)
        return r.fail(llvm::formatv("mlp_only_layers[{0}]", i).str(),
                      llvm::formatv("expected a layer index below "
                                    "num_hidden_layers = {0}, got {1}",
                                    c.numLayers, describe(entry)));
      c.sparseLayers[*layer] = false;
    }
  }
  (void)r.lookup("router_aux_loss_coef");
}

/// transformers 5's `layer_types`: one "full_attention" or
/// "sliding_attention" per layer, which decides the layers that slide the
/// family's window (any other kind, or a sliding layer in a model without a
/// window, is an error naming the layer). Absent, the family's own rule
/// stands; without one, every layer slides when the model has a window.
static void readLayerTypes(FieldReader &r, ModelConfig &c) {
  if (r.failed())
    return;
  const json::Value *value = r.lookup("layer_types");
  if (!value) {
    if (c.slidingLayers.empty())
      c.slidingLayers.assign(c.numLayers, c.slidingWindow > 0);
    return;
  }
  const json::Array *types = value->getAsArray();
  if (!types)
    return r.fail("layer_types", "expected an array of strings, got " +
                                     describe(*value));
  if (int64_t(types->size()) != c.numLayers)
    return r.fail("layer_types",
                  llvm::formatv("{0} entries for num_hidden_layers = {1}; "
                                "give one per layer",
                                types->size(), c.numLayers));
  c.slidingLayers.assign(c.numLayers, false);
  for (auto [i, type] : llvm::enumerate(*types)) {
    std::string key = llvm::formatv("layer_types[{0}]", i).str();
    std::optional<StringRef> kind = type.getAsString();
    if (!kind)
      return r.fail(key, "expected a string, got " + describe(type));
    if (*kind == "full_attention")
      continue;
    if (*kind != "sliding_attention")
      return r.fail(key, "'" + *kind +
                             "' is not supported; tfm builds "
                             "\"full_attention\" and \"sliding_attention\" "
                             "layers");
    if (c.slidingWindow <= 0)
      return r.fail(key, "\"sliding_attention\" needs a sliding window, and "
                         "this config has none (sliding_window is null or "
                         "absent, or use_sliding_window is false)");
    c.slidingLayers[i] = true;
  }
}

/// RoPE rotates pairs of elements, so the head size must be even; `key` is
/// the field the head size comes from. Does nothing after an earlier error.
static void checkEvenRoPEHead(FieldReader &r, const ModelConfig &c,
                              StringRef key) {
  if (!r.failed() && c.headDim % 2 != 0)
    r.fail(key,
           llvm::formatv("RoPE needs an even head size, got {0}", c.headDim));
}

static void readLlamaLike(FieldReader &r, ModelConfig &c, ModelFamily family) {
  c.family = family;
  bool mixtral = family == ModelFamily::Mixtral;
  bool qwen3 = family == ModelFamily::Qwen3 || family == ModelFamily::Qwen3MoE;
  bool qwen = family == ModelFamily::Qwen2 || qwen3;
  std::string type = getFamilyName(family).str();
  readDecoderSizes(r, c, type);
  // LlamaConfig: None -> MHA; Mixtral and Mistral default to 8, Qwen to 32.
  int64_t defaultKVHeads = c.numHeads;
  if (mixtral || family == ModelFamily::Mistral)
    defaultKVHeads = 8;
  else if (qwen)
    defaultKVHeads = 32;
  c.numKVHeads = r.sizeOr("num_key_value_heads", defaultKVHeads);
  // Qwen3Config defaults head_dim to 128 rather than d / H.
  bool explicitHeadDim = r.lookup("head_dim") != nullptr ||
                         family == ModelFamily::Qwen3;
  c.headDim = r.sizeOr("head_dim", family == ModelFamily::Qwen3
                                       ? 128
                                       : c.hiddenSize / c.numHeads);
  bool eps5 = mixtral || family == ModelFamily::Olmo2;
  c.normEps = r.numberOr("rms_norm_eps", eps5 ? 1e-5 : 1e-6,
                         /*positive=*/true, /*below=*/1.0);

  readActivation(r, c, "hidden_act", "silu",
                 {{"silu", Activation::SiLU}, {"swish", Activation::SiLU}},
                 "silu for " + type);

  readRoPE(r, c, mixtral ? 1e6 : 10000.0);
  c.tieWordEmbeddings = r.boolOr("tie_word_embeddings", false);

  switch (family) {
  case ModelFamily::Llama:
    readLlamaExtras(r, c);
    break;
  case ModelFamily::Mixtral:
    readMixtralExtras(r, c);
    break;
  case ModelFamily::Mistral:
    readMistralExtras(r, c);
    break;
  case ModelFamily::Qwen2:
  case ModelFamily::Qwen3:
  case ModelFamily::Qwen3MoE:
    readQwenExtras(r, c);
    if (family == ModelFamily::Qwen3MoE)
      readQwen3MoEExtras(r, c);
    break;
  case ModelFamily::Olmo2:
    c.attentionBias = r.boolOr("attention_bias", false);
    break;
  default:
    llvm_unreachable("not a Llama-like family");
  }
  readCommonRejections(r);

  if (r.failed())
    return;
  if (!explicitHeadDim && c.hiddenSize % c.numHeads != 0)
    return r.fail("num_attention_heads",
                  llvm::formatv("{0} heads do not divide hidden_size = {1} "
                                "(and no head_dim is given)",
                                c.numHeads, c.hiddenSize));
  if (c.numHeads % c.numKVHeads != 0)
    return r.fail("num_key_value_heads",
                  llvm::formatv("{0} key/value heads do not divide "
                                "num_attention_heads = {1}",
                                c.numKVHeads, c.numHeads));
  checkEvenRoPEHead(r, c, explicitHeadDim ? "head_dim" : "num_attention_heads");
  if (r.failed())
    return;
  if ((mixtral || family == ModelFamily::Qwen3MoE) &&
      c.numExpertsPerToken > c.numExperts)
    return r.fail("num_experts_per_tok",
                  llvm::formatv("{0} exceeds {1} = {2}",
                                c.numExpertsPerToken,
                                mixtral ? "num_local_experts" : "num_experts",
                                c.numExperts));
}

//===----------------------------------------------------------------------===//
// Gemma, Phi-3, GPT-NeoX and OPT
//===----------------------------------------------------------------------===//

/// Gemma and Phi-3 build tfm.rope with the base alone: any RoPE scaling is
/// refused here, whatever readRoPE accepts for other families.
static void rejectRoPEScaling(FieldReader &r, StringRef type) {
  auto kindOf = [](const json::Value &value) -> std::string {
    if (const json::Object *object = value.getAsObject()) {
      if (std::optional<StringRef> kind = object->getString("rope_type"))
        return kind->str();
      if (std::optional<StringRef> kind = object->getString("type"))
        return kind->str();
    }
    return "";
  };
  for (StringRef key : {"rope_scaling", "rope_parameters"}) {
    const json::Value *value = r.lookup(key);
    if (!value)
      continue;
    std::string kind = kindOf(*value);
    // rope_parameters without a rope_type holds only rope_theta.
    if (kind == "default" || (kind.empty() && key == "rope_parameters"))
      continue;
    r.fail(key, (kind.empty() ? describe(*value) : "'" + kind + "'") +
                    " RoPE scaling is not supported for " + type +
                    "; tfm implements unscaled RoPE");
  }
}

/// The shared checks of a rotary model's head sizes.
static void checkHeads(FieldReader &r, ModelConfig &c, bool explicitHeadDim) {
  if (!explicitHeadDim && c.hiddenSize % c.numHeads != 0)
    return r.fail("num_attention_heads",
                  llvm::formatv("{0} heads do not divide hidden_size = {1}",
                                c.numHeads, c.hiddenSize));
  if (c.numHeads % c.numKVHeads != 0)
    return r.fail("num_key_value_heads",
                  llvm::formatv("{0} key/value heads do not divide "
                                "num_attention_heads = {1}",
                                c.numKVHeads, c.numHeads));
}

/// GemmaConfig: head_dim defaults to 256 whatever d is; the MLP activation
/// is `hidden_activation`, and transformers ignores `hidden_act` (falling
/// back to the tanh GELU) when that is absent.
/// The sizes, norm and MLP activation every Gemma generation reads alike.
static void readGemmaCommon(FieldReader &r, ModelConfig &c, StringRef type) {
  readDecoderSizes(r, c, type);
  // GemmaConfig's default (16) is not "one per query head": a config that
  // leaves it out means a different model than its heads suggest.
  c.numKVHeads = r.requiredSize("num_key_value_heads", type);
  c.headDim = r.sizeOr("head_dim", 256);
  c.normEps = r.numberOr("rms_norm_eps", 1e-6, /*positive=*/true,
                         /*below=*/1.0);
  // Read for the record only: GemmaMLP does not look at it.
  (void)r.lookup("hidden_act");
  readActivation(r, c, "hidden_activation", "gelu_pytorch_tanh",
                 {{"gelu_pytorch_tanh", Activation::GeluTanh},
                  {"gelu_new", Activation::GeluTanh},
                  {"gelu_fast", Activation::GeluTanh},
                  {"gelu", Activation::GeluExact}},
                 "gelu_pytorch_tanh, gelu_new, gelu_fast and gelu for " + type);
}

static void readGemma(FieldReader &r, ModelConfig &c) {
  c.family = ModelFamily::Gemma;
  StringRef type = "gemma";
  readGemmaCommon(r, c, type);
  rejectRoPEScaling(r, type);
  readRoPE(r, c, 10000.0);
  c.tieWordEmbeddings = r.boolOr("tie_word_embeddings", true);
  c.attentionBias = r.boolOr("attention_bias", false);
  readCommonRejections(r);
  if (r.failed())
    return;
  checkHeads(r, c, /*explicitHeadDim=*/true);
  checkEvenRoPEHead(r, c, "head_dim");
}

/// Gemma 3's RoPE in transformers 5: `rope_parameters` nested by layer
/// type, {"full_attention": {...}, "sliding_attention": {...}}; the local
/// layers' object may only give a base. Returns false when the object is
/// not nested (read as the flat layout by readRoPE).
static bool readNestedGemma3RoPE(FieldReader &r, ModelConfig &c) {
  const json::Value *value = r.lookup("rope_parameters");
  const json::Object *object = value ? value->getAsObject() : nullptr;
  if (!object || !(object->get("full_attention") ||
                   object->get("sliding_attention")))
    return false;
  for (const auto &entry : *object) {
    StringRef key = entry.first;
    const json::Object *inner = entry.second.getAsObject();
    std::string field = ("rope_parameters." + key).str();
    if (key != "full_attention" && key != "sliding_attention") {
      r.fail(field, "is not a layer type; gemma3_text nests "
                    "\"full_attention\" and \"sliding_attention\"");
      return true;
    }
    if (!inner) {
      r.fail(field, "expected an object, got " + describe(entry.second));
      return true;
    }
    if (key == "full_attention") {
      RoPEObjectReader(r, field, *inner).read(c, /*withTheta=*/true);
      continue;
    }
    // The local layers' RoPE: a base and no scaling.
    ModelConfig local = c;
    local.ropeTheta = c.ropeLocalTheta;
    RoPEObjectReader(r, field, *inner).read(local, /*withTheta=*/true);
    if (!r.failed() && local.ropeScaling != RoPEScaling::None)
      r.fail(field, "a scaling of the local layers' RoPE is not supported; "
                    "transformers scales only the global layers");
    c.ropeLocalTheta = local.ropeTheta;
  }
  return true;
}

/// Gemma2Config and Gemma3TextConfig: Gemma's sizes with sandwich norms,
/// softcapping and alternating local/global layers. Where transformers 4.x
/// and 5.x default a field differently (Gemma 2's query_pre_attn_scalar:
/// 224 and 256) the file must give it; published configs all do.
static void readGemma2Or3(FieldReader &r, ModelConfig &c, ModelFamily family) {
  c.family = family;
  bool gemma3 = family == ModelFamily::Gemma3;
  std::string type = getFamilyName(family).str();
  readGemmaCommon(r, c, type);
  if (gemma3) {
    c.queryPreAttnScalar = r.numberOr("query_pre_attn_scalar", 256,
                                      /*positive=*/true);
  } else if (!r.lookup("query_pre_attn_scalar")) {
    r.fail("query_pre_attn_scalar",
           "missing; transformers 4.x and 5.x default it differently (224 "
           "and 256), so a gemma2 config must give it");
  } else {
    c.queryPreAttnScalar =
        r.numberOr("query_pre_attn_scalar", 256, /*positive=*/true);
  }
  // Null turns softcapping off; Gemma 2 caps by default, Gemma 3 does not.
  auto softcap = [&](StringRef key, double gemma2Default) {
    if (r.isNull(key))
      return 0.0;
    return r.numberOr(key, gemma3 ? 0.0 : gemma2Default, /*positive=*/true);
  };
  c.attnLogitSoftcap = softcap("attn_logit_softcapping", 50.0);
  c.finalLogitSoftcap = softcap("final_logit_softcapping", 30.0);
  // transformers' Gemma3Attention keeps attn_logit_softcapping but never
  // applies it (4.57 and 5.17 alike): the checkpoints were trained and are
  // run without it.
  if (gemma3)
    c.attnLogitSoftcap = 0;
  c.slidingWindow =
      r.isNull("sliding_window") ? 0 : r.sizeOr("sliding_window", 4096);
  // Early Gemma 2 configs (9B, 27B) repeat the window as
  // `sliding_window_size`, which transformers does not read.
  if (r.lookup("sliding_window_size") &&
      r.sizeOr("sliding_window_size", c.slidingWindow) != c.slidingWindow)
    r.fail("sliding_window_size",
           llvm::formatv("disagrees with sliding_window = {0}",
                         c.slidingWindow));
  // The default layer types: Gemma 2 slides the even layers; Gemma 3 all but
  // every sliding_window_pattern-th.
  // (transformers 5 writes layer_types, and the pattern as
  // `_sliding_window_pattern` beside it.)
  int64_t pattern =
      gemma3 ? r.sizeOr("sliding_window_pattern",
                        r.sizeOr("_sliding_window_pattern", 6))
             : 2;
  if (c.slidingWindow > 0) {
    c.slidingLayers.assign(c.numLayers, false);
    for (int64_t i = 0; i < c.numLayers; ++i)
      c.slidingLayers[i] = (i + 1) % pattern != 0;
  }
  if (gemma3) {
    c.ropeTheta = 1e6;
    c.ropeLocalTheta =
        r.numberOr("rope_local_base_freq", 10000.0, /*positive=*/true);
    if (!readNestedGemma3RoPE(r, c))
      readRoPE(r, c, 1e6);
    r.rejectTrue("use_bidirectional_attention",
                 "bidirectional attention is EmbeddingGemma's; tfm builds "
                 "causal decoders");
  } else {
    readRoPE(r, c, 10000.0);
  }
  c.tieWordEmbeddings = r.boolOr("tie_word_embeddings", true);
  c.attentionBias = r.boolOr("attention_bias", false);
  (void)r.lookup("cache_implementation");
  readCommonRejections(r);
  if (r.failed())
    return;
  checkHeads(r, c, /*explicitHeadDim=*/true);
  checkEvenRoPEHead(r, c, "head_dim");
}

/// Phi3Config (transformers 4.46): the head size is always d / H, and its
/// long-context RoPE variants (`su`, `longrope`) are not implemented.
static void readPhi3(FieldReader &r, ModelConfig &c) {
  c.family = ModelFamily::Phi3;
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
  readCommonRejections(r);
  if (r.failed())
    return;
  checkHeads(r, c, /*explicitHeadDim=*/false);
  c.headDim = c.hiddenSize / c.numHeads;
  checkEvenRoPEHead(r, c, "num_attention_heads");
}

/// GPTNeoXConfig: `rotary_pct` and `rotary_emb_base` are the settings;
/// transformers 4.46 also writes them as `partial_rotary_factor` and
/// `rope_theta`, which must then agree.
static void readGPTNeoX(FieldReader &r, ModelConfig &c) {
  c.family = ModelFamily::GPTNeoX;
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
    RoPEObjectReader reader(r, "rope_parameters", *object);
    reader.read(given, /*withTheta=*/true);
    if (r.failed())
      return;
    if (given.ropeScaling != RoPEScaling::None)
      return r.fail("rope_parameters", "tfm implements unscaled RoPE for "
                                       "gpt_neox (rope_type must be "
                                       "'default')");
    if (given.ropeTheta > 0)
      ropeBase = given.ropeTheta;
    ropeFraction = reader.getPartialRotaryFactor();
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
  readCommonRejections(r);
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

/// OPTConfig. The learned position table has max_position_embeddings + 2
/// rows: OPT's positions start at row 2.
static void readOPT(FieldReader &r, ModelConfig &c) {
  c.family = ModelFamily::OPT;
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
  readCommonRejections(r);
  if (r.failed())
    return;
  c.numKVHeads = c.numHeads;
  checkHeads(r, c, /*explicitHeadDim=*/false);
  c.headDim = c.hiddenSize / c.numHeads;
}

llvm::Expected<ModelConfig>
mlir::tfm::hf::parseModelConfig(llvm::StringRef jsonText) {
  auto makeError = [](const Twine &message) {
    return llvm::createStringError(
        std::make_error_code(std::errc::invalid_argument), message);
  };
  // llvm::json's parser recurses per level: bound the depth first.
  if (llvm::Error err = runtime::checkTextNesting(
          jsonText, runtime::TextSyntax::Json, runtime::kMaxJsonDepth,
          "invalid config"))
    return err;
  llvm::Expected<json::Value> parsed = json::parse(jsonText);
  if (!parsed)
    return makeError("invalid JSON: " + llvm::toString(parsed.takeError()));
  if (llvm::Error err = runtime::checkJsonKeys(jsonText, *parsed, "invalid config"))
    return err;
  const json::Object *object = parsed->getAsObject();
  if (!object)
    return makeError("invalid config: expected a JSON object at the top "
                     "level, got " +
                     describe(*parsed));

  FieldReader r(*object);
  ModelConfig c;
  const json::Value *typeValue = r.lookup("model_type");
  if (!typeValue)
    return makeError(Twine("model_type: missing; tfm imports ") +
                     kImportedTypes);
  std::optional<StringRef> type = typeValue->getAsString();
  if (!type)
    return makeError("model_type: expected a string, got " +
                     describe(*typeValue));
  c.modelType = type->str();
  if (*type == "gpt2")
    readGPT2(r, c);
  else if (*type == "llama")
    readLlamaLike(r, c, ModelFamily::Llama);
  else if (*type == "mixtral")
    readLlamaLike(r, c, ModelFamily::Mixtral);
  else if (*type == "mistral")
    readLlamaLike(r, c, ModelFamily::Mistral);
  else if (*type == "qwen2")
    readLlamaLike(r, c, ModelFamily::Qwen2);
  else if (*type == "qwen3")
    readLlamaLike(r, c, ModelFamily::Qwen3);
  else if (*type == "gemma")
    readGemma(r, c);
  else if (*type == "phi3")
    readPhi3(r, c);
  else if (*type == "gpt_neox")
    readGPTNeoX(r, c);
  else if (*type == "opt")
    readOPT(r, c);
  else if (*type == "gemma2")
    readGemma2Or3(r, c, ModelFamily::Gemma2);
  else if (*type == "gemma3_text")
    readGemma2Or3(r, c, ModelFamily::Gemma3);
  else if (*type == "qwen3_moe")
    readLlamaLike(r, c, ModelFamily::Qwen3MoE);
  else if (*type == "olmo2")
    readLlamaLike(r, c, ModelFamily::Olmo2);
  else
    return makeError("model_type: unsupported model type '" + *type +
                     "' (tfm imports " + kImportedTypes + ")");
  readLayerTypes(r, c);
  checkRoPEFactors(r, c);
  r.rejectUnreadMathFields(*type);
  if (r.failed())
    return makeError(r.getError());
  c.unknownFields = r.getUnknownFields();
  return c;
}

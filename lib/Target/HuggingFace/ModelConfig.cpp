//===- ModelConfig.cpp - reading a Hugging Face config.json ---------------===//
//
// The family-independent part: the JSON checks, FieldReader, the fields
// several families read alike (sizes, activation, RoPE and its scalings,
// layer types), and the dispatch on `model_type` through the table of
// families (Families/Families.cpp). Family readers mirror the defaults of
// their transformers config class for optional fields but require the
// sizes: a config.json saved by transformers always has them, so a missing
// one means a broken or foreign file rather than "use the class default".
//
//===----------------------------------------------------------------------===//
#include "tfm/Target/HuggingFace/ModelConfig.h"
#include "tfm/Runtime/Json.h"

#include "ConfigReader.h"
#include "Families/Families.h"

#include "tfm/Runtime/Error.h"
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
  return getFamily(family).modelType;
}



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
std::string mlir::tfm::hf::describe(const json::Value &value) {
  switch (value.kind()) {
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  default:
    return llvm::formatv("{0}", value).str();
  }
}

void FieldReader::rejectUnreadMathFields(StringRef modelType) {
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
std::vector<std::string> FieldReader::getUnknownFields() const {
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

/// A compressed-tensors `quantization_config` (llm-compressor): tfm reads
/// the "pack-quantized" format of integer weights (4 or 8 bits, groups of
/// a multiple of 32 or one per channel, without act-order) with float
/// activations (w4a16, w8a16); every config group must quantize weights
/// alike. Anything else is refused naming the field.
static void readCompressedTensorsConfig(FieldReader &r, const json::Object &q,
                                        ModelConfig &c) {
  auto fail = [&](const Twine &key, const Twine &what) {
    r.fail(("quantization_config." + key).str(), what);
  };
  std::optional<StringRef> format =
      q.get("format") ? q.get("format")->getAsString() : std::nullopt;
  if (format != StringRef("pack-quantized"))
    return fail("format",
                (format ? "'" + *format + "'" : Twine("missing")) +
                    ": tfm reads compressed-tensors' \"pack-quantized\" "
                    "integer weights");
  if (const json::Value *kv = q.get("kv_cache_scheme");
      kv && kv->kind() != json::Value::Null)
    return fail("kv_cache_scheme", "quantized KV caches are not supported");
  const json::Object *groups =
      q.get("config_groups") ? q.get("config_groups")->getAsObject() : nullptr;
  if (!groups || groups->empty())
    return fail("config_groups", "expected an object of quantization "
                                 "schemes");
  std::optional<mlir::tfm::runtime::PackedIntFormat> agreed;
  for (const auto &[name, value] : *groups) {
    std::string key = ("config_groups." + name.str());
    const json::Object *group = value.getAsObject();
    if (!group)
      return fail(key, "expected an object");
    if (const json::Value *inputs = group->get("input_activations");
        inputs && inputs->kind() != json::Value::Null)
      return fail(key + ".input_activations",
                  "quantized activations are not supported; tfm reads "
                  "weight-only schemes (w4a16, w8a16)");
    const json::Object *weights =
        group->get("weights") ? group->get("weights")->getAsObject() : nullptr;
    if (!weights)
      return fail(key + ".weights", "expected an object");
    auto field = [&](StringRef f) { return weights->get(f); };
    mlir::tfm::runtime::PackedIntFormat f;
    f.method = mlir::tfm::runtime::PackedIntFormat::Method::CompressedTensors;
    std::optional<int64_t> bits =
        field("num_bits") ? field("num_bits")->getAsInteger() : std::nullopt;
    if (bits != 4 && bits != 8)
      return fail(key + ".weights.num_bits",
                  "expected 4 or 8 (the widths tfm reads)");
    f.bits = *bits;
    std::optional<StringRef> type =
        field("type") ? field("type")->getAsString() : std::nullopt;
    if (type != StringRef("int"))
      return fail(key + ".weights.type", "tfm reads integer weights (\"int\")");
    std::optional<StringRef> strategy =
        field("strategy") ? field("strategy")->getAsString() : std::nullopt;
    if (strategy == StringRef("channel")) {
      f.groupSize = -1;
    } else if (strategy == StringRef("group")) {
      std::optional<int64_t> size = field("group_size")
                                        ? field("group_size")->getAsInteger()
                                        : std::nullopt;
      if (!size || *size < 32 || *size % 32 || *size > (int64_t(1) << 24))
        return fail(key + ".weights.group_size",
                    "expected a multiple of 32 (each group whole llama.cpp "
                    "blocks of 32)");
      f.groupSize = *size;
    } else {
      return fail(key + ".weights.strategy",
                  "tfm reads \"group\" and \"channel\" scales");
    }
    // llm-compressor's activation ordering: "group" (older: "dynamic",
    // true) assigns rows to groups in activation order and saves
    // weight_g_idx, as GPTQ's desc_act; "weight" ("static") only quantizes
    // in that order, its groups the rows' own.
    if (const json::Value *order = field("actorder");
        order && order->kind() != json::Value::Null &&
        order->getAsBoolean() != false) {
      std::optional<StringRef> name = order->getAsString();
      if (order->getAsBoolean() == true || name == StringRef("group") ||
          name == StringRef("dynamic"))
        f.actOrder = true;
      else if (name != StringRef("weight") && name != StringRef("static"))
        return fail(key + ".weights.actorder",
                    "expected \"group\", \"weight\" or null");
      if (f.actOrder && c.numExperts > 0)
        return fail(key + ".weights.actorder",
                    "act-order experts are not supported (tfm reorders the "
                    "inputs of linears, not of experts)");
    }
    if (field("dynamic") && field("dynamic")->getAsBoolean() != false)
      return fail(key + ".weights.dynamic",
                  "dynamic weight quantization is not supported");
    bool symmetric = !field("symmetric") ||
                     field("symmetric")->getAsBoolean().value_or(true);
    if (!symmetric && f.bits == 8)
      return fail(key + ".weights.symmetric",
                  "false with 8 bits: q - zero spans 9 bits; tfm reads "
                  "8-bit weights symmetric");
    if (agreed && (agreed->bits != f.bits || agreed->groupSize != f.groupSize ||
                   agreed->actOrder != f.actOrder))
      return fail(key, "quantizes weights unlike the other groups; tfm reads "
                       "one width and group size per model");
    agreed = f;
  }
  c.packedInts = agreed;
}

/// `quantization_config`, for every family. Quantized checkpoints store
/// other tensors (int weights, scales) in place of the float ones: a form
/// tfm does not read is refused by name, never imported as if its tensors
/// were the weights. Read (tfm/Runtime/Gptq.h): GPTQ of 4 bits (symmetric
/// or not) or 8 (symmetric), without act-order (each input row's group its
/// index / group_size); AWQ of 4 bits with zero points, GEMM layout; groups
/// of a multiple of 32 rows (one scale per llama.cpp block) or, for GPTQ,
/// one per column (-1).
static void readQuantizationConfig(FieldReader &r, ModelConfig &c) {
  const json::Value *value = r.lookup("quantization_config");
  if (!value)
    return;
  const json::Object *q = value->getAsObject();
  if (!q) {
    r.fail("quantization_config", "expected an object, got " + describe(*value));
    return;
  }
  auto field = [&](StringRef key) { return q->get(key); };
  auto string = [&](StringRef key) -> std::optional<StringRef> {
    const json::Value *v = field(key);
    return v ? v->getAsString() : std::nullopt;
  };
  auto boolean = [&](StringRef key) -> std::optional<bool> {
    const json::Value *v = field(key);
    return v ? v->getAsBoolean() : std::nullopt;
  };
  std::optional<StringRef> method = string("quant_method");
  if (method == StringRef("compressed-tensors")) {
    readCompressedTensorsConfig(r, *q, c);
    return;
  }
  if (method != StringRef("gptq") && method != StringRef("awq")) {
    r.fail("quantization_config.quant_method",
           (method ? "'" + *method + "'" : Twine("missing")) +
               ": tfm reads GPTQ, AWQ and compressed-tensors checkpoints "
               "(quant_method \"gptq\", \"awq\", \"compressed-tensors\") "
               "and GGUF files; other quantized checkpoints are not "
               "supported");
    return;
  }
  mlir::tfm::runtime::PackedIntFormat format;
  bool awq = *method == "awq";
  format.method = awq ? mlir::tfm::runtime::PackedIntFormat::Method::Awq
                      : mlir::tfm::runtime::PackedIntFormat::Method::Gptq;
  // AutoAWQ's own quant_config spells them w_bit and q_group_size.
  StringRef bitsKey =
      awq && !field("bits") && field("w_bit") ? "w_bit" : "bits";
  const json::Value *bits = field(bitsKey);
  std::optional<int64_t> bitsValue = bits ? bits->getAsInteger() : std::nullopt;
  if (bitsValue != 4 && (awq || bitsValue != 8)) {
    r.fail(("quantization_config." + bitsKey).str(),
           (awq ? "expected 4 (the AWQ width tfm reads), got "
                : "expected 4 or 8 (the GPTQ widths tfm reads), got ") +
               (bits ? describe(*bits) : std::string("nothing")));
    return;
  }
  format.bits = *bitsValue;
  StringRef groupKey = awq && !field("group_size") && field("q_group_size")
                           ? "q_group_size"
                           : "group_size";
  const json::Value *group = field(groupKey);
  std::optional<int64_t> groupValue =
      group ? group->getAsInteger() : std::nullopt;
  if (!groupValue || ((awq || *groupValue != -1) &&
                      (*groupValue < 32 || *groupValue % 32 != 0 ||
                       *groupValue > (int64_t(1) << 24)))) {
    r.fail(("quantization_config." + groupKey).str(),
           (awq ? "expected a multiple of 32 (each group whole llama.cpp "
                  "blocks of 32), got "
                : "expected -1 (one group per column) or a multiple of 32 "
                  "(each group whole llama.cpp blocks of 32), got ") +
               (group ? describe(*group) : std::string("nothing")));
    return;
  }
  format.groupSize = *groupValue;
  if (awq) {
    if (boolean("zero_point").value_or(true) != true) {
      r.fail("quantization_config.zero_point",
             "false: AWQ without zero points is not supported; tfm reads "
             "AWQ with a zero point per group");
      return;
    }
    std::optional<StringRef> version = string("version");
    if (version && !version->equals_insensitive("gemm")) {
      r.fail("quantization_config.version",
             "'" + *version +
                 "': tfm reads AWQ's GEMM layout (\"gemm\": "
                 "qweight [K, N / 8]); other versions pack "
                 "differently");
      return;
    }
    c.packedInts = format;
    return;
  }
  if (boolean("sym").value_or(true) != true && format.bits == 8) {
    r.fail("quantization_config.sym",
           "false with bits 8: asymmetric 8-bit GPTQ (q - zero spans 9 bits) "
           "is not supported; tfm reads 8-bit GPTQ symmetric");
    return;
  }
  format.actOrder = boolean("desc_act").value_or(false);
  // Experts (tfm.moe) read their weights without an input reorder.
  if (format.actOrder && c.numExperts > 0) {
    r.fail("quantization_config.desc_act",
           "true in a mixture of experts: act-order GPTQ experts are not "
           "supported (tfm reorders the inputs of linears, not of experts)");
    return;
  }
  std::optional<StringRef> checkpointFormat = string("checkpoint_format");
  if (checkpointFormat && *checkpointFormat != "gptq") {
    r.fail("quantization_config.checkpoint_format",
           "'" + *checkpointFormat +
               "': tfm reads the \"gptq\" format (zeros stored minus one)");
    return;
  }
  c.packedInts = format;
}

/// A family's activation field: `known` maps each accepted name to tfm's
/// activation; any other name is an error listing `supported`.
void mlir::tfm::hf::readActivation(FieldReader &r, ModelConfig &c, StringRef key,
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
void mlir::tfm::hf::readDecoderSizes(FieldReader &r, ModelConfig &c, StringRef type,
                                     StringRef intermediateKey) {
  c.vocabSize = r.requiredSize("vocab_size", type);
  c.hiddenSize = r.requiredSize("hidden_size", type);
  c.numLayers = r.requiredCount("num_hidden_layers", type, kMaxLayers);
  c.numHeads = r.requiredSize("num_attention_heads", type);
  c.intermediateSize = r.requiredSize(intermediateKey, type);
  c.maxPositionsField = "max_position_embeddings";
  c.maxPositions = r.requiredSize("max_position_embeddings", type);
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
    } else if (kind == "gguf_rope_freqs") {
      // Only GgufModel.cpp writes it: a GGUF file's rope_freqs tensor.
      c.ropeScaling = RoPEScaling::FreqFactors;
      c.ropeFreqFactors = factors("factors");
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
    std::optional<int64_t> n = mlir::tfm::runtime::getJsonInteger(*value);
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

std::optional<double>
mlir::tfm::hf::readRoPEObject(FieldReader &r, StringRef field,
                              const json::Object &object, ModelConfig &c,
                              bool withTheta) {
  RoPEObjectReader reader(r, field, object);
  reader.read(c, withTheta);
  return reader.getPartialRotaryFactor();
}

/// RoPE settings. transformers 4.x writes `rope_theta` and `rope_scaling`;
/// 5.x groups them as `rope_parameters`. Both layouts read the same way;
/// scalings tfm does not implement (yarn, longrope, ...) are errors rather
/// than a silent mismatch.
/// Families that rotate whole heads: a rope_parameters
/// `partial_rotary_factor` must be 1 (transformers 5 writes Phi-3's so).
void mlir::tfm::hf::readRoPE(FieldReader &r, ModelConfig &c, double defaultTheta) {
  c.ropeTheta = r.numberOr("rope_theta", defaultTheta, /*positive=*/true);
  for (StringRef field : {"rope_scaling", "rope_parameters"}) {
    const json::Value *value = r.lookup(field);
    if (!value)
      continue;
    const json::Object *object = value->getAsObject();
    if (!object)
      return r.fail(field, "expected an object, got " + describe(*value));
    std::optional<double> partial = readRoPEObject(
        r, field, *object, c, /*withTheta=*/field == "rope_parameters");
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
  if (r.failed() || (c.ropeScaling != RoPEScaling::LongRoPE &&
                     c.ropeScaling != RoPEScaling::FreqFactors))
    return;
  size_t pairs = size_t(c.rotaryDims ? c.rotaryDims : c.headDim) / 2;
  bool gguf = c.ropeScaling == RoPEScaling::FreqFactors;
  for (auto [key, factors] :
       {std::pair<StringRef, const std::vector<double> *>{
            gguf ? "factors" : "short_factor",
            gguf ? &c.ropeFreqFactors : &c.ropeShortFactor},
        {gguf ? "factors" : "long_factor",
         gguf ? &c.ropeFreqFactors : &c.ropeLongFactor}})
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
  case RoPEScaling::FreqFactors:
    // ggml_rope_ext: theta = p * base^(-2i/dh) / freq_factors[i].
    for (auto [i, f] : llvm::enumerate(invFreq))
      f /= static_cast<float>(
          i < c.ropeFreqFactors.size() ? c.ropeFreqFactors[i] : 1.0);
    break;
  }
  return invFreq;
}

//===----------------------------------------------------------------------===//
// Llama-like families: what each adds to Llama's decoder
//===----------------------------------------------------------------------===//






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
void mlir::tfm::hf::checkEvenRoPEHead(FieldReader &r, const ModelConfig &c,
                                      StringRef key) {
  if (!r.failed() && c.headDim % 2 != 0)
    r.fail(key,
           llvm::formatv("RoPE needs an even head size, got {0}", c.headDim));
}


//===----------------------------------------------------------------------===//
// Gemma, Phi-3, GPT-NeoX and OPT
//===----------------------------------------------------------------------===//

/// Gemma and Phi-3 build tfm.rope with the base alone: any RoPE scaling is
/// refused here, whatever readRoPE accepts for other families.
void mlir::tfm::hf::rejectRoPEScaling(FieldReader &r, StringRef type) {
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
void mlir::tfm::hf::checkHeads(FieldReader &r, ModelConfig &c,
                               bool explicitHeadDim, StringRef hint) {
  if (!explicitHeadDim && c.hiddenSize % c.numHeads != 0)
    return r.fail("num_attention_heads",
                  llvm::formatv("{0} heads do not divide hidden_size = {1}{2}",
                                c.numHeads, c.hiddenSize, hint));
  if (c.numHeads % c.numKVHeads != 0)
    return r.fail("num_key_value_heads",
                  llvm::formatv("{0} key/value heads do not divide "
                                "num_attention_heads = {1}",
                                c.numKVHeads, c.numHeads));
}








llvm::Expected<ModelConfig>
mlir::tfm::hf::parseModelConfig(llvm::StringRef jsonText) {
  using runtime::makeError;
  // llvm::json's parser recurses per level: bound the depth first.
  if (llvm::Error err = runtime::checkTextNesting(
          jsonText, runtime::TextSyntax::Json, runtime::kMaxJsonDepth,
          "invalid config"))
    return err;
  llvm::Expected<json::Value> parsed = runtime::parseJson(jsonText);
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
    return makeError("model_type: missing; tfm imports " +
                     getImportedModelTypes());
  std::optional<StringRef> type = typeValue->getAsString();
  if (!type)
    return makeError("model_type: expected a string, got " +
                     describe(*typeValue));
  c.modelType = type->str();
  const FamilyInfo *family = lookupFamily(*type);
  if (!family)
    return makeError("model_type: unsupported model type '" + *type +
                     "' (tfm imports " + getImportedModelTypes() + ")");
  c.family = family->family;
  family->readConfig(r, c);
  readQuantizationConfig(r, c);
  readLayerTypes(r, c);
  checkRoPEFactors(r, c);
  r.rejectUnreadMathFields(*type);
  if (r.failed())
    return makeError(r.getError());
  c.unknownFields = r.getUnknownFields();
  return c;
}

//===- GenerationConfig.cpp - generation defaults of a model --------------===//
#include "tfm/Runtime/GenerationConfig.h"
#include "tfm/Runtime/GgufModel.h"
#include "tfm/Runtime/Json.h"
#include "tfm/Runtime/Limits.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <limits>

using namespace mlir::tfm;
using namespace mlir::tfm::runtime;
namespace json = llvm::json;

std::optional<int64_t>
GenerationConfig::getMaxNewTokens(int64_t promptLength) const {
  if (maxNewTokens)
    return maxNewTokens;
  if (maxLength)
    return std::max<int64_t>(*maxLength - promptLength, 0);
  return std::nullopt;
}

/// Fields that change what Hugging Face's `generate` produces and that tfm
/// does not implement, with the value that leaves them off.
static bool isIgnoredBehaviour(llvm::StringRef key, const json::Value &value) {
  if (key == "num_beams" || key == "num_return_sequences")
    return mlir::tfm::runtime::getJsonInteger(value).value_or(1) != 1;
  if (key == "no_repeat_ngram_size" || key == "min_new_tokens" ||
      key == "min_length")
    return mlir::tfm::runtime::getJsonInteger(value).value_or(0) != 0;
  if (key == "typical_p")
    return value.getAsNumber().value_or(1.0) != 1.0;
  if (key == "min_p" || key == "epsilon_cutoff" || key == "eta_cutoff")
    return value.getAsNumber().value_or(0.0) != 0.0;
  return key == "bad_words_ids" || key == "forced_bos_token_id" ||
         key == "forced_eos_token_id" || key == "suppress_tokens" ||
         key == "begin_suppress_tokens" || key == "sequence_bias";
}

namespace {
class Reader {
public:
  Reader(const json::Object &object, llvm::StringRef path)
      : object(object), path(path) {}

  llvm::Error error(llvm::StringRef key, const llvm::Twine &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " + key + ": " + what);
  }
  /// Null counts as absent, as Hugging Face writes unset fields as null.
  const json::Value *lookup(llvm::StringRef key) {
    const json::Value *value = object.get(key);
    return value && value->kind() != json::Value::Null ? value : nullptr;
  }
  llvm::Error readBool(llvm::StringRef key, bool &out) {
    if (const json::Value *value = lookup(key)) {
      std::optional<bool> b = value->getAsBoolean();
      if (!b)
        return error(key, "expected true or false");
      out = *b;
    }
    return llvm::Error::success();
  }
  llvm::Error readFloat(llvm::StringRef key, float &out) {
    if (const json::Value *value = lookup(key)) {
      std::optional<double> d = value->getAsNumber();
      if (!d)
        return error(key, "expected a number");
      // Past float's range the conversion is undefined.
      if (!(std::fabs(*d) <= double(std::numeric_limits<float>::max())))
        return error(key, "expected a number within float's range");
      out = float(*d);
    }
    return llvm::Error::success();
  }
  llvm::Error readInt(llvm::StringRef key, int64_t min,
                      std::optional<int64_t> &out) {
    if (const json::Value *value = lookup(key)) {
      std::optional<int64_t> i = mlir::tfm::runtime::getJsonInteger(*value);
      if (!i || *i < min)
        return error(key, llvm::formatv("expected an integer >= {0}", min));
      out = *i;
    }
    return llvm::Error::success();
  }
  /// An integer or a list of them, as eos_token_id may be.
  llvm::Error readIds(llvm::StringRef key, std::vector<int64_t> &out) {
    const json::Value *value = lookup(key);
    if (!value)
      return llvm::Error::success();
    std::vector<int64_t> ids;
    auto add = [&](const json::Value &v) {
      std::optional<int64_t> id = mlir::tfm::runtime::getJsonInteger(v);
      if (!id || *id < 0)
        return false;
      ids.push_back(*id);
      return true;
    };
    if (const json::Array *array = value->getAsArray()) {
      for (const json::Value &v : *array)
        if (!add(v))
          return error(key, "expected a token id (an integer >= 0) or a "
                            "list of them");
    } else if (!add(*value)) {
      return error(key, "expected a token id (an integer >= 0) or a list of "
                        "them");
    }
    out = std::move(ids);
    return llvm::Error::success();
  }
  llvm::Error readStrings(llvm::StringRef key, std::vector<std::string> &out) {
    const json::Value *value = lookup(key);
    if (!value)
      return llvm::Error::success();
    std::vector<std::string> strings;
    auto add = [&](const json::Value &v) {
      std::optional<llvm::StringRef> s = v.getAsString();
      if (!s || s->empty())
        return false;
      strings.push_back(s->str());
      return true;
    };
    bool ok = true;
    if (const json::Array *array = value->getAsArray()) {
      for (const json::Value &v : *array)
        ok = ok && add(v);
    } else {
      ok = add(*value);
    }
    if (!ok)
      return error(key, "expected a non-empty string or a list of them");
    out = std::move(strings);
    return llvm::Error::success();
  }

private:
  const json::Object &object;
  llvm::StringRef path;
};
} // namespace

/// `text` parsed as JSON by the checks every JSON reader of tfm makes: a
/// bounded nesting depth (llvm::json's parser recurses per level) and no key
/// given twice.
static llvm::Expected<json::Value> parseCheckedJson(llvm::StringRef text,
                                                   llvm::StringRef path) {
  std::string what = (path + ": invalid JSON").str();
  if (llvm::Error err = checkTextNesting(text, TextSyntax::Json,
                                         kMaxJsonDepth, what))
    return std::move(err);
  llvm::Expected<json::Value> parsed = parseJson(text);
  if (!parsed)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        path + ": not valid JSON: " + llvm::toString(parsed.takeError()));
  if (llvm::Error err = checkJsonKeys(text, *parsed, what))
    return std::move(err);
  return parsed;
}

llvm::Error runtime::parseGenerationConfig(llvm::StringRef text,
                                           llvm::StringRef path,
                                           GenerationConfig &config) {
  llvm::Expected<json::Value> parsed = parseCheckedJson(text, path);
  if (!parsed)
    return parsed.takeError();
  const json::Object *object = parsed->getAsObject();
  if (!object)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": expected a JSON object");
  Reader r(*object, path);
  SamplingOptions &s = config.sampling;
  std::optional<int64_t> topK;
  if (llvm::Error err = r.readBool("do_sample", s.doSample))
    return err;
  if (llvm::Error err = r.readFloat("temperature", s.temperature))
    return err;
  if (llvm::Error err = r.readInt("top_k", 0, topK))
    return err;
  if (topK)
    s.topK = *topK;
  if (llvm::Error err = r.readFloat("top_p", s.topP))
    return err;
  if (llvm::Error err =
          r.readFloat("repetition_penalty", s.repetitionPenalty))
    return err;
  if (llvm::Error err = r.readIds("eos_token_id", config.eosTokenIds))
    return err;
  if (llvm::Error err = r.readInt("max_new_tokens", 1, config.maxNewTokens))
    return err;
  if (llvm::Error err = r.readInt("max_length", 1, config.maxLength))
    return err;
  if (llvm::Error err = r.readStrings("stop_strings", config.stopStrings))
    return err;
  // Greedy decoding does not read the sampling settings, and transformers
  // loads a greedy config whose temperature or top_p is 0 (with a warning):
  // those mean "not set" here too, so sampling turned on from the command
  // line starts from the defaults.
  if (!s.doSample) {
    if (s.temperature == 0)
      s.temperature = SamplingOptions().temperature;
    if (s.topP == 0)
      s.topP = SamplingOptions().topP;
  }
  if (llvm::Error err = verifySamplingOptions(s))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " + llvm::toString(std::move(err)));
  for (const auto &[key, value] : *object)
    if (value.kind() != json::Value::Null && isIgnoredBehaviour(key, value))
      config.ignoredFields.push_back(key.str());
  llvm::sort(config.ignoredFields);
  return llvm::Error::success();
}

/// A regular file of bounded size (a FIFO would block, /dev/zero never
/// end), read whole.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readJsonFile(llvm::StringRef path) {
  return readInputFile(path, kMaxTextFileBytes, /*isText=*/true);
}

static llvm::Expected<json::Value> readJson(llvm::StringRef path) {
  auto buffer = readJsonFile(path);
  if (!buffer)
    return buffer.takeError();
  return parseCheckedJson((*buffer)->getBuffer(), path);
}

llvm::Expected<GenerationConfig>
runtime::readGenerationDefaults(llvm::StringRef configPath) {
  GenerationConfig config;
  llvm::Expected<json::Value> model =
      isGgufPath(configPath)
          ? [&]() -> llvm::Expected<json::Value> {
              llvm::Expected<std::string> text = readGgufConfigJson(configPath);
              if (!text)
                return text.takeError();
              return parseJson(*text);
            }()
          : readJson(configPath);
  if (!model)
    return model.takeError();
  if (const json::Object *object = model->getAsObject())
    if (llvm::Error err =
            Reader(*object, configPath).readIds("eos_token_id",
                                                config.eosTokenIds))
      return std::move(err);
  llvm::SmallString<256> path = llvm::sys::path::parent_path(configPath);
  llvm::sys::path::append(path, "generation_config.json");
  if (!llvm::sys::fs::exists(path))
    return config;
  auto buffer = readJsonFile(path);
  if (!buffer)
    return buffer.takeError();
  if (llvm::Error err =
          parseGenerationConfig((*buffer)->getBuffer(), path, config))
    return std::move(err);
  return config;
}

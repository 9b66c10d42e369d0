//===- GgufVocabulary.cpp - a GGUF file's tokenizer as tokenizer.json -----===//
//
// A GGUF file stores its tokenizer as llama.cpp's vocabulary
// (`tokenizer.ggml.*`: the model kind, the tokens in id order, their types,
// SentencePiece scores or BPE merges, the special ids and flags). It is
// turned here into the tokenizer.json of the Hugging Face tokenizer it was
// converted from, which the rest of the tokenizer reads as any other:
//
// - `llama` (SentencePiece BPE: Llama 2, Mistral, TinyLlama): Llama 2's
//   legacy tokenizer.json (Prepend + Replace normalizer, byte fallback,
//   Replace/ByteFallback/Fuse/Strip decoders), its merges rebuilt from the
//   scores as `tokenizers`' SentencePieceExtractor builds them: every split
//   of a token into two tokens, ranked by the merged token's score;
// - `gpt2` (byte-level BPE): the merges as stored, the split regex that
//   `tokenizer.ggml.pre` names (GPT-2's, Llama 3's, Qwen2's).
//
// Control and unknown tokens become special added tokens, user-defined ones
// plain added tokens; BOS/EOS are added as the add_bos/add_eos flags say
// (llama.cpp's defaults where absent).
//
//===----------------------------------------------------------------------===//
#include "tfm/Tokenizer/Tokenizer.h"

#include "SplitRegex.h"

#include "tfm/Runtime/Error.h"
#include "tfm/Runtime/Gguf.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <tuple>

using namespace mlir::tfm;
using namespace mlir::tfm::tokenizer;
using runtime::GgufFile;
using runtime::GgufValue;
using runtime::makeError;
namespace json = llvm::json;

/// llama.cpp's token types (llama_token_type).
enum TokenType { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4,
                 Unused = 5, Byte = 6 };

namespace {
/// The `tokenizer.ggml.*` metadata, checked.
struct Vocabulary {
  llvm::StringRef model;
  llvm::StringRef pre;
  std::vector<llvm::StringRef> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  const std::vector<llvm::StringRef> *merges = nullptr;
  std::optional<int64_t> bos, eos, unk;
  bool addBos = false, addEos = false, addSpacePrefix = true;
};
} // namespace

/// A numeric array of `count` elements under `key`, or an error.
static llvm::Expected<const GgufValue *>
getNumericArray(const GgufFile &file, llvm::StringRef key, size_t count) {
  const GgufValue *value = file.getValue(key);
  if (!value)
    return nullptr;
  if (value->type != GgufValue::Array ||
      value->elementType == GgufValue::String)
    return makeError(file.getPath(), "metadata '" + key + "' is " +
                                         runtime::describeGgufType(*value) +
                                         ", not an array of numbers");
  if (value->count != count)
    return makeError(file.getPath(),
                     llvm::formatv("metadata '{0}' has {1} elements for {2} "
                                   "tokens",
                                   key, value->count, count));
  return value;
}

static llvm::Expected<Vocabulary> readVocabulary(const GgufFile &file) {
  llvm::StringRef path = file.getPath();
  Vocabulary v;
  auto model = file.getString("tokenizer.ggml.model");
  if (!model)
    return model.takeError();
  if (!*model)
    return makeError(path, "no tokenizer.ggml.model: the file holds no "
                           "tokenizer (pass token ids: --input-ids)");
  v.model = **model;
  if (v.model != "llama" && v.model != "gpt2")
    return makeError(path, "tokenizer.ggml.model '" + v.model +
                               "': tfm reads llama (SentencePiece) and gpt2 "
                               "(byte-level BPE) vocabularies");
  const GgufValue *tokens = file.getValue("tokenizer.ggml.tokens");
  if (!tokens || tokens->type != GgufValue::Array ||
      tokens->elementType != GgufValue::String || tokens->strings.empty())
    return makeError(path, "tokenizer.ggml.tokens must be a non-empty array "
                           "of strings");
  v.tokens = tokens->strings;
  size_t n = v.tokens.size();
  auto scores = getNumericArray(file, "tokenizer.ggml.scores", n);
  if (!scores)
    return scores.takeError();
  auto types = getNumericArray(file, "tokenizer.ggml.token_type", n);
  if (!types)
    return types.takeError();
  for (size_t i = 0; i < n; ++i) {
    v.scores.push_back(*scores ? float((*scores)->getElement(i).real)
                               : 0.0f);
    v.types.push_back(*types ? int32_t((*types)->getElement(i).integer)
                             : Normal);
  }
  if (const GgufValue *merges = file.getValue("tokenizer.ggml.merges")) {
    if (merges->type != GgufValue::Array ||
        merges->elementType != GgufValue::String)
      return makeError(path, "tokenizer.ggml.merges must be an array of "
                             "strings");
    v.merges = &merges->strings;
  }
  if (v.model == "gpt2" && !v.merges)
    return makeError(path, "a gpt2 vocabulary needs tokenizer.ggml.merges");
  if (v.model == "llama" && !*scores)
    return makeError(path, "a llama vocabulary needs tokenizer.ggml.scores");
  auto pre = file.getString("tokenizer.ggml.pre");
  if (!pre)
    return pre.takeError();
  v.pre = pre->value_or("default");
  for (auto [key, id] :
       {std::pair<llvm::StringRef, std::optional<int64_t> *>{
            "tokenizer.ggml.bos_token_id", &v.bos},
        {"tokenizer.ggml.eos_token_id", &v.eos},
        {"tokenizer.ggml.unknown_token_id", &v.unk}}) {
    auto value = file.getUnsigned(key);
    if (!value)
      return value.takeError();
    if (!*value)
      continue;
    if (**value >= n)
      return makeError(path, llvm::formatv("{0} {1} is outside the {2} "
                                           "tokens",
                                           key, **value, n));
    *id = int64_t(**value);
  }
  // llama.cpp's defaults: SentencePiece models add BOS, BPE ones do not.
  v.addBos = v.model == "llama";
  for (auto [key, flag] :
       {std::pair<llvm::StringRef, bool *>{"tokenizer.ggml.add_bos_token",
                                           &v.addBos},
        {"tokenizer.ggml.add_eos_token", &v.addEos},
        {"tokenizer.ggml.add_space_prefix", &v.addSpacePrefix}}) {
    auto value = file.getBool(key);
    if (!value)
      return value.takeError();
    if (*value)
      *flag = **value;
  }
  if ((v.addBos && !v.bos) || (v.addEos && !v.eos))
    return makeError(path, "the vocabulary adds BOS or EOS tokens but does "
                           "not name them (tokenizer.ggml.bos_token_id, "
                           "eos_token_id)");
  return v;
}

/// The merges of a SentencePiece vocabulary, as "left right" strings in
/// rank order: every split of a normal token (at a character boundary) into
/// two normal tokens, ranked by the merged token's score (higher first),
/// then its id, then the left piece's length. Control, byte and
/// user-defined tokens are never merged, nor merged into.
static std::vector<std::string> buildMerges(const Vocabulary &v) {
  llvm::StringMap<int64_t> ids;
  for (auto [id, token] : llvm::enumerate(v.tokens))
    if (v.types[id] == Normal)
      ids.try_emplace(token, int64_t(id));
  std::vector<std::tuple<float, int64_t, size_t, llvm::StringRef,
                         llvm::StringRef>>
      found;
  for (auto [id, token] : llvm::enumerate(v.tokens)) {
    int32_t type = v.types[id];
    if (type != Normal)
      continue;
    for (size_t i = 1; i < token.size(); ++i) {
      // Only between characters: not inside a UTF-8 sequence.
      if ((uint8_t(token[i]) & 0xc0) == 0x80)
        continue;
      llvm::StringRef left = token.take_front(i), right = token.drop_front(i);
      if (ids.count(left) && ids.count(right))
        found.emplace_back(v.scores[id], int64_t(id), i, left, right);
    }
  }
  // (id, split) is unique: a total order, no stability needed.
  llvm::sort(found, [](const auto &a, const auto &b) {
    if (std::get<0>(a) != std::get<0>(b))
      return std::get<0>(a) > std::get<0>(b);
    return std::make_pair(std::get<1>(a), std::get<2>(a)) <
           std::make_pair(std::get<1>(b), std::get<2>(b));
  });
  std::vector<std::string> merges;
  merges.reserve(found.size());
  for (const auto &merge : found)
    merges.push_back((std::get<3>(merge) + " " + std::get<4>(merge)).str());
  return merges;
}

static json::Value replace(llvm::StringRef from, llvm::StringRef to) {
  return json::Object{{"type", "Replace"},
                      {"pattern", json::Object{{"String", from}}},
                      {"content", to}};
}

/// TemplateProcessing adding BOS and/or EOS around each sequence.
static json::Value buildTemplate(const Vocabulary &v) {
  json::Object special;
  auto piece = [&](int64_t id) {
    std::string token = v.tokens[id].str();
    special[token] = json::Object{{"id", token},
                                  {"ids", json::Array{id}},
                                  {"tokens", json::Array{token}}};
    return json::Object{
        {"SpecialToken", json::Object{{"id", token}, {"type_id", 0}}}};
  };
  auto sequence = [&](llvm::StringRef which) {
    json::Array items;
    if (v.addBos)
      items.push_back(piece(*v.bos));
    items.push_back(json::Object{
        {"Sequence", json::Object{{"id", which}, {"type_id", 0}}}});
    if (v.addEos)
      items.push_back(piece(*v.eos));
    return items;
  };
  json::Array single = sequence("A"), pair = sequence("A");
  json::Array second = sequence("B");
  for (json::Value &item : second)
    pair.push_back(std::move(item));
  return json::Object{{"type", "TemplateProcessing"},
                      {"single", std::move(single)},
                      {"pair", std::move(pair)},
                      {"special_tokens", std::move(special)}};
}

llvm::Expected<std::string>
mlir::tfm::tokenizer::convertGgufTokenizer(const GgufFile &file) {
  llvm::StringRef path = file.getPath();
  llvm::Expected<Vocabulary> read = readVocabulary(file);
  if (!read)
    return read.takeError();
  const Vocabulary &v = *read;
  bool sentencepiece = v.model == "llama";
  // The vocabulary as a map; a token repeated keeps its first id (a map
  // holds one), as later ids are never produced by the merges either.
  llvm::StringMap<int64_t> ids;
  json::Object vocab;
  json::Array added;
  for (auto [id, token] : llvm::enumerate(v.tokens)) {
    if (!llvm::json::isUTF8(token))
      return makeError(path, llvm::formatv("token {0} is not valid UTF-8",
                                           id));
    if (!ids.try_emplace(token, int64_t(id)).second)
      continue;
    vocab[token] = int64_t(id);
    int32_t type = v.types[id];
    if (type == Control || type == Unknown || type == UserDefined)
      added.push_back(json::Object{{"id", int64_t(id)},
                                   {"content", token},
                                   {"single_word", false},
                                   {"lstrip", false},
                                   {"rstrip", false},
                                   {"normalized", false},
                                   {"special", type != UserDefined}});
  }
  json::Array merges;
  if (sentencepiece) {
    for (std::string &merge : buildMerges(v))
      merges.push_back(std::move(merge));
  } else {
    for (llvm::StringRef merge : *v.merges) {
      if (!llvm::json::isUTF8(merge))
        return makeError(path, "a merge is not valid UTF-8");
      merges.push_back(merge);
    }
  }
  json::Object model{{"type", "BPE"},
                     {"dropout", nullptr},
                     {"continuing_subword_prefix", nullptr},
                     {"end_of_word_suffix", nullptr},
                     {"fuse_unk", sentencepiece},
                     {"byte_fallback", sentencepiece},
                     {"ignore_merges", v.pre == "llama-bpe"},
                     {"vocab", std::move(vocab)},
                     {"merges", std::move(merges)}};
  if (v.unk)
    model["unk_token"] = v.tokens[*v.unk];
  else
    model["unk_token"] = nullptr;
  json::Object spec{{"version", "1.0"},
                    {"truncation", nullptr},
                    {"padding", nullptr},
                    {"added_tokens", std::move(added)},
                    {"model", std::move(model)}};
  if (sentencepiece) {
    json::Array normalizers;
    if (v.addSpacePrefix)
      normalizers.push_back(json::Object{{"type", "Prepend"},
                                         {"prepend", "\u2581"}});
    normalizers.push_back(replace(" ", "\u2581"));
    spec["normalizer"] = json::Object{{"type", "Sequence"},
                                      {"normalizers", std::move(normalizers)}};
    spec["pre_tokenizer"] = nullptr;
    json::Array decoders{replace("\u2581", " "),
                         json::Object{{"type", "ByteFallback"}},
                         json::Object{{"type", "Fuse"}}};
    if (v.addSpacePrefix)
      decoders.push_back(json::Object{
          {"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
    spec["decoder"] = json::Object{{"type", "Sequence"},
                                   {"decoders", std::move(decoders)}};
  } else {
    std::optional<SplitRegex> regex;
    if (v.pre == "llama-bpe" || v.pre == "llama3")
      regex = SplitRegex::Llama3;
    else if (v.pre == "qwen2")
      regex = SplitRegex::Qwen2;
    else if (v.pre != "default" && v.pre != "gpt-2")
      return makeError(path, "tokenizer.ggml.pre '" + v.pre +
                                 "': tfm reads default, gpt-2, llama-bpe "
                                 "and qwen2");
    json::Object byteLevel{{"type", "ByteLevel"},
                           {"add_prefix_space", false},
                           {"trim_offsets", true},
                           {"use_regex", !regex}};
    if (regex) {
      json::Object split{
          {"type", "Split"},
          {"pattern",
           json::Object{{"Regex", getSplitRegexPattern(*regex)}}},
          {"behavior", "Isolated"},
          {"invert", false}};
      byteLevel["trim_offsets"] = false;
      spec["pre_tokenizer"] = json::Object{
          {"type", "Sequence"},
          {"pretokenizers", json::Array{std::move(split), std::move(byteLevel)}}};
    } else {
      spec["pre_tokenizer"] = std::move(byteLevel);
    }
    spec["normalizer"] =
        v.pre == "qwen2" ? json::Value(json::Object{{"type", "NFC"}})
                         : json::Value(nullptr);
    spec["decoder"] = json::Object{{"type", "ByteLevel"},
                                   {"add_prefix_space", true},
                                   {"trim_offsets", true},
                                   {"use_regex", true}};
  }
  spec["post_processor"] = v.addBos || v.addEos ? buildTemplate(v)
                                                : json::Value(nullptr);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(std::move(spec));
  return text;
}

//===- Components.h - the stages of a tokenizer.json pipeline ---*- C++ -*-===//
//
// The stages `tokenizers` runs, each parsed from its JSON object:
// normalizer -> pre-tokenizer -> model -> post-processor to encode, and
// decoder to decode. Parsers take the JSON path of the object so that errors
// name it ("tokenizer.json: pre_tokenizer.pretokenizers[0]: ...").
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_TOKENIZER_COMPONENTS_H
#define TFM_LIB_TOKENIZER_COMPONENTS_H

#include "tfm/Runtime/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::tfm::tokenizer {

//===----------------------------------------------------------------------===//
// JSON helpers
//===----------------------------------------------------------------------===//

using runtime::makeError;

/// `value` as an object, or an error naming `path`.
llvm::Expected<const llvm::json::Object *>
getObject(const llvm::json::Value &value, const llvm::Twine &path);
/// The string `key` of `object`; absent or null gives `fallback` when one is
/// given, an error otherwise.
llvm::Expected<std::string>
getString(const llvm::json::Object &object, llvm::StringRef key,
          const llvm::Twine &path,
          std::optional<llvm::StringRef> fallback = std::nullopt);
/// The boolean `key` of `object`; absent or null gives `fallback`.
llvm::Expected<bool> getBool(const llvm::json::Object &object,
                             llvm::StringRef key, const llvm::Twine &path,
                             bool fallback);
/// The non-negative integer `key` of `object`.
llvm::Expected<int64_t> getIndex(const llvm::json::Object &object,
                                 llvm::StringRef key, const llvm::Twine &path);
/// The array `key` of `object`.
llvm::Expected<const llvm::json::Array *>
getArray(const llvm::json::Object &object, llvm::StringRef key,
         const llvm::Twine &path);

/// A pipeline stage's JSON object and its "type" field, which every
/// normalizer, pre-tokenizer, decoder and post-processor object has.
struct TypedObject {
  const llvm::json::Object *object;
  std::string type;
};
llvm::Expected<TypedObject> getTypedObject(const llvm::json::Value &value,
                                           const llvm::Twine &path);

/// A normalizer, pre-tokenizer, decoder or post-processor: none for JSON
/// null; for type "Sequence", a `SequenceStage` whose `sequenceStages` are
/// the entries of the array `sequenceKey`, each parsed by `parseEntry` with
/// the path `path.sequenceKey[i]` (null entries dropped, as `tokenizers`
/// skips them); any other type is parsed by `parseOtherType(object, type,
/// path)`.
template <typename Stage, typename SequenceStage, typename ParseEntry,
          typename ParseOtherType>
llvm::Expected<std::unique_ptr<Stage>>
parseStage(const llvm::json::Value &value, const std::string &path,
           llvm::StringRef sequenceKey,
           std::vector<std::unique_ptr<Stage>> SequenceStage::*sequenceStages,
           ParseEntry parseEntry, ParseOtherType parseOtherType) {
  if (value.kind() == llvm::json::Value::Null)
    return nullptr;
  auto typed = getTypedObject(value, path);
  if (!typed)
    return typed.takeError();
  if (typed->type != "Sequence")
    return parseOtherType(*typed->object, typed->type, path);
  auto list = getArray(*typed->object, sequenceKey, path);
  if (!list)
    return list.takeError();
  auto sequence = std::make_unique<SequenceStage>();
  for (auto [i, item] : llvm::enumerate(**list)) {
    llvm::Expected<std::unique_ptr<Stage>> stage = parseEntry(
        item, path + "." + sequenceKey.str() + "[" + std::to_string(i) + "]");
    if (!stage)
      return stage.takeError();
    if (*stage)
      ((*sequence).*sequenceStages).push_back(std::move(*stage));
  }
  return std::move(sequence);
}

/// A `{"String": s}` pattern (Replace, Split): the literal; `{"Regex": r}`
/// is returned with `isRegex` set.
struct Pattern {
  std::string text;
  bool isRegex = false;
};
llvm::Expected<Pattern> getPattern(const llvm::json::Object &object,
                                   const llvm::Twine &path);

/// A Replace normalizer or decoder (`ReplaceStage` has the strings `pattern`
/// and `content`): tfm supports a literal {"String": ...} pattern only.
template <typename ReplaceStage>
llvm::Expected<std::unique_ptr<ReplaceStage>>
parseLiteralReplace(const llvm::json::Object &object, const std::string &path) {
  auto pattern = getPattern(object, path);
  if (!pattern)
    return pattern.takeError();
  if (pattern->isRegex)
    return makeError(path + ".pattern: Replace with a Regex pattern ('" +
                     pattern->text + "') is not supported");
  auto content = getString(object, "content", path);
  if (!content)
    return content.takeError();
  auto stage = std::make_unique<ReplaceStage>();
  stage->pattern = pattern->text;
  stage->content = *content;
  return std::move(stage);
}

/// Every occurrence of `from` in `s` replaced by `to` (non-overlapping, left
/// to right).
std::string replaceAll(llvm::StringRef s, llvm::StringRef from,
                       llvm::StringRef to);

//===----------------------------------------------------------------------===//
// Stages
//===----------------------------------------------------------------------===//

class Normalizer {
public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string &text) const = 0;
};
/// A null value gives a null normalizer.
llvm::Expected<std::unique_ptr<Normalizer>>
parseNormalizer(const llvm::json::Value &value, const std::string &path);

/// A piece of the input on its way to the model.
struct Piece {
  std::string text;
  /// Whether the piece begins at the start of the original input (what
  /// Metaspace's prepend_scheme "first" asks).
  bool atStart = false;
};

class PreTokenizer {
public:
  virtual ~PreTokenizer() = default;
  /// Splits and rewrites `pieces`; empty pieces are dropped.
  virtual void preTokenize(std::vector<Piece> &pieces) const = 0;
};
llvm::Expected<std::unique_ptr<PreTokenizer>>
parsePreTokenizer(const llvm::json::Value &value, const std::string &path);

/// A BPE model ("model": {"type": "BPE", ...}).
class BpeModel {
public:
  static llvm::Expected<std::unique_ptr<BpeModel>>
  parse(const llvm::json::Value &value, const std::string &path);

  /// Appends the ids of one pre-tokenized piece.
  void tokenize(llvm::StringRef piece, std::vector<int64_t> &ids) const;

  std::optional<int64_t> getId(llvm::StringRef token) const;
  /// The token of `id`, or null.
  const std::string *getToken(int64_t id) const;
  /// The number of vocabulary entries (ids need not be dense).
  int64_t getVocabSize() const { return vocab.size(); }
  /// One past the largest id (0 for an empty vocabulary).
  int64_t getIdBound() const { return idBound; }

private:
  struct Merge {
    uint32_t rank;
    int64_t newId;
  };
  void mergeWord(std::vector<int64_t> &symbols) const;

  llvm::StringMap<int64_t> vocab;
  llvm::DenseMap<int64_t, std::string> tokens;
  llvm::DenseMap<std::pair<int64_t, int64_t>, Merge> merges;
  int64_t idBound = 0;
  std::optional<std::string> unkToken;
  std::string continuingSubwordPrefix, endOfWordSuffix;
  bool fuseUnk = false, byteFallback = false, ignoreMerges = false;
};

class Decoder {
public:
  virtual ~Decoder() = default;
  /// Rewrites the tokens; the decoded text is their concatenation.
  virtual void decodeChain(std::vector<std::string> &tokens) const = 0;
};
llvm::Expected<std::unique_ptr<Decoder>>
parseDecoder(const llvm::json::Value &value, const std::string &path);
/// Metaspace as a decoder (PreTokenizers.cpp, which parses its fields).
llvm::Expected<std::unique_ptr<Decoder>>
parseMetaspaceDecoder(const llvm::json::Object &object,
                      const std::string &path);

class PostProcessor {
public:
  virtual ~PostProcessor() = default;
  /// Adds the special tokens of a single sequence.
  virtual void process(std::vector<int64_t> &ids) const = 0;
};
llvm::Expected<std::unique_ptr<PostProcessor>>
parsePostProcessor(const llvm::json::Value &value, const std::string &path);

} // namespace mlir::tfm::tokenizer

namespace mlir::tfm::tokenizer {
/// GPT-2's byte-to-character map (ByteLevel): printable Latin-1 bytes map to
/// themselves, the others to U+0100 onwards, so that every token is text.
uint32_t getByteLevelChar(uint8_t byte);
/// The inverse; none for a character outside the map.
std::optional<uint8_t> getByteLevelByte(uint32_t cp);
} // namespace mlir::tfm::tokenizer

#endif // TFM_LIB_TOKENIZER_COMPONENTS_H

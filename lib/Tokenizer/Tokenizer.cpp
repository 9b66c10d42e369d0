//===- Tokenizer.cpp - Hugging Face tokenizer.json in C++ -----------------===//
//
// The pipeline of `tokenizers`' encode: added tokens are split out of the
// raw text first (those with normalized=false), each remaining segment is
// normalized and split again on the added tokens with normalized=true, the
// rest is pre-tokenized and run through the model, and the post-processor
// adds the special tokens of the template.
//
//===----------------------------------------------------------------------===//
#include "tfm/Tokenizer/Tokenizer.h"
#include "tfm/Runtime/Gguf.h"
#include "tfm/Runtime/GgufModel.h"
#include "tfm/Runtime/Json.h"
#include "Components.h"
#include "Unicode.h"

#include "tfm/Runtime/Limits.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir::tfm::tokenizer;
namespace json = llvm::json;

namespace {
struct AddedToken {
  std::string content;
  bool singleWord = false, lstrip = false, rstrip = false, normalized = true,
       special = false;
};

/// The added tokens one split pass looks for, matched as aho-corasick's
/// leftmost-longest mode does: at the leftmost position where any pattern
/// matches, the longest (the first listed among equals).
struct AddedTokenMatcher {
  std::vector<std::pair<std::string, int64_t>> patterns;
  /// Indices of `patterns` by first byte.
  std::vector<std::vector<size_t>> byFirstByte =
      std::vector<std::vector<size_t>>(256);

  void add(std::string pattern, int64_t id) {
    if (pattern.empty())
      return;
    byFirstByte[uint8_t(pattern[0])].push_back(patterns.size());
    patterns.emplace_back(std::move(pattern), id);
  }

  /// Non-overlapping matches: (start, end, id).
  std::vector<std::tuple<size_t, size_t, int64_t>>
  findAll(llvm::StringRef text) const {
    std::vector<std::tuple<size_t, size_t, int64_t>> matches;
    for (size_t pos = 0; pos < text.size();) {
      const std::pair<std::string, int64_t> *best = nullptr;
      for (size_t index : byFirstByte[uint8_t(text[pos])]) {
        const auto &p = patterns[index];
        if (text.substr(pos).starts_with(p.first) &&
            (!best || p.first.size() > best->first.size()))
          best = &p;
      }
      if (!best) {
        ++pos;
        continue;
      }
      matches.emplace_back(pos, pos + best->first.size(), best->second);
      pos += best->first.size();
    }
    return matches;
  }
};

/// A segment of the input: text for the model, or an added token.
struct Segment {
  size_t begin, end;
  std::optional<int64_t> id;
};
} // namespace

namespace mlir::tfm::tokenizer {
class TokenizerImpl {
public:
  llvm::Error parse(const json::Object &root, const std::string &name);
  llvm::Error parseAddedTokens(const json::Object &root,
                               const std::string &name);

  std::optional<int64_t> tokenToId(llvm::StringRef token) const {
    auto it = addedIds.find(token);
    if (it != addedIds.end())
      return it->second;
    return model->getId(token);
  }
  std::vector<Segment> split(llvm::StringRef text,
                             const AddedTokenMatcher &matcher) const;
  void encodeText(const std::string &text, bool atStart,
                  std::vector<int64_t> &ids) const;

  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> preTokenizer;
  std::unique_ptr<BpeModel> model;
  std::unique_ptr<PostProcessor> postProcessor;
  std::unique_ptr<Decoder> decoder;

  llvm::DenseMap<int64_t, AddedToken> addedTokens;
  llvm::StringMap<int64_t> addedIds;
  llvm::StringSet<> specialTokens;
  AddedTokenMatcher rawMatcher, normalizedMatcher;
  int64_t vocabSize = 0;
};
} // namespace mlir::tfm::tokenizer

llvm::Error TokenizerImpl::parseAddedTokens(const json::Object &root,
                                            const std::string &name) {
  const json::Value *value = root.get("added_tokens");
  if (!value || value->kind() == json::Value::Null)
    return llvm::Error::success();
  const json::Array *list = value->getAsArray();
  if (!list)
    return makeError(name + ": added_tokens: expected an array");
  std::vector<AddedToken> tokens;
  for (auto [i, item] : llvm::enumerate(*list)) {
    std::string path = name + ": added_tokens[" + std::to_string(i) + "]";
    auto object = getObject(item, path);
    if (!object)
      return object.takeError();
    AddedToken t;
    auto content = getString(**object, "content", path);
    if (!content)
      return content.takeError();
    if (findInvalidUtf8(*content))
      return makeError(path + ".content: not valid UTF-8");
    t.content = *content;
    for (auto [key, field, fallback] :
         {std::tuple{"single_word", &t.singleWord, false},
          std::tuple{"lstrip", &t.lstrip, false},
          std::tuple{"rstrip", &t.rstrip, false},
          std::tuple{"special", &t.special, false},
          std::tuple{"normalized", &t.normalized, true}}) {
      auto b = getBool(**object, key, path, fallback);
      if (!b)
        return b.takeError();
      *field = *b;
    }
    tokens.push_back(std::move(t));
  }
  // As `tokenizers` adds them on load: an id from the vocabulary when the
  // token is in it, the next free id otherwise (the "id" field of the JSON
  // only draws a warning there when it differs).
  std::vector<std::string> specialOrder, addedOrder;
  for (const AddedToken &t : tokens)
    if (t.special && !t.content.empty() &&
        specialTokens.insert(t.content).second)
      specialOrder.push_back(t.content);
  int64_t modelSize = model->getVocabSize();
  std::optional<int64_t> maxAdded;
  for (const AddedToken &t : tokens) {
    if (t.content.empty())
      continue;
    std::optional<int64_t> id = tokenToId(t.content);
    if (id && addedIds.count(t.content)) {
      const AddedToken &old = addedTokens[*id];
      if (old.singleWord == t.singleWord && old.lstrip == t.lstrip &&
          old.rstrip == t.rstrip && old.normalized == t.normalized &&
          old.special == t.special)
        continue; // the same token twice
    }
    if (!id)
      id = !maxAdded                                    ? modelSize
           : (*maxAdded >= modelSize || modelSize == 0) ? *maxAdded + 1
                                                        : modelSize;
    addedIds[t.content] = *id;
    addedTokens[*id] = t;
    maxAdded = std::max(maxAdded.value_or(*id), *id);
    if (!specialTokens.contains(t.content))
      addedOrder.push_back(t.content);
  }
  // Specials first, then the others, each split by `normalized`.
  for (const auto *order : {&specialOrder, &addedOrder}) {
    for (const std::string &content : *order) {
      int64_t id = addedIds.lookup(content);
      const AddedToken &t = addedTokens[id];
      if (!t.normalized) {
        rawMatcher.add(content, id);
        continue;
      }
      std::string pattern = content;
      if (normalizer)
        normalizer->normalize(pattern);
      normalizedMatcher.add(std::move(pattern), id);
    }
  }
  return llvm::Error::success();
}

llvm::Error TokenizerImpl::parse(const json::Object &root,
                                 const std::string &name) {
  for (llvm::StringRef key : {"truncation", "padding"})
    if (const json::Value *v = root.get(key))
      if (v->kind() != json::Value::Null)
        return makeError(name + ": " + key + ": tokenizer.json " + key +
                         " settings are not supported (tfm encodes whole "
                         "prompts); set it to null");
  const json::Value *modelValue = root.get("model");
  if (!modelValue)
    return makeError(name + ": missing \"model\"");
  auto parsedModel = BpeModel::parse(*modelValue, name + ": model");
  if (!parsedModel)
    return parsedModel.takeError();
  model = std::move(*parsedModel);

  static const json::Value null = nullptr;
  auto get = [&](llvm::StringRef key) -> const json::Value & {
    const json::Value *v = root.get(key);
    return v ? *v : null;
  };
  auto n = parseNormalizer(get("normalizer"), name + ": normalizer");
  if (!n)
    return n.takeError();
  normalizer = std::move(*n);
  auto p = parsePreTokenizer(get("pre_tokenizer"), name + ": pre_tokenizer");
  if (!p)
    return p.takeError();
  preTokenizer = std::move(*p);
  auto pp =
      parsePostProcessor(get("post_processor"), name + ": post_processor");
  if (!pp)
    return pp.takeError();
  postProcessor = std::move(*pp);
  auto d = parseDecoder(get("decoder"), name + ": decoder");
  if (!d)
    return d.takeError();
  decoder = std::move(*d);
  if (llvm::Error err = parseAddedTokens(root, name))
    return err;

  // Ids need not be dense: the largest is what bounds the model's rows.
  vocabSize = model->getIdBound();
  for (const auto &[id, t] : addedTokens)
    vocabSize = std::max(vocabSize, id + 1);
  return llvm::Error::success();
}

static bool endsWithWord(llvm::StringRef s) {
  DecodedText d = decodeUtf8(s);
  return !d.codePoints.empty() && isWordChar(d.codePoints.back());
}
static bool startsWithWord(llvm::StringRef s) {
  DecodedText d = decodeUtf8(s);
  return !d.codePoints.empty() && isWordChar(d.codePoints.front());
}

std::vector<Segment>
TokenizerImpl::split(llvm::StringRef text,
                     const AddedTokenMatcher &matcher) const {
  std::vector<Segment> segments;
  size_t done = 0;
  for (auto [start, stop, id] : matcher.findAll(text)) {
    const AddedToken &t = addedTokens.find(id)->second;
    if (t.singleWord &&
        ((start > 0 && endsWithWord(text.take_front(start))) ||
         (stop < text.size() && startsWithWord(text.drop_front(stop)))))
      continue;
    if (t.lstrip) {
      DecodedText before = decodeUtf8(text.take_front(start));
      size_t k = before.codePoints.size();
      while (k > 0 && isWhitespace(before.codePoints[k - 1]))
        --k;
      // Spaces an earlier match took stay with it.
      start = std::max(before.offsets[k], done);
    }
    if (t.rstrip) {
      DecodedText after = decodeUtf8(text.drop_front(stop));
      size_t k = 0;
      while (k < after.codePoints.size() && isWhitespace(after.codePoints[k]))
        ++k;
      stop += after.offsets[k];
    }
    if (done < start)
      segments.push_back({done, start, std::nullopt});
    segments.push_back({start, stop, id});
    done = stop;
  }
  if (done < text.size())
    segments.push_back({done, text.size(), std::nullopt});
  return segments;
}

void TokenizerImpl::encodeText(const std::string &text, bool atStart,
                               std::vector<int64_t> &ids) const {
  std::vector<Piece> pieces{{text, atStart}};
  if (preTokenizer)
    preTokenizer->preTokenize(pieces);
  for (const Piece &piece : pieces)
    model->tokenize(piece.text, ids);
}

//===----------------------------------------------------------------------===//
// Tokenizer
//===----------------------------------------------------------------------===//

Tokenizer::Tokenizer(std::unique_ptr<TokenizerImpl> impl)
    : impl(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

llvm::Expected<std::unique_ptr<Tokenizer>>
Tokenizer::parse(llvm::StringRef text, llvm::StringRef name) {
  // llvm::json::parse recurses: bound the nesting before it runs.
  if (llvm::Error err = runtime::checkTextNesting(
          text, runtime::TextSyntax::Json, runtime::kMaxJsonDepth, name))
    return std::move(err);
  llvm::Expected<json::Value> root = runtime::parseJson(text);
  if (!root)
    return makeError(name +
                     ": invalid JSON: " + llvm::toString(root.takeError()));
  const json::Object *object = root->getAsObject();
  if (!object)
    return makeError(name + ": expected a JSON object");
  auto impl = std::make_unique<TokenizerImpl>();
  if (llvm::Error err = impl->parse(*object, name.str()))
    return std::move(err);
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(impl)));
}

llvm::Expected<std::unique_ptr<Tokenizer>>
Tokenizer::load(llvm::StringRef path) {
  if (runtime::isGgufPath(path)) {
    auto file = runtime::GgufFile::open(path);
    if (!file)
      return file.takeError();
    llvm::Expected<std::string> json = convertGgufTokenizer(**file);
    if (!json)
      return json.takeError();
    return parse(*json, path);
  }
  auto buffer = runtime::readInputFile(path, runtime::kMaxTextFileBytes,
                                       /*isText=*/true);
  if (!buffer)
    return buffer.takeError();
  return parse((*buffer)->getBuffer(), path);
}

llvm::Expected<std::vector<int64_t>>
Tokenizer::encode(llvm::StringRef text, bool addSpecialTokens) const {
  if (std::optional<size_t> bad = findInvalidUtf8(text))
    return makeError("the text is not valid UTF-8 (byte " +
                     std::to_string(*bad) + ")");
  const TokenizerImpl &t = *impl;
  std::vector<int64_t> ids;
  for (const Segment &raw : t.split(text, t.rawMatcher)) {
    if (raw.id) {
      ids.push_back(*raw.id);
      continue;
    }
    std::string normalized = text.slice(raw.begin, raw.end).str();
    if (normalized.empty())
      continue;
    if (t.normalizer)
      t.normalizer->normalize(normalized);
    for (const Segment &seg : t.split(normalized, t.normalizedMatcher)) {
      if (seg.id) {
        ids.push_back(*seg.id);
        continue;
      }
      t.encodeText(normalized.substr(seg.begin, seg.end - seg.begin),
                   raw.begin == 0 && seg.begin == 0, ids);
    }
  }
  if (addSpecialTokens && t.postProcessor)
    t.postProcessor->process(ids);
  return ids;
}

std::optional<std::string> Tokenizer::getToken(int64_t id) const {
  auto it = impl->addedTokens.find(id);
  if (it != impl->addedTokens.end())
    return it->second.content;
  if (const std::string *token = impl->model->getToken(id))
    return *token;
  return std::nullopt;
}

bool Tokenizer::isSpecial(int64_t id) const {
  std::optional<std::string> token = getToken(id);
  return token && impl->specialTokens.contains(*token);
}

std::string Tokenizer::decode(llvm::ArrayRef<int64_t> ids,
                              bool skipSpecialTokens) const {
  std::vector<std::string> tokens;
  for (int64_t id : ids) {
    std::optional<std::string> token = getToken(id);
    if (!token || (skipSpecialTokens && impl->specialTokens.contains(*token)))
      continue;
    tokens.push_back(std::move(*token));
  }
  if (!impl->decoder)
    return llvm::join(tokens, " ");
  impl->decoder->decodeChain(tokens);
  return llvm::join(tokens, "");
}

int64_t Tokenizer::getVocabSize() const { return impl->vocabSize; }

//===----------------------------------------------------------------------===//
// StreamDecoder
//===----------------------------------------------------------------------===//

// Each step decodes a window, not the whole sequence: the tokens of the
// last text returned (for the context decoders need, e.g. Metaspace's and
// Strip's special first token) and those since. The window's text minus
// that of its emitted part is the new text, as `tokenizers`' DecodeStream
// computes it.
std::string StreamDecoder::push(int64_t id) {
  ids.push_back(id);
  llvm::ArrayRef<int64_t> window = llvm::ArrayRef(ids).drop_front(start);
  std::string text = tokenizer.decode(window, skipSpecialTokens);
  // A trailing U+FFFD may be a character whose bytes have not all come yet:
  // hold it (and what precedes it in this window) back until a later token
  // completes it.
  if (text.size() <= prefixText.size() ||
      llvm::StringRef(text).ends_with("\xEF\xBF\xBD") ||
      !llvm::StringRef(text).starts_with(prefixText))
    return "";
  std::string fresh = text.substr(prefixText.size());
  start = prefixEnd;
  prefixEnd = ids.size();
  prefixText = tokenizer.decode(
      llvm::ArrayRef(ids).slice(start, prefixEnd - start), skipSpecialTokens);
  return fresh;
}

std::string StreamDecoder::finish() {
  std::string text = tokenizer.decode(llvm::ArrayRef(ids).drop_front(start),
                                      skipSpecialTokens);
  std::string fresh = text.size() > prefixText.size() &&
                              llvm::StringRef(text).starts_with(prefixText)
                          ? text.substr(prefixText.size())
                          : "";
  ids.clear();
  start = prefixEnd = 0;
  prefixText.clear();
  return fresh;
}

std::optional<std::string>
mlir::tfm::tokenizer::findTokenizer(llvm::StringRef configPath) {
  // A GGUF file's tokenizer is in its metadata, not beside it.
  if (runtime::isGgufPath(configPath)) {
    auto file = runtime::GgufFile::open(configPath);
    if (!file) {
      llvm::consumeError(file.takeError());
      return std::nullopt;
    }
    if (!(*file)->getValue("tokenizer.ggml.tokens"))
      return std::nullopt;
    return configPath.str();
  }
  llvm::SmallString<256> path = llvm::sys::path::parent_path(configPath);
  llvm::sys::path::append(path, "tokenizer.json");
  if (!llvm::sys::fs::is_regular_file(path))
    return std::nullopt;
  return path.str().str();
}

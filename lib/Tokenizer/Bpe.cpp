//===- Bpe.cpp - tokenizer.json "model": {"type": "BPE"} ------------------===//
//
// Byte-pair encoding as `tokenizers` runs it: a piece starts as one symbol
// per character (unknown characters become byte-fallback tokens <0xNN>, or
// the unk token, fused or not), then the pair with the lowest merge rank is
// merged, leftmost first, until no pair has a merge.
//
//===----------------------------------------------------------------------===//
#include "Components.h"
#include "tfm/Runtime/Json.h"
#include "Unicode.h"

#include "llvm/Support/Format.h"

#include <queue>

using namespace mlir::tfm::tokenizer;
namespace json = llvm::json;

static llvm::Expected<std::optional<std::string>>
getOptionalString(const json::Object &object, llvm::StringRef key,
                  const std::string &path) {
  const json::Value *value = object.get(key);
  if (!value || value->kind() == json::Value::Null)
    return std::nullopt;
  if (std::optional<llvm::StringRef> s = value->getAsString())
    return s->str();
  return makeError(path + "." + key + ": expected a string or null");
}

llvm::Expected<std::unique_ptr<BpeModel>>
BpeModel::parse(const json::Value &value, const std::string &path) {
  auto object = getObject(value, path);
  if (!object)
    return object.takeError();
  const json::Object &o = **object;
  auto type = getString(o, "type", path, "BPE");
  if (!type)
    return type.takeError();
  if (*type != "BPE")
    return makeError(path + ": unsupported model type '" + *type +
                     "' (supported: BPE)");
  auto model = std::make_unique<BpeModel>();
  if (const json::Value *dropout = o.get("dropout"))
    if (dropout->kind() != json::Value::Null &&
        dropout->getAsNumber().value_or(1) != 0)
      return makeError(path + ".dropout: BPE dropout (random merges) is not "
                              "supported");
  auto unk = getOptionalString(o, "unk_token", path);
  if (!unk)
    return unk.takeError();
  auto prefix = getOptionalString(o, "continuing_subword_prefix", path);
  if (!prefix)
    return prefix.takeError();
  auto suffix = getOptionalString(o, "end_of_word_suffix", path);
  if (!suffix)
    return suffix.takeError();
  auto fuseUnk = getBool(o, "fuse_unk", path, false);
  if (!fuseUnk)
    return fuseUnk.takeError();
  auto byteFallback = getBool(o, "byte_fallback", path, false);
  if (!byteFallback)
    return byteFallback.takeError();
  auto ignoreMerges = getBool(o, "ignore_merges", path, false);
  if (!ignoreMerges)
    return ignoreMerges.takeError();
  model->unkToken = *unk;
  model->continuingSubwordPrefix = prefix->value_or("");
  model->endOfWordSuffix = suffix->value_or("");
  model->fuseUnk = *fuseUnk;
  model->byteFallback = *byteFallback;
  model->ignoreMerges = *ignoreMerges;

  const json::Value *vocabValue = o.get("vocab");
  const json::Object *vocab = vocabValue ? vocabValue->getAsObject() : nullptr;
  if (!vocab)
    return makeError(path + ".vocab: expected an object of token: id");
  for (const auto &[token, idValue] : *vocab) {
    std::optional<int64_t> id = mlir::tfm::runtime::getJsonInteger(idValue);
    if (!id || *id < 0 || *id > INT32_MAX)
      return makeError(path + ".vocab[\"" + token.str() +
                       "\"]: expected an id in [0, 2^31)");
    if (findInvalidUtf8(token.str()))
      return makeError(path + ".vocab: a token is not valid UTF-8");
    model->vocab[token.str()] = *id;
    model->idBound = std::max(model->idBound, *id + 1);
    auto [it, inserted] = model->tokens.try_emplace(*id, token.str());
    if (!inserted)
      return makeError(path + ".vocab: id " + std::to_string(*id) +
                       " is given to both \"" + it->second + "\" and \"" +
                       token.str() + "\"");
  }
  if (model->unkToken && !model->vocab.count(*model->unkToken))
    return makeError(path + ".unk_token: \"" + *model->unkToken +
                     "\" is not in the vocabulary");

  auto merges = getArray(o, "merges", path);
  if (!merges)
    return merges.takeError();
  for (auto [rank, item] : llvm::enumerate(**merges)) {
    std::string where = path + ".merges[" + std::to_string(rank) + "]";
    std::string a, b;
    // Two forms: "a b" (one space) and ["a", "b"].
    if (std::optional<llvm::StringRef> s = item.getAsString()) {
      llvm::SmallVector<llvm::StringRef> parts;
      s->split(parts, ' ');
      if (parts.size() != 2)
        return makeError(where +
                         ": expected two tokens separated by one "
                         "space, got \"" +
                         s->str() + "\"");
      a = parts[0].str();
      b = parts[1].str();
    } else if (const json::Array *pair = item.getAsArray();
               pair && pair->size() == 2 && (*pair)[0].getAsString() &&
               (*pair)[1].getAsString()) {
      a = (*pair)[0].getAsString()->str();
      b = (*pair)[1].getAsString()->str();
    } else {
      return makeError(where + ": expected \"a b\" or [\"a\", \"b\"]");
    }
    auto aId = model->getId(a), bId = model->getId(b);
    if (!aId || !bId)
      return makeError(where + ": \"" + (aId ? b : a) +
                       "\" is not in the vocabulary");
    const std::string &prefixText = model->continuingSubwordPrefix;
    if (!llvm::StringRef(b).starts_with(prefixText))
      return makeError(where + ": \"" + b +
                       "\" does not start with the continuing_subword_prefix");
    std::string merged = a + b.substr(prefixText.size());
    auto newId = model->getId(merged);
    if (!newId)
      return makeError(where + ": the merged token \"" + merged +
                       "\" is not in the vocabulary");
    // A repeated pair keeps its last rank, as in `tokenizers`' map.
    model->merges[{*aId, *bId}] = Merge{uint32_t(rank), *newId};
  }
  return std::move(model);
}

std::optional<int64_t> BpeModel::getId(llvm::StringRef token) const {
  auto it = vocab.find(token);
  if (it == vocab.end())
    return std::nullopt;
  return it->second;
}

const std::string *BpeModel::getToken(int64_t id) const {
  auto it = tokens.find(id);
  return it == tokens.end() ? nullptr : &it->second;
}

void BpeModel::tokenize(llvm::StringRef piece,
                        std::vector<int64_t> &ids) const {
  if (piece.empty())
    return;
  if (ignoreMerges)
    if (std::optional<int64_t> id = getId(piece)) {
      ids.push_back(*id);
      return;
    }
  DecodedText chars = decodeUtf8(piece);
  size_t n = chars.codePoints.size();
  std::vector<int64_t> symbols;
  // A pending unk token: with fuse_unk, consecutive unknown characters give
  // one. (As in `tokenizers`, byte-fallback tokens do not flush it.)
  bool pendingUnk = false;
  for (size_t i = 0; i < n; ++i) {
    std::string s;
    if (i > 0)
      s += continuingSubwordPrefix;
    s += piece.slice(chars.offsets[i], chars.offsets[i + 1]);
    if (i + 1 == n)
      s += endOfWordSuffix;
    if (std::optional<int64_t> id = getId(s)) {
      if (pendingUnk)
        symbols.push_back(*getId(*unkToken));
      pendingUnk = false;
      symbols.push_back(*id);
      continue;
    }
    if (byteFallback) {
      std::vector<int64_t> bytes;
      for (char c : s) {
        char name[8];
        snprintf(name, sizeof(name), "<0x%02X>", unsigned(uint8_t(c)));
        std::optional<int64_t> id = getId(name);
        if (!id)
          break;
        bytes.push_back(*id);
      }
      if (bytes.size() == s.size()) {
        symbols.insert(symbols.end(), bytes.begin(), bytes.end());
        continue;
      }
    }
    if (!unkToken)
      continue; // no unk token: the character is dropped
    if (pendingUnk && !fuseUnk)
      symbols.push_back(*getId(*unkToken));
    pendingUnk = true;
  }
  if (pendingUnk)
    symbols.push_back(*getId(*unkToken));
  mergeWord(symbols);
  ids.insert(ids.end(), symbols.begin(), symbols.end());
}

void BpeModel::mergeWord(std::vector<int64_t> &symbols) const {
  size_t n = symbols.size();
  if (n < 2)
    return;
  // A doubly linked list over the symbols; merged-away symbols are marked.
  std::vector<int64_t> prev(n), next(n);
  std::vector<bool> removed(n, false);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = int64_t(i) - 1;
    next[i] = i + 1 < n ? int64_t(i + 1) : -1;
  }
  struct Candidate {
    uint32_t rank;
    size_t pos;
    int64_t newId;
    bool operator>(const Candidate &o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>,
                      std::greater<Candidate>>
      queue;
  auto push = [&](size_t pos) {
    if (next[pos] < 0)
      return;
    auto it = merges.find({symbols[pos], symbols[next[pos]]});
    if (it != merges.end())
      queue.push({it->second.rank, pos, it->second.newId});
  };
  for (size_t i = 0; i + 1 < n; ++i)
    push(i);
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    size_t pos = top.pos;
    if (removed[pos] || next[pos] < 0)
      continue;
    // Skip entries made stale by an earlier merge at this position.
    size_t right = next[pos];
    auto it = merges.find({symbols[pos], symbols[right]});
    if (it == merges.end() || it->second.newId != top.newId)
      continue;
    symbols[pos] = top.newId;
    removed[right] = true;
    next[pos] = next[right];
    if (next[pos] >= 0)
      prev[next[pos]] = pos;
    if (prev[pos] >= 0)
      push(prev[pos]);
    push(pos);
  }
  std::vector<int64_t> kept;
  for (size_t i = 0; i < n; ++i)
    if (!removed[i])
      kept.push_back(symbols[i]);
  symbols = std::move(kept);
}

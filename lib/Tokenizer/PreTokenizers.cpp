//===- PreTokenizers.cpp - tokenizer.json "pre_tokenizer" -----------------===//
//
// ByteLevel (GPT-2), Split with a known regex or a literal (Llama-3, Qwen2),
// Metaspace (SentencePiece-style), and Sequence. Splitting follows
// `tokenizers`' NormalizedString::split: the pattern's matches and the gaps
// between them, combined as the delimiter behavior says, empty pieces
// dropped.
//
//===----------------------------------------------------------------------===//
#include "Components.h"
#include "SplitRegex.h"
#include "Unicode.h"

using namespace mlir::tfm::tokenizer;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// Byte-level map
//===----------------------------------------------------------------------===//

static bool isPrintableLatin1(unsigned b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
         (b >= 0xAE && b <= 0xFF);
}

uint32_t mlir::tfm::tokenizer::getByteLevelChar(uint8_t byte) {
  if (isPrintableLatin1(byte))
    return byte;
  // The unprintable bytes take U+0100, U+0101, ... in byte order.
  uint32_t index = 0;
  for (unsigned b = 0; b < byte; ++b)
    index += !isPrintableLatin1(b);
  return 0x100 + index;
}

std::optional<uint8_t> mlir::tfm::tokenizer::getByteLevelByte(uint32_t cp) {
  static const auto inverse = [] {
    std::vector<int> map(0x100 + 256, -1);
    for (unsigned b = 0; b < 256; ++b)
      map[getByteLevelChar(b)] = b;
    return map;
  }();
  if (cp >= inverse.size() || inverse[cp] < 0)
    return std::nullopt;
  return uint8_t(inverse[cp]);
}

//===----------------------------------------------------------------------===//
// Splitting
//===----------------------------------------------------------------------===//

namespace {
enum class Behavior {
  Removed,
  Isolated,
  MergedWithPrevious,
  MergedWithNext,
  Contiguous
};
} // namespace

/// The pieces of `piece` that `matches` and `behavior` give (non-empty).
static void splitPiece(const Piece &piece, MatchList matches, Behavior behavior,
                       std::vector<Piece> &out) {
  using Range = std::pair<size_t, size_t>;
  std::vector<Range> ranges;
  switch (behavior) {
  case Behavior::Isolated:
    for (auto &[range, isMatch] : matches)
      ranges.push_back(range);
    break;
  case Behavior::Removed:
    for (auto &[range, isMatch] : matches)
      if (!isMatch)
        ranges.push_back(range);
    break;
  case Behavior::Contiguous: {
    bool previous = false;
    for (auto [i, m] : llvm::enumerate(matches)) {
      if (i > 0 && m.second == previous)
        ranges.back().second = m.first.second;
      else
        ranges.push_back(m.first);
      previous = m.second;
    }
    break;
  }
  case Behavior::MergedWithPrevious: {
    bool previous = false;
    for (auto &[range, isMatch] : matches) {
      if (isMatch && !previous && !ranges.empty())
        ranges.back().second = range.second;
      else
        ranges.push_back(range);
      previous = isMatch;
    }
    break;
  }
  case Behavior::MergedWithNext: {
    bool previous = false;
    for (auto &[range, isMatch] : llvm::reverse(matches)) {
      if (isMatch && !previous && !ranges.empty())
        ranges.back().first = range.first;
      else
        ranges.push_back(range);
      previous = isMatch;
    }
    std::reverse(ranges.begin(), ranges.end());
    break;
  }
  }
  for (Range r : ranges)
    if (r.first != r.second)
      out.push_back({piece.text.substr(r.first, r.second - r.first),
                     piece.atStart && r.first == 0});
}

/// The matches of the literal `pattern` (non-overlapping, left to right).
static MatchList findLiteral(llvm::StringRef text, llvm::StringRef pattern) {
  MatchList matches;
  if (text.empty()) {
    matches.push_back({{0, 0}, false});
    return matches;
  }
  size_t pos = 0;
  while (true) {
    size_t next = text.find(pattern, pos);
    if (next == llvm::StringRef::npos)
      break;
    if (pos < next)
      matches.push_back({{pos, next}, false});
    matches.push_back({{next, next + pattern.size()}, true});
    pos = next + pattern.size();
  }
  if (pos < text.size())
    matches.push_back({{pos, text.size()}, false});
  return matches;
}

/// Each occurrence of the character `c` as its own match.
static MatchList findChar(llvm::StringRef text, llvm::StringRef c) {
  // Occurrences of one character never overlap, so the literal search gives
  // the same ranges.
  return findLiteral(text, c);
}

/// Runs `split` on every piece, replacing each by the pieces it gives.
template <typename Fn>
static void splitAll(std::vector<Piece> &pieces, Fn split) {
  std::vector<Piece> out;
  for (Piece &piece : pieces)
    split(piece, out);
  llvm::erase_if(out, [](const Piece &p) { return p.text.empty(); });
  pieces = std::move(out);
}

//===----------------------------------------------------------------------===//
// Pre-tokenizers
//===----------------------------------------------------------------------===//

namespace {
class SequencePreTokenizer : public PreTokenizer {
public:
  std::vector<std::unique_ptr<PreTokenizer>> preTokenizers;
  void preTokenize(std::vector<Piece> &pieces) const override {
    for (const auto &p : preTokenizers)
      p->preTokenize(pieces);
  }
};

class ByteLevelPreTokenizer : public PreTokenizer {
public:
  bool addPrefixSpace = true, useRegex = true;
  void preTokenize(std::vector<Piece> &pieces) const override {
    splitAll(pieces, [&](Piece &piece, std::vector<Piece> &out) {
      if (addPrefixSpace && !piece.text.empty() && piece.text[0] != ' ')
        piece.text.insert(0, " ");
      if (!useRegex) {
        out.push_back(piece);
        return;
      }
      splitPiece(piece, findMatches(SplitRegex::Gpt2, piece.text),
                 Behavior::Isolated, out);
    });
    for (Piece &piece : pieces) {
      std::string mapped;
      for (char c : piece.text)
        appendUtf8(mapped, getByteLevelChar(uint8_t(c)));
      piece.text = std::move(mapped);
    }
  }
};

class SplitPreTokenizer : public PreTokenizer {
public:
  std::optional<SplitRegex> regex;
  std::string literal;
  Behavior behavior = Behavior::Isolated;
  bool invert = false;
  void preTokenize(std::vector<Piece> &pieces) const override {
    splitAll(pieces, [&](Piece &piece, std::vector<Piece> &out) {
      MatchList matches = regex ? findMatches(*regex, piece.text)
                                : findLiteral(piece.text, literal);
      if (invert)
        for (auto &m : matches)
          m.second = !m.second;
      splitPiece(piece, std::move(matches), behavior, out);
    });
  }
};

enum class PrependScheme { Always, First, Never };

class MetaspacePreTokenizer : public PreTokenizer {
public:
  std::string replacement;
  PrependScheme scheme = PrependScheme::Always;
  bool split = true;
  void preTokenize(std::vector<Piece> &pieces) const override {
    splitAll(pieces, [&](Piece &piece, std::vector<Piece> &out) {
      piece.text = replaceAll(piece.text, " ", replacement);
      bool prepend = scheme == PrependScheme::Always ||
                     (scheme == PrependScheme::First && piece.atStart);
      if (prepend && !piece.text.empty() &&
          !llvm::StringRef(piece.text).starts_with(replacement))
        piece.text.insert(0, replacement);
      if (!split) {
        out.push_back(piece);
        return;
      }
      splitPiece(piece, findChar(piece.text, replacement),
                 Behavior::MergedWithNext, out);
    });
  }
};
} // namespace

static llvm::Expected<Behavior> parseBehavior(const json::Object &object,
                                              const std::string &path) {
  auto name = getString(object, "behavior", path);
  if (!name)
    return name.takeError();
  if (*name == "Removed")
    return Behavior::Removed;
  if (*name == "Isolated")
    return Behavior::Isolated;
  if (*name == "MergedWithPrevious")
    return Behavior::MergedWithPrevious;
  if (*name == "MergedWithNext")
    return Behavior::MergedWithNext;
  if (*name == "Contiguous")
    return Behavior::Contiguous;
  return makeError(path + ".behavior: unknown split behavior '" + *name + "'");
}

/// Metaspace's fields, shared with its decoder: the replacement character
/// and the prepend scheme, in the current form (prepend_scheme, split) and
/// the legacy one (add_prefix_space), as `tokenizers` reads both.
struct MetaspaceFields {
  std::string replacement;
  PrependScheme scheme;
  bool split;
};
static llvm::Expected<MetaspaceFields>
parseMetaspaceFields(const json::Object &object, const std::string &path) {
  MetaspaceFields f;
  auto replacement = getString(object, "replacement", path);
  if (!replacement)
    return replacement.takeError();
  if (decodeUtf8(*replacement).codePoints.size() != 1 ||
      findInvalidUtf8(*replacement))
    return makeError(path + ".replacement: expected one character");
  f.replacement = *replacement;
  auto scheme = getString(object, "prepend_scheme", path, "always");
  if (!scheme)
    return scheme.takeError();
  if (*scheme == "always")
    f.scheme = PrependScheme::Always;
  else if (*scheme == "first")
    f.scheme = PrependScheme::First;
  else if (*scheme == "never")
    f.scheme = PrependScheme::Never;
  else
    return makeError(path + ".prepend_scheme: unknown scheme '" + *scheme +
                     "' (expected always, first or never)");
  const json::Value *addPrefixSpace = object.get("add_prefix_space");
  if (addPrefixSpace && addPrefixSpace->getAsBoolean() == false) {
    if (f.scheme != PrependScheme::Never)
      return makeError(path + ": add_prefix_space does not match declared "
                              "prepend_scheme");
    f.scheme = PrependScheme::Never;
  }
  auto split = getBool(object, "split", path, true);
  if (!split)
    return split.takeError();
  f.split = *split;
  return f;
}

/// A pre-tokenizer of any type but Sequence.
static llvm::Expected<std::unique_ptr<PreTokenizer>>
parsePreTokenizerOfType(const json::Object &o, const std::string &type,
                        const std::string &path) {
  if (type == "ByteLevel") {
    auto p = std::make_unique<ByteLevelPreTokenizer>();
    auto addPrefixSpace = getBool(o, "add_prefix_space", path, true);
    auto useRegex = getBool(o, "use_regex", path, true);
    if (!addPrefixSpace)
      return addPrefixSpace.takeError();
    if (!useRegex)
      return useRegex.takeError();
    p->addPrefixSpace = *addPrefixSpace;
    p->useRegex = *useRegex;
    return std::move(p);
  }
  if (type == "Split") {
    auto p = std::make_unique<SplitPreTokenizer>();
    auto pattern = getPattern(o, path);
    if (!pattern)
      return pattern.takeError();
    if (pattern->isRegex) {
      p->regex = lookupSplitRegex(pattern->text);
      if (!p->regex)
        return makeError(path + ".pattern: unsupported regex '" +
                         pattern->text +
                         "' (tfm knows the GPT-2, Llama-3 and Qwen2 split "
                         "regexes)");
    } else if (pattern->text.empty()) {
      return makeError(path + ".pattern: the split string is empty");
    } else {
      p->literal = pattern->text;
    }
    auto behavior = parseBehavior(o, path);
    if (!behavior)
      return behavior.takeError();
    p->behavior = *behavior;
    auto invert = getBool(o, "invert", path, false);
    if (!invert)
      return invert.takeError();
    p->invert = *invert;
    return std::move(p);
  }
  if (type == "Metaspace") {
    auto fields = parseMetaspaceFields(o, path);
    if (!fields)
      return fields.takeError();
    auto p = std::make_unique<MetaspacePreTokenizer>();
    p->replacement = fields->replacement;
    p->scheme = fields->scheme;
    p->split = fields->split;
    return std::move(p);
  }
  return makeError(path + ": unsupported pre-tokenizer type '" + type +
                   "' (supported: Sequence, ByteLevel, Split, Metaspace)");
}

llvm::Expected<std::unique_ptr<PreTokenizer>>
mlir::tfm::tokenizer::parsePreTokenizer(const json::Value &value,
                                        const std::string &path) {
  return parseStage(value, path, "pretokenizers",
                    &SequencePreTokenizer::preTokenizers, parsePreTokenizer,
                    parsePreTokenizerOfType);
}

//===----------------------------------------------------------------------===//
// Metaspace decoder (here for the shared fields)
//===----------------------------------------------------------------------===//

namespace {
class MetaspaceDecoder : public Decoder {
public:
  uint32_t replacement;
  bool stripFirst;
  void decodeChain(std::vector<std::string> &tokens) const override {
    // Every replacement character becomes a space, except in the first
    // token, where (unless the scheme is never) it is dropped.
    for (auto [i, token] : llvm::enumerate(tokens)) {
      DecodedText d = decodeUtf8(token);
      std::string out;
      for (uint32_t c : d.codePoints) {
        if (c != replacement)
          appendUtf8(out, c);
        else if (!(i == 0 && stripFirst))
          out.push_back(' ');
      }
      token = std::move(out);
    }
  }
};
} // namespace

llvm::Expected<std::unique_ptr<Decoder>>
mlir::tfm::tokenizer::parseMetaspaceDecoder(const json::Object &object,
                                            const std::string &path) {
  auto fields = parseMetaspaceFields(object, path);
  if (!fields)
    return fields.takeError();
  auto d = std::make_unique<MetaspaceDecoder>();
  d->replacement = decodeUtf8(fields->replacement).codePoints[0];
  d->stripFirst = fields->scheme != PrependScheme::Never;
  return std::move(d);
}

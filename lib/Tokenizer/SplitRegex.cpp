//===- SplitRegex.cpp - the split regexes of byte-level BPE ---------------===//
//
// Each scanner tries the regex's alternatives in order at a position, as a
// backtracking engine does, and returns the length of the first that
// matches. The alternatives reduce to runs of one character class, so a
// scanner needs no backtracking of its own; the comments give the
// alternative each branch stands for.
//
//===----------------------------------------------------------------------===//
#include "SplitRegex.h"
#include "Unicode.h"

#include "llvm/ADT/STLFunctionalExtras.h"

using namespace mlir::tfm::tokenizer;

static constexpr llvm::StringLiteral kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
static constexpr llvm::StringLiteral kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
static constexpr llvm::StringLiteral kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::optional<SplitRegex>
mlir::tfm::tokenizer::lookupSplitRegex(llvm::StringRef pattern) {
  if (pattern == kGpt2Pattern)
    return SplitRegex::Gpt2;
  if (pattern == kLlama3Pattern)
    return SplitRegex::Llama3;
  if (pattern == kQwen2Pattern)
    return SplitRegex::Qwen2;
  return std::nullopt;
}

llvm::StringRef mlir::tfm::tokenizer::getSplitRegexPattern(SplitRegex regex) {
  switch (regex) {
  case SplitRegex::Gpt2:
    return kGpt2Pattern;
  case SplitRegex::Llama3:
    return kLlama3Pattern;
  case SplitRegex::Qwen2:
    return kQwen2Pattern;
  }
  return kGpt2Pattern;
}

namespace {
/// The scanners' view of the text: code points and their predicates.
class Scanner {
public:
  Scanner(const std::vector<uint32_t> &cps) : cps(cps), n(cps.size()) {}

  /// The end of the run of `pred` characters starting at `i`.
  size_t runEnd(size_t i, llvm::function_ref<bool(uint32_t)> pred) const {
    while (i < n && pred(cps[i]))
      ++i;
    return i;
  }

  /// 's|'t|'re|'ve|'m|'ll|'d, case-insensitively with `ignoreCase` (where
  /// Unicode case folding also lets U+017F LATIN SMALL LETTER LONG S stand
  /// for s): the match length or 0.
  size_t contraction(size_t i, bool ignoreCase) const {
    if (cps[i] != '\'' || i + 1 >= n)
      return 0;
    auto at = [&](size_t k) -> uint32_t {
      if (i + k >= n)
        return 0;
      uint32_t c = cps[i + k];
      if (!ignoreCase)
        return c;
      if (c == 0x17F)
        return 's';
      return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
    };
    uint32_t a = at(1), b = at(2);
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
      return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') ||
        (a == 'l' && b == 'l'))
      return 3;
    return 0;
  }

  /// ` ?X+` for the class `pred`: the match length or 0.
  size_t optionalSpaceRun(size_t i,
                          llvm::function_ref<bool(uint32_t)> pred) const {
    size_t start = i;
    if (cps[i] == ' ' && i + 1 < n && pred(cps[i + 1]))
      start = i + 1;
    if (!pred(cps[start]))
      return 0;
    return runEnd(start, pred) - i;
  }

  /// \s+(?!\S)|\s+ : a whitespace run, less its last character when a
  /// non-space follows and the run has more than one.
  size_t whitespace(size_t i) const {
    if (!isWhitespace(cps[i]))
      return 0;
    size_t end = runEnd(i, isWhitespace);
    if (end < n && end - i >= 2)
      return end - i - 1;
    return end - i;
  }

  const std::vector<uint32_t> &cps;
  size_t n;
};
} // namespace

static bool isOther(uint32_t c) {
  return !isWhitespace(c) && !isLetter(c) && !isNumber(c);
}
static bool isNewline(uint32_t c) { return c == '\r' || c == '\n'; }

static size_t matchGpt2(const Scanner &s, size_t i) {
  if (size_t m = s.contraction(i, /*ignoreCase=*/false))
    return m;
  if (size_t m = s.optionalSpaceRun(i, isLetter)) // ` ?\p{L}+`
    return m;
  if (size_t m = s.optionalSpaceRun(i, isNumber)) // ` ?\p{N}+`
    return m;
  if (size_t m = s.optionalSpaceRun(i, isOther)) // ` ?[^\s\p{L}\p{N}]+`
    return m;
  return s.whitespace(i);
}

static size_t matchLlama3(const Scanner &s, size_t i, size_t maxDigits) {
  const std::vector<uint32_t> &cps = s.cps;
  size_t n = s.n;
  uint32_t c = cps[i];
  if (size_t m = s.contraction(i, /*ignoreCase=*/true))
    return m;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (!isNewline(c) && !isLetter(c) && !isNumber(c) && i + 1 < n &&
      isLetter(cps[i + 1]))
    return s.runEnd(i + 1, isLetter) - i;
  if (isLetter(c))
    return s.runEnd(i, isLetter) - i;
  // \p{N}{1,3} (Qwen2: \p{N})
  if (isNumber(c))
    return std::min(s.runEnd(i, isNumber) - i, maxDigits);
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
  if (size_t m = s.optionalSpaceRun(i, isOther))
    return s.runEnd(i + m, isNewline) - i;
  // \s*[\r\n]+ : the whitespace run up to its last newline.
  if (isWhitespace(c)) {
    size_t end = s.runEnd(i, isWhitespace);
    for (size_t k = end; k > i; --k)
      if (isNewline(cps[k - 1]))
        return k - i;
  }
  return s.whitespace(i);
}

MatchList mlir::tfm::tokenizer::findMatches(SplitRegex regex,
                                            llvm::StringRef text) {
  MatchList matches;
  if (text.empty()) {
    matches.push_back({{0, 0}, false});
    return matches;
  }
  DecodedText decoded = decodeUtf8(text);
  Scanner scanner(decoded.codePoints);
  const std::vector<size_t> &offsets = decoded.offsets;
  size_t gapStart = 0, i = 0, n = scanner.n;
  while (i < n) {
    size_t length = 0;
    switch (regex) {
    case SplitRegex::Gpt2:
      length = matchGpt2(scanner, i);
      break;
    case SplitRegex::Llama3:
      length = matchLlama3(scanner, i, 3);
      break;
    case SplitRegex::Qwen2:
      length = matchLlama3(scanner, i, 1);
      break;
    }
    if (!length) {
      ++i;
      continue;
    }
    if (gapStart < i)
      matches.push_back({{offsets[gapStart], offsets[i]}, false});
    matches.push_back({{offsets[i], offsets[i + length]}, true});
    i += length;
    gapStart = i;
  }
  if (gapStart < n)
    matches.push_back({{offsets[gapStart], offsets[n]}, false});
  return matches;
}

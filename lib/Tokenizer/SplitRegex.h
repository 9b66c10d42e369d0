//===- SplitRegex.h - the split regexes of byte-level BPE -------*- C++ -*-===//
//
// The regexes byte-level BPE tokenizers split text with, matched by
// hand-written scanners that give the same matches as Oniguruma (which
// `tokenizers` uses) on every input. Only these patterns are known: any other
// regex is an error, never an approximation.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_TOKENIZER_SPLITREGEX_H
#define TFM_LIB_TOKENIZER_SPLITREGEX_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <utility>
#include <vector>

namespace mlir::tfm::tokenizer {

enum class SplitRegex {
  /// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  Gpt2,
  /// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
  ///  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  Llama3,
  /// Llama3 with \p{N} instead of \p{N}{1,3}.
  Qwen2,
};

/// The scanner for `pattern`, if it is one of the known regexes.
std::optional<SplitRegex> lookupSplitRegex(llvm::StringRef pattern);
/// The pattern text of `regex` (as tokenizer.json spells it).
llvm::StringRef getSplitRegexPattern(SplitRegex regex);

/// A byte range of the text and whether the regex matched it; the ranges
/// cover the text in order (what `tokenizers`' Pattern::find_matches gives).
using MatchList = std::vector<std::pair<std::pair<size_t, size_t>, bool>>;

/// The matches of `regex` in valid UTF-8 `text`, left to right.
MatchList findMatches(SplitRegex regex, llvm::StringRef text);

} // namespace mlir::tfm::tokenizer

#endif // TFM_LIB_TOKENIZER_SPLITREGEX_H

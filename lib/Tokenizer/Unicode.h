//===- Unicode.h - character classes and UTF-8 for the tokenizer -*- C++
//-*-===//
//
// What the pre-tokenizer scanners ask of a code point: \p{L}, \p{N}, \s as
// Oniguruma (the regex engine of Hugging Face `tokenizers`) answers them, and
// \w as the Rust regex crate does (added tokens' `single_word`). The category
// table is generated (utils/gen-unicode-tables.py) from Unicode 14.0, the
// version of the tables in tokenizers 0.20.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_TOKENIZER_UNICODE_H
#define TFM_LIB_TOKENIZER_UNICODE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm::tokenizer {

enum class CharClass : uint8_t {
  Other,
  Letter,               // Lu Ll Lt Lm Lo
  DecimalNumber,        // Nd
  LetterNumber,         // Nl
  OtherNumber,          // No
  Mark,                 // Mn Mc Me
  ConnectorPunctuation, // Pc
};

CharClass getCharClass(uint32_t cp);

/// \p{L}.
inline bool isLetter(uint32_t cp) {
  return getCharClass(cp) == CharClass::Letter;
}
/// \p{N}: Nd, Nl and No.
bool isNumber(uint32_t cp);
/// \s: the White_Space property (what Oniguruma's \s and Rust's
/// char::is_whitespace both test).
bool isWhitespace(uint32_t cp);
/// \w of the Rust regex crate: alphabetic, marks, Nd, Pc, joiners.
bool isWordChar(uint32_t cp);

/// The code points of valid UTF-8 `text` and the byte offset of each (plus
/// the end, so `offsets` has one more element).
struct DecodedText {
  std::vector<uint32_t> codePoints;
  std::vector<size_t> offsets;
};
DecodedText decodeUtf8(llvm::StringRef text);

/// The offset of the first byte that does not begin a valid UTF-8 sequence,
/// or none when `text` is valid.
std::optional<size_t> findInvalidUtf8(llvm::StringRef text);

/// Appends the UTF-8 encoding of `cp`.
void appendUtf8(std::string &out, uint32_t cp);

/// `bytes` as UTF-8 with each invalid sequence (maximal subpart) replaced by
/// U+FFFD, as Rust's String::from_utf8_lossy does.
std::string decodeUtf8Lossy(llvm::StringRef bytes);

/// Valid UTF-8 `text` in Unicode normalization form C (canonical
/// decomposition, canonical ordering, canonical composition; UAX #15), from
/// the Unicode 14.0 tables of utils/gen-normalization-tables.py.
std::string normalizeNfc(llvm::StringRef text);

} // namespace mlir::tfm::tokenizer

#endif // TFM_LIB_TOKENIZER_UNICODE_H

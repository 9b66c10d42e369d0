//===- Unicode.cpp - character classes and UTF-8 for the tokenizer --------===//
#include "Unicode.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir::tfm::tokenizer;

namespace {
struct ClassRange {
  uint32_t first, last;
  CharClass cls;
};
} // namespace

static const ClassRange kClassRanges[] = {
#include "UnicodeTables.inc"
};

CharClass mlir::tfm::tokenizer::getCharClass(uint32_t cp) {
  const ClassRange *it = llvm::partition_point(
      kClassRanges, [&](const ClassRange &r) { return r.last < cp; });
  if (it == std::end(kClassRanges) || it->first > cp)
    return CharClass::Other;
  return it->cls;
}

bool mlir::tfm::tokenizer::isNumber(uint32_t cp) {
  CharClass c = getCharClass(cp);
  return c == CharClass::DecimalNumber || c == CharClass::LetterNumber ||
         c == CharClass::OtherNumber;
}

bool mlir::tfm::tokenizer::isWhitespace(uint32_t cp) {
  // PropList.txt White_Space, unchanged since Unicode 6.3. Not the same set
  // as Python's str.isspace, which adds U+001C..U+001F.
  return (cp >= 0x9 && cp <= 0xD) || cp == 0x20 || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool mlir::tfm::tokenizer::isWordChar(uint32_t cp) {
  switch (getCharClass(cp)) {
  case CharClass::Letter:
  case CharClass::Mark:
  case CharClass::DecimalNumber:
  case CharClass::LetterNumber:
  case CharClass::ConnectorPunctuation:
    return true;
  default:
    // Join controls, and the circled letters that Other_Alphabetic makes
    // alphabetic although they are symbols (So).
    return cp == 0x200C || cp == 0x200D || (cp >= 0x24B6 && cp <= 0x24E9) ||
           (cp >= 0x1F130 && cp <= 0x1F149) ||
           (cp >= 0x1F150 && cp <= 0x1F169) || (cp >= 0x1F170 && cp <= 0x1F189);
  }
}

/// The length of the valid UTF-8 sequence at `i` (the second-byte ranges of
/// Unicode table 3-7), or 0 when the bytes there are not one.
static size_t getSequenceLength(llvm::StringRef s, size_t i) {
  uint8_t lead = s[i];
  if (lead < 0x80)
    return 1;
  size_t length = 0;
  uint8_t low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    low = lead == 0xE0 ? 0xA0 : 0x80;
    high = lead == 0xED ? 0x9F : 0xBF;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    low = lead == 0xF0 ? 0x90 : 0x80;
    high = lead == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  for (size_t k = 1; k < length; ++k) {
    if (i + k >= s.size())
      return 0;
    uint8_t b = s[i + k];
    if (b < (k == 1 ? low : 0x80) || b > (k == 1 ? high : 0xBF))
      return 0;
  }
  return length;
}

std::optional<size_t> mlir::tfm::tokenizer::findInvalidUtf8(llvm::StringRef s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = getSequenceLength(s, i);
    if (!n)
      return i;
    i += n;
  }
  return std::nullopt;
}

DecodedText mlir::tfm::tokenizer::decodeUtf8(llvm::StringRef s) {
  DecodedText out;
  for (size_t i = 0; i < s.size();) {
    size_t n = getSequenceLength(s, i);
    uint8_t lead = s[i];
    uint32_t cp;
    if (n <= 1) {
      // Callers validate first; an invalid byte is taken as itself.
      cp = lead;
      n = 1;
    } else {
      cp = lead & (0x7F >> n);
      for (size_t k = 1; k < n; ++k)
        cp = (cp << 6) | (uint8_t(s[i + k]) & 0x3F);
    }
    out.codePoints.push_back(cp);
    out.offsets.push_back(i);
    i += n;
  }
  out.offsets.push_back(s.size());
  return out;
}

void mlir::tfm::tokenizer::appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xC0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xE0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (cp >> 18)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  }
}

std::string mlir::tfm::tokenizer::decodeUtf8Lossy(llvm::StringRef s) {
  std::string text;
  text.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (size_t n = getSequenceLength(s, i)) {
      text.append(s.data() + i, n);
      i += n;
      continue;
    }
    // Replace the maximal subpart: the lead and the continuation bytes that
    // could still have completed it.
    size_t end = i + 1;
    uint8_t lead = s[i];
    size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                    : lead >= 0xE0 && lead <= 0xEF ? 3
                    : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                   : 1;
    uint8_t low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
    uint8_t high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
    for (size_t k = 1; k < length && end < s.size(); ++k, ++end) {
      uint8_t b = s[end];
      if (b < (k == 1 ? low : 0x80) || b > (k == 1 ? high : 0xBF))
        break;
    }
    text += "\xEF\xBF\xBD";
    i = end;
  }
  return text;
}

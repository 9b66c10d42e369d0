//===- Json.cpp - JSON text as every tfm reader parses it -----------------===//
#include "tfm/Runtime/Json.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

using namespace mlir::tfm;

/// The code unit of the \uXXXX escape at `text[at]`, if there is one.
static std::optional<uint32_t> escapedUnit(llvm::StringRef text, size_t at) {
  if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u')
    return std::nullopt;
  uint32_t unit = 0;
  for (char c : text.substr(at + 2, 4)) {
    if (!llvm::isHexDigit(c))
      return std::nullopt;
    unit = unit * 16 + llvm::hexDigitValue(c);
  }
  return unit;
}

std::string runtime::decodeSurrogatePairs(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '\\') {
      out.push_back(text[i++]);
      continue;
    }
    std::optional<uint32_t> high = escapedUnit(text, i);
    std::optional<uint32_t> low = escapedUnit(text, i + 6);
    if (high && low && *high >= 0xD800 && *high <= 0xDBFF && *low >= 0xDC00 &&
        *low <= 0xDFFF) {
      uint32_t codePoint =
          0x10000 + ((*high - 0xD800) << 10) + (*low - 0xDC00);
      char bytes[UNI_MAX_UTF8_BYTES_PER_CODE_POINT];
      char *end = bytes;
      llvm::ConvertCodePointToUTF8(codePoint, end);
      out.append(bytes, end);
      i += 12;
      continue;
    }
    // Any other escape (\\ included, so that an escaped backslash before
    // "u" is not read as \u), as it is, for the parser.
    out.append(text.substr(i, 2).str());
    i += 2;
  }
  return out;
}

llvm::Expected<llvm::json::Value> runtime::parseJson(llvm::StringRef text) {
  // No escape that could start a pair: nothing to copy.
  if (!text.contains_insensitive("\\ud"))
    return llvm::json::parse(text);
  return llvm::json::parse(decodeSurrogatePairs(text));
}

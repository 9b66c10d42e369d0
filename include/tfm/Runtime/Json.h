//===- Json.h - JSON text as every tfm reader parses it ---------*- C++ -*-===//
//
// llvm::json::parse, with one correction: LLVM 22's parser joins a UTF-16
// surrogate pair escape (\uD840\uDC00, what Python's json.dump writes for a
// code point above U+FFFF by default) with OR instead of addition, so every
// code point from U+20000 up decodes as another character (U+20000 as
// U+10000). Each pair is decoded here first, into the UTF-8 bytes JSON
// defines for it, and the rest is left to the parser. Every JSON file tfm
// reads (config.json, generation_config.json, tokenizer.json, safetensors
// headers and indexes) goes through parseJson.
//
// And one more: llvm::json::Value::getAsInteger accepts a double equal to
// 2^63 (its bound is INT64_MAX rounded to a double, which is 2^63) and
// converts it to int64_t, which is undefined (UBSan, the fuzzers found it
// through "max_length": 9223372036854775807.95). Every integer tfm reads
// from JSON goes through getJsonInteger instead.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_JSON_H
#define TFM_RUNTIME_JSON_H

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::tfm::runtime {

/// `text` with each escaped surrogate pair (\uD8xx-\uDBxx followed by
/// \uDCxx-\uDFxx) replaced by the UTF-8 bytes of its code point; everything
/// else, lone surrogates included, as it is.
std::string decodeSurrogatePairs(llvm::StringRef text);

/// llvm::json::parse of `text` with its surrogate pairs decoded.
llvm::Expected<llvm::json::Value> parseJson(llvm::StringRef text);

/// `value` as an int64_t if it is one exactly: an integer in range, or a
/// double with no fraction in [-2^63, 2^63).
inline std::optional<int64_t> getJsonInteger(const llvm::json::Value &value) {
  // Stored as an integer (getAsUINT64 answers for those alone, when not
  // negative): getAsInteger is exact, or none past INT64_MAX.
  if (value.getAsUINT64())
    return value.getAsInteger();
  // A negative integer, or a double: a double must stay below 2^63.
  std::optional<double> number = value.getAsNumber();
  if (!number || !(*number < 0x1p63))
    return std::nullopt;
  return value.getAsInteger();
}

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_JSON_H

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
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_JSON_H
#define TFM_RUNTIME_JSON_H

#include "llvm/Support/JSON.h"

#include <string>

namespace mlir::tfm::runtime {

/// `text` with each escaped surrogate pair (\uD8xx-\uDBxx followed by
/// \uDCxx-\uDFxx) replaced by the UTF-8 bytes of its code point; everything
/// else, lone surrogates included, as it is.
std::string decodeSurrogatePairs(llvm::StringRef text);

/// llvm::json::parse of `text` with its surrogate pairs decoded.
llvm::Expected<llvm::json::Value> parseJson(llvm::StringRef text);

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_JSON_H

//===- GenerationConfig.h - generation defaults of a model ------*- C++ -*-===//
//
// What a generation does besides choosing tokens (Sampler.h): when it stops.
// Hugging Face keeps a model's defaults in generation_config.json next to
// config.json, and older checkpoints only set eos_token_id in config.json;
// readGenerationDefaults reads both, generation_config.json winning, and the
// command line or an API overrides the result field by field.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_GENERATIONCONFIG_H
#define TFM_RUNTIME_GENERATIONCONFIG_H

#include "tfm/Runtime/Sampler.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm::runtime {

struct GenerationConfig {
  SamplingOptions sampling;
  /// Tokens generated at most; `maxLength` (prompt and new tokens) applies
  /// when this is unset, as in Hugging Face.
  std::optional<int64_t> maxNewTokens;
  std::optional<int64_t> maxLength;
  /// A sequence ends after producing one of these (kept in the output).
  std::vector<int64_t> eosTokenIds;
  /// A sequence ends once its generated text contains one of these (kept).
  std::vector<std::string> stopStrings;
  /// Fields of generation_config.json that ask for behaviour tfm does not
  /// implement (beam search, n-gram blocking, ...), for a warning.
  std::vector<std::string> ignoredFields;

  /// The new tokens for a prompt of `promptLength`, if any field says.
  std::optional<int64_t> getMaxNewTokens(int64_t promptLength) const;
};

/// Reads the fields of generation_config.json text into `config`, leaving
/// the fields it does not set as they are: do_sample, temperature, top_k,
/// top_p, repetition_penalty, eos_token_id (an integer or a list),
/// max_new_tokens, max_length, stop_strings (a string or a list). Errors
/// name `path` and the field.
llvm::Error parseGenerationConfig(llvm::StringRef text, llvm::StringRef path,
                                  GenerationConfig &config);

/// The defaults of the model whose config.json is `configPath`: its
/// eos_token_id, then generation_config.json in the same directory when it
/// exists.
llvm::Expected<GenerationConfig>
readGenerationDefaults(llvm::StringRef configPath);

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_GENERATIONCONFIG_H

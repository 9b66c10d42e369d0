//===- Tokenizer.h - Hugging Face tokenizer.json in C++ ---------*- C++ -*-===//
//
// Loads a Hugging Face `tokenizer.json` and encodes and decodes as the
// `tokenizers` library (0.20) does, for the BPE tokenizers of decoder-only
// models:
// - byte-level BPE (GPT-2, Llama-3, Qwen2): the ByteLevel pre-tokenizer and
//   decoder, and the GPT-2 and Llama-3/Qwen2 split regexes, matched by
//   hand-written Unicode-aware scanners (llvm::Regex has no \p{L});
// - SentencePiece-style BPE (Llama-2, Mistral, TinyLlama, Gemma): Prepend /
//   Replace normalizers, Metaspace, byte fallback, and their decoders;
// - added and special tokens, split out before the model (single_word,
//   lstrip, rstrip, normalized), and the post-processors that add BOS/EOS.
//
// Any component, field value or regex this does not implement is an error
// naming it and its JSON path, never a silent difference.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOKENIZER_TOKENIZER_H
#define TFM_TOKENIZER_TOKENIZER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm::runtime {
class GgufFile;
} // namespace mlir::tfm::runtime

namespace mlir::tfm::tokenizer {

class TokenizerImpl;

class Tokenizer {
public:
  /// Reads and parses a tokenizer.json, or the vocabulary of a GGUF file
  /// (`path` ending in .gguf); errors name `path`.
  static llvm::Expected<std::unique_ptr<Tokenizer>> load(llvm::StringRef path);
  /// Parses tokenizer.json text; errors name `name`.
  static llvm::Expected<std::unique_ptr<Tokenizer>> parse(llvm::StringRef json,
                                                          llvm::StringRef name);
  ~Tokenizer();

  /// The ids of `text` (UTF-8; an error names the first invalid byte), as
  /// `tokenizers` encode(text, add_special_tokens=...) gives them.
  llvm::Expected<std::vector<int64_t>>
  encode(llvm::StringRef text, bool addSpecialTokens = true) const;

  /// The text of `ids` as `tokenizers` decode(ids, skip_special_tokens=...)
  /// gives it; ids outside the vocabulary are skipped, as there.
  std::string decode(llvm::ArrayRef<int64_t> ids,
                     bool skipSpecialTokens = false) const;

  /// One past the largest id (model vocabulary and added tokens).
  int64_t getVocabSize() const;
  /// The token of `id`, or none outside the vocabulary.
  std::optional<std::string> getToken(int64_t id) const;
  /// Whether `id` is a special added token.
  bool isSpecial(int64_t id) const;

private:
  explicit Tokenizer(std::unique_ptr<TokenizerImpl> impl);
  std::unique_ptr<TokenizerImpl> impl;
};

/// Decodes a sequence that grows a token at a time (streamed generation),
/// returning only text that later tokens cannot change: whole characters,
/// never a split UTF-8 sequence or a byte-fallback token waiting for the
/// rest of its character.
class StreamDecoder {
public:
  StreamDecoder(const Tokenizer &tokenizer, bool skipSpecialTokens)
      : tokenizer(tokenizer), skipSpecialTokens(skipSpecialTokens) {}
  /// Appends `id`; returns the new text that is complete.
  std::string push(int64_t id);
  /// The text still held back (an incomplete character at the end); the
  /// decoder then starts a new sequence.
  std::string finish();

private:
  const Tokenizer &tokenizer;
  bool skipSpecialTokens;
  std::vector<int64_t> ids;
  /// The window decoded at each step starts at ids[start]; the text of
  /// ids[start, prefixEnd) (`prefixText`) has been returned.
  size_t start = 0, prefixEnd = 0;
  std::string prefixText;
};

/// The tokenizer.json next to `configPath` (a model's config.json), when
/// there is one; for a GGUF file, the file itself when it holds a
/// vocabulary (tokenizer.ggml.tokens).
std::optional<std::string> findTokenizer(llvm::StringRef configPath);

/// The tokenizer.json text of the tokenizer a GGUF file stores
/// (GgufVocabulary.cpp); errors name the file and the key.
llvm::Expected<std::string> convertGgufTokenizer(const runtime::GgufFile &file);

} // namespace mlir::tfm::tokenizer

#endif // TFM_TOKENIZER_TOKENIZER_H

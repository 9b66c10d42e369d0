//===- Normalizers.cpp - tokenizer.json "normalizer" ----------------------===//
//
// The normalizers of SentencePiece-style tokenizers: Prepend "▁" and Replace
// " " -> "▁" (Llama-2, Mistral), inside a Sequence; Strip; and NFC (Qwen2).
// The compatibility forms (NFKC, NFKD), NFD and Lowercase need tables tfm
// does not carry: they are errors, as is any other type.
//
//===----------------------------------------------------------------------===//
#include "Components.h"
#include "Unicode.h"

using namespace mlir::tfm::tokenizer;
namespace json = llvm::json;

namespace {
class SequenceNormalizer : public Normalizer {
public:
  std::vector<std::unique_ptr<Normalizer>> normalizers;
  void normalize(std::string &text) const override {
    for (const auto &n : normalizers)
      n->normalize(text);
  }
};

class PrependNormalizer : public Normalizer {
public:
  std::string prepend;
  void normalize(std::string &text) const override {
    // Nothing is prepended to an empty string (NormalizedString::prepend
    // needs a character to align with).
    if (!text.empty())
      text.insert(0, prepend);
  }
};

class ReplaceNormalizer : public Normalizer {
public:
  std::string pattern, content;
  void normalize(std::string &text) const override {
    text = replaceAll(text, pattern, content);
  }
};

class NfcNormalizer : public Normalizer {
public:
  void normalize(std::string &text) const override {
    text = normalizeNfc(text);
  }
};

class StripNormalizer : public Normalizer {
public:
  bool left = false, right = false;
  void normalize(std::string &text) const override {
    DecodedText d = decodeUtf8(text);
    size_t n = d.codePoints.size(), begin = 0, end = n;
    while (left && begin < end && isWhitespace(d.codePoints[begin]))
      ++begin;
    while (right && end > begin && isWhitespace(d.codePoints[end - 1]))
      --end;
    text = text.substr(d.offsets[begin], d.offsets[end] - d.offsets[begin]);
  }
};
} // namespace

/// A normalizer of any type but Sequence.
static llvm::Expected<std::unique_ptr<Normalizer>>
parseNormalizerOfType(const json::Object &o, const std::string &type,
                      const std::string &path) {
  if (type == "Prepend") {
    auto prepend = getString(o, "prepend", path);
    if (!prepend)
      return prepend.takeError();
    auto n = std::make_unique<PrependNormalizer>();
    n->prepend = *prepend;
    return std::move(n);
  }
  if (type == "Replace")
    return parseLiteralReplace<ReplaceNormalizer>(o, path);
  if (type == "NFC")
    return std::make_unique<NfcNormalizer>();
  if (type == "Strip") {
    auto n = std::make_unique<StripNormalizer>();
    auto left = getBool(o, "strip_left", path, false);
    auto right = getBool(o, "strip_right", path, false);
    if (!left)
      return left.takeError();
    if (!right)
      return right.takeError();
    n->left = *left;
    n->right = *right;
    return std::move(n);
  }
  return makeError(path + ": unsupported normalizer type '" + type +
                   "' (supported: Sequence, Prepend, Replace, Strip, NFC)");
}

llvm::Expected<std::unique_ptr<Normalizer>>
mlir::tfm::tokenizer::parseNormalizer(const json::Value &value,
                                      const std::string &path) {
  return parseStage(value, path, "normalizers",
                    &SequenceNormalizer::normalizers, parseNormalizer,
                    parseNormalizerOfType);
}

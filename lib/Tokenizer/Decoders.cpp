//===- Decoders.cpp - tokenizer.json "decoder" and "post_processor" -------===//
#include "Components.h"
#include "tfm/Runtime/Json.h"
#include "Unicode.h"

using namespace mlir::tfm::tokenizer;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// Decoders
//===----------------------------------------------------------------------===//

namespace {
class SequenceDecoder : public Decoder {
public:
  std::vector<std::unique_ptr<Decoder>> decoders;
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (const auto &d : decoders)
      d->decodeChain(tokens);
  }
};

/// Byte-level characters back to bytes, the whole as lossy UTF-8. A token
/// with a character outside the map (an added token) keeps its own bytes.
class ByteLevelDecoder : public Decoder {
public:
  void decodeChain(std::vector<std::string> &tokens) const override {
    std::string bytes;
    for (const std::string &token : tokens) {
      std::string mapped;
      bool inMap = true;
      for (uint32_t c : decodeUtf8(token).codePoints) {
        std::optional<uint8_t> b = getByteLevelByte(c);
        if (!b) {
          inMap = false;
          break;
        }
        mapped.push_back(char(*b));
      }
      bytes += inMap ? mapped : token;
    }
    tokens.assign(1, decodeUtf8Lossy(bytes));
  }
};

class ReplaceDecoder : public Decoder {
public:
  std::string pattern, content;
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (std::string &token : tokens)
      token = replaceAll(token, pattern, content);
  }
};

/// Runs of <0xNN> tokens become the text of their bytes, or one U+FFFD per
/// byte when the bytes are not valid UTF-8.
class ByteFallbackDecoder : public Decoder {
public:
  static std::optional<uint8_t> getByte(llvm::StringRef token) {
    if (token.size() != 6 || !token.starts_with("<0x") || !token.ends_with(">"))
      return std::nullopt;
    // Rust's u8::from_str_radix, which also takes a leading '+'.
    llvm::StringRef digits = token.substr(3, 2);
    if (digits[0] == '+')
      digits = digits.drop_front();
    unsigned value;
    if (digits.empty() || digits.getAsInteger(16, value) || value > 255)
      return std::nullopt;
    return uint8_t(value);
  }
  void decodeChain(std::vector<std::string> &tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    auto flush = [&] {
      if (bytes.empty())
        return;
      if (!findInvalidUtf8(bytes))
        out.push_back(bytes);
      else
        for (size_t i = 0; i < bytes.size(); ++i)
          out.push_back("\xEF\xBF\xBD");
      bytes.clear();
    };
    for (std::string &token : tokens) {
      if (std::optional<uint8_t> b = getByte(token)) {
        bytes.push_back(char(*b));
        continue;
      }
      flush();
      out.push_back(std::move(token));
    }
    flush();
    tokens = std::move(out);
  }
};

class FuseDecoder : public Decoder {
public:
  void decodeChain(std::vector<std::string> &tokens) const override {
    std::string all;
    for (const std::string &token : tokens)
      all += token;
    tokens.assign(1, all);
  }
};

/// Removes up to `start` leading and `stop` trailing `content` characters
/// from each token.
class StripDecoder : public Decoder {
public:
  uint32_t content;
  size_t start, stop;
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (std::string &token : tokens) {
      DecodedText d = decodeUtf8(token);
      size_t n = d.codePoints.size(), begin = 0, end = n;
      while (begin < std::min(start, n) && d.codePoints[begin] == content)
        ++begin;
      for (size_t i = 0; i < stop && end > begin; ++i) {
        if (d.codePoints[end - 1] != content)
          break;
        --end;
      }
      token = token.substr(d.offsets[begin], d.offsets[end] - d.offsets[begin]);
    }
  }
};

/// The end_of_word_suffix becomes a space, except in the last token.
class BpeDecoder : public Decoder {
public:
  std::string suffix;
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (auto [i, token] : llvm::enumerate(tokens))
      token = replaceAll(token, suffix, i + 1 == tokens.size() ? "" : " ");
  }
};
} // namespace

/// A decoder of any type but Sequence.
static llvm::Expected<std::unique_ptr<Decoder>>
parseDecoderOfType(const json::Object &o, const std::string &type,
                   const std::string &path) {
  if (type == "ByteLevel")
    return std::make_unique<ByteLevelDecoder>();
  if (type == "ByteFallback")
    return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse")
    return std::make_unique<FuseDecoder>();
  if (type == "Metaspace")
    return parseMetaspaceDecoder(o, path);
  if (type == "Replace")
    return parseLiteralReplace<ReplaceDecoder>(o, path);
  if (type == "Strip") {
    auto content = getString(o, "content", path);
    if (!content)
      return content.takeError();
    DecodedText c = decodeUtf8(*content);
    if (c.codePoints.size() != 1 || findInvalidUtf8(*content))
      return makeError(path + ".content: expected one character");
    auto start = getIndex(o, "start", path);
    if (!start)
      return start.takeError();
    auto stop = getIndex(o, "stop", path);
    if (!stop)
      return stop.takeError();
    auto d = std::make_unique<StripDecoder>();
    d->content = c.codePoints[0];
    d->start = *start;
    d->stop = *stop;
    return std::move(d);
  }
  if (type == "BPEDecoder") {
    auto suffix = getString(o, "suffix", path, "</w>");
    if (!suffix)
      return suffix.takeError();
    auto d = std::make_unique<BpeDecoder>();
    d->suffix = *suffix;
    return std::move(d);
  }
  return makeError(path + ": unsupported decoder type '" + type +
                   "' (supported: Sequence, ByteLevel, ByteFallback, Fuse, "
                   "Metaspace, Replace, Strip, BPEDecoder)");
}

llvm::Expected<std::unique_ptr<Decoder>>
mlir::tfm::tokenizer::parseDecoder(const json::Value &value,
                                   const std::string &path) {
  return parseStage(value, path, "decoders", &SequenceDecoder::decoders,
                    parseDecoder, parseDecoderOfType);
}

//===----------------------------------------------------------------------===//
// Post-processors
//===----------------------------------------------------------------------===//

namespace {
class SequenceProcessor : public PostProcessor {
public:
  std::vector<std::unique_ptr<PostProcessor>> processors;
  void process(std::vector<int64_t> &ids) const override {
    for (const auto &p : processors)
      p->process(ids);
  }
};

/// Ids before and after the sequence: TemplateProcessing's "single"
/// template, or RobertaProcessing's / BertProcessing's cls ... sep.
class WrapProcessor : public PostProcessor {
public:
  std::vector<int64_t> before, after;
  void process(std::vector<int64_t> &ids) const override {
    ids.insert(ids.begin(), before.begin(), before.end());
    ids.insert(ids.end(), after.begin(), after.end());
  }
};

/// ByteLevel as a post-processor only trims offsets: the ids are unchanged.
class IdentityProcessor : public PostProcessor {
public:
  void process(std::vector<int64_t> &) const override {}
};
} // namespace

static llvm::Expected<std::unique_ptr<PostProcessor>>
parseTemplate(const json::Object &o, const std::string &path) {
  auto single = getArray(o, "single", path);
  if (!single)
    return single.takeError();
  const json::Object *special = o.getObject("special_tokens");
  auto p = std::make_unique<WrapProcessor>();
  bool seenSequence = false;
  for (auto [i, item] : llvm::enumerate(**single)) {
    std::string where = path + ".single[" + std::to_string(i) + "]";
    const json::Object *piece = item.getAsObject();
    if (!piece || piece->size() != 1)
      return makeError(where + ": expected {\"SpecialToken\": ...} or "
                               "{\"Sequence\": ...}");
    if (const json::Object *seq = piece->getObject("Sequence")) {
      if (seq->getString("id") != llvm::StringRef("A"))
        return makeError(where + ": a single-sequence template can only "
                                 "hold sequence A");
      if (seenSequence)
        return makeError(where + ": sequence A appears twice");
      seenSequence = true;
      continue;
    }
    const json::Object *token = piece->getObject("SpecialToken");
    std::optional<llvm::StringRef> name =
        token ? token->getString("id") : std::nullopt;
    if (!name)
      return makeError(where + ": expected {\"SpecialToken\": {\"id\": ...}} "
                               "or {\"Sequence\": ...}");
    const json::Object *entry = special ? special->getObject(*name) : nullptr;
    const json::Array *ids = entry ? entry->getArray("ids") : nullptr;
    if (!ids)
      return makeError(where + ": special token \"" + name->str() +
                       "\" has no ids in " + path + ".special_tokens");
    std::vector<int64_t> &dest = seenSequence ? p->after : p->before;
    for (const json::Value &id : *ids) {
      std::optional<int64_t> v = mlir::tfm::runtime::getJsonInteger(id);
      if (!v || *v < 0)
        return makeError(path + ".special_tokens[\"" + name->str() +
                         "\"].ids: expected non-negative integers");
      dest.push_back(*v);
    }
  }
  if (!seenSequence)
    return makeError(path + ".single: the template has no sequence A");
  return std::move(p);
}

/// RobertaProcessing's / BertProcessing's ["token", id] pairs.
static llvm::Expected<int64_t> getTokenPairId(const json::Object &o,
                                              llvm::StringRef key,
                                              const std::string &path) {
  const json::Array *pair = o.getArray(key);
  std::optional<int64_t> id;
  if (pair && pair->size() == 2 && (*pair)[0].getAsString())
    id = mlir::tfm::runtime::getJsonInteger((*pair)[1]);
  if (!id || *id < 0)
    return makeError(path + "." + key + ": expected [\"token\", id]");
  return *id;
}

/// A post-processor of any type but Sequence.
static llvm::Expected<std::unique_ptr<PostProcessor>>
parsePostProcessorOfType(const json::Object &o, const std::string &type,
                         const std::string &path) {
  if (type == "ByteLevel")
    return std::make_unique<IdentityProcessor>();
  if (type == "TemplateProcessing")
    return parseTemplate(o, path);
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    auto cls = getTokenPairId(o, "cls", path);
    if (!cls)
      return cls.takeError();
    auto sep = getTokenPairId(o, "sep", path);
    if (!sep)
      return sep.takeError();
    auto p = std::make_unique<WrapProcessor>();
    p->before = {*cls};
    p->after = {*sep};
    return std::move(p);
  }
  return makeError(path + ": unsupported post-processor type '" + type +
                   "' (supported: Sequence, ByteLevel, TemplateProcessing, "
                   "RobertaProcessing, BertProcessing)");
}

llvm::Expected<std::unique_ptr<PostProcessor>>
mlir::tfm::tokenizer::parsePostProcessor(const json::Value &value,
                                         const std::string &path) {
  return parseStage(value, path, "processors", &SequenceProcessor::processors,
                    parsePostProcessor, parsePostProcessorOfType);
}

//===- tfm-tokenize.cpp - encode and decode with a tokenizer.json ---------===//
//
//   tfm-tokenize --tokenizer tokenizer.json [--no-special-tokens] TEXT
//       prints the ids of TEXT, space-separated
//   tfm-tokenize --tokenizer tokenizer.json --decode [--skip-special-tokens]
//       ID...
//       prints the text of the ids
//   tfm-tokenize --tokenizer tokenizer.json --vocab-size
//       prints one past the largest id
//   tfm-tokenize --tokenizer tokenizer.json --batch TEXTS.json
//       TEXTS.json is a JSON array of strings; prints a JSON array with, for
//       each, {"ids", "ids_plain", "decoded", "decoded_skip", "streamed"}:
//       the ids with and without special tokens, decode(ids) without and
//       with skip_special_tokens, and the text a StreamDecoder gives a token
//       at a time (skipping special tokens)
//
//===----------------------------------------------------------------------===//
#include "tfm/Tokenizer/Tokenizer.h"
#include "tfm/Runtime/Json.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::tfm::tokenizer;
namespace cl = llvm::cl;
namespace json = llvm::json;

static cl::opt<std::string> tokenizerFile("tokenizer", cl::Required,
                                          cl::value_desc("tokenizer.json"),
                                          cl::desc("The tokenizer to use"));
static cl::opt<bool> decodeMode("decode",
                                cl::desc("Decode ids (else encode text)"));
static cl::opt<bool> noSpecialTokens(
    "no-special-tokens",
    cl::desc("Encode without the post-processor's special tokens"));
static cl::opt<bool>
    skipSpecialTokens("skip-special-tokens",
                      cl::desc("Decode without the special tokens"));
static cl::opt<std::string>
    batchFile("batch", cl::value_desc("texts.json"),
              cl::desc("Encode and decode each string of a JSON array"));
static cl::opt<bool> printVocabSize("vocab-size",
                                    cl::desc("Print one past the largest id"));
static cl::list<std::string> inputs(cl::Positional, cl::desc("TEXT | ID..."));

[[noreturn]] static void fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tfm-tokenize") << message << "\n";
  std::exit(1);
}

template <typename T> static T check(llvm::Expected<T> value) {
  if (!value)
    fail(llvm::toString(value.takeError()));
  return std::move(*value);
}

static json::Array toJson(llvm::ArrayRef<int64_t> ids) {
  json::Array array;
  for (int64_t id : ids)
    array.push_back(id);
  return array;
}

static int runBatch(const Tokenizer &tokenizer) {
  auto buffer = llvm::MemoryBuffer::getFile(batchFile);
  if (!buffer)
    fail("--batch " + batchFile + ": " + buffer.getError().message());
  llvm::Expected<json::Value> texts =
      mlir::tfm::runtime::parseJson((*buffer)->getBuffer());
  if (!texts)
    fail("--batch " + batchFile + ": " + llvm::toString(texts.takeError()));
  const json::Array *array = texts->getAsArray();
  if (!array)
    fail("--batch " + batchFile + ": expected an array of strings");
  json::Array results;
  for (const json::Value &item : *array) {
    std::optional<llvm::StringRef> text = item.getAsString();
    if (!text)
      fail("--batch " + batchFile + ": expected an array of strings");
    std::vector<int64_t> ids = check(tokenizer.encode(*text, true));
    std::vector<int64_t> plain = check(tokenizer.encode(*text, false));
    StreamDecoder stream(tokenizer, /*skipSpecialTokens=*/true);
    std::string streamed;
    for (int64_t id : ids)
      streamed += stream.push(id);
    streamed += stream.finish();
    results.push_back(json::Object{
        {"ids", toJson(ids)},
        {"ids_plain", toJson(plain)},
        {"decoded", tokenizer.decode(ids, false)},
        {"decoded_skip", tokenizer.decode(ids, true)},
        {"streamed", streamed},
    });
  }
  llvm::outs() << json::Value(std::move(results)) << "\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "tfm tokenizer driver\n");
  std::unique_ptr<Tokenizer> tokenizer = check(Tokenizer::load(tokenizerFile));
  if (printVocabSize) {
    llvm::outs() << tokenizer->getVocabSize() << "\n";
    return 0;
  }
  if (!batchFile.empty())
    return runBatch(*tokenizer);
  if (decodeMode) {
    std::vector<int64_t> ids;
    for (const std::string &s : inputs) {
      int64_t id;
      if (llvm::StringRef(s).getAsInteger(10, id))
        fail("--decode: '" + s + "' is not a token id");
      ids.push_back(id);
    }
    llvm::outs() << tokenizer->decode(ids, skipSpecialTokens) << "\n";
    return 0;
  }
  if (inputs.size() != 1)
    fail("expected one TEXT to encode (or --decode ID... or --batch FILE)");
  std::vector<int64_t> ids =
      check(tokenizer->encode(inputs[0], !noSpecialTokens));
  for (auto [i, id] : llvm::enumerate(ids))
    llvm::outs() << (i ? " " : "") << id;
  llvm::outs() << "\n";
  return 0;
}

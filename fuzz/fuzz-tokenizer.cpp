//===- fuzz-tokenizer.cpp - libFuzzer target for tokenizer.json + encode --===//
//
// The input is a tokenizer.json, optionally followed by a NUL byte and a
// text. A file the reader accepts must encode the text (with and without
// the special tokens) into ids of its vocabulary, and decode and stream
// them back, without a crash, a sanitizer report or an id out of range.
//
//===----------------------------------------------------------------------===//
#include "tfm/Tokenizer/Tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace mlir::tfm::tokenizer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [json, text] = input.split('\0');
  if (text.empty() && !input.contains('\0'))
    text = "In the beginning God created 天地 café 👍 <s> 123";
  auto tokenizer = Tokenizer::parse(json, "fuzz");
  if (!tokenizer) {
    llvm::consumeError(tokenizer.takeError());
    return 0;
  }
  int64_t vocab = (*tokenizer)->getVocabSize();
  for (bool special : {true, false}) {
    auto ids = (*tokenizer)->encode(text, special);
    if (!ids) {
      llvm::consumeError(ids.takeError());
      continue;
    }
    for (int64_t id : *ids)
      if (id < 0 || id >= vocab)
        abort();
    (void)(*tokenizer)->decode(*ids, /*skipSpecialTokens=*/false);
    (void)(*tokenizer)->decode(*ids, /*skipSpecialTokens=*/true);
  }
  return 0;
}

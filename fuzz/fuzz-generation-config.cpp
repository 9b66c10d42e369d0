//===- fuzz-generation-config.cpp - libFuzzer target for generation_config -===//
//
// generation_config.json's reader: any text is read into the defaults or
// refused with an error naming the field, without a crash or a sanitizer
// report; an accepted config's numbers are in the ranges the reader
// promises (a positive temperature, top-p in (0, 1], no negative counts).
//
//===----------------------------------------------------------------------===//
#include "tfm/Runtime/GenerationConfig.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace mlir::tfm::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  GenerationConfig config;
  if (llvm::Error err = parseGenerationConfig(text, "fuzz", config)) {
    llvm::consumeError(std::move(err));
    return 0;
  }
  const SamplingOptions &s = config.sampling;
  if (!(s.temperature > 0) || std::isinf(s.temperature) || !(s.topP > 0) ||
      s.topP > 1 || s.topK < 0 || !(s.repetitionPenalty > 0))
    abort();
  for (int64_t id : config.eosTokenIds)
    if (id < 0)
      abort();
  return 0;
}

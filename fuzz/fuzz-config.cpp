//===- fuzz-config.cpp - libFuzzer target for config.json import ----------===//
//
// parseModelConfig on any text: an error, or a config whose sizes are all
// positive and within the limits the importer relies on.
//
//===----------------------------------------------------------------------===//
#include "tfm/Target/HuggingFace/ModelConfig.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace mlir::tfm::hf;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::Expected<ModelConfig> config = parseModelConfig(
      llvm::StringRef(reinterpret_cast<const char *>(data), size));
  if (!config) {
    llvm::consumeError(config.takeError());
    return 0;
  }
  for (int64_t v : {config->vocabSize, config->hiddenSize, config->numLayers,
                    config->numHeads, config->numKVHeads, config->headDim,
                    config->intermediateSize, config->maxPositions})
    if (v < 1)
      abort();
  if (!(config->normEps > 0) || !(config->ropeTheta > 0))
    abort();
  return 0;
}

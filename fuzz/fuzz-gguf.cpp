//===- fuzz-gguf.cpp - libFuzzer target for the GGUF reader ---------------===//
//
// Any byte string is a candidate GGUF file: the reader must accept it with
// every tensor inside the buffer, or return an error; never crash or read
// out of bounds. An accepted file goes on as a model would: its metadata
// read as a config.json, its vocabulary as a tokenizer (which encodes a
// text), its tensors renamed (Llama's Q/K rows permuted back), and every
// tensor read end to end, block formats dequantized.
//
//===----------------------------------------------------------------------===//
#include "tfm/Runtime/Gguf.h"
#include "tfm/Runtime/GgufModel.h"
#include "tfm/Tokenizer/Tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <vector>

using namespace mlir::tfm::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz");
  llvm::Expected<std::unique_ptr<GgufFile>> file =
      GgufFile::parse(std::move(buffer), "fuzz");
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  if (llvm::Expected<std::string> config = getGgufConfigJson(**file); !config)
    llvm::consumeError(config.takeError());
  if (llvm::Expected<std::string> json =
          mlir::tfm::tokenizer::convertGgufTokenizer(**file);
      !json) {
    llvm::consumeError(json.takeError());
  } else if (auto tokenizer =
                 mlir::tfm::tokenizer::Tokenizer::parse(*json, "fuzz");
             !tokenizer) {
    llvm::consumeError(tokenizer.takeError());
  } else if (auto ids = (*tokenizer)->encode("hello world 42"); !ids) {
    llvm::consumeError(ids.takeError());
  }
  llvm::Expected<std::unique_ptr<TensorFile>> tensors =
      makeGgufTensors(std::move(*file));
  if (!tensors) {
    llvm::consumeError(tensors.takeError());
    return 0;
  }
  volatile float sink = 0;
  std::vector<float> row;
  // What the binder splits stored blocks into (packStoredBlocks): values,
  // f16 scales, the K formats' sub-block scales.
  std::vector<uint8_t> values;
  std::vector<uint16_t> scales;
  std::vector<uint8_t> subScales;
  for (const TensorView &listed : (*tensors)->getTensors()) {
    // Read through lookup, as the binder reads: a Q5_0 tensor's Q8_0
    // blocks are made then.
    const TensorView *found = (*tensors)->lookup(listed.name);
    if (!found)
      continue;
    const TensorView &t = *found;
    if (t.blocks == BlockFormat::None) {
      for (uint64_t i = 0; i < t.numBytes; ++i)
        sink = sink + float(uint8_t(t.data[i]));
      continue;
    }
    int64_t k = t.shape.back();
    uint64_t rows = t.getNumElements() / uint64_t(k);
    row.resize(k);
    for (uint64_t r = 0; r < rows; ++r) {
      const char *blocks = t.data + r * (t.numBytes / rows);
      dequantizeBlocks(t.blocks, blocks, k, row.data());
      sink = sink + row[0];
      if (isHeldBlockFormat(t.blocks)) {
        values.resize(k);
        scales.resize(k / 32);
        subScales.resize(k / 16);
        splitBlocks(t.blocks, blocks, k, values.data(), scales.data(),
                    subScales.data());
        sink = sink + float(values[0]);
      }
    }
  }
  (void)sink;
  return 0;
}

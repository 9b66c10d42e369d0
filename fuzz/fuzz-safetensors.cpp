//===- fuzz-safetensors.cpp - libFuzzer target for the .safetensors reader ===//
//
// Any byte string is a candidate file: the reader must accept it with every
// tensor inside the buffer, or return an error; never crash or read out of
// bounds. Accepted files are read end to end to prove the views are valid.
//
//===----------------------------------------------------------------------===//
#include "tfm/Runtime/SafeTensors.h"

#include <cstddef>
#include <cstdint>

using namespace mlir::tfm::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz");
  llvm::Expected<std::unique_ptr<SafeTensorsFile>> file =
      SafeTensorsFile::parse(std::move(buffer), "fuzz");
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  volatile uint8_t sink = 0;
  for (const TensorView &t : (*file)->getTensors())
    for (uint64_t i = 0; i < t.numBytes; ++i)
      sink = sink ^ uint8_t(t.data[i]);
  (void)sink;
  return 0;
}

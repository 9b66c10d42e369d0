//===- TensorFile.h - one weight file's tensors ------------------*- C++ -*-===//
//
// What a checkpoint (tfm/Runtime/Checkpoint.h) reads from each of its files,
// whatever their format: named tensors pointing into the file's mapping,
// all validated when the file was opened. A .safetensors file
// (tfm/Runtime/SafeTensors.h) holds plain elements; a GGUF file
// (tfm/Runtime/GgufModel.h) may hold llama.cpp's blocks.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_TENSORFILE_H
#define TFM_RUNTIME_TENSORFILE_H

#include "tfm/Runtime/DType.h"
#include "tfm/Runtime/Quantize.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::tfm::runtime {

/// One tensor of a file; `data` points into the file's mapping.
struct TensorView {
  std::string name;
  /// The element type; for a tensor of `blocks`, f32, the type its
  /// dequantized weights have.
  DType dtype;
  llvm::SmallVector<int64_t, 4> shape;
  const char *data;
  uint64_t numBytes;
  /// Not None: each row (along the last dim) is a sequence of blocks of
  /// this format (tfm/Runtime/Quantize.h), not of elements.
  BlockFormat blocks = BlockFormat::None;

  uint64_t getNumElements() const {
    uint64_t count = 1;
    for (int64_t dim : shape)
      count *= uint64_t(dim);
    return count;
  }
  /// "F32", "BF16", "Q4_K": the storage type as its file names it.
  llvm::StringRef getStorageName() const {
    return blocks == BlockFormat::None ? getSafeTensorsDTypeName(dtype)
                                       : getBlockFormatName(blocks);
  }
};

/// The tensors of one weight file.
class TensorFile {
public:
  virtual ~TensorFile() = default;
  /// The file, for messages.
  virtual llvm::StringRef getPath() const = 0;
  /// The tensor called `name`, or null.
  virtual const TensorView *lookup(llvm::StringRef name) const = 0;
  /// Every tensor, in file order.
  virtual llvm::ArrayRef<TensorView> getTensors() const = 0;
  /// Drops this process's copy of the pages that only `view` (a tensor of
  /// this file) occupies, once it has been copied out (packed, converted):
  /// they would stay resident next to the copy. The pages are read back in
  /// if the tensor is read again, so this only costs time. A no-op where
  /// the file is not memory-mapped.
  virtual void releasePages(const TensorView &view) const = 0;
};

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_TENSORFILE_H

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
  /// Not 0: the rows are stored in the order llama.cpp's converter gives
  /// Llama's Q and K projections (tfm/Runtime/GgufModel.h), in this many
  /// heads of D rows: row h D + i D/2 + j of the tensor is stored row
  /// h D + 2 j + i. Readers go through getStoredRow.
  int64_t interleavedHeads = 0;
  /// The stored f32 values are the weights plus one (llama.cpp's Gemma
  /// norms); readers subtract it.
  bool storedPlusOne = false;

  /// Where row `row` (of the outermost dim) is stored.
  uint64_t getStoredRow(uint64_t row) const {
    if (!interleavedHeads)
      return row;
    uint64_t headRows = uint64_t(shape[0]) / uint64_t(interleavedHeads);
    uint64_t half = headRows / 2, head = row / headRows, r = row % headRows;
    return head * headRows + 2 * (r % half) + r / half;
  }

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

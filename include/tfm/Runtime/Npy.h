//===- Npy.h - NumPy .npy reader and writer ---------------------*- C++ -*-===//
//
// The .npy format: the magic "\x93NUMPY", a major/minor version, a
// little-endian header length (2 bytes in version 1.0, 4 in 2.0 and 3.0), a
// Python dict literal {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), } and the raw data. Only C order and little-endian
// '<f4' '<f2' '<f8' '<i4' '<i8' (plus 1-byte '|i1' '|u1' '|b1') are read;
// numpy has no bf16.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_NPY_H
#define TFM_RUNTIME_NPY_H

#include "tfm/Runtime/DType.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace mlir::tfm::runtime {

struct NpyArray {
  DType dtype;
  llvm::SmallVector<int64_t, 4> shape;
  /// Points into `buffer`; not necessarily aligned to the element size.
  const char *data = nullptr;
  uint64_t numBytes = 0;
  std::unique_ptr<llvm::MemoryBuffer> buffer;

  uint64_t getNumElements() const { return numBytes / getDTypeSize(dtype); }
};

/// Reads and validates `path`; errors name the file.
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);
/// Validates an in-memory file; `path` only names it in messages.
llvm::Expected<NpyArray> parseNpy(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                  llvm::StringRef path);

/// Writes a version 1.0 file in C order. `dtype` must be one numpy knows
/// (not bf16); `data` holds product(shape) elements.
llvm::Error writeNpy(llvm::StringRef path, DType dtype,
                     llvm::ArrayRef<int64_t> shape, const void *data);

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_NPY_H

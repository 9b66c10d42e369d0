//===- Gguf.h - memory-mapped GGUF reader ------------------------*- C++ -*-===//
//
// Reads GGUF files, llama.cpp's model format (versions 2 and 3): a header
// ("GGUF", the version, the tensor and metadata counts), metadata as typed
// key/value pairs (integers, floats, bools, strings and arrays of them), one
// record per tensor (name, up to 4 dims innermost first, ggml type, offset),
// then the tensors' data, aligned to `general.alignment` (32 by default).
// Little-endian throughout, as every GGUF llama.cpp writes.
//
// The file is memory-mapped privately (as SafeTensorsFile is) and every
// claim of the header is checked on open: counts and lengths against the
// bytes left, known value and tensor types, dims and their products, each
// tensor's bytes inside the data area, aligned, overlapping no other;
// unique keys and tensor names. An opened GgufFile is safe to read.
// Errors name the file and the key or tensor at fault.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_GGUF_H
#define TFM_RUNTIME_GGUF_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm::runtime {

/// ggml's tensor types that GGUF files carry (ggml.h's `enum ggml_type`).
struct GgmlTypeInfo {
  uint32_t id;
  llvm::StringRef name;
  /// Elements per block (1 for plain types) and bytes per block.
  int64_t blockElements;
  int64_t blockBytes;
};
/// The type numbered `id`, or null if tfm does not know it.
const GgmlTypeInfo *getGgmlType(uint32_t id);

/// One metadata value: a scalar, a string, or an array of either.
struct GgufValue {
  enum Type : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
    String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12
  };
  Type type = U8;
  /// A scalar: integers and bools as both (a u64 past INT64_MAX: only
  /// `unsignedInteger`), floats as `real`; a string points into the mapping.
  int64_t integer = 0;
  uint64_t unsignedInteger = 0;
  double real = 0;
  llvm::StringRef string;
  /// An array: its elements' type and count; numeric elements stay in the
  /// mapping at `raw` (read with getElement), strings are listed.
  Type elementType = U8;
  uint64_t count = 0;
  const char *raw = nullptr;
  std::vector<llvm::StringRef> strings;

  static bool isIntegerType(Type type) {
    return type <= I32 || type == U64 || type == I64 || type == Bool;
  }
  static bool isFloatType(Type type) { return type == F32 || type == F64; }
  /// Element `i` of a numeric array, as a scalar GgufValue.
  GgufValue getElement(uint64_t i) const;
};
/// "u32", "string", "array of f32", ...
std::string describeGgufType(const GgufValue &value);

/// One tensor record.
struct GgufTensor {
  std::string name;
  const GgmlTypeInfo *type;
  /// Row-major, outermost first: ggml's `ne` reversed (a [K, N] ggml
  /// matrix, rows of K elements, is {N, K}).
  llvm::SmallVector<int64_t, 4> shape;
  const char *data;
  uint64_t numBytes;
};

class GgufFile {
public:
  /// Maps and validates `path`.
  static llvm::Expected<std::unique_ptr<GgufFile>> open(llvm::StringRef path);
  /// Validates an in-memory file; `path` only names it in messages.
  static llvm::Expected<std::unique_ptr<GgufFile>>
  parse(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef path);

  llvm::StringRef getPath() const { return path; }
  uint32_t getVersion() const { return version; }
  /// The value of `key`, or null.
  const GgufValue *getValue(llvm::StringRef key) const;
  /// Keys in file order.
  llvm::ArrayRef<std::string> getKeys() const { return keys; }
  /// Tensors in file order.
  llvm::ArrayRef<GgufTensor> getTensors() const { return tensors; }
  /// The tensor called `name`, or null.
  const GgufTensor *lookup(llvm::StringRef name) const;

  /// Typed reads of optional keys: std::nullopt when absent, an error
  /// naming the key when present with another type (any integer type is
  /// read as an integer if it fits; f32 and f64 as a double).
  llvm::Expected<std::optional<uint64_t>> getUnsigned(llvm::StringRef key) const;
  llvm::Expected<std::optional<double>> getFloat(llvm::StringRef key) const;
  llvm::Expected<std::optional<bool>> getBool(llvm::StringRef key) const;
  llvm::Expected<std::optional<llvm::StringRef>>
  getString(llvm::StringRef key) const;

  /// Drops this process's copy of the whole pages of [data, data + size)
  /// (see TensorFile::releasePages).
  void releasePages(const char *data, uint64_t size) const;

private:
  GgufFile() = default;

  std::string path;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  uint32_t version = 0;
  std::vector<std::string> keys;
  llvm::StringMap<GgufValue> values;
  std::vector<GgufTensor> tensors;
  llvm::StringMap<size_t> index;
};

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_GGUF_H

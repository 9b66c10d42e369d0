//===- Gguf.cpp - memory-mapped GGUF reader -------------------------------===//
#include "tfm/Runtime/Gguf.h"
#include "tfm/Runtime/Error.h"
#include "tfm/Runtime/DType.h"
#include "tfm/Runtime/Limits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Process.h"

#include <algorithm>
#include <cstring>

#if LLVM_ON_UNIX
#include <sys/mman.h>
#endif

using namespace mlir::tfm::runtime;
using llvm::Error;
using llvm::Expected;


/// ggml's types (ggml.c's type_traits: block size, bytes per block). The
/// codebook (IQ*) and ternary formats are left out: a file using them is
/// refused by name of the type number.
static const GgmlTypeInfo kGgmlTypes[] = {
    {0, "F32", 1, 4},       {1, "F16", 1, 2},       {2, "Q4_0", 32, 18},
    {3, "Q4_1", 32, 20},    {6, "Q5_0", 32, 22},    {7, "Q5_1", 32, 24},
    {8, "Q8_0", 32, 34},    {9, "Q8_1", 32, 36},    {10, "Q2_K", 256, 84},
    {11, "Q3_K", 256, 110}, {12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210}, {15, "Q8_K", 256, 292}, {24, "I8", 1, 1},
    {25, "I16", 1, 2},      {26, "I32", 1, 4},      {27, "I64", 1, 8},
    {28, "F64", 1, 8},      {30, "BF16", 1, 2}};

const GgmlTypeInfo *mlir::tfm::runtime::getGgmlType(uint32_t id) {
  for (const GgmlTypeInfo &type : kGgmlTypes)
    if (type.id == id)
      return &type;
  return nullptr;
}

static const char *getValueTypeName(GgufValue::Type type) {
  static const char *names[] = {"u8",  "i8",   "u16",    "i16",   "u32",
                                "i32", "f32",  "bool",   "string", "array",
                                "u64", "i64",  "f64"};
  return uint32_t(type) <= GgufValue::F64 ? names[type] : "unknown";
}

std::string mlir::tfm::runtime::describeGgufType(const GgufValue &value) {
  if (value.type != GgufValue::Array)
    return getValueTypeName(value.type);
  return std::string("array of ") + getValueTypeName(value.elementType);
}

/// Bytes of one scalar of `type` (0 for strings and arrays).
static uint64_t getScalarSize(GgufValue::Type type) {
  switch (type) {
  case GgufValue::U8:
  case GgufValue::I8:
  case GgufValue::Bool:
    return 1;
  case GgufValue::U16:
  case GgufValue::I16:
    return 2;
  case GgufValue::U32:
  case GgufValue::I32:
  case GgufValue::F32:
    return 4;
  case GgufValue::U64:
  case GgufValue::I64:
  case GgufValue::F64:
    return 8;
  case GgufValue::String:
  case GgufValue::Array:
    return 0;
  }
  return 0;
}

/// The scalar of `type` at `p` (getScalarSize(type) bytes, little-endian).
static GgufValue readScalar(GgufValue::Type type, const char *p) {
  GgufValue value;
  value.type = type;
  auto load = [&](auto zero) {
    decltype(zero) x;
    std::memcpy(&x, p, sizeof(x));
    return x;
  };
  switch (type) {
  case GgufValue::U8:
    value.integer = load(uint8_t());
    break;
  case GgufValue::Bool:
    value.integer = load(uint8_t()) != 0;
    break;
  case GgufValue::I8:
    value.integer = load(int8_t());
    break;
  case GgufValue::U16:
    value.integer = load(uint16_t());
    break;
  case GgufValue::I16:
    value.integer = load(int16_t());
    break;
  case GgufValue::U32:
    value.integer = load(uint32_t());
    break;
  case GgufValue::I32:
    value.integer = load(int32_t());
    break;
  case GgufValue::U64:
    value.unsignedInteger = load(uint64_t());
    value.integer = int64_t(std::min<uint64_t>(value.unsignedInteger,
                                               uint64_t(INT64_MAX)));
    return value;
  case GgufValue::I64:
    value.integer = load(int64_t());
    break;
  case GgufValue::F32:
    value.real = load(float());
    return value;
  case GgufValue::F64:
    value.real = load(double());
    return value;
  case GgufValue::String:
  case GgufValue::Array:
    return value;
  }
  value.unsignedInteger = uint64_t(value.integer);
  return value;
}

GgufValue GgufValue::getElement(uint64_t i) const {
  return readScalar(elementType, raw + i * getScalarSize(elementType));
}

namespace {
/// Reads the header area front to back; every read checks the bytes left.
class Cursor {
public:
  Cursor(llvm::StringRef path, const char *begin, uint64_t size)
      : path(path), begin(begin), size(size) {}

  uint64_t getOffset() const { return offset; }
  uint64_t getRemaining() const { return size - offset; }

  Error read(void *out, uint64_t bytes, llvm::StringRef what) {
    if (bytes > getRemaining())
      return makeError(path,
                       "truncated: {0} needs {1} bytes at offset {2}, the "
                       "file has {3} left",
                       what, bytes, offset, getRemaining());
    std::memcpy(out, begin + offset, bytes);
    offset += bytes;
    return Error::success();
  }
  template <typename T> Expected<T> read(llvm::StringRef what) {
    T value;
    if (Error err = read(&value, sizeof(T), what))
      return std::move(err);
    return value;
  }
  Expected<llvm::StringRef> readString(llvm::StringRef what) {
    Expected<uint64_t> length = read<uint64_t>(what);
    if (!length)
      return length.takeError();
    if (*length > getRemaining())
      return makeError(path,
                       "truncated: {0} is a string of {1} bytes at offset "
                       "{2}, the file has {3} left",
                       what, *length, offset, getRemaining());
    llvm::StringRef string(begin + offset, *length);
    offset += *length;
    return string;
  }
  /// Checks that `count` items of at least `minBytes` each fit in what is
  /// left, before anything is allocated for them.
  Error checkCount(uint64_t count, uint64_t minBytes, llvm::StringRef what) {
    if (minBytes && count > getRemaining() / minBytes)
      return makeError(path,
                       "{0}: {1} items of at least {2} bytes each cannot fit "
                       "in the {3} bytes left at offset {4}",
                       what, count, minBytes, getRemaining(), offset);
    return Error::success();
  }
  const char *here() const { return begin + offset; }
  void skip(uint64_t bytes) { offset += bytes; }

private:
  llvm::StringRef path;
  const char *begin;
  uint64_t size;
  uint64_t offset = 0;
};
} // namespace

/// Reads one metadata value of `type` (arrays of arrays are refused, as
/// llama.cpp refuses them).
static Expected<GgufValue> readValue(Cursor &cursor, uint32_t rawType,
                                     llvm::StringRef path,
                                     llvm::StringRef key) {
  std::string what = ("the value of '" + key + "'").str();
  if (rawType > GgufValue::F64)
    return makeError(path, "metadata '{0}' has value type {1}, not a GGUF "
                           "type (0-12)",
                     key, rawType);
  auto type = GgufValue::Type(rawType);
  if (type == GgufValue::String) {
    Expected<llvm::StringRef> string = cursor.readString(what);
    if (!string)
      return string.takeError();
    GgufValue value;
    value.type = type;
    value.string = *string;
    return value;
  }
  if (type != GgufValue::Array) {
    uint64_t bytes = getScalarSize(type);
    if (bytes > cursor.getRemaining())
      return makeError(path, "truncated: {0} needs {1} bytes at offset {2}",
                       what, bytes, cursor.getOffset());
    GgufValue value = readScalar(type, cursor.here());
    cursor.skip(bytes);
    return value;
  }
  Expected<uint32_t> elementType = cursor.read<uint32_t>(what);
  if (!elementType)
    return elementType.takeError();
  if (*elementType > GgufValue::F64 || *elementType == GgufValue::Array)
    return makeError(path,
                     "metadata '{0}' is an array of type {1}: GGUF arrays "
                     "hold scalars or strings",
                     key, *elementType);
  Expected<uint64_t> count = cursor.read<uint64_t>(what);
  if (!count)
    return count.takeError();
  GgufValue value;
  value.type = GgufValue::Array;
  value.elementType = GgufValue::Type(*elementType);
  value.count = *count;
  if (value.elementType == GgufValue::String) {
    // Each string is at least its 8-byte length.
    if (Error err = cursor.checkCount(*count, 8, what))
      return std::move(err);
    value.strings.reserve(*count);
    for (uint64_t i = 0; i < *count; ++i) {
      Expected<llvm::StringRef> string = cursor.readString(what);
      if (!string)
        return string.takeError();
      value.strings.push_back(*string);
    }
    return value;
  }
  uint64_t size = getScalarSize(value.elementType);
  if (Error err = cursor.checkCount(*count, size, what))
    return std::move(err);
  value.raw = cursor.here();
  cursor.skip(*count * size);
  return value;
}

/// Parses the tensor record of `file` at the cursor; `data` is filled in
/// later as an offset from the data area.
static Expected<GgufTensor> readTensorInfo(Cursor &cursor,
                                           llvm::StringRef path,
                                           uint64_t &offset) {
  Expected<llvm::StringRef> name = cursor.readString("a tensor's name");
  if (!name)
    return name.takeError();
  GgufTensor tensor;
  tensor.name = name->str();
  std::string what = "tensor '" + tensor.name + "'";
  Expected<uint32_t> dims = cursor.read<uint32_t>(what);
  if (!dims)
    return dims.takeError();
  // GGML_MAX_DIMS.
  if (*dims == 0 || *dims > 4)
    return makeError(path, "{0} has {1} dims: GGUF tensors have 1 to 4",
                     what, *dims);
  llvm::SmallVector<int64_t, 4> ne;
  for (uint32_t d = 0; d < *dims; ++d) {
    Expected<uint64_t> extent = cursor.read<uint64_t>(what);
    if (!extent)
      return extent.takeError();
    if (*extent == 0 || *extent > uint64_t(INT64_MAX))
      return makeError(path, "{0} has extent {1} along dim {2}", what,
                       *extent, d);
    ne.push_back(int64_t(*extent));
  }
  Expected<uint32_t> typeId = cursor.read<uint32_t>(what);
  if (!typeId)
    return typeId.takeError();
  tensor.type = getGgmlType(*typeId);
  if (!tensor.type)
    return makeError(path,
                     "{0} has ggml type {1}, which tfm does not know (it "
                     "reads F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K and "
                     "the other plain and block types of ggml)",
                     what, *typeId);
  Expected<uint64_t> dataOffset = cursor.read<uint64_t>(what);
  if (!dataOffset)
    return dataOffset.takeError();
  offset = *dataOffset;
  if (ne[0] % tensor.type->blockElements != 0)
    return makeError(path,
                     "{0} is {1} with rows of {2} elements, not a multiple "
                     "of its blocks of {3}",
                     what, tensor.type->name, ne[0],
                     tensor.type->blockElements);
  tensor.shape.assign(ne.rbegin(), ne.rend());
  llvm::SmallVector<int64_t, 4> blocks(tensor.shape);
  blocks.back() /= tensor.type->blockElements;
  std::optional<uint64_t> bytes =
      getNumBytes(blocks, size_t(tensor.type->blockBytes));
  if (!bytes)
    return makeError(path, "{0}: the size of {1} {2} overflows 64 bits",
                     what, tensor.type->name, formatShape(tensor.shape));
  tensor.numBytes = *bytes;
  return tensor;
}

Expected<std::unique_ptr<GgufFile>> GgufFile::open(llvm::StringRef path) {
  Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer = mapWeightFile(path);
  if (!buffer)
    return buffer.takeError();
  return parse(std::move(*buffer), path);
}

Expected<std::unique_ptr<GgufFile>>
GgufFile::parse(std::unique_ptr<llvm::MemoryBuffer> buffer,
                llvm::StringRef path) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->path = path.str();
  uint64_t fileSize = buffer->getBufferSize();
  Cursor cursor(path, buffer->getBufferStart(), fileSize);
  char magic[4];
  if (Error err = cursor.read(magic, 4, "the magic"))
    return std::move(err);
  if (std::memcmp(magic, "GGUF", 4) != 0)
    return makeError(path, "not a GGUF file (it does not start with "
                           "\"GGUF\")");
  Expected<uint32_t> version = cursor.read<uint32_t>("the version");
  if (!version)
    return version.takeError();
  // Version 1 counted with 32-bit integers; llama.cpp reads 2 and 3 only.
  if (*version != 2 && *version != 3)
    return makeError(path, "GGUF version {0}: tfm reads versions 2 and 3",
                     *version);
  file->version = *version;
  Expected<uint64_t> tensorCount = cursor.read<uint64_t>("the tensor count");
  if (!tensorCount)
    return tensorCount.takeError();
  Expected<uint64_t> keyCount = cursor.read<uint64_t>("the metadata count");
  if (!keyCount)
    return keyCount.takeError();
  // A key/value pair is at least a key length and a value type (12 bytes).
  if (Error err = cursor.checkCount(*keyCount, 12, "the metadata count"))
    return std::move(err);
  for (uint64_t i = 0; i < *keyCount; ++i) {
    Expected<llvm::StringRef> key = cursor.readString("a metadata key");
    if (!key)
      return key.takeError();
    Expected<uint32_t> type = cursor.read<uint32_t>(
        ("the type of metadata '" + *key + "'").str());
    if (!type)
      return type.takeError();
    Expected<GgufValue> value = readValue(cursor, *type, path, *key);
    if (!value)
      return value.takeError();
    if (!file->values.try_emplace(*key, std::move(*value)).second)
      return makeError(path, "metadata key '{0}' appears twice", *key);
    file->keys.push_back(key->str());
  }
  uint64_t alignment = 32;
  if (const GgufValue *value = file->getValue("general.alignment")) {
    if (value->type != GgufValue::U32 || value->integer == 0 ||
        !llvm::isPowerOf2_64(uint64_t(value->integer)))
      return makeError(path,
                       "general.alignment must be a u32 power of two, not "
                       "{0} {1}",
                       describeGgufType(*value), value->integer);
    alignment = uint64_t(value->integer);
  }
  // A tensor record is at least a name length, a dim count, one extent, a
  // type and an offset (32 bytes).
  if (Error err = cursor.checkCount(*tensorCount, 32, "the tensor count"))
    return std::move(err);
  std::vector<uint64_t> offsets;
  for (uint64_t i = 0; i < *tensorCount; ++i) {
    uint64_t offset = 0;
    Expected<GgufTensor> tensor = readTensorInfo(cursor, path, offset);
    if (!tensor)
      return tensor.takeError();
    if (!file->index.try_emplace(tensor->name, file->tensors.size()).second)
      return makeError(path, "tensor '{0}' appears twice", tensor->name);
    file->tensors.push_back(std::move(*tensor));
    offsets.push_back(offset);
  }
  uint64_t dataStart = llvm::alignTo(cursor.getOffset(), alignment);
  if (!file->tensors.empty() && dataStart > fileSize)
    return makeError(path,
                     "truncated: the tensor data would start at offset {0}, "
                     "past the end of the file ({1} bytes)",
                     dataStart, fileSize);
  uint64_t dataSize = fileSize - std::min(dataStart, fileSize);
  for (auto [tensor, offset] : llvm::zip_equal(file->tensors, offsets)) {
    if (offset % alignment != 0)
      return makeError(path,
                       "tensor '{0}' starts at data offset {1}, not a "
                       "multiple of the alignment {2}",
                       tensor.name, offset, alignment);
    if (offset > dataSize || tensor.numBytes > dataSize - offset)
      return makeError(path,
                       "tensor '{0}' ({1} {2}, {3} bytes at data offset {4}) "
                       "ends past the end of the file (the data area has {5} "
                       "bytes)",
                       tensor.name, tensor.type->name,
                       formatShape(tensor.shape), tensor.numBytes, offset,
                       dataSize);
    tensor.data = buffer->getBufferStart() + dataStart + offset;
  }
  // No two tensors share a byte.
  std::vector<size_t> order(file->tensors.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::sort(order, [&](size_t a, size_t b) { return offsets[a] < offsets[b]; });
  for (size_t i = 1; i < order.size(); ++i) {
    const GgufTensor &before = file->tensors[order[i - 1]];
    const GgufTensor &after = file->tensors[order[i]];
    if (offsets[order[i - 1]] + before.numBytes > offsets[order[i]])
      return makeError(path, "tensors '{0}' and '{1}' overlap", before.name,
                       after.name);
  }
  file->buffer = std::move(buffer);
  return file;
}

const GgufValue *GgufFile::getValue(llvm::StringRef key) const {
  auto it = values.find(key);
  return it == values.end() ? nullptr : &it->second;
}

const GgufTensor *GgufFile::lookup(llvm::StringRef name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &tensors[it->second];
}

Expected<std::optional<uint64_t>>
GgufFile::getUnsigned(llvm::StringRef key) const {
  const GgufValue *value = getValue(key);
  if (!value)
    return std::nullopt;
  if (!GgufValue::isIntegerType(value->type) || value->type == GgufValue::Bool)
    return makeError(path, "metadata '{0}' is {1}, not an integer", key,
                     describeGgufType(*value));
  if (value->integer < 0)
    return makeError(path, "metadata '{0}' is {1}, not a count", key,
                     value->integer);
  return value->unsignedInteger;
}

Expected<std::optional<double>> GgufFile::getFloat(llvm::StringRef key) const {
  const GgufValue *value = getValue(key);
  if (!value)
    return std::nullopt;
  if (!GgufValue::isFloatType(value->type))
    return makeError(path, "metadata '{0}' is {1}, not f32 or f64", key,
                     describeGgufType(*value));
  return value->real;
}

Expected<std::optional<bool>> GgufFile::getBool(llvm::StringRef key) const {
  const GgufValue *value = getValue(key);
  if (!value)
    return std::nullopt;
  if (value->type != GgufValue::Bool)
    return makeError(path, "metadata '{0}' is {1}, not bool", key,
                     describeGgufType(*value));
  return value->integer != 0;
}

Expected<std::optional<llvm::StringRef>>
GgufFile::getString(llvm::StringRef key) const {
  const GgufValue *value = getValue(key);
  if (!value)
    return std::nullopt;
  if (value->type != GgufValue::String)
    return makeError(path, "metadata '{0}' is {1}, not a string", key,
                     describeGgufType(*value));
  return value->string;
}

void GgufFile::releasePages(const char *data, uint64_t size) const {
#if LLVM_ON_UNIX
  // Only the file's own pages, only where they are mapped.
  if (buffer->getBufferKind() != llvm::MemoryBuffer::MemoryBuffer_MMap ||
      data < buffer->getBufferStart() || data > buffer->getBufferEnd() ||
      size > uint64_t(buffer->getBufferEnd() - data))
    return;
  uint64_t page = llvm::sys::Process::getPageSizeEstimate();
  uintptr_t begin = llvm::alignTo(uintptr_t(data), page);
  uintptr_t end = llvm::alignDown(uintptr_t(data) + size, page);
  if (begin < end)
    (void)madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
#endif
}

//===- Npy.cpp - NumPy .npy reader and writer -----------------------------===//
#include "tfm/Runtime/Npy.h"
#include "tfm/Runtime/Error.h"
#include "tfm/Runtime/Limits.h"
#include "tfm/Runtime/OutputFile.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::tfm::runtime;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

static constexpr char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicSize = 6;

namespace {
/// The header dict is a Python literal; this reads the subset numpy writes
/// (quoted strings, True/False, tuples of integers) and rejects the rest.
class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : rest(text) {}

  struct Fields {
    std::optional<std::string> descr;
    std::optional<bool> fortranOrder;
    std::optional<llvm::SmallVector<int64_t, 4>> shape;
  };

  /// Returns an error message, or an empty string on success.
  std::string parse(Fields &fields) {
    if (!consume('{'))
      return "header is not a dict";
    while (true) {
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key))
        return "expected a quoted key in the header dict";
      if (!consume(':'))
        return "expected ':' after '" + key + "'";
      if (key == "descr") {
        std::string descr;
        if (!parseString(descr))
          return "'descr' must be a simple type string (structured dtypes are "
                 "not supported)";
        fields.descr = descr;
      } else if (key == "fortran_order") {
        skipSpace();
        if (rest.consume_front("True"))
          fields.fortranOrder = true;
        else if (rest.consume_front("False"))
          fields.fortranOrder = false;
        else
          return "'fortran_order' must be True or False";
      } else if (key == "shape") {
        llvm::SmallVector<int64_t, 4> shape;
        if (!parseTuple(shape))
          return "'shape' must be a tuple of non-negative integers";
        fields.shape = shape;
      } else {
        return "unexpected key '" + key + "' in the header";
      }
      if (consume(','))
        continue;
      if (consume('}'))
        break;
      return "expected ',' or '}' in the header dict";
    }
    skipSpace();
    if (!rest.empty())
      return "trailing characters after the header dict";
    return "";
  }

private:
  void skipSpace() { rest = rest.ltrim(" \t\n\r"); }
  bool consume(char c) {
    skipSpace();
    return rest.consume_front(StringRef(&c, 1));
  }
  bool parseString(std::string &out) {
    skipSpace();
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"'))
      return false;
    char quote = rest.front();
    size_t end = rest.find(quote, 1);
    if (end == StringRef::npos)
      return false;
    out = rest.substr(1, end - 1).str();
    rest = rest.drop_front(end + 1);
    return true;
  }
  bool parseTuple(llvm::SmallVectorImpl<int64_t> &dims) {
    if (!consume('('))
      return false;
    while (true) {
      if (consume(')'))
        return true;
      skipSpace();
      size_t len = rest.find_first_not_of("0123456789");
      if (len == 0 || len == StringRef::npos)
        return false;
      int64_t dim;
      if (rest.substr(0, len).getAsInteger(10, dim) || dim < 0)
        return false;
      dims.push_back(dim);
      rest = rest.drop_front(len);
      if (consume(','))
        continue;
      if (consume(')'))
        return true;
      return false;
    }
  }

  StringRef rest;
};
} // namespace

static std::optional<DType> parseDescr(StringRef descr) {
  // '=' is native order: little-endian on every host we run on. '|' marks
  // byte-sized types where order does not apply.
  return llvm::StringSwitch<std::optional<DType>>(descr)
      .Cases({"<f4", "=f4"}, DType::F32)
      .Cases({"<f2", "=f2"}, DType::F16)
      .Cases({"<f8", "=f8"}, DType::F64)
      .Cases({"<i8", "=i8"}, DType::I64)
      .Cases({"<i4", "=i4"}, DType::I32)
      .Cases({"<i2", "=i2"}, DType::I16)
      .Cases({"|i1", "<i1", "=i1"}, DType::I8)
      .Cases({"|u1", "<u1", "=u1"}, DType::U8)
      .Cases({"|b1", "<b1", "=b1"}, DType::Bool)
      .Default(std::nullopt);
}

static std::optional<StringRef> getDescr(DType dtype) {
  switch (dtype) {
  case DType::F64: return StringRef("<f8");
  case DType::F32: return StringRef("<f4");
  case DType::F16: return StringRef("<f2");
  case DType::I64: return StringRef("<i8");
  case DType::I32: return StringRef("<i4");
  case DType::I16: return StringRef("<i2");
  case DType::I8: return StringRef("|i1");
  case DType::U8: return StringRef("|u1");
  case DType::Bool: return StringRef("|b1");
  case DType::BF16: return std::nullopt;
  }
  return std::nullopt;
}

Expected<NpyArray> mlir::tfm::runtime::readNpy(StringRef path) {
  // Only a regular file of bounded size is read (not /dev/zero, a FIFO).
  if (Error err = checkInputFile(path, kMaxDataFileBytes))
    return std::move(err);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(path, "cannot open: {0}", buffer.getError().message());
  return parseNpy(std::move(*buffer), path);
}

Expected<NpyArray>
mlir::tfm::runtime::parseNpy(std::unique_ptr<llvm::MemoryBuffer> buffer,
                             StringRef path) {
  StringRef bytes = buffer->getBuffer();
  if (bytes.size() < kMagicSize + 2 ||
      !bytes.starts_with(StringRef(kMagic, kMagicSize)))
    return makeError(path, "not a .npy file (bad magic)");
  uint8_t major = uint8_t(bytes[6]);
  uint8_t minor = uint8_t(bytes[7]);
  size_t lengthSize;
  if (major == 1)
    lengthSize = 2;
  else if (major == 2 || major == 3)
    lengthSize = 4;
  else
    return makeError(path, "unsupported .npy format version {0}.{1}", major,
                     minor);
  size_t prefix = kMagicSize + 2 + lengthSize;
  if (bytes.size() < prefix)
    return makeError(path, "truncated .npy header");
  const auto *lengthBytes =
      reinterpret_cast<const uint8_t *>(bytes.data() + kMagicSize + 2);
  uint64_t headerSize = lengthSize == 2
                            ? llvm::support::endian::read16le(lengthBytes)
                            : llvm::support::endian::read32le(lengthBytes);
  if (headerSize > bytes.size() - prefix)
    return makeError(path,
                     "header length {0} exceeds the {1} bytes that follow it",
                     headerSize, bytes.size() - prefix);

  HeaderParser::Fields fields;
  std::string message =
      HeaderParser(bytes.substr(prefix, headerSize)).parse(fields);
  if (!message.empty())
    return makeError(path, "malformed .npy header: {0}", message);
  if (!fields.descr || !fields.fortranOrder || !fields.shape)
    return makeError(path, "malformed .npy header: it needs 'descr', "
                           "'fortran_order' and 'shape'");
  if (*fields.fortranOrder)
    return makeError(path, "Fortran-order arrays are not supported (save a C "
                           "order array, e.g. np.ascontiguousarray)");
  std::optional<DType> dtype = parseDescr(*fields.descr);
  if (!dtype)
    return makeError(path,
                     "unsupported dtype '{0}' (expected little-endian f2, f4, "
                     "f8, i1, i2, i4, i8, u1 or b1)",
                     *fields.descr);

  NpyArray array;
  array.dtype = *dtype;
  array.shape = *fields.shape;
  std::optional<uint64_t> expected =
      getNumBytes(array.shape, getDTypeSize(array.dtype));
  if (!expected)
    return makeError(path, "shape {0} is too large", formatShape(array.shape));
  uint64_t actual = bytes.size() - prefix - headerSize;
  if (actual != *expected)
    return makeError(path,
                     "data holds {0} bytes but {1} {2} needs {3} (truncated or "
                     "corrupt file)",
                     actual, getDTypeName(array.dtype),
                     formatShape(array.shape), *expected);
  array.data = bytes.data() + prefix + headerSize;
  array.numBytes = actual;
  array.buffer = std::move(buffer);
  return array;
}

Error mlir::tfm::runtime::writeNpy(StringRef path, DType dtype,
                                   llvm::ArrayRef<int64_t> shape,
                                   const void *data) {
  std::optional<StringRef> descr = getDescr(dtype);
  if (!descr)
    return makeError(path, "numpy has no {0} type", getDTypeName(dtype));
  std::optional<uint64_t> numBytes = getNumBytes(shape, getDTypeSize(dtype));
  if (!numBytes)
    return makeError(path, "shape {0} is too large", formatShape(shape));

  std::string header;
  llvm::raw_string_ostream os(header);
  os << "{'descr': '" << *descr << "', 'fortran_order': False, 'shape': (";
  for (int64_t dim : shape)
    os << dim << (shape.size() == 1 ? "," : ", ");
  if (shape.size() > 1)
    header.resize(header.size() - 2);
  os << "), }";
  // Pad with spaces so that the data starts 64-byte aligned, newline last.
  size_t total = kMagicSize + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 0xffff)
    return makeError(path, "header too long for format version 1.0");

  uint16_t headerSize = uint16_t(header.size());
  return writeOutputFile(path, [&](llvm::raw_ostream &out) {
    out.write(kMagic, kMagicSize);
    out << char(1) << char(0);
    out << char(headerSize & 0xff) << char(headerSize >> 8);
    out << header;
    out.write(static_cast<const char *>(data), *numBytes);
  });
}

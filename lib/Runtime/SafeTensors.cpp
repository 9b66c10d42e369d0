//===- SafeTensors.cpp - memory-mapped .safetensors reader ----------------===//
#include "tfm/Runtime/SafeTensors.h"
#include "tfm/Runtime/Error.h"
#include "tfm/Runtime/Json.h"
#include "tfm/Runtime/Limits.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Process.h"

#include <algorithm>

#if LLVM_ON_UNIX
#include <sys/mman.h>
#endif

using namespace mlir::tfm::runtime;
using llvm::Error;
using llvm::Expected;

/// The reference implementation refuses headers above 100 MB; so do we, which
/// also keeps a corrupt length from asking for a huge JSON parse.
static constexpr uint64_t kMaxHeaderSize = 100'000'000;


/// Reads a non-negative integer JSON value exactly (no doubles).
static std::optional<int64_t> getNonNegativeInt(const llvm::json::Value &v) {
  std::optional<int64_t> i = mlir::tfm::runtime::getJsonInteger(v);
  if (!i || *i < 0)
    return std::nullopt;
  return i;
}

/// Parses one tensor entry of the header (not yet placed in the data area).
static Expected<TensorView> parseEntry(llvm::StringRef path,
                                       llvm::StringRef name,
                                       const llvm::json::Value &value) {
  const llvm::json::Object *entry = value.getAsObject();
  if (!entry)
    return makeError(path, "tensor '{0}': header entry is not a JSON object",
                     name);
  TensorView view;
  view.name = name.str();

  std::optional<llvm::StringRef> dtypeName = entry->getString("dtype");
  if (!dtypeName)
    return makeError(path, "tensor '{0}': missing or non-string \"dtype\"",
                     name);
  std::optional<DType> dtype = parseSafeTensorsDType(*dtypeName);
  if (!dtype)
    return makeError(path, "tensor '{0}': unknown dtype '{1}'", name,
                     *dtypeName);
  view.dtype = *dtype;

  const llvm::json::Array *shape = entry->getArray("shape");
  if (!shape)
    return makeError(path, "tensor '{0}': missing or non-array \"shape\"",
                     name);
  for (const llvm::json::Value &dim : *shape) {
    std::optional<int64_t> d = getNonNegativeInt(dim);
    if (!d)
      return makeError(path,
                       "tensor '{0}': shape entries must be non-negative "
                       "integers",
                       name);
    view.shape.push_back(*d);
  }

  const llvm::json::Array *offsets = entry->getArray("data_offsets");
  std::optional<int64_t> begin, end;
  if (offsets && offsets->size() == 2) {
    begin = getNonNegativeInt((*offsets)[0]);
    end = getNonNegativeInt((*offsets)[1]);
  }
  if (!begin || !end || *begin > *end)
    return makeError(path,
                     "tensor '{0}': \"data_offsets\" must be [begin, end] "
                     "with 0 <= begin <= end",
                     name);

  std::optional<uint64_t> expected =
      getNumBytes(view.shape, getDTypeSize(view.dtype));
  if (!expected)
    return makeError(path, "tensor '{0}': shape {1} is too large", name,
                     formatShape(view.shape));
  uint64_t actual = uint64_t(*end - *begin);
  if (actual != *expected)
    return makeError(path,
                     "tensor '{0}': data_offsets [{1}, {2}] span {3} bytes but "
                     "{4} {5} needs {6}",
                     name, *begin, *end, actual,
                     getSafeTensorsDTypeName(view.dtype),
                     formatShape(view.shape), *expected);
  // Offsets are placed in the data area by the caller; stash begin for now.
  view.data = reinterpret_cast<const char *>(uintptr_t(*begin));
  view.numBytes = actual;
  return view;
}

Expected<std::unique_ptr<SafeTensorsFile>>
SafeTensorsFile::open(llvm::StringRef path) {
  // Only a regular file of bounded size is mapped (not /dev/zero, a FIFO).
  Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer = mapWeightFile(path);
  if (!buffer)
    return buffer.takeError();
  return parse(std::move(*buffer), path);
}

Expected<std::unique_ptr<SafeTensorsFile>>
SafeTensorsFile::parse(std::unique_ptr<llvm::MemoryBuffer> buffer,
                       llvm::StringRef path) {
  std::unique_ptr<SafeTensorsFile> file(new SafeTensorsFile());
  file->path = path.str();
  uint64_t fileSize = buffer->getBufferSize();
  const char *start = buffer->getBufferStart();
  if (fileSize < 8)
    return makeError(path,
                     "not a safetensors file: {0} bytes, shorter than the "
                     "8-byte header length",
                     fileSize);
  uint64_t headerSize =
      llvm::support::endian::read64le(reinterpret_cast<const uint8_t *>(start));
  // A sharded checkpoint's index is JSON; read as a header length, its first
  // bytes make a huge number.
  if (headerSize > fileSize - 8)
    return makeError(path,
                     "header length {0} exceeds the {1} bytes that follow it "
                     "(truncated or not a safetensors file{2})",
                     headerSize, fileSize - 8,
                     start[0] == '{' ? "; it reads as JSON: a sharded "
                                       "checkpoint's index must be named "
                                       "*.json"
                                     : "");
  if (headerSize > kMaxHeaderSize)
    return makeError(path, "header length {0} exceeds the {1}-byte limit",
                     headerSize, kMaxHeaderSize);

  llvm::StringRef headerText(start + 8, headerSize);
  // Bounded before the (recursive, allocating) JSON parse: the depth, and
  // the objects, one per tensor entry.
  NestingStats nesting =
      scanNesting(headerText, TextSyntax::Json, kMaxJsonDepth);
  if (nesting.tooDeepAt)
    return makeError(path,
                     "JSON header nested deeper than the limit of {0} levels "
                     "(at byte {1} of the header)",
                     kMaxJsonDepth, *nesting.tooDeepAt);
  if (nesting.objects > kMaxSafeTensorsTensors + 2)
    return makeError(path,
                     "JSON header holds {0} objects, more than the limit of "
                     "{1} tensors per file",
                     nesting.objects, kMaxSafeTensorsTensors);
  Expected<llvm::json::Value> header = parseJson(headerText);
  if (!header)
    return makeError(path, "malformed JSON header: {0}",
                     llvm::toString(header.takeError()));
  // Two entries of one name would silently bind one of them.
  if (Error err = checkJsonKeys(headerText, *header, "JSON header"))
    return makeError(path, "{0}", llvm::toString(std::move(err)));
  const llvm::json::Object *root = header->getAsObject();
  if (!root)
    return makeError(path, "JSON header is not an object");

  const char *dataStart = start + 8 + headerSize;
  uint64_t dataSize = fileSize - 8 - headerSize;
  for (const auto &[key, value] : *root) {
    llvm::StringRef name = key;
    if (name == "__metadata__") {
      const llvm::json::Object *meta = value.getAsObject();
      if (!meta)
        return makeError(path, "\"__metadata__\" is not a JSON object");
      // Checked as the format requires; tfm reads nothing from it.
      for (const auto &[metaKey, metaValue] : *meta)
        if (!metaValue.getAsString())
          return makeError(path, "\"__metadata__\" entry '{0}' is not a string",
                           llvm::StringRef(metaKey));
      continue;
    }
    Expected<TensorView> view = parseEntry(path, name, value);
    if (!view)
      return view.takeError();
    file->tensors.push_back(std::move(*view));
  }

  // json::Object is unordered: sort by offset (then name, for determinism),
  // then check bounds and overlaps in one sweep.
  auto beginOf = [](const TensorView &t) {
    return uint64_t(reinterpret_cast<uintptr_t>(t.data));
  };
  std::sort(file->tensors.begin(), file->tensors.end(),
            [&](const TensorView &a, const TensorView &b) {
              return std::make_pair(beginOf(a), llvm::StringRef(a.name)) <
                     std::make_pair(beginOf(b), llvm::StringRef(b.name));
            });
  const TensorView *previous = nullptr;
  for (TensorView &t : file->tensors) {
    uint64_t begin = beginOf(t), end = begin + t.numBytes;
    if (end > dataSize)
      return makeError(path,
                       "tensor '{0}': data_offsets [{1}, {2}] extend past the "
                       "{3}-byte data area (truncated file?)",
                       t.name, begin, end, dataSize);
    if (t.numBytes != 0) {
      if (previous && begin < beginOf(*previous) + previous->numBytes)
        return makeError(path,
                         "tensor '{0}': data_offsets [{1}, {2}] overlap tensor "
                         "'{3}' [{4}, {5}]",
                         t.name, begin, end, previous->name,
                         beginOf(*previous),
                         beginOf(*previous) + previous->numBytes);
      previous = &t;
    }
  }
  for (TensorView &t : file->tensors)
    t.data = dataStart + beginOf(t);
  for (auto [i, t] : llvm::enumerate(file->tensors))
    file->index[t.name] = i;
  file->buffer = std::move(buffer);
  return file;
}

const TensorView *SafeTensorsFile::lookup(llvm::StringRef name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &tensors[it->second];
}

void SafeTensorsFile::releasePages(const TensorView &view) const {
#if LLVM_ON_UNIX
  // A small file is read into the heap instead: dropping those pages would
  // read back zeros.
  if (buffer->getBufferKind() != llvm::MemoryBuffer::MemoryBuffer_MMap)
    return;
  // Whole pages only: the partial ones at either end hold other tensors.
  uint64_t page = llvm::sys::Process::getPageSizeEstimate();
  uintptr_t begin = llvm::alignTo(uintptr_t(view.data), page);
  uintptr_t end = llvm::alignDown(uintptr_t(view.data) + view.numBytes, page);
  if (begin < end)
    (void)madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
#endif
}

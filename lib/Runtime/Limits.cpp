//===- Limits.cpp - bounds on what hostile input can make tfm do ----------===//
#include "tfm/Runtime/Limits.h"
#include "tfm/Runtime/Error.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"

#include <unistd.h>
#include <vector>

using namespace mlir::tfm::runtime;
using llvm::Error;
using llvm::StringRef;


Error mlir::tfm::runtime::checkInputFile(StringRef path, uint64_t maxBytes) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return makeError(path + ": cannot open: " + ec.message());
  llvm::sys::fs::file_type type = status.type();
  if (type == llvm::sys::fs::file_type::directory_file)
    return makeError(path + ": is a directory, not a file");
  // /dev/zero, /dev/urandom, a FIFO or a socket never ends or never seeks:
  // reading one would grow memory without bound or block forever.
  if (type != llvm::sys::fs::file_type::regular_file)
    return makeError(path + ": not a regular file (a device, FIFO or socket); "
                            "tfm reads only regular files");
  if (status.getSize() > maxBytes)
    return makeError(llvm::formatv("{0}: {1} bytes exceed the {2}-byte limit "
                                   "on this kind of input",
                                   path, status.getSize(), maxBytes)
                         .str());
  return Error::success();
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mlir::tfm::runtime::readInputFile(StringRef path, uint64_t maxBytes,
                                  bool isText) {
  if (Error err = checkInputFile(path, maxBytes))
    return std::move(err);
  auto buffer = llvm::MemoryBuffer::getFile(path, isText,
                                            /*RequiresNullTerminator=*/isText);
  if (!buffer)
    return makeError(path + ": cannot open: " + buffer.getError().message());
  return std::move(*buffer);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mlir::tfm::runtime::mapWeightFile(StringRef path) {
  if (Error err = checkInputFile(path, kMaxDataFileBytes))
    return std::move(err);
  llvm::ErrorOr<std::unique_ptr<llvm::WritableMemoryBuffer>> buffer =
      llvm::WritableMemoryBuffer::getFile(path);
  if (!buffer)
    return makeError(path + ": cannot open: " + buffer.getError().message());
  return std::unique_ptr<llvm::MemoryBuffer>(std::move(*buffer));
}

NestingStats mlir::tfm::runtime::scanNesting(StringRef text, TextSyntax syntax,
                                             unsigned depthLimit) {
  NestingStats stats;
  // The open brackets, innermost last; never longer than depthLimit + 1.
  std::vector<char> open;
  bool mlir = syntax == TextSyntax::Mlir;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '\0':
      if (!stats.nulOffset)
        stats.nulOffset = i;
      break;
    case '"':
      // A string literal: skip to its closing quote (escapes included).
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (mlir && i + 1 < e && text[i + 1] == '/')
        while (i < e && text[i] != '\n')
          ++i;
      break;
    case '<':
      // `tensor<`, `dense<`, `#tfm.foo<` (spaces may precede it): a dialect
      // bracket, which the parser enters recursively.
      if (!mlir)
        break;
      [[fallthrough]];
    case '(':
    case '[':
    case '{':
      if (c == '(' && !mlir)
        break;
      if (c == '{')
        ++stats.objects;
      open.push_back(c);
      if (open.size() > stats.maxDepth)
        stats.maxDepth = open.size();
      if (open.size() > depthLimit) {
        stats.tooDeepAt = i;
        return stats;
      }
      break;
    case '>':
      // The `>` of `->` closes nothing: counting it would let
      // `tuple<() -> tuple<() -> ...` nest without bound.
      if (mlir && i > 0 && text[i - 1] == '-')
        break;
      if (!open.empty() && open.back() == '<')
        open.pop_back();
      break;
    case ')':
    case ']':
    case '}': {
      char opening = c == ')' ? '(' : c == ']' ? '[' : '{';
      // A `<` left open (malformed text) closes with its enclosing bracket.
      while (!open.empty() && open.back() == '<')
        open.pop_back();
      if (!open.empty() && open.back() == opening)
        open.pop_back();
      break;
    }
    default:
      break;
    }
  }
  return stats;
}

Error mlir::tfm::runtime::checkTextNesting(StringRef text, TextSyntax syntax,
                                           unsigned maxDepth, StringRef what) {
  NestingStats stats = scanNesting(text, syntax, maxDepth);
  if (stats.tooDeepAt)
    return makeError(llvm::formatv("{0}: nesting deeper than the limit of {1} "
                                   "levels (at byte {2})",
                                   what, maxDepth, *stats.tooDeepAt)
                         .str());
  if (stats.nulOffset)
    return makeError(llvm::formatv("{0}: NUL byte at offset {1}; a text file "
                                   "cannot contain one",
                                   what, *stats.nulOffset)
                         .str());
  return Error::success();
}

std::optional<uint64_t> mlir::tfm::runtime::checkedMul(uint64_t a,
                                                       uint64_t b) {
  bool overflow = false;
  uint64_t r = llvm::SaturatingMultiply(a, b, &overflow);
  if (overflow)
    return std::nullopt;
  return r;
}

std::optional<uint64_t> mlir::tfm::runtime::checkedAdd(uint64_t a,
                                                       uint64_t b) {
  bool overflow = false;
  uint64_t r = llvm::SaturatingAdd(a, b, &overflow);
  if (overflow)
    return std::nullopt;
  return r;
}

uint64_t mlir::tfm::runtime::getPhysicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return 0;
  return checkedMul(uint64_t(pages), uint64_t(pageSize)).value_or(0);
}

std::optional<uint64_t> mlir::tfm::runtime::parseByteCount(StringRef text) {
  uint64_t scale = 1;
  StringRef digits = text;
  if (!text.empty()) {
    switch (llvm::toLower(text.back())) {
    case 'k': scale = uint64_t(1) << 10; break;
    case 'm': scale = uint64_t(1) << 20; break;
    case 'g': scale = uint64_t(1) << 30; break;
    case 't': scale = uint64_t(1) << 40; break;
    default: break;
    }
    if (scale != 1)
      digits = text.drop_back();
  }
  uint64_t value;
  if (digits.empty() || digits.getAsInteger(10, value))
    return std::nullopt;
  return checkedMul(value, scale);
}

std::string mlir::tfm::runtime::formatBytes(uint64_t bytes) {
  const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = double(bytes);
  unsigned unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0)
    return llvm::formatv("{0} bytes", bytes).str();
  return llvm::formatv("{0:F2} {1}", value, units[unit]).str();
}

bool mlir::tfm::runtime::isSameFile(StringRef a, StringRef b) {
  llvm::sys::fs::UniqueID idA, idB;
  if (llvm::sys::fs::getUniqueID(a, idA) || llvm::sys::fs::getUniqueID(b, idB))
    return false;
  return idA == idB;
}

/// Keys of every object in `value`, recursively (the depth is bounded by
/// checkTextNesting before any parse).
static uint64_t countKeys(const llvm::json::Value &value) {
  uint64_t n = 0;
  if (const llvm::json::Object *object = value.getAsObject()) {
    n += object->size();
    for (const auto &entry : *object)
      n += countKeys(entry.second);
  } else if (const llvm::json::Array *array = value.getAsArray()) {
    for (const llvm::json::Value &element : *array)
      n += countKeys(element);
  }
  return n;
}

Error mlir::tfm::runtime::checkJsonKeys(StringRef text,
                                        const llvm::json::Value &parsed,
                                        StringRef what) {
  // llvm::json keeps the last of two equal keys silently: compare the keys
  // written in the text with those parsed. Equal raw spellings are named;
  // keys equal only after unescaping are caught by the count.
  struct Scope {
    bool isObject;
    llvm::StringSet<> keys;
  };
  std::vector<Scope> scopes;
  uint64_t written = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '{' || c == '[') {
      scopes.push_back({c == '{', {}});
    } else if (c == '}' || c == ']') {
      if (!scopes.empty())
        scopes.pop_back();
    } else if (c == '"') {
      size_t begin = ++i;
      for (; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      StringRef raw = text.slice(begin, std::min(i, e));
      size_t next = text.find_first_not_of(" \t\r\n", i + 1);
      bool isKey = next != StringRef::npos && text[next] == ':';
      if (!isKey || scopes.empty() || !scopes.back().isObject)
        continue;
      ++written;
      if (!scopes.back().keys.insert(raw).second)
        return makeError(llvm::formatv("{0}: duplicate key \"{1}\" in one "
                                       "JSON object",
                                       what, raw)
                             .str());
    }
  }
  if (written != countKeys(parsed))
    return makeError(what + ": duplicate keys in one JSON object (equal "
                            "after unescaping)");
  return Error::success();
}

//===- Limits.h - bounds on what hostile input can make tfm do ---*- C++ -*-===//
//
// Every tool reads files a user hands it. These helpers bound what such a
// file can cost before any parser, allocation or compiled code sees it:
//
// - files: only regular files (not /dev/zero, a FIFO, a directory) up to a
//   size limit are read; the check runs on the path before any byte is read;
// - nesting: JSON and MLIR text are scanned (iteratively, constant stack) for
//   their bracket depth and object count, so the recursive upstream parsers
//   (llvm::json, the MLIR parser) never see input deep enough to overflow the
//   stack; a NUL byte (which MLIR's lexer takes for the end of the buffer) is
//   refused in text formats;
// - memory: byte counts are overflow-checked and compared with the machine's
//   memory (or a user limit) before allocating.
//
// Every error names the limit, so a user with a legitimate file knows which
// one to raise (each is a named constant below).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_LIMITS_H
#define TFM_RUNTIME_LIMITS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace llvm::json {
class Value;
} // namespace llvm::json

namespace mlir::tfm::runtime {

/// config.json and .safetensors headers are a few levels deep; 64 is far
/// above any real file and far below what llvm::json's recursion survives.
constexpr unsigned kMaxJsonDepth = 64;
/// MLIR text: modules, regions, attribute and type brackets together. Real
/// models nest a few dozen levels; the upstream parser recurses a few frames
/// per level and overflows an 8 MiB stack at some thousands (less under
/// AddressSanitizer).
constexpr unsigned kMaxMlirDepth = 256;
/// Tensors in one .safetensors header: real checkpoints hold a few thousand
/// per file; a million empty entries cost gigabytes of JSON values.
constexpr uint64_t kMaxSafeTensorsTensors = 100'000;
/// Text inputs (config.json, .mlir): 1 GiB.
constexpr uint64_t kMaxTextFileBytes = uint64_t(1) << 30;
/// Binary inputs (.safetensors, .npy) are memory-mapped: 1 TiB.
constexpr uint64_t kMaxDataFileBytes = uint64_t(1) << 40;

/// Checks that `path` names a regular file of at most `maxBytes` bytes,
/// following symlinks; the message names the path and the limit.
llvm::Error checkInputFile(llvm::StringRef path, uint64_t maxBytes);

/// checkInputFile, then reads (maps) the file.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path, uint64_t maxBytes, bool isText);

/// A weight file (at most kMaxDataFileBytes) mapped privately: a writable,
/// copy-on-write mapping for large files, so that code handed a pointer into
/// it that writes touches only its own pages, never the file, and never
/// faults on a read-only mapping.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mapWeightFile(llvm::StringRef path);

enum class TextSyntax { Json, Mlir };

/// The deepest bracket nesting of `text` and the number of `{` it opens,
/// outside string literals (and MLIR `//` comments).
struct NestingStats {
  unsigned maxDepth = 0;
  uint64_t objects = 0;
  /// Offset of the first NUL byte, if any.
  std::optional<uint64_t> nulOffset;
  /// Offset where `maxDepth` was first exceeded while scanning with a limit.
  std::optional<uint64_t> tooDeepAt;
};
NestingStats scanNesting(llvm::StringRef text, TextSyntax syntax,
                         unsigned depthLimit);

/// Refuses text nested deeper than `maxDepth` or holding a NUL byte; `what`
/// names the input in the message.
llvm::Error checkTextNesting(llvm::StringRef text, TextSyntax syntax,
                             unsigned maxDepth, llvm::StringRef what);

/// Refuses a JSON object that gives one key twice (llvm::json keeps the
/// last silently). `parsed` is `text` parsed.
llvm::Error checkJsonKeys(llvm::StringRef text,
                          const llvm::json::Value &parsed,
                          llvm::StringRef what);

/// a * b, or nullopt on uint64 overflow.
std::optional<uint64_t> checkedMul(uint64_t a, uint64_t b);
/// a + b, or nullopt on uint64 overflow.
std::optional<uint64_t> checkedAdd(uint64_t a, uint64_t b);

/// Physical memory of the machine in bytes (0 when unknown).
uint64_t getPhysicalMemory();

/// Parses a byte count with an optional K/M/G/T suffix (powers of 1024).
std::optional<uint64_t> parseByteCount(llvm::StringRef text);

/// "1.50 GiB".
std::string formatBytes(uint64_t bytes);

/// Whether `a` and `b` name the same existing file (device and inode).
bool isSameFile(llvm::StringRef a, llvm::StringRef b);

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_LIMITS_H

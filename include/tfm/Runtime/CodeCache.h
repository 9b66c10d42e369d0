//===- CodeCache.h - compiled object code kept between runs -----*- C++ -*-===//
//
// A directory of object files, one per key: the SHA-256 of everything that
// decides the code (the IR before code generation, the pipeline options, the
// target CPU and its features, tfm's build and LLVM's version; computeKey
// takes them as parts). A front end that finds its key skips lowering and
// LLVM entirely and links the object.
//
// An entry is `<dir>/<hex key>.tfmo`:
//
//   "TFMOBJ02"  8 bytes
//   key         32 bytes, the key again (a renamed or copied file is stale)
//   size        8 bytes little-endian, of the object
//   checksum    32 bytes, SHA-256 of the 48 bytes above and the object
//   object      `size` bytes
//
// Entries are written to a unique temporary file in the directory and renamed
// into place, so a reader (another process included) sees a whole entry or
// none. A truncated, altered or foreign entry is reported as an error by
// `load`, for the caller to warn and rebuild it.
//
// The entries are code this process runs, so the cache trusts only what
// its user alone could have written (docs/security.md): the directory is
// created private (0700) and used only if it is owned by the user and not
// writable by group or others; an entry is read only if it is a regular
// file (no link followed, no FIFO or device opened) owned by the user and
// within the size limit. The directory holds at most `limit` bytes of
// entries (TFM_CACHE_LIMIT, default 2 GiB): each store removes the entries
// used longest ago (load renews an entry's time) until it fits.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_CODECACHE_H
#define TFM_RUNTIME_CODECACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace mlir::tfm::runtime {

using CodeCacheKey = std::array<uint8_t, 32>;

/// The SHA-256 of `parts`, each prefixed with its length so that no two
/// different lists of parts give the same bytes.
CodeCacheKey computeCodeCacheKey(llvm::ArrayRef<llvm::StringRef> parts);

/// A string that changes whenever the code containing this function (the
/// executable or shared library tfm is linked into) is rebuilt: its path,
/// size and modification time, with tfm's version.
std::string getTfmBuildStamp();

class CodeCache {
public:
  /// $XDG_CACHE_HOME/tfm, else $HOME/.cache/tfm; empty when neither is set.
  static std::string getDefaultDirectory();

  /// The environment variable that sets the limit (bytes), and the limit
  /// without it.
  static constexpr const char *kLimitEnvironmentVariable = "TFM_CACHE_LIMIT";
  static constexpr uint64_t kDefaultLimitBytes = uint64_t(2) << 30;
  static uint64_t getDefaultLimit();

  explicit CodeCache(std::string directory,
                     uint64_t limit = getDefaultLimit())
      : directory(std::move(directory)), limit(limit) {}

  /// The file of `key`'s entry.
  std::string getPath(const CodeCacheKey &key) const;

  /// The object of `key`; null when there is no entry; an error saying what
  /// is wrong with an entry that exists but cannot be used.
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
  load(const CodeCacheKey &key) const;

  /// Writes `object` as `key`'s entry (creating the directory), atomically.
  llvm::Error store(const CodeCacheKey &key, llvm::StringRef object) const;

  const std::string &getDirectory() const { return directory; }

private:
  /// Whether the directory may be trusted (see above).
  llvm::Error checkDirectory() const;
  /// Removes the least recently used entries (never `keep`) until the
  /// directory's entries fit the limit.
  void evict(llvm::StringRef keep) const;

  std::string directory;
  uint64_t limit;
};

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_CODECACHE_H

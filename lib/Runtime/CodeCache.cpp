//===- CodeCache.cpp - compiled object code kept between runs -------------===//
#include "tfm/Runtime/CodeCache.h"
#include "tfm/Runtime/Limits.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir::tfm;
using namespace mlir::tfm::runtime;

/// Bumped when the entry format or what the key covers changes.
static constexpr llvm::StringLiteral kMagic = "TFMOBJ02";
static constexpr llvm::StringLiteral kTfmVersion = "tfm 0.1";
static constexpr size_t kHeaderSize = 8 + 32 + 8 + 32;

/// The checksum of an entry: SHA-256 of its whole header before the
/// checksum (magic, key, size) and its object, so that an entry is valid
/// only under the key it was written for.
static std::array<uint8_t, 32> getEntryChecksum(llvm::StringRef headerStart,
                                                llvm::StringRef object) {
  llvm::SHA256 hash;
  hash.update(headerStart);
  hash.update(object);
  return hash.final();
}

uint64_t CodeCache::getDefaultLimit() {
  std::optional<std::string> value =
      llvm::sys::Process::GetEnv(kLimitEnvironmentVariable);
  if (value)
    if (std::optional<uint64_t> bytes = parseByteCount(*value);
        bytes && *bytes > 0)
      return *bytes;
  return kDefaultLimitBytes;
}

llvm::Error CodeCache::checkDirectory() const {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(directory, status))
    return llvm::createStringError(ec, directory + ": " + ec.message());
  if (status.type() != llvm::sys::fs::file_type::directory_file)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   directory + ": not a directory");
  if (status.getUser() != ::geteuid())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0}: owned by user {1}, not by this user ({2}): its "
                      "entries are code this process would run, so it is not "
                      "used",
                      directory, status.getUser(), ::geteuid()));
  if (status.permissions() & (llvm::sys::fs::group_write |
                              llvm::sys::fs::others_write))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0}: writable by other users (mode {1}): its "
                      "entries are code this process would run, so it is not "
                      "used (chmod go-w it)",
                      directory,
                      llvm::format("%o", unsigned(status.permissions()) &
                                             0777)));
  return llvm::Error::success();
}

CodeCacheKey runtime::computeCodeCacheKey(
    llvm::ArrayRef<llvm::StringRef> parts) {
  llvm::SHA256 hash;
  for (llvm::StringRef part : parts) {
    uint8_t length[8];
    llvm::support::endian::write64le(length, part.size());
    hash.update(llvm::ArrayRef<uint8_t>(length));
    hash.update(part);
  }
  return hash.final();
}

std::string runtime::getTfmBuildStamp() {
  std::string stamp = kTfmVersion.str();
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&getTfmBuildStamp), &info) ||
      !info.dli_fname)
    return stamp;
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(info.dli_fname, status))
    return stamp;
  return llvm::formatv("{0}; {1}; {2} bytes; modified {3}", stamp,
                       info.dli_fname, status.getSize(),
                       status.getLastModificationTime().time_since_epoch()
                           .count())
      .str();
}

std::string CodeCache::getDefaultDirectory() {
  llvm::SmallString<256> path;
  if (std::optional<std::string> xdg =
          llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
      xdg && !xdg->empty()) {
    path = *xdg;
  } else if (std::optional<std::string> home =
                 llvm::sys::Process::GetEnv("HOME");
             home && !home->empty()) {
    path = *home;
    llvm::sys::path::append(path, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(path, "tfm");
  return std::string(path);
}

std::string CodeCache::getPath(const CodeCacheKey &key) const {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, llvm::toHex(key, /*LowerCase=*/true) +
                                    ".tfmo");
  return std::string(path);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
CodeCache::load(const CodeCacheKey &key) const {
  if (!llvm::sys::fs::exists(directory))
    return nullptr;
  if (llvm::Error err = checkDirectory())
    return std::move(err);
  std::string path = getPath(key);
  auto corrupt = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " + why);
  };
  // Opened without following a link or waiting on a FIFO, then checked on
  // the descriptor itself (no race with a replaced file): a regular file of
  // this user, of bounded size.
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return nullptr;
    if (errno == ELOOP)
      return corrupt("a symbolic link, never followed");
    std::error_code ec(errno, std::generic_category());
    return llvm::createStringError(ec, path + ": " + ec.message());
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return corrupt("not a regular file (a FIFO, device or directory is never "
                   "read)");
  }
  if (st.st_uid != ::geteuid()) {
    ::close(fd);
    return corrupt(llvm::formatv("owned by user {0}, not by this user", 
                                 st.st_uid));
  }
  if (uint64_t(st.st_size) > limit) {
    ::close(fd);
    return corrupt(llvm::formatv("{0} bytes, more than the cache's limit of "
                                 "{1}",
                                 uint64_t(st.st_size), limit));
  }
  auto buffer = llvm::MemoryBuffer::getOpenFile(
      llvm::sys::fs::convertFDToNativeFile(fd), path, st.st_size,
      /*RequiresNullTerminator=*/false);
  // Recently used: eviction removes the entries used longest ago first.
  (void)llvm::sys::fs::setLastAccessAndModificationTime(
      fd, std::chrono::system_clock::now());
  ::close(fd);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   path + ": " + buffer.getError().message());
  llvm::StringRef data = (*buffer)->getBuffer();
  if (data.size() < kHeaderSize)
    return corrupt(llvm::formatv("{0} bytes, shorter than the header",
                                 data.size()));
  if (!data.starts_with(kMagic))
    return corrupt("not a tfm object cache entry");
  if (std::memcmp(data.data() + 8, key.data(), key.size()))
    return corrupt("the entry holds another key");
  uint64_t size = llvm::support::endian::read64le(data.data() + 40);
  if (size != data.size() - kHeaderSize)
    return corrupt(llvm::formatv("the header says {0} bytes of code, the "
                                 "file holds {1}",
                                 size, data.size() - kHeaderSize));
  llvm::StringRef object = data.drop_front(kHeaderSize);
  std::array<uint8_t, 32> checksum =
      getEntryChecksum(data.take_front(48), object);
  if (std::memcmp(data.data() + 48, checksum.data(), checksum.size()))
    return corrupt("the checksum of the header and code does not match");
  return llvm::MemoryBuffer::getMemBufferCopy(object, path);
}

llvm::Error CodeCache::store(const CodeCacheKey &key,
                             llvm::StringRef object) const {
  // Private to this user when created; an existing one must be already.
  if (std::error_code ec = llvm::sys::fs::create_directories(
          directory, /*IgnoreExisting=*/true, llvm::sys::fs::owner_all))
    return llvm::createStringError(ec, directory + ": " + ec.message());
  if (llvm::Error err = checkDirectory())
    return err;
  if (object.size() + kHeaderSize > limit)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0} bytes of code, more than the cache's limit of {1}",
                      object.size() + kHeaderSize, limit));
  std::string path = getPath(key);
  llvm::SmallString<256> model(path);
  model += ".tmp-%%%%%%%%";
  int fd;
  llvm::SmallString<256> temporary;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(model, fd, temporary))
    return llvm::createStringError(ec, path + ": " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    uint8_t size[8];
    llvm::support::endian::write64le(size, object.size());
    std::string header =
        (kMagic +
         llvm::StringRef(reinterpret_cast<const char *>(key.data()),
                         key.size()) +
         llvm::StringRef(reinterpret_cast<const char *>(size), 8))
            .str();
    std::array<uint8_t, 32> checksum = getEntryChecksum(header, object);
    os << header
       << llvm::StringRef(reinterpret_cast<const char *>(checksum.data()),
                          checksum.size())
       << object;
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(temporary);
      return llvm::createStringError(ec, temporary + ": " + ec.message());
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return llvm::createStringError(ec, path + ": " + ec.message());
  }
  evict(path);
  return llvm::Error::success();
}

void CodeCache::evict(llvm::StringRef keep) const {
  struct Entry {
    std::string path;
    uint64_t size;
    llvm::sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(directory, ec), end;
       it != end && !ec; it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) != ".tfmo")
      continue;
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(it->path(), status, /*follow=*/false) ||
        status.type() != llvm::sys::fs::file_type::regular_file)
      continue;
    entries.push_back(
        {it->path(), status.getSize(), status.getLastModificationTime()});
    total += status.getSize();
  }
  if (total <= limit)
    return;
  // Least recently used first (load renews an entry's time).
  llvm::sort(entries, [](const Entry &a, const Entry &b) {
    return a.used < b.used;
  });
  for (const Entry &entry : entries) {
    if (total <= limit)
      break;
    if (entry.path == keep)
      continue;
    if (!llvm::sys::fs::remove(entry.path))
      total -= entry.size;
  }
}

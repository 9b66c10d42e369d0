//===- CodeCache.cpp - compiled object code kept between runs -------------===//
#include "tfm/Runtime/CodeCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <dlfcn.h>

using namespace mlir::tfm;
using namespace mlir::tfm::runtime;

/// Bumped when the entry format or what the key covers changes.
static constexpr llvm::StringLiteral kMagic = "TFMOBJ01";
static constexpr llvm::StringLiteral kTfmVersion = "tfm 0.1";
static constexpr size_t kHeaderSize = 8 + 32 + 8 + 32;

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
  std::string path = getPath(key);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    if (buffer.getError() == std::errc::no_such_file_or_directory)
      return nullptr;
    return llvm::createStringError(buffer.getError(),
                                   path + ": " + buffer.getError().message());
  }
  llvm::StringRef data = (*buffer)->getBuffer();
  auto corrupt = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " + why);
  };
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
  std::array<uint8_t, 32> checksum = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(object.bytes_begin(), object.size()));
  if (std::memcmp(data.data() + 48, checksum.data(), checksum.size()))
    return corrupt("the checksum of the code does not match");
  return llvm::MemoryBuffer::getMemBufferCopy(object, path);
}

llvm::Error CodeCache::store(const CodeCacheKey &key,
                             llvm::StringRef object) const {
  if (std::error_code ec = llvm::sys::fs::create_directories(directory))
    return llvm::createStringError(ec, directory + ": " + ec.message());
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
    std::array<uint8_t, 32> checksum = llvm::SHA256::hash(
        llvm::ArrayRef<uint8_t>(object.bytes_begin(), object.size()));
    os << kMagic
       << llvm::StringRef(reinterpret_cast<const char *>(key.data()),
                          key.size())
       << llvm::StringRef(reinterpret_cast<const char *>(size), 8)
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
  return llvm::Error::success();
}

//===- OutputFile.cpp - outputs that are whole or absent ------------------===//
#include "tfm/Runtime/OutputFile.h"
#include "tfm/Runtime/Error.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::tfm::runtime;
using llvm::Error;
using llvm::StringRef;

/// Flushes and closes `out`; a failure becomes an Error (and is cleared, so
/// the stream's destructor does not abort with "IO failure").
static Error finish(llvm::raw_fd_ostream &out, StringRef path) {
  out.close();
  if (out.has_error()) {
    std::error_code ec = out.error();
    out.clear_error();
    return makeError(path, "cannot write: " + ec.message());
  }
  return Error::success();
}

static StringRef getDirectory(StringRef path) {
  StringRef dir = llvm::sys::path::parent_path(path);
  return dir.empty() ? StringRef(".") : dir;
}

Error mlir::tfm::runtime::writeOutputFile(
    StringRef path, llvm::function_ref<void(llvm::raw_ostream &)> write) {
  llvm::sys::fs::file_status status;
  bool exists = !llvm::sys::fs::status(path, status);
  if (exists && status.type() == llvm::sys::fs::file_type::directory_file)
    return makeError(path, "cannot write: is a directory");
  if (exists && status.type() != llvm::sys::fs::file_type::regular_file) {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
    if (ec)
      return makeError(path, "cannot write: " + ec.message());
    write(out);
    return finish(out, path);
  }

  llvm::SmallString<256> model(getDirectory(path));
  llvm::sys::path::append(model, "." + llvm::sys::path::filename(path) +
                                     ".tmp-%%%%%%");
  int fd;
  llvm::SmallString<256> temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp))
    return makeError(path, "cannot create a temporary file in " +
                               getDirectory(path) + ": " + ec.message());
  llvm::sys::RemoveFileOnSignal(temp);
  auto discard = [&](Error err) {
    llvm::sys::fs::remove(temp);
    llvm::sys::DontRemoveFileOnSignal(temp);
    return err;
  };
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    write(out);
    if (Error err = finish(out, path))
      return discard(std::move(err));
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path))
    return discard(makeError(path, "cannot write: " + ec.message()));
  llvm::sys::DontRemoveFileOnSignal(temp);
  return Error::success();
}

Error mlir::tfm::runtime::checkOutputPath(StringRef path, StringRef flag) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(
        std::make_error_code(std::errc::invalid_argument),
        (flag + " " + path + ": " + why).str());
  };
  if (path.empty())
    return fail("empty path");
  if (llvm::sys::fs::is_directory(path))
    return fail("is a directory");
  StringRef dir = getDirectory(path);
  if (!llvm::sys::fs::is_directory(dir))
    return fail("directory " + dir + " does not exist");
  llvm::sys::fs::file_status status;
  bool exists = !llvm::sys::fs::status(path, status);
  if (exists && status.type() != llvm::sys::fs::file_type::regular_file)
    return llvm::sys::fs::can_write(path) ? Error::success()
                                          : fail("not writable");
  // A regular output is written through a temporary in its directory.
  if (!llvm::sys::fs::can_write(dir))
    return fail("directory " + dir + " is not writable");
  return Error::success();
}

//===- Error.h - the one kind of error tfm reports --------------*- C++ -*-===//
//
// Every failure tfm reports is an llvm::Error whose text is the one line a
// user sees after "error: " (docs/design.md, "The engine and its front
// ends"); this is how every library makes one.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_ERROR_H
#define TFM_RUNTIME_ERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

#include <system_error>

namespace mlir::tfm::runtime {

/// An error carrying `message`.
inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument), message);
}

/// An error whose message is `fmt` formatted by llvm::formatv with `vals`.
template <typename... Ts>
llvm::Error formatError(const char *fmt, Ts &&...vals) {
  return makeError(llvm::formatv(fmt, std::forward<Ts>(vals)...).str());
}

/// "PATH: message" for a file's readers.
inline llvm::Error makeError(llvm::StringRef path, const llvm::Twine &message) {
  return makeError(path + ": " + message);
}

/// "PATH: message" for a file's readers, the message as llvm::formatv
/// formats `fmt` with `vals`.
template <typename... Ts>
llvm::Error makeError(llvm::StringRef path, const char *fmt, Ts &&...vals) {
  return makeError(path + ": " +
                   llvm::formatv(fmt, std::forward<Ts>(vals)...).str());
}

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_ERROR_H

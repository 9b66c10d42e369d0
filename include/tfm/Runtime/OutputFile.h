//===- OutputFile.h - outputs that are whole or absent ----------*- C++ -*-===//
//
// A result file is written to a temporary file in the target's directory and
// renamed over the target only once every byte is written and closed: a
// full disk, a write error or a signal (SIGINT, SIGTERM: the temporary is
// registered with LLVM's signal handlers, which InitLLVM installs) leaves no
// file that looks like a result, and a reader of the old file never sees a
// half-written one. A target that exists and is not a regular file
// (/dev/null, /dev/stdout, /dev/full) is written directly: there is nothing
// to rename over, and its write errors are still errors.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_OUTPUTFILE_H
#define TFM_RUNTIME_OUTPUTFILE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::tfm::runtime {

/// Writes `path` through `write`; errors name the path and the cause.
llvm::Error writeOutputFile(llvm::StringRef path,
                            llvm::function_ref<void(llvm::raw_ostream &)> write);

/// Checks, before any work, that `path` can be written: its directory exists
/// and is writable, and it is not a directory. `flag` names the option.
llvm::Error checkOutputPath(llvm::StringRef path, llvm::StringRef flag);

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_OUTPUTFILE_H

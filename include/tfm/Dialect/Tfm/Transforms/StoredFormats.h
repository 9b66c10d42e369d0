//===- StoredFormats.h - the block formats a weight file stores -*- C++ -*-===//
//
// The `stored` option of tfm-quantize-weights and tfm-fuse-qkv (the CPU
// pipeline's quantize-stored): the parameters a weight file (a GGUF file)
// already holds in a block format, as name:format entries.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_DIALECT_TFM_TRANSFORMS_STOREDFORMATS_H
#define TFM_DIALECT_TFM_TRANSFORMS_STOREDFORMATS_H

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::tfm {

/// Parameter name -> the block format its file stores it in.
using StoredFormats = llvm::StringMap<QuantFormat>;

/// Parses `entries` (name:format, format q8_0, q4_0, q4_k, q5_k or q6_k);
/// on a malformed one, an error at `op` naming `pass` and the entry.
FailureOr<StoredFormats> parseStoredFormats(ArrayRef<std::string> entries,
                                            Operation *op, StringRef pass);

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_TRANSFORMS_STOREDFORMATS_H

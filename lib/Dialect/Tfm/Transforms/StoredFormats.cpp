//===- StoredFormats.cpp - the block formats a weight file stores ---------===//
#include "tfm/Dialect/Tfm/Transforms/StoredFormats.h"

using namespace mlir;

FailureOr<tfm::StoredFormats>
tfm::parseStoredFormats(ArrayRef<std::string> entries, Operation *op,
                        StringRef pass) {
  StoredFormats formats;
  for (StringRef entry : entries) {
    auto [name, formatName] = entry.rsplit(':');
    std::optional<QuantFormat> format = symbolizeQuantFormat(formatName);
    if (name.empty() || !format)
      return op->emitError() << pass << ": stored '" << entry
                             << "': expected name:format, format q8_0, q4_0, "
                                "q4_k, q5_k or q6_k";
    formats[name] = *format;
  }
  return formats;
}

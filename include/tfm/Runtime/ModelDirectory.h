//===- ModelDirectory.h - the files of a saved model ------------*- C++ -*-===//
//
// A model directory as Hugging Face's `save_pretrained` writes it is the unit
// that tools take: `config.json`, the weights as `model.safetensors` or as
// shards listed by `model.safetensors.index.json`, and optionally
// `generation_config.json` and `tokenizer.json`. findModelFiles resolves a
// path (such a directory, or a config.json whose directory holds the rest)
// to those files, so that every tool and the C API find them the same way.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_MODELDIRECTORY_H
#define TFM_RUNTIME_MODELDIRECTORY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::tfm::runtime {

struct ModelFiles {
  /// The directory (empty when a config.json was named outside of one).
  std::string directory;
  std::string configPath;
  /// `model.safetensors`, else `model.safetensors.index.json` (Hugging
  /// Face's order), else empty.
  std::string weightsPath;
  /// Empty when absent.
  std::string generationConfigPath;
  std::string tokenizerPath;
  /// Set when the directory holds only weights tfm cannot read
  /// (`pytorch_model.bin`, ...), to say so when weights are needed.
  std::string unreadableWeights;
};

/// Whether `path` names a directory.
bool isModelDirectory(llvm::StringRef path);

/// Resolves a model directory (it must hold config.json) or a config.json
/// (its weights are not looked for: they are named with --weights). Errors
/// name the path and what is missing.
llvm::Expected<ModelFiles> findModelFiles(llvm::StringRef path);

/// The error for a directory without readable weights, naming it and what
/// it holds instead, for callers that need weights.
llvm::Error makeMissingWeightsError(const ModelFiles &files);

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_MODELDIRECTORY_H

//===- ModelDirectory.cpp - the files of a saved model --------------------===//
#include "tfm/Runtime/ModelDirectory.h"
#include "tfm/Runtime/Error.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace mlir::tfm::runtime;

bool mlir::tfm::runtime::isModelDirectory(llvm::StringRef path) {
  return llvm::sys::fs::is_directory(path);
}

/// `directory/name` if that exists (as anything: a broken file is reported
/// by its reader, naming it), else empty.
static std::string findFile(llvm::StringRef directory, llvm::StringRef name) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  return llvm::sys::fs::exists(path) ? std::string(path) : std::string();
}

llvm::Expected<ModelFiles>
mlir::tfm::runtime::findModelFiles(llvm::StringRef path) {
  ModelFiles files;
  if (!isModelDirectory(path)) {
    files.configPath = path.str();
    llvm::StringRef parent = llvm::sys::path::parent_path(path);
    files.generationConfigPath =
        findFile(parent.empty() ? "." : parent, "generation_config.json");
    return files;
  }
  files.directory = path.str();
  files.configPath = findFile(path, "config.json");
  if (files.configPath.empty())
    return makeError(llvm::formatv(
        "{0}: no config.json: a model directory is what save_pretrained "
        "writes (config.json, model.safetensors or "
        "model.safetensors.index.json and its shards)",
        path));
  files.weightsPath = findFile(path, "model.safetensors");
  if (files.weightsPath.empty())
    files.weightsPath = findFile(path, "model.safetensors.index.json");
  for (llvm::StringRef other :
       {"pytorch_model.bin", "pytorch_model.bin.index.json", "model.bin",
        "tf_model.h5", "flax_model.msgpack", "model.gguf"})
    if (files.unreadableWeights.empty() && !findFile(path, other).empty())
      files.unreadableWeights = other.str();
  files.generationConfigPath = findFile(path, "generation_config.json");
  files.tokenizerPath = findFile(path, "tokenizer.json");
  return files;
}

llvm::Error mlir::tfm::runtime::makeMissingWeightsError(const ModelFiles &files) {
  std::string found =
      files.unreadableWeights.empty()
          ? std::string()
          : llvm::formatv(" (it holds {0}: tfm reads only .safetensors "
                          "checkpoints)",
                          files.unreadableWeights)
                .str();
  return makeError(llvm::formatv(
      "{0}: no model.safetensors or model.safetensors.index.json{1}: pass "
      "--weights FILE or --random-weights SEED",
      files.directory, found));
}

//===- Checkpoint.cpp - weights from one or more files --------------------===//
#include "tfm/Runtime/Checkpoint.h"
#include "tfm/Runtime/Error.h"
#include "tfm/Runtime/FusedExperts.h"
#include "tfm/Runtime/GgufModel.h"
#include "tfm/Runtime/Gptq.h"
#include "tfm/Runtime/Json.h"
#include "tfm/Runtime/Limits.h"
#include "tfm/Runtime/SafeTensors.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>

using namespace mlir::tfm::runtime;
using llvm::Error;
using llvm::Expected;


/// A shard must sit beside its index: a name with a directory part (or "..")
/// would let an index read any file of the machine.
static bool isPlainFileName(llvm::StringRef name) {
  return !name.empty() && name != "." && name != ".." &&
         !name.contains('/') && !name.contains('\\') && !name.contains('\0');
}

Expected<std::unique_ptr<Checkpoint>>
Checkpoint::open(llvm::ArrayRef<std::string> paths) {
  std::unique_ptr<Checkpoint> checkpoint(
      new Checkpoint());
  checkpoint->description = llvm::join(paths, ", ");
  for (const std::string &path : paths) {
    if (llvm::StringRef(path).ends_with(".json")) {
      if (Error err = checkpoint->addIndex(path))
        return std::move(err);
      continue;
    }
    Expected<std::unique_ptr<TensorFile>> file =
        llvm::StringRef(path).ends_with(".gguf")
            ? openGgufTensors(path)
            : Expected<std::unique_ptr<TensorFile>>(SafeTensorsFile::open(path));
    if (!file)
      return file.takeError();
    if (Error err = checkpoint->addFile(std::move(*file)))
      return std::move(err);
  }
  return checkpoint;
}

Error Checkpoint::addIndex(llvm::StringRef indexPath) {
  auto buffer = readInputFile(indexPath, kMaxTextFileBytes, /*isText=*/true);
  if (!buffer)
    return buffer.takeError();
  llvm::StringRef text = (*buffer)->getBuffer();
  if (Error err = checkTextNesting(text, TextSyntax::Json, kMaxJsonDepth,
                                   "the index"))
    return makeError(indexPath, "{0}", llvm::toString(std::move(err)));
  Expected<llvm::json::Value> root = parseJson(text);
  if (!root)
    return makeError(indexPath,
                     "not a JSON index of shards ({0}); an index is the "
                     "model.safetensors.index.json that save_pretrained "
                     "writes beside the shards",
                     llvm::toString(root.takeError()));
  if (Error err = checkJsonKeys(text, *root, "the index"))
    return makeError(indexPath, "{0}", llvm::toString(std::move(err)));
  const llvm::json::Object *object = root->getAsObject();
  const llvm::json::Object *weightMap =
      object ? object->getObject("weight_map") : nullptr;
  if (!weightMap)
    return makeError(indexPath, "no \"weight_map\" object (tensor name -> "
                                "shard file name): not a safetensors index");
  if (weightMap->empty())
    return makeError(indexPath, "the \"weight_map\" lists no tensors");

  // Shard -> its tensors, both sorted: files open and errors read in the
  // same order on every run (json::Object is unordered).
  std::map<std::string, std::vector<std::string>> shards;
  for (const auto &[key, value] : *weightMap) {
    llvm::StringRef name = key;
    std::optional<llvm::StringRef> shard = value.getAsString();
    if (!shard)
      return makeError(indexPath,
                       "weight_map: tensor '{0}': expected the name of a "
                       "shard file (a string)",
                       name);
    if (!isPlainFileName(*shard))
      return makeError(indexPath,
                       "weight_map: tensor '{0}': shard '{1}' is not a file "
                       "name in the index's directory",
                       name, *shard);
    shards[shard->str()].push_back(name.str());
  }
  if (shards.size() > kMaxCheckpointShards)
    return makeError(indexPath,
                     "weight_map names {0} shards, more than the limit of {1}",
                     shards.size(), kMaxCheckpointShards);

  llvm::StringRef directory = llvm::sys::path::parent_path(indexPath);
  for (auto &[shard, tensors] : shards) {
    llvm::sort(tensors);
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, shard);
    Expected<std::unique_ptr<SafeTensorsFile>> file =
        SafeTensorsFile::open(path);
    if (!file)
      return makeError(indexPath, "shard '{0}' (of tensor '{1}'{2}): {3}",
                       shard, tensors.front(),
                       tensors.size() > 1
                           ? llvm::formatv(" and {0} more", tensors.size() - 1)
                                 .str()
                           : std::string(),
                       llvm::toString(file.takeError()));
    for (const std::string &tensor : tensors)
      if (!(*file)->lookup(tensor))
        return makeError(indexPath,
                         "tensor '{0}': the weight_map puts it in shard "
                         "'{1}', which does not hold it",
                         tensor, shard);
    // The other direction: a tensor the map puts elsewhere is in two shards,
    // one the map does not list is unaccounted for.
    for (const TensorView &view : (*file)->getTensors()) {
      const llvm::json::Value *listed = weightMap->get(view.name);
      if (!listed)
        return makeError(indexPath,
                         "tensor '{0}' of shard '{1}' is not in the "
                         "weight_map",
                         view.name, shard);
      llvm::StringRef owner = *listed->getAsString();
      if (owner != shard)
        return makeError(indexPath,
                         "tensor '{0}' is in two shards: '{1}' (where the "
                         "weight_map puts it) and '{2}'",
                         view.name, owner, shard);
    }
    if (Error err = addFile(std::move(*file)))
      return err;
  }
  return Error::success();
}

Error Checkpoint::addFile(std::unique_ptr<TensorFile> file) {
  unsigned number = files.size();
  for (const TensorView &view : file->getTensors()) {
    auto [it, inserted] = fileOf.try_emplace(view.name, number);
    if (!inserted)
      return makeError(file->getPath(),
                       "tensor '{0}' is also in {1}: a tensor must be in one "
                       "weight file only",
                       view.name, files[it->second]->getPath());
  }
  files.push_back(std::move(file));
  return Error::success();
}

const TensorView *Checkpoint::lookup(llvm::StringRef name) const {
  if (hidden.contains(name))
    return nullptr;
  auto it = fileOf.find(name);
  return it == fileOf.end() ? nullptr : files[it->second]->lookup(name);
}

llvm::StringRef Checkpoint::getFileOf(llvm::StringRef name) const {
  auto it = fileOf.find(name);
  return it == fileOf.end() ? llvm::StringRef(description)
                            : files[it->second]->getPath();
}

std::vector<const TensorView *> Checkpoint::getTensors() const {
  std::vector<const TensorView *> tensors;
  for (const std::unique_ptr<TensorFile> &file : files)
    for (const TensorView &view : file->getTensors())
      if (!hidden.contains(view.name))
        tensors.push_back(&view);
  return tensors;
}

Error Checkpoint::addPackedInts(const PackedIntFormat &format) {
  llvm::StringSet<> components;
  Expected<std::unique_ptr<TensorFile>> gptq =
      makeGptqTensors(*this, format, components);
  if (!gptq)
    return gptq.takeError();
  if (Error err = addFile(std::move(*gptq)))
    return err;
  // The parts stay in fileOf (the GPTQ tensors release their pages through
  // it) but are no longer what a name looks up or the listing shows.
  for (const auto &name : components)
    hidden.insert(name.getKey());
  return Error::success();
}

Error Checkpoint::addFusedExperts(const ExpertTensorNames &names) {
  llvm::StringSet<> replaced;
  Expected<std::unique_ptr<TensorFile>> views =
      makeFusedExpertViews(*this, names, replaced);
  if (!views)
    return views.takeError();
  if ((*views)->getTensors().empty())
    return Error::success();
  if (Error err = addFile(std::move(*views)))
    return err;
  for (const auto &name : replaced)
    hidden.insert(name.getKey());
  return Error::success();
}

void Checkpoint::releasePages(const TensorView &view) const {
  auto it = fileOf.find(view.name);
  if (it != fileOf.end())
    files[it->second]->releasePages(view);
}

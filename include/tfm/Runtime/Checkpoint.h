//===- Checkpoint.h - weights from one or more files -----------*- C++ -*-===//
//
// The tensors of a checkpoint that may span several files: a GGUF file
// (llama.cpp's, its tensors under the Hugging Face names its model's
// config.json would use: tfm/Runtime/GgufModel.h), a single .safetensors
// file, the shards of a sharded checkpoint named by their index
// (`model.safetensors.index.json`, as `save_pretrained` writes it: a
// "weight_map" object from tensor name to shard file name, shards beside the
// index), or several files given one by one. Every file is memory-mapped
// (never read whole); a lookup goes through the tensor's one file.
//
// Everything is checked on open, so that a lookup can never pick one of two
// candidates silently: each tensor lives in exactly one file, an index's
// weight_map and its shards agree in both directions (every listed tensor is
// in its shard, every tensor of a shard is listed, for that shard), and
// shard names are plain file names in the index's directory.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_CHECKPOINT_H
#define TFM_RUNTIME_CHECKPOINT_H

#include "tfm/Runtime/TensorFile.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::tfm::runtime {

/// Shards of one index: far above any published checkpoint (a few hundred),
/// far below what the mappings and file descriptors of a process allow.
constexpr uint64_t kMaxCheckpointShards = 10'000;

struct ExpertTensorNames;
struct PackedIntFormat;

class Checkpoint {
public:
  /// Opens each of `paths`: a file ending in `.json` is an index whose
  /// shards are opened, one ending in `.gguf` a GGUF file, anything else a
  /// .safetensors file. Errors name the
  /// file (the index, or the shard at fault) and the tensor.
  static llvm::Expected<std::unique_ptr<Checkpoint>>
  open(llvm::ArrayRef<std::string> paths);

  /// What the user named, for messages: the index or file, or the files
  /// joined by ", ".
  llvm::StringRef getPath() const { return description; }
  /// The tensor called `name`, or null.
  const TensorView *lookup(llvm::StringRef name) const;
  /// The path of the file holding `name` (a shard of an index), or
  /// getPath() when no file holds it.
  llvm::StringRef getFileOf(llvm::StringRef name) const;
  /// Every tensor, file by file in the order opened, each file's tensors in
  /// file order.
  std::vector<const TensorView *> getTensors() const;
  /// TensorFile::releasePages on the file holding `view`.
  void releasePages(const TensorView &view) const;

  /// Reads the checkpoint as a GPTQ or AWQ one (tfm/Runtime/Gptq.h): each
  /// linear's qweight, scales, qzeros and g_idx give way to its `.weight`
  /// in llama.cpp's blocks. Errors name the tensor at fault.
  llvm::Error addPackedInts(const PackedIntFormat &format);
  /// Reads transformers 5's fused expert tensors as the per-expert ones
  /// `names` gives (tfm/Runtime/FusedExperts.h); the fused ones are then no
  /// longer looked up or listed. A no-op without any.
  llvm::Error addFusedExperts(const ExpertTensorNames &names);

private:
  Checkpoint() = default;
  llvm::Error addIndex(llvm::StringRef indexPath);
  /// Adds `file`, whose tensors must be in no file added before.
  llvm::Error addFile(std::unique_ptr<TensorFile> file);

  std::string description;
  std::vector<std::unique_ptr<TensorFile>> files;
  /// Tensor name -> index into `files`.
  llvm::StringMap<unsigned> fileOf;
  /// Tensors read only through others (a GPTQ linear's parts): not looked
  /// up by name, not listed.
  llvm::StringSet<> hidden;
};

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_CHECKPOINT_H

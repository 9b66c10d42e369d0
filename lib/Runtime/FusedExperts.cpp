//===- FusedExperts.cpp - transformers 5's fused expert tensors -----------===//
#include "tfm/Runtime/FusedExperts.h"
#include "tfm/Runtime/Checkpoint.h"
#include "tfm/Runtime/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir::tfm::runtime;
using llvm::Error;
using llvm::Expected;

namespace {
/// The per-expert views; the bytes stay the checkpoint's.
class FusedExpertViews : public TensorFile {
public:
  explicit FusedExpertViews(const Checkpoint &checkpoint)
      : checkpoint(checkpoint),
        path((checkpoint.getPath() + " (fused experts)").str()) {}

  llvm::StringRef getPath() const override { return path; }
  const TensorView *lookup(llvm::StringRef name) const override {
    auto it = index.find(name);
    return it == index.end() ? nullptr : &views[it->second];
  }
  llvm::ArrayRef<TensorView> getTensors() const override { return views; }
  /// The view's own pages of the fused tensor it is cut from.
  void releasePages(const TensorView &view) const override {
    auto it = source.find(view.name);
    if (it == source.end())
      return;
    TensorView part = view;
    part.name = it->second;
    checkpoint.releasePages(part);
  }

  /// Adds `view` under `name`, cut from the checkpoint's tensor `from`.
  void add(TensorView view, std::string name, llvm::StringRef from) {
    view.name = std::move(name);
    index[view.name] = views.size();
    source[view.name] = from.str();
    views.push_back(std::move(view));
  }

private:
  const Checkpoint &checkpoint;
  std::string path;
  std::vector<TensorView> views;
  llvm::StringMap<size_t> index;
  llvm::StringMap<std::string> source;
};
} // namespace

/// "[2, 256]".
static std::string formatDims(llvm::ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(
                        shape, [](int64_t d) { return std::to_string(d); }),
                    ", ") +
         "]";
}

/// Rows [first, first + rows) of expert `e` of 3-D `fused`, as a 2-D view.
static TensorView cutExpert(const TensorView &fused, int64_t e, int64_t first,
                            int64_t rows) {
  uint64_t element = getDTypeSize(fused.dtype);
  uint64_t rowBytes = uint64_t(fused.shape[2]) * element;
  TensorView view = fused;
  view.shape = {rows, fused.shape[2]};
  view.data =
      fused.data +
      (uint64_t(e) * uint64_t(fused.shape[1]) + uint64_t(first)) * rowBytes;
  view.numBytes = uint64_t(rows) * rowBytes;
  return view;
}

Expected<std::unique_ptr<TensorFile>>
mlir::tfm::runtime::makeFusedExpertViews(const Checkpoint &checkpoint,
                                         const ExpertTensorNames &names,
                                         llvm::StringSet<> &replaced) {
  auto file = std::make_unique<FusedExpertViews>(checkpoint);
  for (const TensorView *fused : checkpoint.getTensors()) {
    llvm::StringRef layer = fused->name;
    if (!layer.consume_back(".mlp.experts.gate_up_proj"))
      continue;
    llvm::StringRef file0 = checkpoint.getFileOf(fused->name);
    if (fused->blocks != BlockFormat::None || fused->shape.size() != 3 ||
        fused->shape[1] % 2 || fused->shape[1] == 0)
      return makeError(file0,
                       "tensor '{0}' is {1} {2}: transformers 5's fused "
                       "experts are [E, 2m, d] of plain elements, each "
                       "expert's m gate rows then its m up rows",
                       fused->name, fused->getStorageName(),
                       formatDims(fused->shape));
    int64_t experts = fused->shape[0], width = fused->shape[1] / 2,
            hidden = fused->shape[2];
    std::string downName = (layer + ".mlp.experts.down_proj").str();
    const TensorView *down = checkpoint.lookup(downName);
    if (!down)
      return makeError(file0, "tensor '{0}' has no '{1}' beside it",
                       fused->name, downName);
    llvm::SmallVector<int64_t, 3> downShape{experts, hidden, width};
    if (down->blocks != BlockFormat::None || down->dtype != fused->dtype ||
        llvm::ArrayRef(down->shape) != llvm::ArrayRef(downShape))
      return makeError(checkpoint.getFileOf(downName),
                       "tensor '{0}' is {1} {2}, expected {3} {4} to match "
                       "'{5}' [E, 2m, d]",
                       downName, down->getStorageName(),
                       formatDims(down->shape), fused->getStorageName(),
                       formatDims(downShape), fused->name);
    for (int64_t e = 0; e < experts; ++e) {
      std::string expert =
          llvm::formatv("{0}.{1}.experts.{2}.", layer, names.module, e).str();
      file->add(cutExpert(*fused, e, 0, width), expert + names.gate.str(),
                fused->name);
      file->add(cutExpert(*fused, e, width, width), expert + names.up.str(),
                fused->name);
      file->add(cutExpert(*down, e, 0, hidden), expert + names.down.str(),
                downName);
    }
    replaced.insert(fused->name);
    replaced.insert(downName);
    // The router keeps its bytes; only a family whose experts live in
    // another module (Mixtral's block_sparse_moe) reads it by another name.
    std::string router = (layer + ".mlp.gate.weight").str();
    if (names.module != "mlp")
      if (const TensorView *view = checkpoint.lookup(router)) {
        file->add(*view, (layer + "." + names.module + ".gate.weight").str(),
                  router);
        replaced.insert(router);
      }
  }
  return std::unique_ptr<TensorFile>(std::move(file));
}

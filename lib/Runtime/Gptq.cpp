//===- Gptq.cpp - a GPTQ checkpoint's linears as llama.cpp blocks ---------===//
#include "tfm/Runtime/Gptq.h"

#include "tfm/Runtime/Checkpoint.h"
#include "tfm/Runtime/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <vector>

using namespace mlir::tfm::runtime;
using llvm::Error;
using llvm::Expected;

namespace {
/// One quantized linear: its source tensors and its dimensions.
struct Linear {
  const TensorView *qweight, *scales, *qzeros;
  int64_t n, k, group;
  /// The blocks while they are built (TensorView::data points here).
  std::unique_ptr<char[]> blocks;
};

class GptqTensors : public TensorFile {
public:
  GptqTensors(const Checkpoint &checkpoint, int64_t bits)
      : checkpoint(checkpoint), bits(bits),
        path((checkpoint.getPath() + " (GPTQ)").str()) {}

  llvm::StringRef getPath() const override { return path; }
  const TensorView *lookup(llvm::StringRef name) const override;
  llvm::ArrayRef<TensorView> getTensors() const override { return views; }
  void releasePages(const TensorView &view) const override;

  /// Adds the linear `prefix`, validated; false with `error` set if not.
  Error add(llvm::StringRef prefix, int64_t groupSize,
            llvm::StringSet<> &components);

private:
  /// Fills linear `i`'s blocks: row n, block b of K takes group (32 b) /
  /// G's scale and the 32 integers of its rows.
  void build(size_t i) const;

  const Checkpoint &checkpoint;
  int64_t bits;
  std::string path;
  // Views and linears side by side; views' data set while built.
  mutable std::vector<TensorView> views;
  mutable std::vector<Linear> linears;
};
} // namespace

/// "[2, 256]".
static std::string formatDims(llvm::ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(shape,
                                    [](int64_t d) { return std::to_string(d); }),
                    ", ") +
         "]";
}

/// The tensor `name` of `checkpoint` with `dtype` and `shape`, or an error
/// saying what it is instead.
static Expected<const TensorView *>
getComponent(const Checkpoint &checkpoint, llvm::StringRef name, DType dtype,
             llvm::ArrayRef<int64_t> shape) {
  const TensorView *view = checkpoint.lookup(name);
  if (!view)
    return makeError(checkpoint.getPath(),
                     "GPTQ: no tensor '{0}' beside its qweight", name);
  if (view->blocks != BlockFormat::None || view->dtype != dtype ||
      llvm::ArrayRef(view->shape) != shape)
    return makeError(
        checkpoint.getFileOf(name),
        "GPTQ: tensor '{0}' is {1} {2}, expected {3} {4}", name,
        view->getStorageName(), formatDims(view->shape),
        getSafeTensorsDTypeName(dtype), formatDims(shape));
  return view;
}

static uint32_t loadWord(const char *data, uint64_t index) {
  uint32_t word;
  std::memcpy(&word, data + index * 4, 4);
  return word;
}

Error GptqTensors::add(llvm::StringRef prefix, int64_t groupSize,
                       llvm::StringSet<> &components) {
  std::string qweightName = (prefix + ".qweight").str();
  const TensorView *qweight = checkpoint.lookup(qweightName);
  int64_t perWord = 32 / bits;
  if (qweight->blocks != BlockFormat::None || qweight->dtype != DType::I32 ||
      qweight->shape.size() != 2 || qweight->shape[0] < 1 ||
      qweight->shape[1] < 1)
    return makeError(checkpoint.getFileOf(qweightName),
                     "GPTQ: tensor '{0}' is {1} of {2} dims, expected I32 "
                     "[K * {3} / 32, N]",
                     qweightName, qweight->getStorageName(),
                     qweight->shape.size(), bits);
  int64_t k = qweight->shape[0] * perWord, n = qweight->shape[1];
  int64_t group = groupSize == -1 ? k : groupSize;
  if (k % 32 || k % group)
    return makeError(checkpoint.getFileOf(qweightName),
                     "GPTQ: tensor '{0}' holds {1} input rows, which "
                     "groups of {2} (and llama.cpp's blocks of 32) must "
                     "divide",
                     qweightName, k, group);
  int64_t groups = k / group;
  if (n % perWord)
    return makeError(checkpoint.getFileOf(qweightName),
                     "GPTQ: tensor '{0}' has {1} columns, which the {2} zero "
                     "points a word must divide",
                     qweightName, n, perWord);
  std::string scalesName = (prefix + ".scales").str();
  std::string zerosName = (prefix + ".qzeros").str();
  Expected<const TensorView *> scales =
      getComponent(checkpoint, scalesName, DType::F16, {groups, n});
  if (!scales)
    return scales.takeError();
  Expected<const TensorView *> qzeros =
      getComponent(checkpoint, zerosName, DType::I32, {groups, n / perWord});
  if (!qzeros)
    return qzeros.takeError();
  // Symmetric: every stored zero point is 2^(bits-1) - 1.
  uint32_t mask = (uint32_t(1) << bits) - 1, zero = (mask >> 1);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < n; ++c) {
      uint32_t word = loadWord((*qzeros)->data, uint64_t(g) * (n / perWord) + c / perWord);
      uint32_t stored = (word >> (bits * (c % perWord))) & mask;
      if (stored != zero)
        return makeError(checkpoint.getFileOf(zerosName),
                         "GPTQ: tensor '{0}' holds zero point {1} (stored) "
                         "for group {2}, column {3}: symmetric GPTQ stores "
                         "{4}; asymmetric GPTQ is not supported",
                         zerosName, stored, g, c, zero);
    }
  std::string gIdxName = (prefix + ".g_idx").str();
  if (checkpoint.lookup(gIdxName)) {
    Expected<const TensorView *> gIdx =
        getComponent(checkpoint, gIdxName, DType::I32, {k});
    if (!gIdx)
      return gIdx.takeError();
    for (int64_t row = 0; row < k; ++row) {
      int32_t g;
      std::memcpy(&g, (*gIdx)->data + row * 4, 4);
      if (g != row / group)
        return makeError(checkpoint.getFileOf(gIdxName),
                         "GPTQ: tensor '{0}' puts row {1} in group {2}, not "
                         "{3}: act-order GPTQ is not supported",
                         gIdxName, row, g, row / group);
    }
    components.insert(gIdxName);
  }
  components.insert(qweightName);
  components.insert(scalesName);
  components.insert(zerosName);
  TensorView view;
  view.name = (prefix + ".weight").str();
  view.dtype = DType::F32;
  view.shape = {n, k};
  view.blocks = bits == 4 ? BlockFormat::Q4_0 : BlockFormat::Q8_0;
  view.numBytes = uint64_t(n) * uint64_t(k / 32) *
                  uint64_t(getBlockBytes(view.blocks));
  view.data = nullptr;
  views.push_back(std::move(view));
  linears.push_back({qweight, *scales, *qzeros, n, k, group, nullptr});
  return Error::success();
}

void GptqTensors::build(size_t i) const {
  Linear &linear = linears[i];
  int64_t perWord = 32 / bits, blockBytes = getBlockBytes(views[i].blocks);
  uint32_t mask = (uint32_t(1) << bits) - 1;
  linear.blocks.reset(new char[views[i].numBytes]);
  auto *out = reinterpret_cast<uint8_t *>(linear.blocks.get());
  auto integer = [&](int64_t row, int64_t col) {
    uint32_t word = loadWord(linear.qweight->data,
                             uint64_t(row / perWord) * linear.n + col);
    return (word >> (bits * (row % perWord))) & mask;
  };
  for (int64_t col = 0; col < linear.n; ++col)
    for (int64_t b = 0; b < linear.k / 32; ++b, out += blockBytes) {
      // The group's f16 scale is the block's d, as stored.
      std::memcpy(out,
                  linear.scales->data +
                      (uint64_t(b * 32 / linear.group) * linear.n + col) * 2,
                  2);
      if (bits == 4) {
        // Q4_0: byte u holds rows u and u + 16; q - 8 is GPTQ's q - zero.
        for (int64_t u = 0; u < 16; ++u)
          out[2 + u] = uint8_t(integer(32 * b + u, col) |
                               integer(32 * b + 16 + u, col) << 4);
      } else {
        // Q8_0: the int8 q - 128.
        for (int64_t t = 0; t < 32; ++t)
          out[2 + t] = uint8_t(int8_t(int32_t(integer(32 * b + t, col)) - 128));
      }
    }
  views[i].data = linear.blocks.get();
}

const TensorView *GptqTensors::lookup(llvm::StringRef name) const {
  for (size_t i = 0; i < views.size(); ++i)
    if (views[i].name == name) {
      if (!views[i].data)
        build(i);
      return &views[i];
    }
  return nullptr;
}

void GptqTensors::releasePages(const TensorView &view) const {
  for (size_t i = 0; i < views.size(); ++i)
    if (&views[i] == &view) {
      linears[i].blocks.reset();
      views[i].data = nullptr;
      checkpoint.releasePages(*linears[i].qweight);
      checkpoint.releasePages(*linears[i].scales);
      checkpoint.releasePages(*linears[i].qzeros);
    }
}

Expected<std::unique_ptr<TensorFile>>
mlir::tfm::runtime::makeGptqTensors(const Checkpoint &checkpoint, int64_t bits,
                                    int64_t groupSize,
                                    llvm::StringSet<> &components) {
  auto file = std::make_unique<GptqTensors>(checkpoint, bits);
  for (const TensorView *view : checkpoint.getTensors()) {
    llvm::StringRef name = view->name;
    if (!name.consume_back(".qweight"))
      continue;
    if (checkpoint.lookup((name + ".weight").str()))
      return makeError(checkpoint.getFileOf(view->name),
                       "GPTQ: both '{0}.qweight' and '{0}.weight' are stored",
                       name);
    if (Error err = file->add(name, groupSize, components))
      return std::move(err);
  }
  if (file->getTensors().empty())
    return makeError(checkpoint.getPath(),
                     "config.json's quantization_config is GPTQ, but no "
                     "tensor is a GPTQ qweight");
  return std::unique_ptr<TensorFile>(std::move(file));
}

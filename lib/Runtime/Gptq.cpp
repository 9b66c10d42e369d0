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
  /// Some zero point is not the symmetric 2^(bits-1): Q8_0 blocks of the
  /// integers q - zero instead of Q4_0's q - 8.
  bool asymmetric;
  /// The blocks while they are built (TensorView::data points here).
  std::unique_ptr<char[]> blocks;
};

class GptqTensors : public TensorFile {
public:
  GptqTensors(const Checkpoint &checkpoint, const PackedIntFormat &format)
      : checkpoint(checkpoint), bits(format.bits),
        awq(format.method == PackedIntFormat::Method::Awq),
        path((checkpoint.getPath() + (awq ? " (AWQ)" : " (GPTQ)")).str()) {}

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
  /// The integer q of input row `row`, output column `col`: GPTQ packs
  /// qweight [K bits / 32, N] along K, AWQ [K, N bits / 32] along N in
  /// AutoAWQ's order.
  uint32_t getInteger(const Linear &linear, int64_t row, int64_t col) const;
  /// Group `g`'s zero point of column `col`: GPTQ stores it minus one
  /// (read back plus one, as transformers and AutoGPTQ do), AWQ as it is;
  /// both packed along N, AWQ in its order.
  uint32_t getZero(const TensorView &qzeros, int64_t n, int64_t g,
                   int64_t col) const;

  const Checkpoint &checkpoint;
  int64_t bits;
  /// AWQ's layout (GEMM version) rather than GPTQ's.
  bool awq;
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
/// saying what it is instead (`method`: "GPTQ" or "AWQ").
static Expected<const TensorView *>
getComponent(const Checkpoint &checkpoint, llvm::StringRef method,
             llvm::StringRef name, DType dtype, llvm::ArrayRef<int64_t> shape) {
  const TensorView *view = checkpoint.lookup(name);
  if (!view)
    return makeError(checkpoint.getPath(),
                     "{0}: no tensor '{1}' beside its qweight", method, name);
  if (view->blocks != BlockFormat::None || view->dtype != dtype ||
      llvm::ArrayRef(view->shape) != shape)
    return makeError(checkpoint.getFileOf(name),
                     "{0}: tensor '{1}' is {2} {3}, expected {4} {5}", method,
                     name, view->getStorageName(), formatDims(view->shape),
                     getSafeTensorsDTypeName(dtype), formatDims(shape));
  return view;
}

static uint32_t loadWord(const char *data, uint64_t index) {
  uint32_t word;
  std::memcpy(&word, data + index * 4, 4);
  return word;
}

/// AutoAWQ packs the 8 integers of columns 8w .. 8w + 7 into word w with
/// column 8w + j at nibble kAwqNibble[j] (its pack order [0, 2, 4, 6, 1, 3,
/// 5, 7] inverted).
static constexpr int kAwqNibble[8] = {0, 4, 1, 5, 2, 6, 3, 7};

/// Integer `col` of a row of `n` packed along it, `bits` wide, in AWQ's
/// order or in order.
static uint32_t loadPackedColumn(const char *row, int64_t col, int64_t bits,
                                 bool awqOrder) {
  int64_t perWord = 32 / bits, slot = col % perWord;
  if (awqOrder)
    slot = kAwqNibble[slot];
  uint32_t mask = (uint32_t(1) << bits) - 1;
  return (loadWord(row, uint64_t(col / perWord)) >> (bits * slot)) & mask;
}

uint32_t GptqTensors::getInteger(const Linear &linear, int64_t row,
                                 int64_t col) const {
  int64_t perWord = 32 / bits;
  if (awq)
    return loadPackedColumn(
        linear.qweight->data + uint64_t(row) * uint64_t(linear.n / perWord) * 4,
        col, bits, /*awqOrder=*/true);
  uint32_t mask = (uint32_t(1) << bits) - 1;
  uint32_t word =
      loadWord(linear.qweight->data, uint64_t(row / perWord) * linear.n + col);
  return (word >> (bits * (row % perWord))) & mask;
}

uint32_t GptqTensors::getZero(const TensorView &qzeros, int64_t n, int64_t g,
                              int64_t col) const {
  int64_t perWord = 32 / bits;
  uint32_t stored = loadPackedColumn(
      qzeros.data + uint64_t(g) * uint64_t(n / perWord) * 4, col, bits, awq);
  return awq ? stored : stored + 1;
}

Error GptqTensors::add(llvm::StringRef prefix, int64_t groupSize,
                       llvm::StringSet<> &components) {
  llvm::StringRef method = awq ? "AWQ" : "GPTQ";
  std::string qweightName = (prefix + ".qweight").str();
  const TensorView *qweight = checkpoint.lookup(qweightName);
  int64_t perWord = 32 / bits;
  if (qweight->blocks != BlockFormat::None || qweight->dtype != DType::I32 ||
      qweight->shape.size() != 2 || qweight->shape[0] < 1 ||
      qweight->shape[1] < 1)
    return makeError(checkpoint.getFileOf(qweightName),
                     "{0}: tensor '{1}' is {2} of {3} dims, expected I32 "
                     "{4}",
                     method, qweightName, qweight->getStorageName(),
                     qweight->shape.size(),
                     awq ? llvm::formatv("[K, N * {0} / 32]", bits).str()
                         : llvm::formatv("[K * {0} / 32, N]", bits).str());
  // GPTQ packs K, AWQ N.
  int64_t k = awq ? qweight->shape[0] : qweight->shape[0] * perWord;
  int64_t n = awq ? qweight->shape[1] * perWord : qweight->shape[1];
  int64_t group = groupSize == -1 ? k : groupSize;
  if (k % 32 || k % group)
    return makeError(checkpoint.getFileOf(qweightName),
                     "{0}: tensor '{1}' holds {2} input rows, which "
                     "groups of {3} (and llama.cpp's blocks of 32) must "
                     "divide",
                     method, qweightName, k, group);
  int64_t groups = k / group;
  if (n % perWord)
    return makeError(checkpoint.getFileOf(qweightName),
                     "{0}: tensor '{1}' has {2} columns, which the {3} zero "
                     "points a word must divide",
                     method, qweightName, n, perWord);
  std::string scalesName = (prefix + ".scales").str();
  std::string zerosName = (prefix + ".qzeros").str();
  Expected<const TensorView *> scales =
      getComponent(checkpoint, method, scalesName, DType::F16, {groups, n});
  if (!scales)
    return scales.takeError();
  Expected<const TensorView *> qzeros = getComponent(
      checkpoint, method, zerosName, DType::I32, {groups, n / perWord});
  if (!qzeros)
    return qzeros.takeError();
  // Symmetric: every zero point 2^(bits-1), Q4_0's or Q8_0's own. Any other
  // makes Q8_0 blocks of q - zero, which int8 holds for 4 bits, not 8.
  uint32_t symmetric = uint32_t(1) << (bits - 1);
  bool asymmetric = false;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < n; ++c) {
      uint32_t zero = getZero(**qzeros, n, g, c);
      if (zero == symmetric)
        continue;
      if (bits == 8)
        return makeError(checkpoint.getFileOf(zerosName),
                         "{0}: tensor '{1}' holds zero point {2} for group "
                         "{3}, column {4}: 8-bit weights need the symmetric "
                         "{5} (q - zero must fit int8); asymmetric 8-bit "
                         "{0} is not supported",
                         method, zerosName, zero, g, c, symmetric);
      asymmetric = true;
    }
  std::string gIdxName = (prefix + ".g_idx").str();
  if (checkpoint.lookup(gIdxName)) {
    Expected<const TensorView *> gIdx =
        getComponent(checkpoint, method, gIdxName, DType::I32, {k});
    if (!gIdx)
      return gIdx.takeError();
    for (int64_t row = 0; row < k; ++row) {
      int32_t g;
      std::memcpy(&g, (*gIdx)->data + row * 4, 4);
      if (g != row / group)
        return makeError(checkpoint.getFileOf(gIdxName),
                         "{0}: tensor '{1}' puts row {2} in group {3}, not "
                         "{4}: act-order GPTQ is not supported",
                         method, gIdxName, row, g, row / group);
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
  view.blocks =
      bits == 4 && !asymmetric ? BlockFormat::Q4_0 : BlockFormat::Q8_0;
  view.numBytes = uint64_t(n) * uint64_t(k / 32) *
                  uint64_t(getBlockBytes(view.blocks));
  view.data = nullptr;
  views.push_back(std::move(view));
  linears.push_back(
      {qweight, *scales, *qzeros, n, k, group, asymmetric, nullptr});
  return Error::success();
}

void GptqTensors::build(size_t i) const {
  Linear &linear = linears[i];
  int64_t blockBytes = getBlockBytes(views[i].blocks);
  linear.blocks.reset(new char[views[i].numBytes]);
  auto *out = reinterpret_cast<uint8_t *>(linear.blocks.get());
  for (int64_t col = 0; col < linear.n; ++col)
    for (int64_t b = 0; b < linear.k / 32; ++b, out += blockBytes) {
      // The group's f16 scale is the block's d, as stored.
      int64_t g = b * 32 / linear.group;
      std::memcpy(out, linear.scales->data + (uint64_t(g) * linear.n + col) * 2,
                  2);
      if (views[i].blocks == BlockFormat::Q4_0) {
        // Q4_0: byte u holds rows u and u + 16; q - 8 is the symmetric
        // q - zero.
        for (int64_t u = 0; u < 16; ++u)
          out[2 + u] = uint8_t(getInteger(linear, 32 * b + u, col) |
                               getInteger(linear, 32 * b + 16 + u, col) << 4);
        continue;
      }
      // Q8_0: the int8 q - zero (in [-128, 127] for 8-bit symmetric
      // weights, [-16, 15] for any 4-bit zero point).
      int32_t zero = int32_t(getZero(*linear.qzeros, linear.n, g, col));
      for (int64_t t = 0; t < 32; ++t)
        out[2 + t] = uint8_t(
            int8_t(int32_t(getInteger(linear, 32 * b + t, col)) - zero));
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
mlir::tfm::runtime::makeGptqTensors(const Checkpoint &checkpoint,
                                    const PackedIntFormat &format,
                                    llvm::StringSet<> &components) {
  bool awq = format.method == PackedIntFormat::Method::Awq;
  auto file = std::make_unique<GptqTensors>(checkpoint, format);
  for (const TensorView *view : checkpoint.getTensors()) {
    llvm::StringRef name = view->name;
    if (!name.consume_back(".qweight"))
      continue;
    if (checkpoint.lookup((name + ".weight").str()))
      return makeError(checkpoint.getFileOf(view->name),
                       "{0}: both '{1}.qweight' and '{1}.weight' are stored",
                       awq ? "AWQ" : "GPTQ", name);
    if (Error err = file->add(name, format.groupSize, components))
      return std::move(err);
  }
  if (file->getTensors().empty())
    return makeError(checkpoint.getPath(),
                     "config.json's quantization_config is {0}, but no "
                     "tensor is a {0} qweight",
                     awq ? "AWQ" : "GPTQ");
  return std::unique_ptr<TensorFile>(std::move(file));
}

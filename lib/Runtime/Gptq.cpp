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

/// "GPTQ", "AWQ" or "compressed-tensors", for messages.
static std::string getMethodName(const PackedIntFormat &format) {
  switch (format.method) {
  case PackedIntFormat::Method::Gptq:
    return "GPTQ";
  case PackedIntFormat::Method::Awq:
    return "AWQ";
  case PackedIntFormat::Method::CompressedTensors:
    return "compressed-tensors";
  }
  return "";
}

namespace {
/// One quantized linear: its source tensors and its dimensions.
struct Linear {
  /// compressed-tensors' weight_packed, weight_scale and weight_zero_point
  /// (null when symmetric) in their places.
  const TensorView *qweight, *scales, *qzeros;
  int64_t n, k, group;
  /// Some zero point is not the symmetric 2^(bits-1): Q8_0 blocks of the
  /// integers q - zero instead of Q4_0's q - 8.
  bool asymmetric;
  /// The blocks while they are built (TensorView::data points here).
  std::unique_ptr<char[]> blocks;
  /// Act-order: row r of the held weight is input row order[r] (the rows
  /// sorted by group); empty when the rows are in order.
  std::vector<int32_t> order;
};

class GptqTensors : public TensorFile {
public:
  GptqTensors(const Checkpoint &checkpoint, const PackedIntFormat &format)
      : checkpoint(checkpoint), bits(format.bits), actOrder(format.actOrder),
        awq(format.method == PackedIntFormat::Method::Awq),
        compressed(format.method == PackedIntFormat::Method::CompressedTensors),
        path(
            (checkpoint.getPath() + " (" + getMethodName(format) + ")").str()) {
  }

  llvm::StringRef getPath() const override { return path; }
  const TensorView *lookup(llvm::StringRef name) const override;
  llvm::ArrayRef<TensorView> getTensors() const override { return views; }
  void releasePages(const TensorView &view) const override;

  /// Adds the linear `prefix`, validated; false with `error` set if not.
  Error add(llvm::StringRef prefix, int64_t groupSize,
            llvm::StringSet<> &components);
  /// Adds compressed-tensors' pack-quantized linear `prefix`, validated.
  Error addCompressed(llvm::StringRef prefix, int64_t groupSize,
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
  /// both packed along N, AWQ in its order. compressed-tensors packs its
  /// [N, K / G] signed zero points along N plus 2^(bits-1), as it packs
  /// the integers; none stored is the symmetric 2^(bits-1).
  uint32_t getZero(const Linear &linear, int64_t g, int64_t col) const;
  /// Group `g`'s scale of column `col` as f16 bits (add checked that
  /// compressed-tensors' bf16 or f32 scales are f16 values).
  uint16_t getScaleBits(const Linear &linear, int64_t g, int64_t col) const;
  /// Sets `linear.asymmetric` if a zero point (tensor `zerosName`) is not
  /// the symmetric 2^(bits-1); an error for 8-bit weights, whose q - zero
  /// would not fit int8.
  Error checkZeroPoints(Linear &linear, llvm::StringRef method,
                        llvm::StringRef zerosName) const;
  /// Reads act-order linear `linear`'s g_idx `gIdx` into its order: the
  /// rows sorted by group, stably; an error unless every group has its
  /// `group` rows.
  Error sortRowsByGroup(Linear &linear, const TensorView &gIdx,
                        llvm::StringRef method, llvm::StringRef gIdxName) const;
  /// Adds the view `P.weight` of linear `linear`, Q4_0 when symmetric 4-bit,
  /// and with act-order `P.input_order`.
  void addView(llvm::StringRef prefix, Linear linear);

  const Checkpoint &checkpoint;
  int64_t bits;
  bool actOrder;
  /// AWQ's layout (GEMM version) or compressed-tensors' rather than
  /// GPTQ's.
  bool awq, compressed;
  std::string path;
  // Each linear's weight view (data set while built) and, with act-order,
  // its input order's; linearOf[i] is view i's linear, -1 for an order.
  mutable std::vector<TensorView> views;
  std::vector<int64_t> linearOf;
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
  if (compressed) // weight_packed [N, K bits / 32]: output col's row of K.
    return loadPackedColumn(
        linear.qweight->data + uint64_t(col) * uint64_t(linear.k / perWord) * 4,
        row, bits, /*awqOrder=*/false);
  if (awq)
    return loadPackedColumn(
        linear.qweight->data + uint64_t(row) * uint64_t(linear.n / perWord) * 4,
        col, bits, /*awqOrder=*/true);
  uint32_t mask = (uint32_t(1) << bits) - 1;
  uint32_t word =
      loadWord(linear.qweight->data, uint64_t(row / perWord) * linear.n + col);
  return (word >> (bits * (row % perWord))) & mask;
}

uint32_t GptqTensors::getZero(const Linear &linear, int64_t g,
                              int64_t col) const {
  int64_t perWord = 32 / bits, n = linear.n;
  uint32_t symmetric = uint32_t(1) << (bits - 1);
  if (compressed) {
    if (!linear.qzeros)
      return symmetric;
    uint32_t mask = (uint32_t(1) << bits) - 1;
    uint64_t groups = uint64_t(linear.k / linear.group);
    uint32_t word =
        loadWord(linear.qzeros->data, uint64_t(col / perWord) * groups + g);
    return (word >> (bits * (col % perWord))) & mask;
  }
  uint32_t stored = loadPackedColumn(
      linear.qzeros->data + uint64_t(g) * uint64_t(n / perWord) * 4, col, bits,
      awq);
  return awq ? stored : stored + 1;
}

/// Element `i` of float tensor `view` (f16, bf16 or f32) as a float.
static float loadFloat(const TensorView &view, uint64_t i) {
  uint16_t half;
  switch (view.dtype) {
  case DType::F16:
    std::memcpy(&half, view.data + 2 * i, 2);
    return halfToFloat(half);
  case DType::BF16:
    std::memcpy(&half, view.data + 2 * i, 2);
    return bfloat16ToFloat(half);
  default: {
    float f;
    std::memcpy(&f, view.data + 4 * i, 4);
    return f;
  }
  }
}

uint16_t GptqTensors::getScaleBits(const Linear &linear, int64_t g,
                                   int64_t col) const {
  if (compressed)
    return floatToHalf(loadFloat(
        *linear.scales, uint64_t(col) * uint64_t(linear.k / linear.group) + g));
  uint16_t bits;
  std::memcpy(&bits, linear.scales->data + (uint64_t(g) * linear.n + col) * 2,
              2);
  return bits;
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
  Linear probe{qweight, *scales, *qzeros, n, k, group, false, nullptr, {}};
  if (Error err = checkZeroPoints(probe, method, zerosName))
    return err;
  std::string gIdxName = (prefix + ".g_idx").str();
  if (!checkpoint.lookup(gIdxName) && actOrder)
    return makeError(checkpoint.getPath(),
                     "{0}: no tensor '{1}': act-order weights (desc_act) "
                     "say their rows' groups in it",
                     method, gIdxName);
  if (checkpoint.lookup(gIdxName)) {
    Expected<const TensorView *> gIdx =
        getComponent(checkpoint, method, gIdxName, DType::I32, {k});
    if (!gIdx)
      return gIdx.takeError();
    if (actOrder) {
      if (Error err = sortRowsByGroup(probe, **gIdx, method, gIdxName))
        return err;
    } else {
      for (int64_t row = 0; row < k; ++row) {
        int32_t g;
        std::memcpy(&g, (*gIdx)->data + row * 4, 4);
        if (g != row / group)
          return makeError(checkpoint.getFileOf(gIdxName),
                           "{0}: tensor '{1}' puts row {2} in group {3}, not "
                           "{4}: act-order weights need "
                           "quantization_config.desc_act true",
                           method, gIdxName, row, g, row / group);
      }
    }
    components.insert(gIdxName);
  }
  components.insert(qweightName);
  components.insert(scalesName);
  components.insert(zerosName);
  addView(prefix, std::move(probe));
  return Error::success();
}

Error GptqTensors::checkZeroPoints(Linear &linear, llvm::StringRef method,
                                   llvm::StringRef zerosName) const {
  // Symmetric: every zero point 2^(bits-1), Q4_0's or Q8_0's own. Any other
  // makes Q8_0 blocks of q - zero, which int8 holds for 4 bits, not 8.
  uint32_t symmetric = uint32_t(1) << (bits - 1);
  for (int64_t g = 0; g < linear.k / linear.group; ++g)
    for (int64_t c = 0; c < linear.n; ++c) {
      uint32_t zero = getZero(linear, g, c);
      if (zero == symmetric)
        continue;
      if (bits == 8)
        return makeError(checkpoint.getFileOf(zerosName),
                         "{0}: tensor '{1}' holds zero point {2} for group "
                         "{3}, column {4}: 8-bit weights need the symmetric "
                         "{5} (q - zero must fit int8); asymmetric 8-bit "
                         "{0} is not supported",
                         method, zerosName, zero, g, c, symmetric);
      linear.asymmetric = true;
    }
  return Error::success();
}

Error GptqTensors::sortRowsByGroup(Linear &linear, const TensorView &gIdx,
                                   llvm::StringRef method,
                                   llvm::StringRef gIdxName) const {
  int64_t groups = linear.k / linear.group;
  std::vector<int32_t> rowGroup(linear.k);
  std::vector<int64_t> start(groups + 1, 0);
  for (int64_t row = 0; row < linear.k; ++row) {
    int32_t g;
    std::memcpy(&g, gIdx.data + row * 4, 4);
    if (g < 0 || g >= groups)
      return makeError(checkpoint.getFileOf(gIdxName),
                       "{0}: tensor '{1}' puts row {2} in group {3}, not one "
                       "of its {4}",
                       method, gIdxName, row, g, groups);
    rowGroup[row] = g;
    ++start[g + 1];
  }
  for (int64_t g = 0; g < groups; ++g) {
    if (start[g + 1] != linear.group)
      return makeError(checkpoint.getFileOf(gIdxName),
                       "{0}: tensor '{1}' puts {2} rows in group {3}, not "
                       "{4}: each group must be whole blocks of 32 once the "
                       "rows are sorted by group",
                       method, gIdxName, start[g + 1], g, linear.group);
    start[g + 1] += start[g];
  }
  linear.order.resize(linear.k);
  for (int64_t row = 0; row < linear.k; ++row)
    linear.order[start[rowGroup[row]]++] = int32_t(row);
  return Error::success();
}

void GptqTensors::addView(llvm::StringRef prefix, Linear linear) {
  TensorView view;
  view.name = (prefix + ".weight").str();
  view.dtype = DType::F32;
  view.shape = {linear.n, linear.k};
  view.blocks =
      bits == 4 && !linear.asymmetric ? BlockFormat::Q4_0 : BlockFormat::Q8_0;
  view.numBytes = uint64_t(linear.n) * uint64_t(linear.k / 32) *
                  uint64_t(getBlockBytes(view.blocks));
  view.data = nullptr;
  views.push_back(std::move(view));
  linearOf.push_back(int64_t(linears.size()));
  linears.push_back(std::move(linear));
  const std::vector<int32_t> &order = linears.back().order;
  if (order.empty())
    return;
  // The vector's buffer moves with the Linear, so the view stays valid.
  TensorView orderView;
  orderView.name = (prefix + ".input_order").str();
  orderView.dtype = DType::I32;
  orderView.shape = {int64_t(order.size())};
  orderView.data = reinterpret_cast<const char *>(order.data());
  orderView.numBytes = order.size() * 4;
  views.push_back(std::move(orderView));
  linearOf.push_back(-1);
}

Error GptqTensors::addCompressed(llvm::StringRef prefix, int64_t groupSize,
                                 llvm::StringSet<> &components) {
  llvm::StringRef method = "compressed-tensors";
  std::string packedName = (prefix + ".weight_packed").str();
  std::string shapeName = (prefix + ".weight_shape").str();
  const TensorView *shape = checkpoint.lookup(shapeName);
  if (!shape)
    return makeError(checkpoint.getPath(),
                     "{0}: no tensor '{1}' beside its weight_packed", method,
                     shapeName);
  // weight_shape: the logical [N, K], int32 or int64.
  int64_t dims[2] = {0, 0};
  if (shape->blocks != BlockFormat::None || shape->shape.size() != 1 ||
      shape->shape[0] != 2 ||
      (shape->dtype != DType::I64 && shape->dtype != DType::I32))
    return makeError(checkpoint.getFileOf(shapeName),
                     "{0}: tensor '{1}' is {2} {3}, expected I64 or I32 [2] "
                     "(the weight's [N, K])",
                     method, shapeName, shape->getStorageName(),
                     formatDims(shape->shape));
  for (int i = 0; i < 2; ++i) {
    if (shape->dtype == DType::I64) {
      std::memcpy(&dims[i], shape->data + 8 * i, 8);
    } else {
      int32_t d;
      std::memcpy(&d, shape->data + 4 * i, 4);
      dims[i] = d;
    }
  }
  int64_t n = dims[0], k = dims[1], perWord = 32 / bits;
  int64_t group = groupSize == -1 ? k : groupSize;
  if (n < 1 || k < 1 || k > (int64_t(1) << 40) || n > (int64_t(1) << 40) ||
      k % 32 || k % group)
    return makeError(checkpoint.getFileOf(shapeName),
                     "{0}: tensor '{1}' says [{2}, {3}]: K must be positive "
                     "and whole groups of {4} (and llama.cpp's blocks of 32)",
                     method, shapeName, n, k, group);
  int64_t groups = k / group;
  Expected<const TensorView *> weights = getComponent(
      checkpoint, method, packedName, DType::I32, {n, k / perWord});
  if (!weights)
    return weights.takeError();
  std::string scalesName = (prefix + ".weight_scale").str();
  const TensorView *scales = checkpoint.lookup(scalesName);
  if (!scales || scales->blocks != BlockFormat::None ||
      !isFloatDType(scales->dtype) || scales->dtype == DType::F64 ||
      llvm::ArrayRef(scales->shape) != llvm::ArrayRef<int64_t>{n, groups})
    return makeError(
        scales ? checkpoint.getFileOf(scalesName) : checkpoint.getPath(),
        "{0}: tensor '{1}' is {2}, expected F16, BF16 or F32 "
        "[{3}, {4}]",
        method, scalesName,
        scales
            ? (scales->getStorageName() + " " + formatDims(scales->shape)).str()
            : std::string("missing"),
        n, groups);
  // Each scale becomes a block's f16 d: it must be one.
  for (int64_t col = 0; col < n; ++col)
    for (int64_t g = 0; g < groups; ++g) {
      float scale = loadFloat(*scales, uint64_t(col) * groups + g);
      if (halfToFloat(floatToHalf(scale)) != scale)
        return makeError(checkpoint.getFileOf(scalesName),
                         "{0}: tensor '{1}' holds {2} at [{3}, {4}], which "
                         "f16 (a block's scale) does not represent exactly",
                         method, scalesName, scale, col, g);
    }
  std::string gIdxName = (prefix + ".weight_g_idx").str();
  bool hasGIdx = checkpoint.lookup(gIdxName) != nullptr;
  if (hasGIdx != actOrder)
    return makeError(
        hasGIdx ? checkpoint.getFileOf(gIdxName) : checkpoint.getPath(),
        hasGIdx ? "{0}: tensor '{1}': act-order weights need the config's "
                  "actorder \"group\""
                : "{0}: no tensor '{1}': act-order weights (actorder "
                  "\"group\") say their rows' groups in it",
        method, gIdxName);
  std::string zerosName = (prefix + ".weight_zero_point").str();
  const TensorView *zeros = nullptr;
  if (checkpoint.lookup(zerosName)) {
    Expected<const TensorView *> stored =
        getComponent(checkpoint, method, zerosName, DType::I32,
                     {(n + perWord - 1) / perWord, groups});
    if (!stored)
      return stored.takeError();
    zeros = *stored;
    components.insert(zerosName);
  }
  Linear linear{*weights, scales, zeros, n, k, group, false, nullptr, {}};
  if (zeros)
    if (Error err = checkZeroPoints(linear, method, zerosName))
      return err;
  if (hasGIdx) {
    Expected<const TensorView *> gIdx =
        getComponent(checkpoint, method, gIdxName, DType::I32, {k});
    if (!gIdx)
      return gIdx.takeError();
    if (Error err = sortRowsByGroup(linear, **gIdx, method, gIdxName))
      return err;
    components.insert(gIdxName);
  }
  components.insert(packedName);
  components.insert(shapeName);
  components.insert(scalesName);
  addView(prefix, std::move(linear));
  return Error::success();
}

void GptqTensors::build(size_t i) const {
  Linear &linear = linears[linearOf[i]];
  // Row r of the held weight (act-order: sorted by group).
  auto inputRow = [&](int64_t r) -> int64_t {
    return linear.order.empty() ? r : linear.order[r];
  };
  int64_t blockBytes = getBlockBytes(views[i].blocks);
  linear.blocks.reset(new char[views[i].numBytes]);
  auto *out = reinterpret_cast<uint8_t *>(linear.blocks.get());
  for (int64_t col = 0; col < linear.n; ++col)
    for (int64_t b = 0; b < linear.k / 32; ++b, out += blockBytes) {
      // The group's f16 scale is the block's d, as stored.
      int64_t g = b * 32 / linear.group;
      uint16_t scale = getScaleBits(linear, g, col);
      std::memcpy(out, &scale, 2);
      if (views[i].blocks == BlockFormat::Q4_0) {
        // Q4_0: byte u holds rows u and u + 16; q - 8 is the symmetric
        // q - zero.
        for (int64_t u = 0; u < 16; ++u)
          out[2 + u] =
              uint8_t(getInteger(linear, inputRow(32 * b + u), col) |
                      getInteger(linear, inputRow(32 * b + 16 + u), col) << 4);
        continue;
      }
      // Q8_0: the int8 q - zero (in [-128, 127] for 8-bit symmetric
      // weights, [-16, 15] for any 4-bit zero point).
      int32_t zero = int32_t(getZero(linear, g, col));
      for (int64_t t = 0; t < 32; ++t)
        out[2 + t] = uint8_t(int8_t(
            int32_t(getInteger(linear, inputRow(32 * b + t), col)) - zero));
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
  for (size_t i = 0; i < views.size(); ++i) {
    if (&views[i] != &view || linearOf[i] < 0)
      continue; // an input order stays: it is small
    Linear &linear = linears[linearOf[i]];
    linear.blocks.reset();
    views[i].data = nullptr;
    checkpoint.releasePages(*linear.qweight);
    checkpoint.releasePages(*linear.scales);
    if (linear.qzeros)
      checkpoint.releasePages(*linear.qzeros);
  }
}

Expected<std::unique_ptr<TensorFile>>
mlir::tfm::runtime::makeGptqTensors(const Checkpoint &checkpoint,
                                    const PackedIntFormat &format,
                                    llvm::StringSet<> &components) {
  bool compressed = format.method == PackedIntFormat::Method::CompressedTensors;
  llvm::StringRef packedSuffix = compressed ? ".weight_packed" : ".qweight";
  std::string method = getMethodName(format);
  auto file = std::make_unique<GptqTensors>(checkpoint, format);
  for (const TensorView *view : checkpoint.getTensors()) {
    llvm::StringRef name = view->name;
    if (!name.consume_back(packedSuffix))
      continue;
    if (checkpoint.lookup((name + ".weight").str()))
      return makeError(checkpoint.getFileOf(view->name),
                       "{0}: both '{1}{2}' and '{1}.weight' are stored", method,
                       name, packedSuffix);
    if (Error err =
            compressed ? file->addCompressed(name, format.groupSize, components)
                       : file->add(name, format.groupSize, components))
      return std::move(err);
  }
  if (file->getTensors().empty())
    return makeError(checkpoint.getPath(),
                     "config.json's quantization_config is {0}, but no "
                     "tensor is a {0} {1}",
                     method, packedSuffix.drop_front());
  return std::unique_ptr<TensorFile>(std::move(file));
}

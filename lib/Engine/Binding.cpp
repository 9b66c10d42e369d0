//===- Binding.cpp - binding and calling compiled entries -----------------===//
#include "tfm/Engine/Binding.h"

#include "llvm/ADT/StringExtras.h"

#include "tfm/Runtime/Npy.h"
#include "tfm/Runtime/Quantize.h"
#include "tfm/Runtime/Checkpoint.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Memory.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <vector>

using namespace mlir::tfm;
using namespace mlir::tfm::engine;
using namespace mlir::tfm::runtime;

double engine::millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// From this size on a buffer gets its own pages. glibc's malloc would map
/// it too, but only below its dynamic threshold: once a mapped block of N
/// bytes is freed (binding frees a conversion buffer per weight), blocks up
/// to N (at most 32 MiB) come from the heap, whose holes it never returns
/// to the kernel. Measured on GPT-2-small: 50 MiB of such holes after
/// binding.
static constexpr uint64_t kMappedBufferBytes = 1 << 20;

llvm::Expected<std::unique_ptr<AlignedBuffer>>
AlignedBuffer::allocate(uint64_t numBytes) {
  uint64_t rounded = llvm::alignTo(std::max<uint64_t>(numBytes, 1), 64);
  std::unique_ptr<AlignedBuffer> buffer(new AlignedBuffer());
  auto fail = [&] {
    return makeError(llvm::formatv("cannot allocate {0} bytes", numBytes));
  };
  if (rounded >= kMappedBufferBytes && rounded <= SIZE_MAX) {
    // Mapped pages are page-aligned and zero: nothing to clear, and what is
    // never written is never resident.
    std::error_code error;
    llvm::sys::MemoryBlock block = llvm::sys::Memory::allocateMappedMemory(
        rounded, nullptr,
        llvm::sys::Memory::MF_READ | llvm::sys::Memory::MF_WRITE, error);
    if (error || !block.base())
      return fail();
    buffer->data = static_cast<char *>(block.base());
    buffer->mappedBytes = block.allocatedSize();
    return buffer;
  }
  buffer->data = static_cast<char *>(std::aligned_alloc(64, rounded));
  if (!buffer->data)
    return fail();
  std::memset(buffer->data, 0, rounded);
  return buffer;
}

/// The size and alignment of a transparent huge page on x86-64.
static constexpr uint64_t kHugePageBytes = 2 << 20;

llvm::Expected<std::unique_ptr<AlignedBuffer>>
AlignedBuffer::allocateHugePages(uint64_t numBytes) {
  uint64_t pageBytes = llvm::sys::Process::getPageSizeEstimate();
  if (numBytes > SIZE_MAX - 2 * kHugePageBytes)
    return makeError(llvm::formatv("cannot allocate {0} bytes", numBytes));
  uint64_t bytes = llvm::alignTo(std::max<uint64_t>(numBytes, 1), pageBytes);
  // Reserve a huge page more than needed and trim the ends, so that the
  // buffer starts on a huge page: no huge page fits before the first
  // boundary, and mmap aligns to base pages only.
  uint64_t reserved = bytes + kHugePageBytes;
  void *raw = ::mmap(nullptr, reserved, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED)
    return makeError(llvm::formatv("cannot map {0} bytes", numBytes));
  uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  uintptr_t start = llvm::alignTo(begin, kHugePageBytes);
  uintptr_t end = start + bytes, reservedEnd = begin + reserved;
  if (start > begin)
    ::munmap(raw, start - begin);
  if (reservedEnd > end)
    ::munmap(reinterpret_cast<void *>(end), reservedEnd - end);
  // Without the advice a kernel whose THP mode is `madvise` (the default of
  // many distributions) maps base pages. Where it fails (THP disabled),
  // base pages work as well, only slower.
  (void)::madvise(reinterpret_cast<void *>(start), bytes, MADV_HUGEPAGE);
  std::unique_ptr<AlignedBuffer> buffer(new AlignedBuffer());
  buffer->data = reinterpret_cast<char *>(start);
  buffer->mappedBytes = bytes; // unmapped as any mapped buffer
  return buffer;
}

std::unique_ptr<AlignedBuffer>
AlignedBuffer::slice(std::shared_ptr<AlignedBuffer> whole, uint64_t offset) {
  std::unique_ptr<AlignedBuffer> buffer(new AlignedBuffer());
  buffer->data = whole->data + offset;
  buffer->whole = std::move(whole);
  return buffer;
}

AlignedBuffer::~AlignedBuffer() {
  if (whole)
    return;
  if (!mappedBytes) {
    std::free(data);
    return;
  }
  llvm::sys::MemoryBlock block(data, mappedBytes);
  (void)llvm::sys::Memory::releaseMappedMemory(block);
}

uint64_t
engine::getDistinctBytes(const llvm::StringMap<BoundArgument> &arguments) {
  llvm::DenseSet<void *> seen;
  uint64_t bytes = 0;
  for (const auto &entry : arguments)
    if (seen.insert(entry.second.data).second)
      bytes += entry.second.numBytes;
  return bytes;
}

uint64_t engine::getBufferBytes(const EntrySignature &sig) {
  uint64_t bytes = 0;
  for (const EntryArgument &arg : sig.arguments)
    if (arg.kind == EntryArgument::Kind::Input)
      bytes += getNumBytes(arg.shape, getDTypeSize(arg.dtype)).value_or(0);
  for (const EntryResult &result : sig.results)
    if (!result.isKVCache)
      bytes +=
          getNumBytes(result.shape, getDTypeSize(result.dtype)).value_or(0);
  return bytes;
}

std::string engine::describe(DType dtype, llvm::ArrayRef<int64_t> shape) {
  return (getDTypeName(dtype) + " " + formatShape(shape)).str();
}

std::string engine::describeArgument(const EntrySignature &sig, size_t i) {
  const EntryArgument &arg = sig.arguments[i];
  std::string what =
      llvm::formatv("argument #{0} of @{1}", i, sig.function).str();
  if (arg.kind == EntryArgument::Kind::Index)
    return what + ", index";
  // A packed parameter is described as the weight file holds it.
  return what + ", " +
         describe(arg.fileDType(), arg.packed ? llvm::ArrayRef<int64_t>(
                                              arg.packed->fileShape)
                                        : llvm::ArrayRef<int64_t>(arg.shape));
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

/// SplitMix64: tiny, and deterministic across platforms.
static uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Values depend on the seed and the parameter's name only, so reordering
/// arguments keeps them. Norm scales (1-D "...weight") sit around 1 so that
/// activations keep their size through the blocks.
static void fillRandom(const EntryArgument &arg, llvm::ArrayRef<int64_t> shape,
                       uint64_t seed, char *out) {
  uint64_t state = seed ^ llvm::xxh3_64bits(arg.name);
  bool isScale =
      shape.size() == 1 && llvm::StringRef(arg.name).ends_with("weight");
  uint64_t count = *getNumBytes(shape, 1);
  DType dtype = arg.fileDType();
  size_t size = getDTypeSize(dtype);
  for (uint64_t i = 0; i < count; ++i) {
    // 24 random bits -> [0, 1) exactly representable in f32.
    float u = float(nextRandom(state) >> 40) * 0x1p-24f;
    float value = (u - 0.5f) * 0.1f + (isScale ? 1.0f : 0.0f);
    char *dst = out + i * size;
    switch (dtype) {
    case DType::F32:
      std::memcpy(dst, &value, 4);
      break;
    case DType::F64: {
      double d = value;
      std::memcpy(dst, &d, 8);
      break;
    }
    case DType::F16: {
      uint16_t h = floatToHalf(value);
      std::memcpy(dst, &h, 2);
      break;
    }
    case DType::BF16: {
      uint16_t h = floatToBFloat16(value);
      std::memcpy(dst, &h, 2);
      break;
    }
    default:
      break; // Integer parameters stay zero.
    }
  }
}

/// Whether `view` can be bound to a parameter of `dtype`: the same type, or
/// another float type that `weights` may convert.
static bool isBindable(const TensorView &view, const EntryArgument &arg,
                       const WeightSource &weights) {
  if (view.dtype == arg.fileDType())
    return true;
  // A parameter the compiler narrowed (tfm.param_rounded) takes the model's
  // float tensor, rounded.
  return (weights.convertFloats || arg.rounded) &&
         isFloatConversion(view.dtype, arg.fileDType());
}

/// A checkpoint tensor as plain elements in row order: the view itself, or,
/// for one stored in blocks (a GGUF file's Q8_0, Q4_K...), with its rows
/// interleaved (Llama's Q and K in a GGUF file) or plus one (Gemma's norms
/// there), a copy in `storage`: its weights dequantized exactly
/// (tfm/Runtime/Quantize.h) to f32, rows in order, the one subtracted.
/// Pages are released through `original`, never through `view`.
struct PlainTensor {
  const TensorView *original = nullptr;
  TensorView view;
  std::shared_ptr<AlignedBuffer> storage;
};

static llvm::Expected<PlainTensor> getPlainTensor(const TensorView &view) {
  PlainTensor plain;
  plain.original = &view;
  plain.view = view;
  if (view.blocks == BlockFormat::None && !view.interleavedHeads &&
      !view.storedPlusOne)
    return plain;
  uint64_t count = view.getNumElements();
  uint64_t elementSize =
      view.blocks == BlockFormat::None ? getDTypeSize(view.dtype) : 4;
  auto storage = AlignedBuffer::allocate(count * elementSize);
  if (!storage)
    return storage.takeError();
  // Rows along the last dim (a 2-D tensor's rows: getStoredRow's).
  uint64_t rows = view.shape.empty() ? 1 : count / uint64_t(view.shape.back());
  uint64_t rowElements = count / rows, rowBytes = view.numBytes / rows;
  char *out = (*storage)->get();
  for (uint64_t row = 0; row < rows; ++row) {
    const char *stored = view.data + view.getStoredRow(row) * rowBytes;
    char *to = out + row * rowElements * elementSize;
    if (view.blocks == BlockFormat::None)
      std::memcpy(to, stored, rowBytes);
    else
      dequantizeBlocks(view.blocks, stored, int64_t(rowElements),
                       reinterpret_cast<float *>(to));
  }
  // f32 only (GgufModel.cpp checks): stored - 1, exact for the stored
  // values near 1 a norm has, so that 1 + w is the stored value again.
  if (view.storedPlusOne)
    for (float &w : llvm::MutableArrayRef<float>(
             reinterpret_cast<float *>(out), count))
      w -= 1.0f;
  plain.storage = std::move(*storage);
  plain.view.data = plain.storage->get();
  plain.view.numBytes = count * elementSize;
  plain.view.blocks = BlockFormat::None;
  plain.view.interleavedHeads = 0;
  plain.view.storedPlusOne = false;
  if (view.blocks != BlockFormat::None)
    plain.view.dtype = DType::F32;
  return plain;
}

/// Binds a parameter that --tfm-fuse-qkv concatenated from several tensors:
/// every part must have the argument's dtype (or one converted to it) and
/// its dims except along the axis, and the parts' extents along the axis
/// must add up.
static llvm::Error concatenateParts(const EntrySignature &sig, size_t i,
                             llvm::ArrayRef<int64_t> shape,
                             const WeightSource &weights, char *out) {
  const EntryArgument &arg = sig.arguments[i];
  const Checkpoint &checkpoint = *weights.checkpoint;
  size_t axis = arg.concatAxis;
  std::vector<const TensorView *> views;
  std::vector<PlainTensor> plains;
  plains.reserve(arg.parts.size());
  int64_t extent = 0;
  for (const std::string &partName : arg.parts) {
    std::string part = weights.namePrefix + partName;
    const TensorView *stored = checkpoint.lookup(part);
    if (!stored)
      return makeError(llvm::formatv(
          "{0}: no tensor '{1}' (a part of the fused parameter "
          "'{2}', {3})",
          checkpoint.getPath(), part, arg.name, describeArgument(sig, i)));
    llvm::Expected<PlainTensor> plain = getPlainTensor(*stored);
    if (!plain)
      return plain.takeError();
    plains.push_back(std::move(*plain));
    const TensorView *view = &plains.back().view;
    bool fits = isBindable(*view, arg, weights) &&
                view->shape.size() == shape.size();
    for (size_t d = 0; fits && d < shape.size(); ++d)
      fits = d == axis || view->shape[d] == shape[d];
    if (!fits)
      return makeError(llvm::formatv(
          "{0}: tensor '{1}' is {2} {3}, which cannot be "
          "concatenated along axis {4} into the fused "
          "parameter '{5}' ({6})",
          checkpoint.getFileOf(part), part, stored->getStorageName(),
          formatShape(view->shape), axis, arg.name,
          describeArgument(sig, i)));
    extent += view->shape[axis];
    views.push_back(view);
  }
  if (extent != shape[axis])
    return makeError(
        llvm::formatv("{0}: the parts of the fused parameter '{1}' add up to "
                      "{2} along axis {3}, but @{4} expects {5}",
                      checkpoint.getPath(), arg.name, extent, axis,
                      sig.function, describe(arg.fileDType(), shape)));
  // Row-major: for each index of the leading dims, copy (or convert) each
  // part's slab.
  uint64_t outer = *getNumBytes(llvm::ArrayRef(shape).take_front(axis), 1);
  uint64_t inner = *getNumBytes(llvm::ArrayRef(shape).drop_front(axis + 1), 1);
  for (uint64_t o = 0; o < outer; ++o)
    for (const TensorView *view : views) {
      uint64_t slab = inner * view->shape[axis];
      convertElements(view->data + o * slab * getDTypeSize(view->dtype),
                      view->dtype, out, arg.fileDType(), slab);
      out += slab * getDTypeSize(arg.fileDType());
    }
  for (const PlainTensor &plain : plains)
    checkpoint.releasePages(*plain.original);
  return llvm::Error::success();
}

/// Packs a row-major weight of `fileShape` whose elements are the bit
/// patterns `T` (uint32_t for f32, uint16_t for bf16/f16) into `layout`'s
/// panels (tfm.param_pack; see tfm/Runtime/EntrySignature.h): P[j, k, r],
/// or with `kPairs` (format = "bf16_pairs") P[j, k / 2, r, k % 2], =
/// W(k, j * panel + r). Padding columns are zero bits, +0.0 in every float
/// type.
template <typename T>
static void packWeight(const PackedLayout &layout, const char *source,
                       char *out) {
  int64_t n = layout.fileShape[layout.outIn ? 0 : 1];
  int64_t k = layout.fileShape[layout.outIn ? 1 : 0];
  int64_t panel = layout.panel, panels = (n + panel - 1) / panel;
  const T *w = reinterpret_cast<const T *>(source);
  T *p = reinterpret_cast<T *>(out);
  // Where K step kk of panel j starts, and how far apart its columns are.
  int64_t stride = layout.kPairs ? 2 : 1;
  for (int64_t j = 0; j < panels; ++j)
    for (int64_t kk = 0; kk < k; ++kk) {
      T *row = layout.kPairs ? p + (j * k + kk / 2 * 2) * panel + kk % 2
                             : p + (j * k + kk) * panel;
      for (int64_t r = 0; r < panel; ++r) {
        int64_t col = j * panel + r;
        row[stride * r] = col >= n        ? T(0)
                          : layout.outIn ? w[col * k + kk]
                                         : w[kk * n + col];
      }
    }
}

/// bf16(x) as AMX machines convert (vcvtneps2bf16): round to nearest even,
/// subnormal inputs read as zero, so that parts split here equal those the
/// generated code splits per call.
static uint16_t toBFloat16AsAmx(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7f800000) == 0 && (bits & 0x007fffff) != 0)
    return uint16_t((bits >> 16) & 0x8000);
  return floatToBFloat16(x);
}

/// Packs a row-major f32 weight into AMX tiles' bf16 parts (tfm.param_pack
/// with format = "amx_bf16x3"), or a bf16 one as it is (format = "amx_bf16";
/// see tfm/Runtime/EntrySignature.h): S[i, n / 16, k / 2, 2 (n % 16) + k %
/// 2] = part i of W(k, n), zero past N.
static void packAmxParts(const PackedLayout &layout, const char *source,
                         char *out) {
  int64_t n = layout.fileShape[layout.outIn ? 0 : 1];
  int64_t k = layout.fileShape[layout.outIn ? 1 : 0];
  int64_t panel = layout.panel;
  int64_t tiles = (n + panel - 1) / panel * panel / 16, pairs = k / 2;
  uint16_t *s = reinterpret_cast<uint16_t *>(out);
  int64_t partSize = tiles * pairs * 32;
  auto offset = [&](int64_t col, int64_t kk) {
    return ((col / 16) * pairs + kk / 2) * 32 + 2 * (col % 16) + kk % 2;
  };
  if (layout.amxParts == 1) {
    // bf16 as it is, in W's row order; the padding columns stay zero.
    const uint16_t *w = reinterpret_cast<const uint16_t *>(source);
    int64_t rows = layout.outIn ? n : k, cols = layout.outIn ? k : n;
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t col = 0; col < cols; ++col)
        s[layout.outIn ? offset(row, col) : offset(col, row)] =
            w[row * cols + col];
    return;
  }
  const float *w = reinterpret_cast<const float *>(source);
  auto split = [&](int64_t col, int64_t kk, float value) {
    int64_t at = offset(col, kk);
    for (int64_t i = 0; i < 3; ++i) {
      uint16_t part = toBFloat16AsAmx(value);
      s[i * partSize + at] = part;
      value -= bfloat16ToFloat(part);
    }
  };
  // Reads W in its own row order (a layout's rows are contiguous); the
  // padding columns' parts stay zero (the buffer is zeroed).
  if (layout.outIn) {
    for (int64_t col = 0; col < n; ++col)
      for (int64_t kk = 0; kk < k; ++kk)
        split(col, kk, w[col * k + kk]);
  } else {
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t col = 0; col < n; ++col)
        split(col, kk, w[kk * n + col]);
  }
}

/// Whether `format` is one of the K formats (super-blocks of 256 with
/// sub-block scales).
static bool isKFormat(BlockFormat format) {
  return format == BlockFormat::Q4_K || format == BlockFormat::Q5_K ||
         format == BlockFormat::Q6_K;
}

/// One line of weights along K in a block format, split as tfm binds it
/// (splitBlocks): the integers, the f16 scales' bits (the K formats': their
/// super-blocks'), and the K formats' sub-block scales (k / 16 bytes).
struct SplitLine {
  std::vector<uint8_t> values;
  std::vector<uint16_t> scales;
  std::vector<uint8_t> subScales;
  /// Q6_K's values in 6 bits (placeColumn's scratch).
  std::vector<uint8_t> sixBit;
  SplitLine(BlockFormat format, int64_t k)
      : values(format == BlockFormat::Q4_0 || format == BlockFormat::Q4_K
                   ? k / 2
                   : k),
        scales(format == BlockFormat::Q4_K || format == BlockFormat::Q5_K
                   ? k / 128
               : format == BlockFormat::Q6_K ? k / 256
                                             : k / 32),
        subScales(isKFormat(format) ? k / 16 : 0) {}
};

/// Writes the part of column `col`'s blocks that `layout` keeps
/// (tfm.param_pack with format "q8_0_values", "q4_k_super", ...; see
/// tfm/Runtime/EntrySignature.h) into its panel: V[j, b, t, r] (Q4_0,
/// Q4_K: V[j, b, u, r], two steps a byte; with group G, V[j, b, t / G, r,
/// t % G], Q6_K's bytes t then those of its 6-bit layout: `line.sixBit`,
/// its scratch), S[j, b, r], the K formats' sub-block scales (Q4_K: sc and m of
/// each 32, Q6_K: the scale of each 16; k / 16 a column either way) or
/// their super-blocks' f16 scales (Q4_K: d and dmin, Q6_K: d), of column j
/// * panel + r.
static void placeColumn(const PackedLayout &layout, int64_t col,
                        SplitLine &line, char *out) {
  int64_t panel = layout.panel, group = layout.group;
  int64_t j = col / panel, r = col % panel;
  // Each part is a column's `count` elements, panel of them side by side.
  auto place = [&](auto *to, const auto &from) {
    int64_t count = int64_t(from.size());
    for (int64_t e = 0; e < count; ++e)
      to[(j * count + e) * panel + r] = from[e];
  };
  switch (layout.quantPart) {
  case PackedLayout::QuantPart::Values: {
    const uint8_t *values = line.values.data();
    int64_t valueBytes = int64_t(line.values.size());
    if (layout.sixBitValues) {
      valueBytes = valueBytes * 3 / 4;
      line.sixBit.resize(valueBytes);
      packSixBitValues(values, int64_t(line.values.size()), line.sixBit.data());
      values = line.sixBit.data();
    }
    for (int64_t byte = 0; byte < valueBytes; ++byte)
      out[(j * valueBytes + byte - byte % group) * panel + r * group +
          byte % group] = char(values[byte]);
    return;
  }
  case PackedLayout::QuantPart::Scales:
    if (isKFormat(layout.blockFormat))
      place(reinterpret_cast<uint8_t *>(out), line.subScales);
    else
      place(reinterpret_cast<uint16_t *>(out), line.scales);
    return;
  case PackedLayout::QuantPart::Super:
    place(reinterpret_cast<uint16_t *>(out), line.scales);
    return;
  case PackedLayout::QuantPart::None:
    return;
  }
}

/// `k` weights quantized to `format` as llama.cpp's quantizer stores them,
/// split as tfm binds them.
static void quantizeLine(BlockFormat format, const float *weights, int64_t k,
                         SplitLine &line, std::vector<char> &blocks) {
  switch (format) {
  case BlockFormat::Q8_0:
    quantizeQ8_0(weights, k, reinterpret_cast<int8_t *>(line.values.data()),
                 line.scales.data());
    return;
  case BlockFormat::Q4_0:
    quantizeQ4_0(weights, k, line.values.data(), line.scales.data());
    return;
  default:
    blocks.resize(k / getBlockWeights(format) * getBlockBytes(format));
    if (format == BlockFormat::Q6_K)
      quantizeQ6_K(weights, k, blocks.data());
    else if (format == BlockFormat::Q5_K)
      quantizeQ5_K(weights, k, blocks.data());
    else
      quantizeQ4_K(weights, k, blocks.data());
    splitBlocks(format, blocks.data(), k, line.values.data(),
                line.scales.data(), line.subScales.data());
    return;
  }
}

/// Quantizes a row-major f32 weight of `layout.fileShape` along K, column
/// by column (W(:, n)), and keeps the part the format names in panels
/// (placeColumn), zero past N.
static void packBlocks(const PackedLayout &layout, const char *source,
                       char *out, uint64_t numBytes) {
  int64_t n = layout.fileShape[layout.outIn ? 0 : 1];
  int64_t k = layout.fileShape[layout.outIn ? 1 : 0];
  const float *w = reinterpret_cast<const float *>(source);
  std::vector<float> column(k);
  SplitLine line(layout.blockFormat, k);
  std::vector<char> blocks;
  std::memset(out, 0, numBytes);
  for (int64_t col = 0; col < n; ++col) {
    for (int64_t kk = 0; kk < k; ++kk)
      column[kk] = layout.outIn ? w[col * k + kk] : w[kk * n + col];
    quantizeLine(layout.blockFormat, column.data(), k, line, blocks);
    placeColumn(layout, col, line, out);
  }
}

/// A row-major f32 matrix replaced, in place, by the dequantized `format`
/// blocks of its lines along `axis` (a tfm.param_quant parameter bound as
/// it is).
static void roundTripBlocks(llvm::ArrayRef<int64_t> shape, int64_t axis,
                            BlockFormat format, char *data) {
  int64_t cols = shape[1], k = shape[axis], lines = shape[1 - axis];
  float *w = reinterpret_cast<float *>(data);
  std::vector<float> weights(k);
  SplitLine line(format, k);
  std::vector<char> blocks;
  auto at = [&](int64_t l, int64_t i) -> float & {
    return axis == 1 ? w[l * cols + i] : w[i * cols + l];
  };
  for (int64_t l = 0; l < lines; ++l) {
    for (int64_t i = 0; i < k; ++i)
      weights[i] = at(l, i);
    quantizeLine(format, weights.data(), k, line, blocks);
    if (format == BlockFormat::Q4_0)
      dequantizeQ4_0(line.values.data(), line.scales.data(), k,
                     weights.data());
    else if (format == BlockFormat::Q8_0)
      dequantizeQ8_0(reinterpret_cast<const int8_t *>(line.values.data()),
                     line.scales.data(), k, weights.data());
    else
      dequantizeBlocks(format, blocks.data(), k, weights.data());
    for (int64_t i = 0; i < k; ++i)
      at(l, i) = weights[i];
  }
}

/// The checkpoint tensors parameter `i` (a part of a quantized weight,
/// tfm.param_pack) can be packed from as they are: blocks stored in that
/// format, rows of an out_in weight (a fused parameter's parts, in order,
/// concatenated along N). Empty where they are not all such blocks: the
/// parameter is packed from floats.
static llvm::SmallVector<const TensorView *, 3>
getStoredBlocks(const EntrySignature &sig, size_t i,
                const WeightSource &weights) {
  const EntryArgument &arg = sig.arguments[i];
  const PackedLayout &layout = *arg.packed;
  int64_t n = layout.fileShape[0], k = layout.fileShape[1];
  if (!layout.outIn || (!arg.parts.empty() && arg.concatAxis != 0))
    return {};
  llvm::SmallVector<std::string, 3> names;
  if (arg.parts.empty())
    names.push_back(arg.name);
  else
    names.append(arg.parts.begin(), arg.parts.end());
  llvm::SmallVector<const TensorView *, 3> views;
  int64_t rows = 0;
  for (const std::string &name : names) {
    const TensorView *view =
        weights.checkpoint->lookup(weights.namePrefix + name);
    if (!view || view->blocks != layout.blockFormat ||
        view->shape.size() != 2 || view->shape[1] != k)
      return {};
    rows += view->shape[0];
    views.push_back(view);
  }
  if (rows != n)
    return {};
  return views;
}

/// Packs the part of `views`' stored blocks (getStoredBlocks) that `layout`
/// keeps into `out` without dequantizing: the bound integers and scales are
/// the file's.
static void packStoredBlocks(const PackedLayout &layout,
                             llvm::ArrayRef<const TensorView *> views,
                             const Checkpoint &checkpoint, char *out,
                             uint64_t numBytes) {
  BlockFormat format = layout.blockFormat;
  int64_t k = layout.fileShape[1];
  std::memset(out, 0, numBytes);
  SplitLine line(format, k);
  uint64_t rowBytes =
      uint64_t(k / getBlockWeights(format) * getBlockBytes(format));
  int64_t col = 0;
  for (const TensorView *view : views) {
    for (int64_t row = 0; row < view->shape[0]; ++row, ++col) {
      splitBlocks(format, view->data + view->getStoredRow(row) * rowBytes, k,
                  line.values.data(), line.scales.data(),
                  line.subScales.data());
      placeColumn(layout, col, line, out);
    }
    checkpoint.releasePages(*view);
  }
}

/// The memory of the weights one bindParameters call binds: one mapping in
/// huge pages, cut into consecutive pieces, so that the small buffers (a
/// block format's scales, norms) and the tails of the large ones share huge
/// pages rather than each taking base pages or a huge page of its own. A
/// decode step streams every weight once: on 4 KiB pages it misses the TLB
/// every 4 KiB of each stream (docs/design.md, "Parameters and calling
/// convention"). Only buffers that stay bound come from here: a piece is
/// given back with the whole mapping only.
class WeightArena {
public:
  /// `capacity` bounds what the call will take: reserved, not committed.
  explicit WeightArena(uint64_t capacity) : capacity(capacity) {}

  /// A zeroed, 64-byte aligned piece; a buffer of its own once the
  /// capacity is spent or cannot be mapped.
  llvm::Expected<std::unique_ptr<AlignedBuffer>> allocate(uint64_t numBytes) {
    uint64_t rounded = llvm::alignTo(std::max<uint64_t>(numBytes, 1), 64);
    if (!mapping && capacity) {
      auto mapped = AlignedBuffer::allocateHugePages(capacity);
      if (mapped) {
        mapping = std::move(*mapped);
      } else {
        // Not mappable: every piece a buffer of its own.
        llvm::consumeError(mapped.takeError());
        capacity = 0;
      }
    }
    if (rounded > capacity - used)
      return AlignedBuffer::allocate(numBytes);
    uint64_t offset = used;
    used += rounded;
    return AlignedBuffer::slice(mapping, offset);
  }

private:
  uint64_t capacity, used = 0;
  std::shared_ptr<AlignedBuffer> mapping;
};

static llvm::Expected<BoundArgument>
bindStoredParameter(const EntrySignature &sig, size_t i,
                    const WeightSource &weights, WeightArena *arena);

/// The checkpoint's tensor of parameter `i`, or an error naming it.
static llvm::Expected<const TensorView *>
lookupTensor(const EntrySignature &sig, size_t i,
             const WeightSource &weights) {
  const Checkpoint &checkpoint = *weights.checkpoint;
  std::string name = weights.namePrefix + sig.arguments[i].name;
  if (const TensorView *view = checkpoint.lookup(name))
    return view;
  return makeError(llvm::formatv("{0}: no tensor '{1}' ({2})",
                                 checkpoint.getPath(), name,
                                 describeArgument(sig, i)));
}

/// The shape of the whole weight-file tensor a rank's slice `shape` is cut
/// from.
static llvm::SmallVector<int64_t, 4> getUnshardedShape(const ShardSlice &shard,
                                                       llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t, 4> full(shape);
  full[shard.axis] = 0;
  for (int64_t piece : shard.pieces)
    full[shard.axis] += piece;
  return full;
}

/// Copies rank `rank`'s slice of the row-major tensor `full` (`fullShape`,
/// `from` elements) into `out` (`to` elements, converted as it goes): for
/// every index of the dims before the axis, each piece's block in order.
static void copyShard(const ShardSlice &shard, int64_t rank,
                      llvm::ArrayRef<int64_t> fullShape, const char *full,
                      DType from, char *out, DType to) {
  uint64_t outer =
      *getNumBytes(llvm::ArrayRef(fullShape).take_front(shard.axis), 1);
  uint64_t inner =
      *getNumBytes(llvm::ArrayRef(fullShape).drop_front(shard.axis + 1), 1);
  uint64_t fromSize = getDTypeSize(from), toSize = getDTypeSize(to);
  int64_t extent = fullShape[shard.axis];
  for (uint64_t o = 0; o < outer; ++o) {
    int64_t start = 0;
    for (auto [piece, count] : llvm::zip_equal(shard.pieces, shard.shards)) {
      int64_t block = piece / count;
      int64_t first = start + rank * count / shard.ranks * block;
      uint64_t elements = uint64_t(block) * inner;
      convertElements(full + (o * extent + first) * inner * fromSize, from,
                      out, to, elements);
      out += elements * toSize;
      start += piece;
    }
  }
}

/// Binds a rank's slice of a tensor-parallel parameter: cut (and converted)
/// from the checkpoint's tensor, or from the whole random tensor a
/// single-process run would bind, so that every rank count computes the
/// same model.
static llvm::Error bindShard(const EntrySignature &sig, size_t i,
                             llvm::ArrayRef<int64_t> fileShape,
                             const WeightSource &weights, char *out) {
  const EntryArgument &arg = sig.arguments[i];
  const ShardSlice &shard = *arg.shard;
  llvm::SmallVector<int64_t, 4> fullShape = getUnshardedShape(shard, fileShape);
  DType fileDType = arg.fileDType();
  // A fused parameter (--tfm-fuse-qkv of column-parallel projections): its
  // parts concatenated, each then one piece of the slice.
  if (weights.checkpoint && !arg.parts.empty()) {
    auto full = AlignedBuffer::allocate(
        *getNumBytes(fullShape, getDTypeSize(fileDType)));
    if (!full)
      return full.takeError();
    if (llvm::Error err =
            concatenateParts(sig, i, fullShape, weights, (*full)->get()))
      return err;
    copyShard(shard, weights.rank, fullShape, (*full)->get(), fileDType, out,
              fileDType);
    return llvm::Error::success();
  }
  if (!weights.checkpoint) {
    auto full = AlignedBuffer::allocate(
        *getNumBytes(fullShape, getDTypeSize(fileDType)));
    if (!full)
      return full.takeError();
    fillRandom(arg, fullShape, *weights.randomSeed, (*full)->get());
    copyShard(shard, weights.rank, fullShape, (*full)->get(), fileDType, out,
              fileDType);
    return llvm::Error::success();
  }
  const Checkpoint &checkpoint = *weights.checkpoint;
  std::string name = weights.namePrefix + arg.name;
  llvm::Expected<const TensorView *> found = lookupTensor(sig, i, weights);
  if (!found)
    return found.takeError();
  llvm::Expected<PlainTensor> plain = getPlainTensor(**found);
  if (!plain)
    return plain.takeError();
  const TensorView *view = &plain->view;
  if (!isBindable(*view, arg, weights) ||
      llvm::ArrayRef(view->shape) != llvm::ArrayRef(fullShape))
    return makeError(llvm::formatv(
        "{0}: tensor '{1}' is {2} {3}, but @{4} expects {5} to cut rank "
        "{6}'s slice {7} from",
        checkpoint.getFileOf(name), name, (*found)->getStorageName(),
        formatShape(view->shape), sig.function,
        describe(fileDType, fullShape), weights.rank, formatShape(fileShape)));
  copyShard(shard, weights.rank, fullShape, view->data, view->dtype, out,
            fileDType);
  checkpoint.releasePages(**found);
  return llvm::Error::success();
}

/// Binds one parameter (not yet bound under its name). A parameter held
/// quantized but read as it is (tfm.param_quant, no packing) is bound as
/// the dequantized weights it stands for, in a copy of its own.
static llvm::Expected<BoundArgument> bindParameter(const EntrySignature &sig,
                                                   size_t i,
                                                   const WeightSource &weights,
                                                   WeightArena &arena) {
  const EntryArgument &arg = sig.arguments[i];
  if (arg.quantAxis < 0)
    return bindStoredParameter(sig, i, weights, &arena);
  // What bindStoredParameter binds is copied: not from the arena.
  llvm::Expected<BoundArgument> bound =
      bindStoredParameter(sig, i, weights, nullptr);
  if (!bound)
    return bound;
  auto copy = arena.allocate(bound->numBytes);
  if (!copy)
    return copy.takeError();
  std::memcpy((*copy)->get(), bound->data, bound->numBytes);
  bound->storage = std::move(*copy);
  bound->data = bound->storage->get();
  roundTripBlocks(arg.shape, arg.quantAxis, arg.quantFormat,
                  static_cast<char *>(bound->data));
  return bound;
}

/// Binds one parameter as its weight-file tensor, converted or packed as
/// the signature says.
static llvm::Expected<BoundArgument>
bindStoredParameter(const EntrySignature &sig, size_t i,
                    const WeightSource &weights, WeightArena *arena) {
  const EntryArgument &arg = sig.arguments[i];
  // The tensor as the weight file has it; packed afterwards if the compiled
  // code reads it in panel layout.
  llvm::ArrayRef<int64_t> fileShape =
      arg.packed ? llvm::ArrayRef<int64_t>(arg.packed->fileShape)
                 : llvm::ArrayRef<int64_t>(arg.shape);
  uint64_t numBytes = *getNumBytes(arg.shape, getDTypeSize(arg.dtype));
  DType fileDType = arg.fileDType();
  uint64_t fileBytes = *getNumBytes(fileShape, getDTypeSize(fileDType));
  BoundArgument result;
  result.bound = true;
  // Every way of binding below ends with `numBytes` at `data`.
  result.numBytes = numBytes;
  // The buffer the weight is bound in comes from the arena (if any); those
  // it passes through (a copy to pack from) do not.
  auto allocateBound = [&](uint64_t bytes) {
    return arena ? arena->allocate(bytes) : AlignedBuffer::allocate(bytes);
  };
  auto allocatePassed = [&](uint64_t bytes) {
    return arg.packed ? AlignedBuffer::allocate(bytes) : allocateBound(bytes);
  };
  auto packInto = [&](const char *source) -> llvm::Error {
    auto storage = allocateBound(numBytes);
    if (!storage)
      return storage.takeError();
    result.storage = std::move(*storage);
    if (arg.packed->quantPart != PackedLayout::QuantPart::None)
      packBlocks(*arg.packed, source, result.storage->get(), numBytes);
    else if (arg.packed->amxParts)
      packAmxParts(*arg.packed, source, result.storage->get());
    else if (getDTypeSize(arg.dtype) == 2)
      packWeight<uint16_t>(*arg.packed, source, result.storage->get());
    else
      packWeight<uint32_t>(*arg.packed, source, result.storage->get());
    result.data = result.storage->get();
    return llvm::Error::success();
  };
  if (!weights.checkpoint && !weights.randomSeed)
    return makeError(
        llvm::formatv("parameter '{0}' ({1}) needs a value: pass --weights "
                      "FILE.safetensors or --random-weights SEED",
                      arg.name, describeArgument(sig, i)));
  // Blocks a GGUF file stores in the very format the code reads: placed in
  // panels as they are.
  if (weights.checkpoint && arg.packed &&
      arg.packed->quantPart != PackedLayout::QuantPart::None && !arg.shard) {
    llvm::SmallVector<const TensorView *, 3> blocks =
        getStoredBlocks(sig, i, weights);
    if (!blocks.empty()) {
      auto storage = allocateBound(numBytes);
      if (!storage)
        return storage.takeError();
      result.storage = std::move(*storage);
      result.data = result.storage->get();
      packStoredBlocks(*arg.packed, blocks, *weights.checkpoint,
                       result.storage->get(), numBytes);
      return result;
    }
  }
  if (!weights.checkpoint || !arg.parts.empty() || arg.shard) {
    auto allocated = allocatePassed(fileBytes);
    if (!allocated)
      return allocated.takeError();
    std::shared_ptr<AlignedBuffer> logical = std::move(*allocated);
    if (arg.shard) {
      if (llvm::Error err =
              bindShard(sig, i, fileShape, weights, logical->get()))
        return std::move(err);
    } else if (weights.checkpoint) {
      if (llvm::Error err =
              concatenateParts(sig, i, fileShape, weights, logical->get()))
        return std::move(err);
    } else {
      fillRandom(arg, fileShape, *weights.randomSeed, logical->get());
    }
    if (arg.packed) {
      if (llvm::Error err = packInto(logical->get()))
        return std::move(err);
    } else {
      result.storage = std::move(logical);
      result.data = result.storage->get();
    }
    return result;
  }
  const Checkpoint &checkpoint = *weights.checkpoint;
  std::string name = weights.namePrefix + arg.name;
  llvm::Expected<const TensorView *> found = lookupTensor(sig, i, weights);
  if (!found)
    return found.takeError();
  const TensorView *stored = *found;
  llvm::Expected<PlainTensor> plain = getPlainTensor(*stored);
  if (!plain)
    return plain.takeError();
  const TensorView *view = &plain->view;
  if (!isBindable(*view, arg, weights) ||
      llvm::ArrayRef(view->shape) != fileShape)
    return makeError(llvm::formatv(
        "{0}: tensor '{1}' is {2} {3}, but @{4} expects {5}",
        checkpoint.getFileOf(name), name, stored->getStorageName(),
        formatShape(view->shape), sig.function,
        arg.rounded ? "a float tensor " + formatShape(fileShape) +
                          " (bound rounded to " +
                          getDTypeName(arg.dtype).str() + ")"
                    : describe(fileDType, fileShape)));
  // A tensor of another float type is converted once, here, into a buffer
  // of the parameter's type; it then binds like an aligned tensor.
  std::shared_ptr<AlignedBuffer> converted;
  const char *source = view->data;
  if (view->dtype != fileDType) {
    auto storage = allocatePassed(fileBytes);
    if (!storage)
      return storage.takeError();
    converted = std::move(*storage);
    convertElements(view->data, view->dtype, converted->get(), fileDType,
                    view->getNumElements());
    source = converted->get();
  }
  if (arg.packed) {
    // Packing reads floats: copy a misaligned tensor first.
    if (reinterpret_cast<uintptr_t>(source) % getDTypeSize(fileDType)) {
      auto aligned = AlignedBuffer::allocate(fileBytes);
      if (!aligned)
        return aligned.takeError();
      std::memcpy((*aligned)->get(), source, fileBytes);
      if (llvm::Error err = packInto((*aligned)->get()))
        return std::move(err);
    } else if (llvm::Error err = packInto(source)) {
      return std::move(err);
    }
    // A tensor that is copied (packed, converted, aligned) is read from the
    // file once: the mapping's pages go then, or the process would hold the
    // weight twice.
    checkpoint.releasePages(*stored);
    return result;
  }
  if (converted) {
    result.storage = std::move(converted);
    result.data = result.storage->get();
    checkpoint.releasePages(*stored);
    return result;
  }
  // Generated code assumes natural alignment; safetensors only aligns the
  // data area as its writer chose, so copy the rare misaligned tensor.
  // The mapping is private and writable, hence the const_cast is safe.
  if (reinterpret_cast<uintptr_t>(view->data) % getDTypeSize(view->dtype)) {
    auto storage = allocateBound(numBytes);
    if (!storage)
      return storage.takeError();
    result.storage = std::move(*storage);
    std::memcpy(result.storage->get(), view->data, numBytes);
    result.data = result.storage->get();
    checkpoint.releasePages(*stored);
  } else {
    // A dequantized tensor's own buffer (the file's blocks then read no
    // more), or the file's mapping.
    result.storage = plain->storage;
    result.data = const_cast<char *>(view->data);
    if (plain->storage)
      checkpoint.releasePages(*stored);
  }
  return result;
}

/// `sig` with each parameter that every rank binds from its own tensor
/// (tfm.param_rank_names) named as `rank` binds it.
static llvm::Expected<EntrySignature>
resolveRankNames(const EntrySignature &sig, int64_t rank) {
  EntrySignature resolved = sig;
  for (EntryArgument &arg : resolved.arguments) {
    if (arg.rankNames.empty())
      continue;
    if (rank < 0 || rank >= int64_t(arg.rankNames.size()))
      return makeError(llvm::formatv(
          "parameter '{0}' names tensors for {1} ranks; this is rank {2}",
          arg.name, arg.rankNames.size(), rank));
    arg.name = arg.rankNames[rank];
  }
  return resolved;
}

llvm::Error engine::bindParameters(const EntrySignature &rankSig,
                                   const WeightSource &weights,
                                   std::vector<BoundArgument> &bound,
                                   llvm::StringMap<BoundArgument> &shared) {
  // Only an expert-parallel module names tensors per rank: the others bind
  // from the signature as it is, uncopied.
  std::optional<EntrySignature> resolved;
  if (llvm::any_of(rankSig.arguments, [](const EntryArgument &arg) {
        return !arg.rankNames.empty();
      })) {
    llvm::Expected<EntrySignature> named =
        resolveRankNames(rankSig, weights.rank);
    if (!named)
      return named.takeError();
    resolved = std::move(*named);
  }
  const EntrySignature &sig = resolved ? *resolved : rankSig;
  uint64_t capacity = 0;
  for (const EntryArgument &arg : sig.arguments)
    if (arg.kind == EntryArgument::Kind::Param)
      capacity +=
          llvm::alignTo(*getNumBytes(arg.shape, getDTypeSize(arg.dtype)), 64);
  WeightArena arena(capacity);
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    if (arg.kind != EntryArgument::Kind::Param)
      continue;
    // A packed and a plain binding of one tensor are different buffers, as
    // are bindings of one tensor in two types (a tied embedding read as f32
    // by the gather and as f16 by the GPU's LM head).
    std::string key = (arg.name + "#" + getDTypeName(arg.dtype)).str();
    if (arg.quantAxis >= 0)
      key += llvm::formatv("#{0}({1})", getBlockFormatName(arg.quantFormat),
                           arg.quantAxis)
                 .str();
    if (arg.shard)
      key += llvm::formatv("#shard({0},{1},{2})", arg.shard->axis,
                           llvm::join(llvm::map_range(arg.shard->pieces,
                                                      [](int64_t p) {
                                                        return std::to_string(p);
                                                      }),
                                      ","),
                           llvm::join(llvm::map_range(arg.shard->shards,
                                                      [](int64_t c) {
                                                        return std::to_string(c);
                                                      }),
                                      ","))
                 .str();
    if (arg.packed)
      key += llvm::formatv(
                 "#packed({0},{1}{2}{3})",
                 arg.packed->outIn ? "out_in" : "in_out", arg.packed->panel,
                 arg.packed->group > 1 ? ",group4" : "",
                 arg.packed->quantPart != PackedLayout::QuantPart::None
                     ? llvm::formatv(",{0}/{1}",
                                     getBlockFormatName(arg.packed->blockFormat),
                                     int(arg.packed->quantPart))
                           .str()
                 : arg.packed->amxParts == 3 ? ",amx_bf16x3"
                 : arg.packed->amxParts == 1 ? ",amx_bf16"
                 : arg.packed->kPairs        ? ",bf16_pairs"
                                             : "")
                 .str();
    auto it = shared.find(key);
    if (it == shared.end()) {
      llvm::Expected<BoundArgument> parameter =
          bindParameter(sig, i, weights, arena);
      if (!parameter)
        return parameter.takeError();
      it = shared.try_emplace(key, std::move(*parameter)).first;
    }
    bound[i] = it->second;
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Call frames
//===----------------------------------------------------------------------===//

/// A memref descriptor of any rank, laid out as StridedMemRefType<T, Rank>:
/// {allocated, aligned, offset, sizes[Rank], strides[Rank]}, identity layout.
/// The element type does not change the layout, so one builder serves every
/// tensor argument.
std::vector<int64_t> engine::makeDescriptor(void *data,
                                            llvm::ArrayRef<int64_t> shape) {
  size_t rank = shape.size();
  std::vector<int64_t> words(3 + 2 * rank);
  intptr_t address = reinterpret_cast<intptr_t>(data);
  words[0] = address;
  words[1] = address;
  words[2] = 0;
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    words[3 + i] = shape[i];
    words[3 + rank + i] = stride;
    stride *= shape[i];
  }
  return words;
}

template <int Rank> constexpr bool hasDescriptorLayout() {
  using Ref = StridedMemRefType<float, Rank>;
  return sizeof(Ref) == sizeof(int64_t) * (3 + 2 * Rank) &&
         offsetof(Ref, offset) == 2 * sizeof(int64_t) &&
         offsetof(Ref, sizes) == 3 * sizeof(int64_t) &&
         offsetof(Ref, strides) == (3 + Rank) * sizeof(int64_t);
}
static_assert(hasDescriptorLayout<1>() && hasDescriptorLayout<2>() &&
                  hasDescriptorLayout<3>() && hasDescriptorLayout<4>(),
              "makeDescriptor must match StridedMemRefType");
static_assert(sizeof(StridedMemRefType<float, 0>) == 3 * sizeof(int64_t),
              "makeDescriptor must match StridedMemRefType");

llvm::Expected<std::unique_ptr<CallFrame>>
CallFrame::create(const EntrySignature &sig,
                  std::vector<BoundArgument> boundArguments) {
  std::unique_ptr<CallFrame> frame(
      new CallFrame(sig, std::move(boundArguments)));
  std::vector<BoundArgument> &bound = frame->bound;
  auto &results = frame->results;
  auto &descriptors = frame->descriptors;
  auto &descriptorPointers = frame->descriptorPointers;
  auto &packed = frame->packed;
  for (const EntryResult &r : sig.results) {
    if (r.isKVCache) {
      results.push_back(static_cast<char *>(bound[r.cacheArgument].data));
      continue;
    }
    auto storage =
        AlignedBuffer::allocate(*getNumBytes(r.shape, getDTypeSize(r.dtype)));
    if (!storage)
      return storage.takeError();
    frame->resultStorage.push_back(std::move(*storage));
    results.push_back(frame->resultStorage.back()->get());
  }
  for (auto [i, arg] : llvm::enumerate(sig.arguments))
    if (arg.kind != EntryArgument::Kind::Index)
      descriptors.push_back(makeDescriptor(bound[i].data, arg.shape));
  for (auto [i, r] : llvm::enumerate(sig.results))
    if (!r.isKVCache)
      descriptors.push_back(makeDescriptor(results[i], r.shape));
  for (std::vector<int64_t> &d : descriptors)
    descriptorPointers.push_back(d.data());
  size_t nextDescriptor = 0;
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    if (arg.kind == EntryArgument::Kind::Index)
      packed.push_back(&bound[i].index);
    else
      packed.push_back(&descriptorPointers[nextDescriptor++]);
  }
  while (nextDescriptor < descriptorPointers.size())
    packed.push_back(&descriptorPointers[nextDescriptor++]);
  return frame;
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

double engine::loadAsDouble(const char *data, DType dtype, uint64_t i) {
  auto load = [&](auto zero) {
    decltype(zero) value;
    std::memcpy(&value, data + i * sizeof(value), sizeof(value));
    return value;
  };
  switch (dtype) {
  case DType::F64: return load(double());
  case DType::F32: return load(float());
  case DType::F16: return halfToFloat(load(uint16_t()));
  case DType::BF16: return bfloat16ToFloat(load(uint16_t()));
  case DType::I64: return double(load(int64_t()));
  case DType::I32: return load(int32_t());
  case DType::I16: return load(int16_t());
  case DType::I8: return load(int8_t());
  case DType::U8: return load(uint8_t());
  case DType::Bool: return load(uint8_t()) != 0;
  }
  return 0;
}

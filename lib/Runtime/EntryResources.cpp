//===- EntryResources.cpp - what an entry's inputs may be and cost --------===//
#include "tfm/Runtime/EntryResources.h"
#include "tfm/Runtime/Limits.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::runtime;

/// The `tfm.param` name of `value` when it is an argument of `fn`.
static std::string describeBuffer(func::FuncOp fn, Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    if (arg.getOwner()->isEntryBlock() &&
        arg.getOwner()->getParentOp() == fn.getOperation())
      for (llvm::StringRef attr :
           {kParamAttrName, kKVCacheAttrName, kInputAttrName})
        if (auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                         attr))
          return (" '" + name.getValue() + "'").str();
  return "";
}

static int64_t dimOf(Value v, unsigned d) {
  return cast<RankedTensorType>(v.getType()).getDimSize(d);
}

/// The range one use of an input imposes, if the user indexes memory with it.
static std::optional<InputRange> rangeOfUse(func::FuncOp fn, OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto op = dyn_cast<EmbeddingOp>(user)) {
    if (use.get() != op.getIds())
      return std::nullopt;
    int64_t rows = dimOf(op.getTable(), 0);
    // A rank's slice of a vocab-parallel table (first_row): the ids index
    // the whole vocabulary, the ranks' slices together.
    if (op.getFirstRow())
      rows *= getTensorParallelRanks(op).value_or(1);
    return InputRange{0, rows - 1,
                      llvm::formatv("tfm.embedding's ids index the {0} rows "
                                    "of its table{1}",
                                    rows, describeBuffer(fn, op.getTable()))};
  }
  if (auto op = dyn_cast<PositionEmbeddingOp>(user)) {
    int64_t rows = dimOf(op.getTable(), 0), seq = dimOf(op.getInput(), 1);
    return InputRange{0, rows - seq,
                      llvm::formatv("tfm.position_embedding adds rows "
                                    "[offset, offset + {0}) of its {1}-row "
                                    "table{2}",
                                    seq, rows,
                                    describeBuffer(fn, op.getTable()))};
  }
  if (auto op = dyn_cast<KVCacheWriteOp>(user)) {
    if (use.get() != op.getPosition())
      return std::nullopt;
    int64_t slots = dimOf(op.getCache(), 2), rows = dimOf(op.getUpdate(), 2);
    if (op.getRing()) // Any position has a slot: only negatives are wrong.
      return InputRange{0, std::numeric_limits<int64_t>::max(),
                        "tfm.kv_cache_write's position must not be negative"};
    return InputRange{0, slots - rows,
                      llvm::formatv("tfm.kv_cache_write writes {0} row(s) from "
                                    "it into the {1} positions of the KV "
                                    "cache{2}",
                                    rows, slots,
                                    describeBuffer(fn, op.getCache()))};
  }
  if (auto op = dyn_cast<AttentionOp>(user)) {
    if (use.get() != op.getOffset())
      return std::nullopt;
    int64_t keys = dimOf(op.getKey(), 2), seq = dimOf(op.getQuery(), 2);
    if (op.getRingCache())
      return InputRange{0, std::numeric_limits<int64_t>::max() - seq,
                        "tfm.attention's offset must not be negative"};
    return InputRange{0, keys - seq,
                      llvm::formatv("tfm.attention's {0} queries from it must "
                                    "lie within its {1} keys",
                                    seq, keys)};
  }
  return std::nullopt;
}

void mlir::tfm::runtime::deriveInputRanges(ModuleOp module,
                                           EntrySignature &sig) {
  auto fn = module.lookupSymbol<func::FuncOp>(sig.function);
  if (!fn || fn.isExternal())
    return;
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    if (arg.kind != EntryArgument::Kind::Index &&
        !(arg.kind == EntryArgument::Kind::Input && isIntegerDType(arg.dtype)))
      continue;
    for (OpOperand &use : fn.getArgument(i).getUses()) {
      std::optional<InputRange> r = rangeOfUse(fn, use);
      if (!r)
        continue;
      if (!arg.range) {
        arg.range = std::move(r);
        continue;
      }
      // Every use must be in bounds: intersect, keeping the reason of the
      // tighter upper bound.
      arg.range->min = std::max(arg.range->min, r->min);
      if (r->max < arg.range->max) {
        arg.range->max = r->max;
        arg.range->why = r->why;
      }
    }
  }
}

void mlir::tfm::runtime::copyInputRanges(const EntrySignature &from,
                                         EntrySignature &to) {
  for (EntryArgument &arg : to.arguments) {
    if (arg.kind == EntryArgument::Kind::Param)
      continue;
    for (const EntryArgument &old : from.arguments)
      if (old.kind == arg.kind && old.name == arg.name)
        arg.range = old.range;
  }
}

std::optional<std::pair<uint64_t, int64_t>>
mlir::tfm::runtime::findOutOfRange(const InputRange &range, DType dtype,
                                   const void *data, uint64_t count) {
  auto scan = [&](const auto *values)
      -> std::optional<std::pair<uint64_t, int64_t>> {
    for (uint64_t i = 0; i < count; ++i) {
      int64_t v = values[i];
      if (v < range.min || v > range.max)
        return std::make_pair(i, v);
    }
    return std::nullopt;
  };
  switch (dtype) {
  case DType::I64:
    return scan(static_cast<const int64_t *>(data));
  case DType::I32:
    return scan(static_cast<const int32_t *>(data));
  case DType::I16:
    return scan(static_cast<const int16_t *>(data));
  case DType::I8:
    return scan(static_cast<const int8_t *>(data));
  default:
    return std::nullopt;
  }
}

static llvm::Error overflowError(llvm::StringRef what,
                                 llvm::StringRef text) {
  return llvm::createStringError(
      std::make_error_code(std::errc::value_too_large),
      llvm::formatv("{0} of type {1}: its byte count overflows 64 bits", what,
                    text)
          .str());
}

static std::optional<uint64_t> bytesOf(DType dtype,
                                       llvm::ArrayRef<int64_t> shape) {
  return getNumBytes(shape, getDTypeSize(dtype));
}

/// Bytes of a static tensor type: the element's bit width rounded up to
/// bytes; index and other element types count as 8 bytes.
static std::optional<uint64_t> bytesOf(RankedTensorType type) {
  if (!type.hasStaticShape())
    return 0;
  Type element = type.getElementType();
  unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 64;
  return getNumBytes(type.getShape(), (bits + 7) / 8);
}

llvm::Expected<MemoryEstimate> mlir::tfm::runtime::estimateMemory(
    ModuleOp module, llvm::ArrayRef<const EntrySignature *> sigs) {
  MemoryEstimate m;
  llvm::StringSet<> params;
  auto add = [&](uint64_t &slot, DType dtype, llvm::ArrayRef<int64_t> shape,
                 const llvm::Twine &what) -> llvm::Error {
    std::optional<uint64_t> bytes = bytesOf(dtype, shape);
    std::string type = (getDTypeName(dtype) + " " + formatShape(shape)).str();
    if (!bytes)
      return overflowError(what.str(), type);
    std::optional<uint64_t> sum = checkedAdd(slot, *bytes);
    if (!sum)
      return llvm::createStringError(
          std::make_error_code(std::errc::value_too_large),
          llvm::formatv("{0} of type {1}: the total byte count of the "
                        "entry's tensors overflows 64 bits",
                        what, type)
              .str());
    slot = *sum;
    return llvm::Error::success();
  };
  for (const EntrySignature *sig : sigs) {
    auto fn = module.lookupSymbol<func::FuncOp>(sig->function);
    for (auto [i, arg] : llvm::enumerate(sig->arguments)) {
      if (arg.kind == EntryArgument::Kind::Index)
        continue;
      std::string what = llvm::formatv("argument '{0}' of @{1}", arg.name,
                                       sig->function);
      uint64_t *slot = &m.inputs;
      if (arg.kind == EntryArgument::Kind::Param) {
        if (!params.insert(arg.name).second)
          continue;
        slot = &m.weights;
      } else if (arg.kind == EntryArgument::Kind::KVCache) {
        slot = &m.caches;
      }
      if (llvm::Error err = add(*slot, arg.dtype, arg.shape, what))
        return std::move(err);
    }
    for (const EntryResult &r : sig->results)
      if (!r.isKVCache)
        if (llvm::Error err = add(m.results, r.dtype, r.shape,
                                  "result '" + r.name + "'"))
          return std::move(err);
    if (!fn)
      continue;
    // The workspace: at least the largest intermediate value lives at once.
    std::optional<std::pair<std::string, std::string>> overflow;
    fn.walk([&](Operation *op) {
      for (Value v : op->getResults()) {
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type)
          continue;
        std::optional<uint64_t> bytes = bytesOf(type);
        if (!bytes) {
          std::string what = llvm::formatv("the result of {0} in @{1}",
                                           op->getName(), sig->function);
          std::string text;
          llvm::raw_string_ostream os(text);
          os << type;
          overflow.emplace(what, text);
          return WalkResult::interrupt();
        }
        m.workspace = std::max(m.workspace, *bytes);
      }
      return WalkResult::advance();
    });
    if (overflow)
      return overflowError(overflow->first, overflow->second);
  }
  std::optional<uint64_t> total = checkedAdd(m.weights, m.inputs);
  for (uint64_t part : {m.caches, m.results, m.workspace})
    if (total)
      total = checkedAdd(*total, part);
  if (!total)
    return llvm::createStringError(
        std::make_error_code(std::errc::value_too_large),
        "the memory the entry needs overflows 64 bits");
  m.total = *total;
  return m;
}

llvm::Error mlir::tfm::runtime::checkMemoryFits(
    ModuleOp module, llvm::ArrayRef<const EntrySignature *> sigs,
    std::optional<uint64_t> limit) {
  llvm::Expected<MemoryEstimate> estimate = estimateMemory(module, sigs);
  if (!estimate)
    return estimate.takeError();
  const MemoryEstimate &m = *estimate;
  uint64_t bound = limit ? *limit : getPhysicalMemory();
  if (bound == 0 || m.total <= bound)
    return llvm::Error::success();
  return llvm::createStringError(llvm::formatv(
      "the model needs about {0} (weights {1}, KV caches {2}, inputs {3}, "
      "results {4}, largest temporary {5}), more than {6} of {7}",
      formatBytes(m.total), formatBytes(m.weights), formatBytes(m.caches),
      formatBytes(m.inputs), formatBytes(m.results), formatBytes(m.workspace),
      limit ? "the --max-memory limit" : "the machine's memory",
      formatBytes(bound)).str());
}

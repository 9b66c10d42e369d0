//===- EntrySignature.cpp - what a tfm entry function expects -------------===//
#include "tfm/Runtime/EntrySignature.h"
#include "tfm/Dialect/Tfm/IR/QuantizedParts.h"
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/IR/TfmAttrNames.h"
#include "tfm/Runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::runtime;

/// The runtime's name for a part of a quantized weight.
static PackedLayout::QuantPart getRuntimePart(QuantizedPart part) {
  switch (part) {
  case QuantizedPart::Values:
    return PackedLayout::QuantPart::Values;
  case QuantizedPart::Scales:
    return PackedLayout::QuantPart::Scales;
  case QuantizedPart::Super:
    return PackedLayout::QuantPart::Super;
  }
  return PackedLayout::QuantPart::None;
}

/// The runtime's name for a dialect block format.
static BlockFormat getBlockFormat(QuantFormat format) {
  switch (format) {
  case QuantFormat::q8_0:
    return BlockFormat::Q8_0;
  case QuantFormat::q4_0:
    return BlockFormat::Q4_0;
  case QuantFormat::q4_k:
    return BlockFormat::Q4_K;
  case QuantFormat::q5_k:
    return BlockFormat::Q5_K;
  case QuantFormat::q6_k:
    return BlockFormat::Q6_K;
  }
  return BlockFormat::None;
}

static std::optional<DType> getDType(Type type) {
  if (type.isF64())
    return DType::F64;
  if (type.isF32())
    return DType::F32;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isSignlessInteger(64))
    return DType::I64;
  if (type.isSignlessInteger(32))
    return DType::I32;
  if (type.isSignlessInteger(16))
    return DType::I16;
  if (type.isSignlessInteger(8))
    return DType::I8;
  return std::nullopt;
}

/// Element type and shape of a statically shaped tensor of a supported type;
/// `what` names the value in the error.
static llvm::Error getTensorInfo(Type type, const std::string &what,
                                 DType &dtype,
                                 llvm::SmallVectorImpl<int64_t> &shape) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return formatError("{0} has type {1}; expected a ranked tensor or index",
                       what, type);
  if (!tensor.hasStaticShape())
    return formatError("{0} has dynamic shape {1}; shapes must be static", what,
                       type);
  std::optional<DType> d = getDType(tensor.getElementType());
  if (!d)
    return formatError("{0} has unsupported element type {1}", what,
                       tensor.getElementType());
  dtype = *d;
  shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return llvm::Error::success();
}

static func::FuncOp findEntry(ModuleOp module, llvm::StringRef entry,
                              std::string &error) {
  llvm::SmallVector<func::FuncOp> publicFuncs;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn.isPublic() && !fn.isExternal())
      publicFuncs.push_back(fn);
  std::string names;
  for (func::FuncOp fn : publicFuncs)
    names += (names.empty() ? "@" : ", @") + fn.getSymName().str();
  if (names.empty())
    names = "none";

  llvm::StringRef wanted = entry.empty() ? "forward" : entry;
  for (func::FuncOp fn : publicFuncs)
    if (fn.getSymName() == wanted)
      return fn;
  if (entry.empty() && publicFuncs.size() == 1)
    return publicFuncs.front();
  if (entry.empty())
    error = llvm::formatv("no entry function: there is no @forward and {0} "
                          "public functions; pass --entry (public functions: "
                          "{1})",
                          publicFuncs.size(), names);
  else
    error = llvm::formatv("no public function @{0} (public functions: {1})",
                          entry, names);
  return nullptr;
}

llvm::Expected<EntrySignature>
mlir::tfm::runtime::getEntrySignature(ModuleOp module, llvm::StringRef entry) {
  std::string error;
  func::FuncOp fn = findEntry(module, entry, error);
  if (!fn)
    return makeError(error);

  EntrySignature signature;
  signature.function = fn.getSymName().str();
  llvm::StringSet<> argNames;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    EntryArgument arg;
    Type type = fn.getArgument(i).getType();
    auto param = fn.getArgAttrOfType<StringAttr>(i, kParamAttrName);
    auto input = fn.getArgAttrOfType<StringAttr>(i, kInputAttrName);
    auto cache = fn.getArgAttrOfType<StringAttr>(i, kKVCacheAttrName);
    if (int(bool(param)) + int(bool(input)) + int(bool(cache)) > 1)
      return formatError(
          "argument #{0} of @{1} has more than one of tfm.param, "
          "tfm.input and tfm.kv_cache",
          i, signature.function);
    if (param) {
      arg.kind = EntryArgument::Kind::Param;
      arg.name = param.getValue().str();
    } else if (cache) {
      arg.kind = EntryArgument::Kind::KVCache;
      arg.name = cache.getValue().str();
    } else {
      arg.kind = EntryArgument::Kind::Input;
      arg.name = input ? input.getValue().str() : "arg" + std::to_string(i);
    }
    std::string what = llvm::formatv("argument #{0} ('{1}') of @{2}", i,
                                     arg.name, signature.function);
    if (type.isIndex()) {
      if (param)
        return formatError("{0} is a tfm.param of type index; parameters must "
                           "be tensors",
                           what);
      arg.kind = EntryArgument::Kind::Index;
    } else if (llvm::Error err =
                   getTensorInfo(type, what, arg.dtype, arg.shape)) {
      return std::move(err);
    }
    if (Attribute names = fn.getArgAttr(i, kParamRankNamesAttrName)) {
      auto list = dyn_cast<ArrayAttr>(names);
      auto ranks = module->getAttrOfType<IntegerAttr>(kTensorParallelAttrName);
      if (!param || !list || !ranks || int64_t(list.size()) != ranks.getInt() ||
          !llvm::all_of(list, llvm::IsaPred<StringAttr>) ||
          list[0] != StringAttr(param))
        return formatError("{0}: tfm.param_rank_names needs tfm.param, a "
                           "module with tfm.tensor_parallel and a name per "
                           "rank, rank 0's the tfm.param",
                           what);
      for (Attribute name : list)
        arg.rankNames.push_back(cast<StringAttr>(name).getValue().str());
    }
    if (auto parts = fn.getArgAttrOfType<ArrayAttr>(i, kParamPartsAttrName)) {
      auto axis = fn.getArgAttrOfType<IntegerAttr>(i, kParamConcatAxisAttrName);
      // A packed parameter concatenates its parts in the file's 2-D shape.
      int64_t rank = fn.getArgAttr(i, kParamPackAttrName) ? 2 : arg.shape.size();
      if (!param || !axis || axis.getInt() < 0 || axis.getInt() >= rank)
        return formatError(
            "{0}: tfm.param_parts needs tfm.param and an in-range "
            "tfm.param_concat_axis",
            what);
      arg.concatAxis = axis.getInt();
      for (Attribute part : parts) {
        auto name = dyn_cast<StringAttr>(part);
        if (!name)
          return formatError("{0}: tfm.param_parts must hold strings", what);
        arg.parts.push_back(name.getValue().str());
      }
    }
    if (fn.getArgAttr(i, kParamRoundedAttrName)) {
      if (!param || (arg.dtype != DType::F32 && arg.dtype != DType::BF16 &&
                     arg.dtype != DType::F16))
        return formatError("{0}: tfm.param_rounded needs tfm.param and a float "
                           "argument",
                           what);
      arg.rounded = true;
    }
    if (auto pack = fn.getArgAttrOfType<DictionaryAttr>(i, kParamPackAttrName)) {
      auto layout = pack.getAs<StringAttr>("layout");
      auto panel = pack.getAs<IntegerAttr>("panel");
      auto shape = pack.getAs<DenseI64ArrayAttr>("shape");
      Attribute format = pack.get("format");
      auto formatName = dyn_cast_or_null<StringAttr>(format);
      std::optional<std::pair<QuantFormat, QuantizedPart>> part =
          formatName ? parseQuantizedPartName(formatName.getValue())
                     : std::nullopt;
      bool quantized = part.has_value();
      bool knownFormat =
          !format || quantized ||
          (formatName && (formatName.getValue() == kAmxSplitWeightFormat ||
                          formatName.getValue() == kAmxPairedWeightFormat ||
                          formatName.getValue() == kBf16PairsWeightFormat));
      if (quantized) {
        // Blocks along K, in panels of 8 to 64 columns (the kernels').
        if (!param || !layout || !panel || !shape || shape.size() != 2 ||
            (layout.getValue() != "in_out" && layout.getValue() != "out_in") ||
            !llvm::is_contained({8, 16, 32, 64}, panel.getInt()) ||
            shape[0] < 1 || shape[1] < 1)
          return formatError("{0}: tfm.param_pack with format = \"{1}\" needs "
                             "tfm.param and {{layout = \"in_out\" | "
                             "\"out_in\", panel = 8 | 16 | 32 | 64, "
                             "shape = array<i64: rows, cols>}",
                             what, formatName.getValue());
        auto [quantFormat, quantPart] = *part;
        bool values = quantPart == QuantizedPart::Values;
        auto group = pack.getAs<IntegerAttr>("group");
        if (pack.get("group") &&
            (!values || !group || (group.getInt() != 1 && group.getInt() != 4)))
          return formatError("{0}: tfm.param_pack's group must be 1 or 4, and "
                             "only with the values of a quantized weight "
                             "(format = \"{1}\", \"{2}\", ...)",
                             what, kQ8_0ValuesWeightFormat,
                             kQ4_0ValuesWeightFormat);
        PackedLayout &packed = arg.packed.emplace();
        packed.outIn = layout.getValue() == "out_in";
        packed.panel = panel.getInt();
        packed.group = group ? group.getInt() : 1;
        packed.sixBitValues = isSixBitValues(quantFormat, packed.group);
        packed.fileShape.assign(shape.asArrayRef().begin(),
                                shape.asArrayRef().end());
        packed.blockFormat = getBlockFormat(quantFormat);
        packed.quantPart = getRuntimePart(quantPart);
        int64_t n = packed.fileShape[packed.outIn ? 0 : 1];
        int64_t k = packed.fileShape[packed.outIn ? 1 : 0];
        int64_t panels = (n + packed.panel - 1) / packed.panel;
        int64_t blockWeights = getBlockWeights(packed.blockFormat);
        llvm::SmallVector<int64_t, 5> expected = getQuantizedPartShape(
            quantFormat, quantPart, panels, k, packed.panel, packed.group);
        DType dtype =
            isF16QuantizedPart(quantFormat, quantPart) ? DType::F16 : DType::I8;
        bool concatenable = arg.parts.empty() || arg.concatAxis == 0 ||
                            arg.concatAxis == 1;
        if (k % blockWeights || arg.shape != expected || arg.dtype != dtype ||
            !concatenable)
          return formatError(
              "{0}: tfm.param_pack of a {1}x{2} weight as {3} needs a K that "
              "{4} divides and an argument {5} {6}",
              what, packed.fileShape[0], packed.fileShape[1],
              formatName.getValue(), blockWeights, getDTypeName(dtype),
              llvm::join(llvm::map_range(
                             expected,
                             [](int64_t size) { return std::to_string(size); }),
                         "x"));
      } else if (!param || !layout || !panel || !shape || shape.size() != 2 ||
          (layout.getValue() != "in_out" && layout.getValue() != "out_in") ||
          panel.getInt() < 1 || shape[0] < 1 || shape[1] < 1 || !knownFormat)
        return formatError("{0}: tfm.param_pack needs tfm.param and {{layout = "
                           "\"in_out\" | \"out_in\", panel = N > 0, shape = "
                           "array<i64: rows, cols>} and optionally format = "
                           "\"{1}\" | \"{2}\" | \"{3}\" | \"{4}\" | \"{5}\" | "
                           "\"{6}\" | \"{7}\" | \"{8}\" | \"{9}\" | "
                           "\"{10}\" | \"{11}\" | \"{12}\" | \"{13}\" | "
                           "\"{14}\" | \"{15}\" | \"{16}\"",
                           what, kAmxSplitWeightFormat, kAmxPairedWeightFormat,
                           kBf16PairsWeightFormat, kQ8_0ValuesWeightFormat,
                           kQ8_0ScalesWeightFormat, kQ4_0ValuesWeightFormat,
                           kQ4_0ScalesWeightFormat, kQ4_KValuesWeightFormat,
                           kQ4_KScalesWeightFormat, kQ4_KSuperWeightFormat,
                           kQ5_KValuesWeightFormat, kQ5_KScalesWeightFormat,
                           kQ5_KSuperWeightFormat, kQ6_KValuesWeightFormat,
                           kQ6_KScalesWeightFormat, kQ6_KSuperWeightFormat);
      if (!quantized) {
        PackedLayout &packed = arg.packed.emplace();
        packed.outIn = layout.getValue() == "out_in";
        packed.panel = panel.getInt();
        llvm::StringRef formatValue =
            format ? formatName.getValue() : llvm::StringRef();
        packed.kPairs = formatValue == kBf16PairsWeightFormat;
        packed.amxParts = formatValue == kAmxSplitWeightFormat    ? 3
                          : formatValue == kAmxPairedWeightFormat ? 1
                                                                  : 0;
        packed.fileShape.assign(shape.asArrayRef().begin(),
                                shape.asArrayRef().end());
        int64_t n = packed.fileShape[packed.outIn ? 0 : 1];
        int64_t k = packed.fileShape[packed.outIn ? 1 : 0];
        int64_t panels = (n + packed.panel - 1) / packed.panel;
        bool concatenable = arg.parts.empty() || arg.concatAxis == 0 ||
                            arg.concatAxis == 1;
        if (packed.amxParts) {
          // Three bf16 parts of f32 weights in AMX tiles' order: [3, columns
          // / 16, K / 2, 32].
          llvm::SmallVector<int64_t, 4> expected{
              packed.amxParts, panels * packed.panel / 16, k / 2, 32};
          if (arg.shape != expected || arg.dtype != DType::BF16 ||
              packed.panel % 16 || k % 2 || !concatenable)
            return formatError(
                "{0}: tfm.param_pack of a {1}x{2} weight as {3} "
                "in panels of {4} needs a panel width that 16 "
                "divides, an even K and a bf16 argument of shape "
                "{7}x{5}x{6}x32",
                what, packed.fileShape[0], packed.fileShape[1],
                formatName.getValue(), packed.panel, panels * packed.panel / 16,
                k / 2, packed.amxParts);
        } else if (packed.kPairs) {
          llvm::SmallVector<int64_t, 4> expected{panels, k / 2, packed.panel,
                                                 2};
          if (arg.shape != expected || arg.dtype != DType::BF16 || k % 2 ||
              !concatenable)
            return formatError("{0}: tfm.param_pack of a {1}x{2} weight as {3} "
                               "in panels of {4} needs an even K and a bf16 "
                               "argument of shape {5}x{6}x{4}x2",
                               what, packed.fileShape[0], packed.fileShape[1],
                               kBf16PairsWeightFormat, packed.panel, panels,
                               k / 2);
        } else {
          llvm::SmallVector<int64_t, 4> expected{panels, k, packed.panel};
          bool packable = arg.dtype == DType::F32 || arg.dtype == DType::BF16 ||
                          arg.dtype == DType::F16;
          if (arg.shape != expected || !packable || !concatenable)
            return formatError(
                "{0}: tfm.param_pack of a {1}x{2} weight in "
                "panels of {3} needs an f32, bf16 or f16 argument "
                "of shape {4}x{2}x{3}",
                what, packed.fileShape[0], packed.fileShape[1], packed.panel,
                expected[0]);
        }
      }
    }
    if (Attribute shard = fn.getArgAttr(i, kParamShardAttrName)) {
      auto slice = dyn_cast<ShardAttr>(shard);
      auto ranks = module->getAttrOfType<IntegerAttr>(kTensorParallelAttrName);
      llvm::ArrayRef<int64_t> fileShape =
          arg.packed ? llvm::ArrayRef<int64_t>(arg.packed->fileShape)
                     : llvm::ArrayRef<int64_t>(arg.shape);
      if (!param || !slice || !ranks || ranks.getInt() < 1 ||
          (!arg.parts.empty() && arg.concatAxis != slice.getAxis()) ||
          slice.getAxis() >= int64_t(fileShape.size()) ||
          fileShape[slice.getAxis()] != slice.getSliceExtent() ||
          llvm::any_of(slice.getShards(), [&](int64_t count) {
            return ranks.getInt() % count != 0;
          }))
        return formatError("{0}: tfm.param_shard needs tfm.param (parts "
                           "concatenated along its axis), a module with "
                           "tfm.tensor_parallel "
                           "whose ranks its shard counts divide, and the "
                           "slice's extent along its axis",
                           what);
      ShardSlice &out = arg.shard.emplace();
      out.axis = slice.getAxis();
      out.ranks = ranks.getInt();
      out.pieces.assign(slice.getPieces().begin(), slice.getPieces().end());
      out.shards.assign(slice.getShards().begin(), slice.getShards().end());
    }
    if (Attribute quant = fn.getArgAttr(i, kParamQuantAttrName)) {
      auto weightQuant = dyn_cast<WeightQuantAttr>(quant);
      if (!param || !weightQuant || arg.dtype != DType::F32 ||
          arg.shape.size() != 2 || arg.packed ||
          arg.shape[weightQuant.getAxis()] % weightQuant.getBlockSize())
        return formatError("{0}: tfm.param_quant needs tfm.param on an f32 "
                           "matrix whose dimension along the blocks 32 divides",
                           what);
      arg.quantAxis = weightQuant.getAxis();
      arg.quantFormat = getBlockFormat(weightQuant.getFormat());
    }
    // Parameters may legitimately repeat (a tied embedding passed twice);
    // two inputs with one name could never be told apart.
    if (arg.kind != EntryArgument::Kind::Param &&
        !argNames.insert(arg.name).second)
      return formatError("{0}: another argument already has this name", what);
    signature.arguments.push_back(std::move(arg));
  }

  llvm::StringSet<> resultNames;
  for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i) {
    EntryResult result;
    auto output = fn.getResultAttrOfType<StringAttr>(i, kOutputAttrName);
    auto cache = fn.getResultAttrOfType<StringAttr>(i, kKVCacheAttrName);
    result.name = output ? output.getValue().str()
                  : cache ? cache.getValue().str()
                          : "result" + std::to_string(i);
    std::string what = llvm::formatv("result #{0} ('{1}') of @{2}", i,
                                     result.name, signature.function);
    if (llvm::Error err = getTensorInfo(fn.getResultTypes()[i], what,
                                        result.dtype, result.shape))
      return std::move(err);
    if (cache) {
      auto it = llvm::find_if(signature.arguments, [&](const EntryArgument &a) {
        return a.kind == EntryArgument::Kind::KVCache &&
               a.name == cache.getValue();
      });
      if (it == signature.arguments.end() || it->dtype != result.dtype ||
          it->shape != result.shape)
        return formatError("{0} is a tfm.kv_cache result but no cache argument "
                           "of that name and type exists",
                           what);
      result.isKVCache = true;
      result.cacheArgument = it - signature.arguments.begin();
    }
    if (!resultNames.insert(result.name).second)
      return formatError("{0}: another result already has this name", what);
    signature.results.push_back(std::move(result));
  }
  return signature;
}

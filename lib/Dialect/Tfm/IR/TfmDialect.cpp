//===- TfmDialect.cpp - tfm dialect registration --------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tfm;

#include "tfm/Dialect/Tfm/IR/TfmOpsDialect.cpp.inc"
#include "tfm/Dialect/Tfm/IR/TfmEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmAttrs.cpp.inc"
#include "tfm/Dialect/Tfm/IR/TfmInterfaces.cpp.inc"

void TfmDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tfm/Dialect/Tfm/IR/TfmAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tfm/Dialect/Tfm/IR/TfmOps.cpp.inc"
      >();
}

/// The function whose argument `argIndex` carries parameter attribute
/// `name`, or an error unless that argument is a `tfm.param`.
static FailureOr<FunctionOpInterface>
getParamFunction(Operation *op, unsigned regionIndex, unsigned argIndex,
                 StringRef name) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (fn && regionIndex == 0 && fn.getArgAttr(argIndex, kParamAttrName))
    return fn;
  op->emitOpError() << "argument #" << argIndex << ": '" << name
                    << "' applies to function arguments annotated with '"
                    << kParamAttrName << "'";
  return failure();
}

/// `tfm.param_quant`: a #tfm.quant, on a parameter that is an f32 matrix
/// whose K (the attribute's axis) its blocks divide.
static LogicalResult verifyParamQuant(Operation *op, unsigned regionIndex,
                                      unsigned argIndex,
                                      NamedAttribute attribute) {
  auto quant = dyn_cast<WeightQuantAttr>(attribute.getValue());
  if (!quant)
    return op->emitOpError() << "argument #" << argIndex << ": '"
                             << kParamQuantAttrName
                             << "' must be a #tfm.quant attribute, got "
                             << attribute.getValue();
  FailureOr<FunctionOpInterface> fn =
      getParamFunction(op, regionIndex, argIndex, kParamQuantAttrName);
  if (failed(fn))
    return failure();
  // A tensor, or the memref it becomes when bufferized (lowered further,
  // the argument is a pointer, which says nothing).
  Type argType = fn->getArgumentTypes()[argIndex];
  if (!isa<TensorType, BaseMemRefType>(argType))
    return success();
  auto type = cast<ShapedType>(argType);
  if (!type.hasRank() || type.getRank() != 2 ||
      !type.getElementType().isF32())
    return op->emitOpError()
           << "argument #" << argIndex << ": '" << kParamQuantAttrName
           << "' applies to an f32 weight matrix (its dequantized value), "
              "not "
           << argType;
  int64_t k = type.getDimSize(quant.getAxis());
  if (ShapedType::isStatic(k) && k % quant.getBlockSize() != 0)
    return op->emitOpError()
           << "argument #" << argIndex << ": " << quant << " needs dimension "
           << quant.getAxis() << " of " << argType << " (" << k
           << ") to be a multiple of its blocks of " << quant.getBlockSize();
  return success();
}

/// `tfm.param_shard` on a weight parameter: a #tfm.shard whose slice is the
/// argument's extent along its axis, in a module whose rank count its
/// shard counts divide.
static LogicalResult verifyParamShard(Operation *op, unsigned regionIndex,
                                      unsigned argIndex,
                                      NamedAttribute attribute) {
  auto shard = dyn_cast<ShardAttr>(attribute.getValue());
  if (!shard)
    return op->emitOpError() << "argument #" << argIndex << ": '"
                             << kParamShardAttrName
                             << "' must be a #tfm.shard attribute, got "
                             << attribute.getValue();
  FailureOr<FunctionOpInterface> fn =
      getParamFunction(op, regionIndex, argIndex, kParamShardAttrName);
  if (failed(fn))
    return failure();
  std::optional<int64_t> ranks = getTensorParallelRanks(op);
  if (!ranks)
    return op->emitOpError() << "argument #" << argIndex << ": '"
                             << kParamShardAttrName
                             << "' needs a module with '"
                             << kTensorParallelAttrName << "'";
  for (int64_t count : shard.getShards())
    if (*ranks % count)
      return op->emitOpError()
             << "argument #" << argIndex << ": " << shard << " divides a piece "
             << "into " << count << " blocks, which does not divide the "
             << *ranks << " ranks";
  // Before bufferization the tensor type is the slice; packed arguments
  // (tfm.param_pack) carry their own shapes and are checked when bound.
  auto type = dyn_cast<RankedTensorType>(fn->getArgumentTypes()[argIndex]);
  if (!type || fn->getArgAttr(argIndex, kParamPackAttrName))
    return success();
  if (shard.getAxis() >= type.getRank() ||
      type.getDimSize(shard.getAxis()) != shard.getSliceExtent())
    return op->emitOpError()
           << "argument #" << argIndex << ": " << shard << " gives each rank "
           << shard.getSliceExtent() << " along dimension " << shard.getAxis()
           << ", but the argument is " << type;
  return success();
}

/// `tfm.param_rank_names` on a weight parameter: a weight-file name per rank
/// of the module, rank 0's its `tfm.param`.
static LogicalResult verifyParamRankNames(Operation *op, unsigned regionIndex,
                                          unsigned argIndex,
                                          NamedAttribute attribute) {
  auto names = dyn_cast<ArrayAttr>(attribute.getValue());
  if (!names || !llvm::all_of(names, llvm::IsaPred<StringAttr>))
    return op->emitOpError()
           << "argument #" << argIndex << ": '" << kParamRankNamesAttrName
           << "' must be an array of strings (a weight-file "
              "name per rank), got "
           << attribute.getValue();
  FailureOr<FunctionOpInterface> fn =
      getParamFunction(op, regionIndex, argIndex, kParamRankNamesAttrName);
  if (failed(fn))
    return failure();
  std::optional<int64_t> ranks = getTensorParallelRanks(op);
  if (!ranks)
    return op->emitOpError()
           << "argument #" << argIndex << ": '" << kParamRankNamesAttrName
           << "' needs a module with '" << kTensorParallelAttrName << "'";
  if (int64_t(names.size()) != *ranks)
    return op->emitOpError()
           << "argument #" << argIndex << ": '" << kParamRankNamesAttrName
           << "' names " << names.size() << " tensors for " << *ranks
           << " ranks";
  if (names[0] != fn->getArgAttr(argIndex, kParamAttrName))
    return op->emitOpError()
           << "argument #" << argIndex << ": '" << kParamRankNamesAttrName
           << "' must start with the argument's '" << kParamAttrName
           << "' (rank 0's tensor)";
  if (fn->getArgAttr(argIndex, kParamPartsAttrName) ||
      fn->getArgAttr(argIndex, kParamShardAttrName))
    return op->emitOpError()
           << "argument #" << argIndex << ": '" << kParamRankNamesAttrName
           << "' names whole tensors: it cannot be combined "
              "with '"
           << kParamPartsAttrName << "' or '" << kParamShardAttrName << "'";
  return success();
}

LogicalResult TfmDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attribute) {
  // The other tfm.* argument attributes are read (and checked) by the passes
  // and the runtime that use them.
  if (attribute.getName() == kParamQuantAttrName)
    return verifyParamQuant(op, regionIndex, argIndex, attribute);
  if (attribute.getName() == kParamShardAttrName)
    return verifyParamShard(op, regionIndex, argIndex, attribute);
  if (attribute.getName() == kParamRankNamesAttrName)
    return verifyParamRankNames(op, regionIndex, argIndex, attribute);
  if (attribute.getName() != kParamDTypeAttrName)
    return success();
  auto dtype = dyn_cast<TypeAttr>(attribute.getValue());
  if (!dtype || !isa<FloatType>(dtype.getValue()))
    return op->emitOpError() << "argument #" << argIndex << ": '"
                             << kParamDTypeAttrName
                             << "' must be a float type (the element type of "
                                "the parameter's tensor in the weight file)";
  return failure(
      failed(getParamFunction(op, regionIndex, argIndex, kParamDTypeAttrName)));
}

LogicalResult TfmDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attribute) {
  if (attribute.getName() == kTensorParallelAttrName) {
    auto ranks = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!isa<ModuleOp>(op) || !ranks || ranks.getInt() < 1)
      return op->emitOpError()
             << "'" << kTensorParallelAttrName
             << "' must be a positive integer on a module (its ranks)";
  }
  if (attribute.getName() == kCpuTilingAttrName &&
      !isa<CpuTilingAttr>(attribute.getValue()))
    return op->emitOpError() << "'" << kCpuTilingAttrName
                             << "' must be a #tfm.cpu_tiling attribute, got "
                             << attribute.getValue();
  if (attribute.getName() == kGpuKernelAttrName &&
      !isa<GpuKernelAttr>(attribute.getValue()))
    return op->emitOpError() << "'" << kGpuKernelAttrName
                             << "' must be a #tfm.gpu_kernel attribute, got "
                             << attribute.getValue();
  return success();
}

LogicalResult
GpuKernelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      GpuKernelKind kind, int64_t tileM, int64_t tileN,
                      int64_t tileK, int64_t warps, int64_t stages) {
  for (auto [name, value] : {std::pair<StringRef, int64_t>{"tile_m", tileM},
                             {"tile_n", tileN},
                             {"tile_k", tileK},
                             {"warps", warps},
                             {"stages", stages}})
    if (value < 1)
      return emitError() << name << " must be positive, got " << value;
  return success();
}

LogicalResult WeightQuantAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      QuantFormat format, int64_t axis) {
  if (axis != 0 && axis != 1)
    return emitError() << "axis must be 0 or 1 (a weight matrix's K), got "
                       << axis;
  return success();
}

LogicalResult ShardAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t axis, ArrayRef<int64_t> pieces,
                                ArrayRef<int64_t> shards) {
  if (axis < 0)
    return emitError() << "axis must be non-negative, got " << axis;
  if (pieces.empty() || pieces.size() != shards.size())
    return emitError() << "needs one shard count per piece and at least one "
                          "piece, got "
                       << pieces.size() << " pieces and " << shards.size()
                       << " shard counts";
  for (auto [piece, count] : llvm::zip_equal(pieces, shards))
    if (piece < 1 || count < 1 || piece % count)
      return emitError() << "a piece of " << piece
                         << " cannot be divided into " << count
                         << " equal blocks";
  return success();
}

int64_t ShardAttr::getSliceExtent() const {
  int64_t extent = 0;
  for (auto [piece, count] : llvm::zip_equal(getPieces(), getShards()))
    extent += piece / count;
  return extent;
}

LogicalResult CpuTilingAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t registerRows,
    int64_t registerCols, int64_t minRows, int64_t blockRows, int64_t blockCols,
    int64_t blockDepth, int64_t dotCols, int64_t dotDepth, int64_t gemvPanels,
    int64_t amxBlockCols, int64_t amxBlockDepth, bool bf16Pairs) {
  for (auto [name, value] :
       {std::pair<StringRef, int64_t>{"register_rows", registerRows},
        {"register_cols", registerCols},
        {"block_rows", blockRows},
        {"block_cols", blockCols},
        {"block_depth", blockDepth},
        {"dot_cols", dotCols},
        {"dot_depth", dotDepth},
        {"gemv_panels", gemvPanels}})
    if (value < 1)
      return emitError() << name << " must be positive, got " << value;
  if (minRows < 0 || minRows > registerRows)
    return emitError() << "min_rows must be in [0, register_rows = "
                       << registerRows << "], got " << minRows;
  if ((amxBlockCols < 0 || amxBlockDepth < 0) ||
      ((amxBlockCols == 0) != (amxBlockDepth == 0)))
    return emitError() << "amx_block_cols and amx_block_depth must both be "
                          "positive (the AMX form) or both 0, got "
                       << amxBlockCols << " and " << amxBlockDepth;
  return success();
}

/// The entry-block argument `v` of a function, with the function.
static std::pair<FunctionOpInterface, unsigned> getFunctionArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return {};
  auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!fn || arg.getOwner() != &fn.getFunctionBody().front())
    return {};
  return {fn, arg.getArgNumber()};
}

std::optional<int64_t> mlir::tfm::getTensorParallelRanks(Operation *op) {
  auto module = isa<ModuleOp>(op) ? cast<ModuleOp>(op)
                                  : op->getParentOfType<ModuleOp>();
  if (!module)
    return std::nullopt;
  if (auto ranks = module->getAttrOfType<IntegerAttr>(kTensorParallelAttrName))
    return ranks.getInt();
  return std::nullopt;
}

StringRef mlir::tfm::getParamName(Value v) {
  auto [fn, index] = getFunctionArgument(v);
  if (!fn)
    return {};
  if (auto name = fn.getArgAttrOfType<StringAttr>(index, kParamAttrName))
    return name.getValue();
  return {};
}

Type mlir::tfm::getParamStorageElementType(Value v) {
  Type own = getElementTypeOrSelf(v.getType());
  auto [fn, index] = getFunctionArgument(v);
  if (!fn || !fn.getArgAttr(index, kParamAttrName))
    return own;
  if (auto dtype = fn.getArgAttrOfType<TypeAttr>(index, kParamDTypeAttrName))
    return dtype.getValue();
  return own;
}

WeightQuantAttr mlir::tfm::getParamQuant(Value v) {
  auto [fn, index] = getFunctionArgument(v);
  if (!fn || !fn.getArgAttr(index, kParamAttrName))
    return {};
  return fn.getArgAttrOfType<WeightQuantAttr>(index, kParamQuantAttrName);
}

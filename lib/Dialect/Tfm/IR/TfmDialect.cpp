//===- TfmDialect.cpp - tfm dialect registration --------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/IR/Builders.h"
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

LogicalResult TfmDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attribute) {
  // The other tfm.* argument attributes are read (and checked) by the passes
  // and the runtime that use them.
  if (attribute.getName() != kParamDTypeAttrName)
    return success();
  auto dtype = dyn_cast<TypeAttr>(attribute.getValue());
  if (!dtype || !isa<FloatType>(dtype.getValue()))
    return op->emitOpError() << "argument #" << argIndex << ": '"
                             << kParamDTypeAttrName
                             << "' must be a float type (the element type of "
                                "the parameter's tensor in the weight file)";
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn || regionIndex != 0 || !fn.getArgAttr(argIndex, kParamAttrName))
    return op->emitOpError() << "argument #" << argIndex << ": '"
                             << kParamDTypeAttrName
                             << "' applies to function arguments annotated "
                                "with '"
                             << kParamAttrName << "'";
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

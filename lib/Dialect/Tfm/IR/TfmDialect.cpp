//===- TfmDialect.cpp - tfm dialect registration --------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
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

StringRef mlir::tfm::getParamName(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return {};
  auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!fn || arg.getOwner() != &fn.getFunctionBody().front())
    return {};
  if (auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  kParamAttrName))
    return name.getValue();
  return {};
}

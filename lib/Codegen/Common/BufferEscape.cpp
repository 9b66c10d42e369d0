//===- BufferEscape.cpp - whether a call may keep a buffer ----------------===//
#include "tfm/Codegen/Common/BufferEscape.h"
#include "tfm/Dialect/Tfm/IR/TfmAttrNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

bool tfm::mayKeepBuffers(CallOpInterface call) {
  auto callee =
      llvm::dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
  if (!callee)
    return true;
  auto func = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call.getOperation(), callee);
  if (!func)
    return true;
  if (func.isExternal() && func->hasAttr(kNoCaptureAttrName))
    return false;
  return !func.isPrivate() || func.isExternal() || func.getNumResults() != 0;
}

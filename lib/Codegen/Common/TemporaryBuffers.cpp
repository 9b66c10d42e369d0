//===- TemporaryBuffers.cpp - what placing a temporary needs -------------===//
#include "tfm/Codegen/Common/TemporaryBuffers.h"
#include "tfm/Dialect/Tfm/IR/TfmAttrNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

std::optional<uint64_t> tfm::getStaticBufferBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  unsigned bits = type.getElementTypeBitWidth();
  if (bits % 8)
    return std::nullopt;
  return uint64_t(type.getNumElements()) * (bits / 8);
}

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

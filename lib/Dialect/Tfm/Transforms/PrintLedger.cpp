//===- PrintLedger.cpp - the model ledger ---------------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMPRINTLEDGER
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
struct PrintLedgerPass : public tfm::impl::TfmPrintLedgerBase<PrintLedgerPass> {
  using TfmPrintLedgerBase::TfmPrintLedgerBase;
  void runOnOperation() override {}
};
} // namespace

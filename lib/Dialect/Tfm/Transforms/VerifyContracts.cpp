//===- VerifyContracts.cpp - cross-op shape contracts ---------------------===//
//
// Op verifiers only see their own operands. The contracts that make a stack
// of decoder blocks well formed span several ops: a sublayer (attention, MLP,
// MoE) must return to the residual stream's [B, S, d], and a block must map
// [B, S, d] to [B, S, d]. This pass checks them and, when one is broken, says
// which sublayer broke it and where its output came from, so that a model
// author gets "the MLP output was not projected back to d=768" rather than a
// shape error deep inside a lowering.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/Sublayer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMVERIFYCONTRACTS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return text;
}

/// Types are formatted by hand because the diagnostic engine would quote
/// them; the messages read as sentences about the model instead.
static std::string formatType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

static std::string formatTypes(TypeRange types) {
  if (types.size() == 1)
    return formatType(types.front());
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '(';
  llvm::interleaveComma(types, os);
  os << ')';
  return text;
}

/// Attaches a note pointing at where `value` comes from: its producer, or the
/// block argument it is.
static void noteOrigin(InFlightDiagnostic &diag, Value value,
                       StringRef what) {
  if (Operation *producer = value.getDefiningOp()) {
    diag.attachNote(producer->getLoc()) << what << " is produced here";
    return;
  }
  auto arg = cast<BlockArgument>(value);
  auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  bool isFunctionArg = fn && arg.getOwner() == &fn.getFunctionBody().front();
  diag.attachNote(arg.getLoc())
      << what << " is " << (isFunctionArg ? "function" : "block")
      << " argument #" << arg.getArgNumber();
}

/// Both sides of a residual add must have identical types. The op verifier
/// already guarantees equal rank and element type; what remains is the shape,
/// which is where a sublayer that did not return to [B, S, d] shows up.
static LogicalResult checkResidualAdd(ResidualAddOp add) {
  auto residual = cast<RankedTensorType>(add.getResidual().getType());
  auto branch = cast<RankedTensorType>(add.getBranch().getType());
  if (residual == branch)
    return success();

  StringRef sublayer =
      stringifySublayerKind(classifySublayer(getSublayerOps(add)));
  InFlightDiagnostic diag = add.emitError()
                            << "residual add joins " << formatType(residual)
                            << " and " << formatType(branch) << ": the "
                            << sublayer << " output ";
  ArrayRef<int64_t> rs = residual.getShape(), bs = branch.getShape();
  if (rs.size() == bs.size() && rs.drop_back() == bs.drop_back() &&
      !rs.empty() && rs.back() != bs.back()) {
    diag << "was not projected back to d=" << rs.back();
  } else if (rs != bs) {
    diag << "has shape " << formatShape(bs) << " instead of the residual "
         << "stream's " << formatShape(rs);
  } else {
    diag << "has element type " << formatType(branch.getElementType())
         << " instead of the residual stream's "
         << formatType(residual.getElementType());
  }
  noteOrigin(diag, add.getBranch(), ("the " + sublayer + " output").str());
  return diag;
}

/// The residual stream type of the tfm.block function enclosing `op`, or null
/// when `op` is not in a (well-formed) block.
static RankedTensorType getBlockStreamType(Operation *op) {
  auto fn = op->getParentOfType<FunctionOpInterface>();
  if (!fn || !fn->hasAttr(kBlockAttrName) || fn.getNumArguments() == 0)
    return {};
  auto stream = dyn_cast<RankedTensorType>(fn.getArgumentTypes().front());
  if (!stream || stream.getRank() != 3)
    return {};
  return stream;
}

/// Inside a block, every residual add must run on the block's stream
/// [B, S, d]: a sublayer that both widened its input and its residual would
/// pass the add check above and still break the block.
static LogicalResult checkStreamOfAdd(ResidualAddOp add,
                                      RankedTensorType stream) {
  Type residual = add.getResidual().getType();
  if (residual == stream)
    return success();
  InFlightDiagnostic diag =
      add.emitError() << "residual add runs on " << formatType(residual)
                      << ", not on the block's residual stream "
                      << formatType(stream)
                      << " (the type of its first argument)";
  noteOrigin(diag, add.getResidual(), "the residual operand");
  return diag;
}

/// A tfm.block function takes the residual stream [B, S, d] first and returns
/// exactly that type, so that blocks can be stacked.
static LogicalResult checkBlockSignature(FunctionOpInterface fn) {
  ArrayRef<Type> args = fn.getArgumentTypes();
  auto stream =
      args.empty() ? RankedTensorType() : dyn_cast<RankedTensorType>(args[0]);
  if (!stream || stream.getRank() != 3) {
    InFlightDiagnostic diag = fn.emitError()
                              << "tfm.block function @" << fn.getName()
                              << " must take the residual stream [B, S, d] "
                                 "as its first argument";
    if (!args.empty())
      diag << ", got " << formatType(args[0]);
    return diag;
  }
  ArrayRef<Type> results = fn.getResultTypes();
  if (results.size() == 1 && results[0] == stream)
    return success();
  InFlightDiagnostic diag =
      fn.emitError() << "tfm.block function @" << fn.getName() << " returns "
                     << formatTypes(results) << " but takes "
                     << formatType(stream)
                     << ": a block must return exactly the type of its first "
                        "argument (the residual stream [B, S, d])";
  if (!fn.isExternal())
    diag.attachNote(fn.getFunctionBody().back().back().getLoc())
        << "the block returns here";
  return diag;
}

namespace {
struct VerifyContractsPass
    : public tfm::impl::TfmVerifyContractsBase<VerifyContractsPass> {
  void runOnOperation() override {
    // Report every broken contract, not only the first: a model author fixing
    // a block wants the whole list.
    bool anyFailed = false;
    getOperation()->walk([&](Operation *op) {
      if (auto fn = dyn_cast<FunctionOpInterface>(op)) {
        if (fn->hasAttr(kBlockAttrName))
          anyFailed |= failed(checkBlockSignature(fn));
        return;
      }
      auto add = dyn_cast<ResidualAddOp>(op);
      if (!add)
        return;
      anyFailed |= failed(checkResidualAdd(add));
      if (RankedTensorType stream = getBlockStreamType(add))
        anyFailed |= failed(checkStreamOfAdd(add, stream));
    });
    if (anyFailed)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace

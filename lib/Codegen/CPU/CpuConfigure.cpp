//===- CpuConfigure.cpp - choose CPU tile sizes from the target ------------===//
//
// tfm-cpu-configure: the policy half of CPU code generation (as IREE's
// LLVMCPU KernelDispatch): looks up the target CPU (`cpu=` option, default
// the host), derives contraction tile sizes from its vector width, register
// count and caches (deriveContractionTiling), and records both in the IR:
//
//   module attributes {tfm.cpu_target = {cpu = "znver3", vector_bits = 256,
//                      vector_registers = 16, l1_bytes = .., l2_bytes = ..}}
//   linalg.matmul {tfm.cpu_tiling = {register = array<i64: 6, 16>,
//                  min_rows = 4, block = array<i64: M, N, K>,
//                  dot = array<i64: 4, 32>}}
//
// The mechanism (tfm-tile-and-vectorize-contractions) only reads these
// attributes, so tests check the plan for any named CPU without running on it.
//
//===----------------------------------------------------------------------===//
#include "tfm/Pipelines/Passes.h"

#include "PipelinePasses.h"

#include "tfm/Pipelines/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUCONFIGURE
#include "tfm/Pipelines/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

static DictionaryAttr targetAttr(MLIRContext *ctx, const CpuTarget &target) {
  Builder b(ctx);
  return b.getDictionaryAttr({
      b.getNamedAttr("cpu", b.getStringAttr(target.cpu)),
      b.getNamedAttr("vector_bits", b.getI64IntegerAttr(target.vectorBits)),
      b.getNamedAttr("vector_registers",
                     b.getI64IntegerAttr(target.vectorRegisters)),
      b.getNamedAttr("fma", b.getBoolAttr(target.hasFMA)),
      b.getNamedAttr("amx_bf16", b.getBoolAttr(target.hasAmxBf16)),
      b.getNamedAttr("avx512_bf16", b.getBoolAttr(target.hasAvx512Bf16)),
      b.getNamedAttr("l1_bytes", b.getI64IntegerAttr(target.l1Bytes)),
      b.getNamedAttr("l2_bytes", b.getI64IntegerAttr(target.l2Bytes)),
  });
}

DictionaryAttr mlir::tfm::tilingToAttr(MLIRContext *ctx,
                                       const ContractionTiling &t) {
  Builder b(ctx);
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("register", b.getDenseI64ArrayAttr(
                                     {t.registerRows, t.registerCols})),
      b.getNamedAttr("min_rows", b.getI64IntegerAttr(t.minRegisterRows)),
      b.getNamedAttr("block", b.getDenseI64ArrayAttr(
                                  {t.blockRows, t.blockCols, t.blockDepth})),
      b.getNamedAttr("dot", b.getDenseI64ArrayAttr({t.dotCols, t.dotDepth})),
  };
  if (t.amxBlockCols > 0 && t.amxBlockDepth > 0)
    fields.push_back(b.getNamedAttr(
        "amx", b.getDenseI64ArrayAttr({t.amxBlockCols, t.amxBlockDepth})));
  if (t.bf16Pairs)
    fields.push_back(b.getNamedAttr("bf16_pairs", b.getUnitAttr()));
  return b.getDictionaryAttr(fields);
}

std::optional<ContractionTiling> mlir::tfm::tilingFromAttr(Operation *op) {
  auto dict = op->getAttrOfType<DictionaryAttr>(kCpuTilingAttrName);
  if (!dict)
    return std::nullopt;
  auto reg = dict.getAs<DenseI64ArrayAttr>("register");
  auto block = dict.getAs<DenseI64ArrayAttr>("block");
  auto dot = dict.getAs<DenseI64ArrayAttr>("dot");
  if (!reg || reg.size() != 2 || !block || block.size() != 3 || !dot ||
      dot.size() != 2)
    return std::nullopt;
  ContractionTiling t;
  t.registerRows = reg[0];
  t.registerCols = reg[1];
  t.blockRows = block[0];
  t.blockCols = block[1];
  t.blockDepth = block[2];
  t.dotCols = dot[0];
  t.dotDepth = dot[1];
  if (auto amx = dict.getAs<DenseI64ArrayAttr>("amx")) {
    if (amx.size() != 2 || amx[0] < 1 || amx[1] < 1)
      return std::nullopt;
    t.amxBlockCols = amx[0];
    t.amxBlockDepth = amx[1];
  }
  t.bf16Pairs = dict.get("bf16_pairs") ? 1 : 0;
  // Without `min_rows` (a hand-written plan), no shorter register tile.
  t.minRegisterRows = t.registerRows;
  if (Attribute minRows = dict.get("min_rows")) {
    auto value = dyn_cast<IntegerAttr>(minRows);
    if (!value)
      return std::nullopt;
    t.minRegisterRows = value.getInt();
  }
  if (t.registerRows < 1 || t.registerCols < 1 || t.blockRows < 1 ||
      t.blockCols < 1 || t.blockDepth < 1 || t.dotCols < 1 ||
      t.dotDepth < 1 || t.minRegisterRows < 1 ||
      t.minRegisterRows > t.registerRows)
    return std::nullopt;
  return t;
}

namespace {
struct CpuConfigurePass
    : public tfm::impl::TfmCpuConfigureBase<CpuConfigurePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Expected<CpuTarget> target = CpuTarget::lookup(cpu);
    if (!target) {
      module.emitError() << "tfm-cpu-configure: "
                         << llvm::toString(target.takeError());
      return signalPassFailure();
    }
    // Tiles for the host only where Linux lets this process use them (the
    // request is irreversible for the process: made only when planning
    // tiles).
    if (amx && target->hasAmxBf16 && resolveCpuName(cpu) == "host" &&
        !requestAmxTilePermission())
      target->hasAmxBf16 = false;
    ContractionTiling overrides;
    overrides.registerRows = registerRows;
    overrides.registerCols = registerCols;
    overrides.minRegisterRows = minRegisterRows;
    overrides.blockRows = blockRows;
    overrides.blockCols = blockCols;
    overrides.blockDepth = blockDepth;
    overrides.dotCols = dotCols;
    overrides.dotDepth = dotDepth;
    overrides.amxBlockCols = amxBlockCols;
    overrides.amxBlockDepth = amxBlockDepth;
    MLIRContext *ctx = &getContext();
    auto plan = [&](bool halfOperands) {
      return tilingToAttr(
          ctx, withOverrides(*target,
                             deriveContractionTiling(*target, amx, bf16Dot,
                                                     halfOperands),
                             overrides));
    };
    DictionaryAttr tilingAttr = plan(false), halfTilingAttr = plan(true);
    module->setAttr(kCpuTargetAttrName, targetAttr(ctx, *target));
    module.walk([&](linalg::LinalgOp op) {
      if (op->getNumResults() != 1 || !linalg::isaContractionOpInterface(op))
        return;
      bool half = llvm::any_of(op.getDpsInputOperands(), [](OpOperand *in) {
        Type type = getElementTypeOrSelf(in->get().getType());
        return type.isBF16() || type.isF16();
      });
      op->setAttr(kCpuTilingAttrName, half ? halfTilingAttr : tilingAttr);
    });
  }
};
} // namespace

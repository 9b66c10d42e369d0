//===- CpuConfigure.cpp - choose CPU tile sizes from the target ------------===//
//
// tfm-cpu-configure, the policy half of CPU code generation: see its
// description in tfm/Codegen/CPU/Passes.td (what it records) and
// deriveContractionTiling in CpuTarget.h (how the sizes follow the target).
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "CpuPlan.h"

#include "tfm/Codegen/CPU/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUCONFIGURE
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

static DictionaryAttr targetAttr(MLIRContext *ctx, const CpuTarget &target,
                                 bool int8Dot, bool amx) {
  Builder b(ctx);
  bool int8 = int8Dot && target.vectorBits >= 256 && target.hasFMA;
  return b.getDictionaryAttr({
      b.getNamedAttr("cpu", b.getStringAttr(target.cpu)),
      b.getNamedAttr("vector_bits", b.getI64IntegerAttr(target.vectorBits)),
      b.getNamedAttr("vector_registers",
                     b.getI64IntegerAttr(target.vectorRegisters)),
      b.getNamedAttr("fma", b.getBoolAttr(target.hasFMA)),
      b.getNamedAttr("amx_bf16", b.getBoolAttr(target.hasAmxBf16)),
      b.getNamedAttr("avx512_bf16", b.getBoolAttr(target.hasAvx512Bf16)),
      b.getNamedAttr("avx512_vnni", b.getBoolAttr(target.hasAvx512Vnni)),
      // Quantized weights' GEMMs on int8 activations: where the target has
      // int8 dot products (AVX2's vpmaddubsw and up), unless turned off.
      b.getNamedAttr("int8_dot", b.getBoolAttr(int8)),
      // Their prefill on AMX-INT8 tiles where the target has them, unless
      // tiles are turned off (`amx`).
      b.getNamedAttr("amx_int8",
                     b.getBoolAttr(int8 && amx && target.hasAmxInt8)),
      // Their decode GEMV's accumulators (and so panels streamed at once).
      b.getNamedAttr("int8_decode_vectors",
                     b.getI64IntegerAttr(target.int8DecodeVectors)),
      // How far ahead their kernels prefetch the weights' values.
      b.getNamedAttr("int8_prefetch_packed",
                     b.getI64IntegerAttr(target.int8PrefetchPacked)),
      b.getNamedAttr("int8_prefetch_bytewise",
                     b.getI64IntegerAttr(target.int8PrefetchBytewise)),
      b.getNamedAttr("l1_bytes", b.getI64IntegerAttr(target.l1Bytes)),
      b.getNamedAttr("l2_bytes", b.getI64IntegerAttr(target.l2Bytes)),
  });
}

CpuTilingAttr mlir::tfm::tilingToAttr(MLIRContext *ctx,
                                      const ContractionTiling &t) {
  // min_rows 0 in the attribute: no shorter register tile.
  int64_t minRows =
      t.minRegisterRows == t.registerRows ? 0 : t.minRegisterRows;
  bool amx = t.amxBlockCols > 0 && t.amxBlockDepth > 0;
  return CpuTilingAttr::get(ctx, t.registerRows, t.registerCols, minRows,
                            t.blockRows, t.blockCols, t.blockDepth, t.dotCols,
                            t.dotDepth, t.gemvPanels, amx ? t.amxBlockCols : 0,
                            amx ? t.amxBlockDepth : 0, t.bf16Pairs != 0);
}

std::optional<ContractionTiling> mlir::tfm::tilingFromAttr(Operation *op) {
  // The attribute verified its fields when it was built or parsed.
  auto attr = op->getAttrOfType<CpuTilingAttr>(kCpuTilingAttrName);
  if (!attr)
    return std::nullopt;
  ContractionTiling t;
  t.registerRows = attr.getRegisterRows();
  t.registerCols = attr.getRegisterCols();
  t.minRegisterRows = attr.getMinRows() ? attr.getMinRows() : t.registerRows;
  t.blockRows = attr.getBlockRows();
  t.blockCols = attr.getBlockCols();
  t.blockDepth = attr.getBlockDepth();
  t.dotCols = attr.getDotCols();
  t.dotDepth = attr.getDotDepth();
  t.gemvPanels = attr.getGemvPanels();
  t.amxBlockCols = attr.getAmxBlockCols();
  t.amxBlockDepth = attr.getAmxBlockDepth();
  t.bf16Pairs = attr.getBf16Pairs() ? 1 : 0;
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
    if (amx && (target->hasAmxBf16 || target->hasAmxInt8) &&
        resolveCpuName(cpu) == "host" && !requestAmxTilePermission())
      target->hasAmxBf16 = target->hasAmxInt8 = false;
    MLIRContext *ctx = &getContext();
    CpuTilingAttr tilingAttr = tilingToAttr(
        ctx,
        withOverrides(*target, deriveContractionTiling(*target, amx, bf16Dot),
                      tiling));
    module->setAttr(kCpuTargetAttrName, targetAttr(ctx, *target, int8Dot, amx));
    // One plan for f32 and bf16/f16 contractions: the latter read their
    // operands widened to f32 where a tile reads them more than once (the
    // A panels and the B blocks of RegisterTiles.cpp), so they need no
    // register more than an f32 tile.
    module.walk([&](linalg::LinalgOp op) {
      if (op->getNumResults() == 1 && linalg::isaContractionOpInterface(op))
        op->setAttr(kCpuTilingAttrName, tilingAttr);
    });
  }
};
} // namespace

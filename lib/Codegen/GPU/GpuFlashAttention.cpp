//===- GpuFlashAttention.cpp - tfm.attention as one FA2-style kernel ------===//
//
// --tfm-gpu-flash-attention and --tfm-gpu-flash-attention-kernels: see
// Passes.td. Each tfm.attention the kernel handles becomes f16 copies of
// q/k/v (linalg.generic, like tfm-gpu-contraction-dtype) and a call of a
// private function on tensors, one per attention shape, that calls a
// launcher declaration on the buffers of its arguments
// (bufferization.to_buffer / to_tensor, so the calling-convention stage
// bufferizes it like any other function). After bufferization the second
// pass defines each launcher: a gpu.launch of the kernel
// (FlashAttentionKernel.cpp). Both are written as MLIR text and parsed, like
// the tensor-core matmul kernel.
//
//===----------------------------------------------------------------------===//
#include "FlashAttentionKernel.h"
#include "GpuMatmulKernels.h"
#include "tfm/Codegen/GPU/Passes.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUFLASHATTENTION
#define GEN_PASS_DEF_TFMGPUFLASHATTENTIONKERNELS
#include "tfm/Codegen/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using mlir::tfm::gpu_kernels::AttentionShape;
using mlir::tfm::gpu_kernels::buildFlashAttentionKernel;
using mlir::tfm::gpu_kernels::splitCount;
using mlir::tfm::gpu_kernels::truncateToF16;

namespace {
/// The private function `name(q, k, v, offset) -> out` on f16 tensors that
/// calls the launcher `launcher(q, k, v, offset, out)` on their buffers, and
/// the launcher's declaration (defined after bufferization: buffer
/// deallocation rejects the kernel's ops).
std::string buildWrapperSource(llvm::StringRef name, llvm::StringRef launcher,
                               const AttentionShape &s) {
  std::string qType = llvm::formatv("{0}x{1}x{2}x{3}", s.batch, s.heads,
                                    s.queries, s.headDim);
  std::string kvType = llvm::formatv("{0}x{1}x{2}x{3}", s.batch, s.kvHeads,
                                     s.keys, s.headDim);
  // Split-KV scratch: the partial O and (row max, row sum) of each split.
  std::string scratch, scratchArgs, scratchTypes;
  if (s.splits > 1) {
    std::string po = llvm::formatv("memref<{0}x{1}xf32>", s.splits, qType);
    std::string pml =
        llvm::formatv("memref<{0}x{1}x{2}x{3}x2xf32>", s.splits, s.batch,
                      s.heads, s.queries);
    scratch = llvm::formatv("  %po = memref.alloc() : {0}\n"
                            "  %pml = memref.alloc() : {1}\n",
                            po, pml);
    scratchArgs = ", %po, %pml";
    scratchTypes = ", " + po + ", " + pml;
  }
  return llvm::formatv(
      R"(func.func private @{0}(%q: tensor<{2}xf16>, %k: tensor<{3}xf16>,
    %v: tensor<{3}xf16>, %off: index) -> tensor<{2}xf32> {{
  %qm = bufferization.to_buffer %q read_only : tensor<{2}xf16> to memref<{2}xf16>
  %km = bufferization.to_buffer %k read_only : tensor<{3}xf16> to memref<{3}xf16>
  %vm = bufferization.to_buffer %v read_only : tensor<{3}xf16> to memref<{3}xf16>
  %om = memref.alloc() : memref<{2}xf32>
{6}  func.call @{1}(%qm, %km, %vm, %off, %om{7}) : (memref<{2}xf16>, memref<{3}xf16>, memref<{3}xf16>, index, memref<{2}xf32>{8}) -> ()
  %o = bufferization.to_tensor %om restrict writable : memref<{2}xf32> to tensor<{2}xf32>
  return %o : tensor<{2}xf32>
}
func.func private @{1}(memref<{2}xf16>, memref<{3}xf16>, memref<{3}xf16>, index, memref<{2}xf32>{8}) attributes {{tfm.flash_attention_kernel = {{causal = {4}, scale = {5:e16} : f64, splits = {9} : i64}}
)",
      name, launcher, qType, kvType, s.causal ? "true" : "false", s.scale,
      scratch, scratchArgs, scratchTypes, s.splits);
}

/// The shape of `op` if the kernel handles it.
std::optional<AttentionShape> matchAttention(tfm::AttentionOp op) {
  auto staticF32 = [](Value v) -> RankedTensorType {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape() || type.getRank() != 4 ||
        !type.getElementType().isF32())
      return {};
    return type;
  };
  RankedTensorType q = staticF32(op.getQuery()), k = staticF32(op.getKey()),
                   v = staticF32(op.getValue()),
                   o = staticF32(op.getResult());
  if (!q || !k || !v || !o)
    return std::nullopt;
  // Per-sequence offsets ([B] tensor), sliding windows (ring caches among
  // them) and softcapped scores keep the generic path.
  if (op.getSlidingWindow() || op.getRingCache() || op.getLogitSoftcap())
    return std::nullopt;
  if (Value offset = op.getOffset(); offset && !offset.getType().isIndex())
    return std::nullopt;
  AttentionShape s{q.getDimSize(0), q.getDimSize(1), k.getDimSize(1),
                   q.getDimSize(2), k.getDimSize(2), q.getDimSize(3),
                   op.getCausal(), op.getScaleValue()};
  if (s.headDim != 64 && s.headDim != 128)
    return std::nullopt;
  if (v.getDimSize(3) != s.headDim || k.getDimSize(3) != s.headDim ||
      s.kvHeads == 0 || s.heads % s.kvHeads || s.queries == 0 || s.keys == 0)
    return std::nullopt;
  // The implicit offset Skv - S must be a position.
  if (!op.getOffset() && s.keys < s.queries)
    return std::nullopt;
  s.splits = splitCount(s);
  return s;
}

struct GpuFlashAttentionPass
    : public tfm::impl::TfmGpuFlashAttentionBase<GpuFlashAttentionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<tfm::AttentionOp, AttentionShape>> attentions;
    module.walk([&](tfm::AttentionOp op) {
      if (std::optional<AttentionShape> shape = matchAttention(op))
        attentions.push_back({op, *shape});
    });
    llvm::StringMap<func::FuncOp> wrappers;
    for (auto [op, shape] : attentions) {
      func::FuncOp &wrapper = wrappers[shape.key()];
      if (!wrapper) {
        std::string name = llvm::formatv(
            "tfm_flash_attention_{0}x{1}x{2}x{3}_kv{4}x{5}{6}_{7}",
            shape.batch, shape.heads, shape.queries, shape.headDim,
            shape.kvHeads, shape.keys, shape.causal ? "_causal" : "",
            wrappers.size() - 1);
        std::string source =
            buildWrapperSource(name, name + "_launch", shape);
        OwningOpRef<ModuleOp> parsed =
            parseSourceString<ModuleOp>(source, module.getContext());
        if (!parsed) {
          op.emitOpError("internal error: the flash-attention wrapper does "
                         "not parse");
          return signalPassFailure();
        }
        SmallVector<Operation *> funcs;
        for (Operation &f : parsed->getBody()->getOperations())
          funcs.push_back(&f);
        for (Operation *f : funcs) {
          auto clone = cast<func::FuncOp>(f->clone());
          symbols.insert(clone);
          if (!wrapper)
            wrapper = clone;
        }
      }
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value offset = op.getOffset();
      if (!offset)
        offset = arith::ConstantIndexOp::create(b, loc,
                                                shape.keys - shape.queries);
      auto call = func::CallOp::create(
          b, loc, wrapper,
          ValueRange{truncateToF16(b, loc, op.getQuery()),
                     truncateToF16(b, loc, op.getKey()),
                     truncateToF16(b, loc, op.getValue()), offset});
      op.getResult().replaceAllUsesWith(call.getResult(0));
      op.erase();
    }
  }
};

struct GpuFlashAttentionKernelsPass
    : public tfm::impl::TfmGpuFlashAttentionKernelsBase<
          GpuFlashAttentionKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto launcher :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      auto config = launcher->getAttrOfType<DictionaryAttr>(
          "tfm.flash_attention_kernel");
      if (!config || !launcher.isExternal())
        continue;
      FunctionType type = launcher.getFunctionType();
      auto q = dyn_cast<MemRefType>(type.getInput(0));
      auto k = dyn_cast<MemRefType>(type.getInput(1));
      auto causal = config.getAs<BoolAttr>("causal");
      auto scale = config.getAs<FloatAttr>("scale");
      auto splits = config.getAs<IntegerAttr>("splits");
      if (!q || !k || !causal || !scale || !splits ||
          splits.getInt() < 1 ||
          type.getNumInputs() != (splits.getInt() > 1 ? 7u : 5u)) {
        launcher.emitOpError("malformed tfm.flash_attention_kernel");
        return signalPassFailure();
      }
      AttentionShape s{q.getDimSize(0), q.getDimSize(1), k.getDimSize(1),
                       q.getDimSize(2), k.getDimSize(2), q.getDimSize(3),
                       causal.getValue(), scale.getValueAsDouble(),
                       splits.getInt()};
      std::string source = buildFlashAttentionKernel(launcher.getSymName(), s);
      OwningOpRef<ModuleOp> parsed =
          parseSourceString<ModuleOp>(source, module.getContext());
      if (!parsed) {
        launcher.emitOpError("internal error: the flash-attention kernel "
                             "does not parse");
        return signalPassFailure();
      }
      auto definition = cast<func::FuncOp>(parsed->getBody()->front());
      launcher.getBody().takeBody(definition.getBody());
      launcher->removeAttr("tfm.flash_attention_kernel");
    }
  }
};
} // namespace

//===- LowerQuantizedMatmuls.cpp - quantized GEMMs as micro-kernel calls --===//
//
// tfm-cpu-lower-quantized-matmuls: each GEMM over quantized weights
// (tfm.quantized_matmul, from tfm-cpu-pack-weights) becomes an scf.forall
// over blocks of C's columns calling the micro-kernel of its format for the target's
// instruction set (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/CPU/Passes.h"

#include "CpuPlan.h"

#include "tfm/Dialect/Tfm/IR/QuantizedParts.h"
#include "tfm/Runtime/Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPULOWERQUANTIZEDMATMULS
#include "tfm/Codegen/CPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

QuantizedKernelTarget mlir::tfm::getQuantizedKernelTarget(ModuleOp module) {
  auto target = module->getAttrOfType<DictionaryAttr>(kCpuTargetAttrName);
  int64_t bits = 0, decodeVectors = 0;
  // A plan without the prefetch fields (written before them) keeps the
  // distance the kernels took then.
  int64_t prefetchPacked = kDefaultInt8Prefetch,
          prefetchBytewise = kDefaultInt8Prefetch;
  bool fma = false, int8 = false, vnni = false, amxInt8 = false;
  if (target) {
    if (auto vectorBits = target.getAs<IntegerAttr>("vector_bits"))
      bits = vectorBits.getInt();
    if (auto hasFma = target.getAs<BoolAttr>("fma"))
      fma = hasFma.getValue();
    if (auto int8Dot = target.getAs<BoolAttr>("int8_dot"))
      int8 = int8Dot.getValue();
    if (auto hasVnni = target.getAs<BoolAttr>("avx512_vnni"))
      vnni = hasVnni.getValue();
    if (auto tiles = target.getAs<BoolAttr>("amx_int8"))
      amxInt8 = tiles.getValue();
    if (auto vectors = target.getAs<IntegerAttr>("int8_decode_vectors"))
      decodeVectors = vectors.getInt();
    if (auto bytes = target.getAs<IntegerAttr>("int8_prefetch_packed"))
      prefetchPacked = bytes.getInt();
    if (auto bytes = target.getAs<IntegerAttr>("int8_prefetch_bytewise"))
      prefetchBytewise = bytes.getInt();
  } else if (llvm::Expected<CpuTarget> host = CpuTarget::lookup("host")) {
    bits = host->vectorBits;
    fma = host->hasFMA;
    decodeVectors = host->int8DecodeVectors;
    prefetchPacked = host->int8PrefetchPacked;
    prefetchBytewise = host->int8PrefetchBytewise;
  } else {
    llvm::consumeError(host.takeError());
  }
  // The int8 kernels' panels are getPanel's (AVX-512 without VNNI runs
  // AVX2's int8 code, on AVX2's int8 panels).
  StringRef int8Isa = bits >= 512 && vnni ? "avx512" : "avx2";
  // A plan without the field (written before it) keeps the widest tile.
  if (decodeVectors <= 0)
    decodeVectors = int8Isa == "avx512" ? 8 : 4;
  QuantizedKernelTarget kernels;
  if (bits >= 512) {
    kernels.isa = "avx512";
    kernels.panel = 32;
    kernels.amxInt8 = int8 && vnni && amxInt8;
  } else if (bits >= 256 && fma) {
    kernels.isa = "avx2";
    kernels.panel = 16;
  } else {
    kernels.isa = "sse2";
    kernels.panel = 8;
    return kernels;
  }
  kernels.int8 = int8;
  kernels.int8Isa = int8Isa;
  kernels.decodeVectors = decodeVectors;
  kernels.prefetchPacked = prefetchPacked;
  kernels.prefetchBytewise = prefetchBytewise;
  return kernels;
}

/// Whether `type`'s strides are static and end in `inner` (the innermost
/// dimensions' strides in elements), the outermost one free.
static bool hasInnerStrides(MemRefType type, ArrayRef<int64_t> inner) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      strides.size() != inner.size() + 1)
    return false;
  return ArrayRef<int64_t>(strides).drop_front() == inner;
}

/// `type` with every size, stride and the offset dynamic: the one type the
/// kernel's declaration takes for that rank and element type.
static MemRefType getDynamicType(MemRefType type) {
  MLIRContext *ctx = type.getContext();
  SmallVector<int64_t> dynamic(type.getRank(), ShapedType::kDynamic);
  return MemRefType::get(
      dynamic, type.getElementType(),
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, dynamic));
}

/// The kernel's declaration in `module`, made on first use.
static func::FuncOp getKernel(ModuleOp module, StringRef name,
                              TypeRange operands) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto kernel = func::FuncOp::create(
      b, module.getLoc(), name, b.getFunctionType(operands, TypeRange{}));
  kernel.setPrivate();
  // Memref operands as pointers to descriptors (_mlir_ciface_<name>).
  kernel->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                  b.getUnitAttr());
  // It keeps no pointer to its operands: they may live in the workspace.
  kernel->setAttr(kNoCaptureAttrName, b.getUnitAttr());
  return kernel;
}

/// The name of the micro-kernel for `format`'s weights on f32 or int8
/// activations, less its instruction set.
static StringRef getMatmulKernelPrefix(QuantFormat format, bool int8) {
  switch (format) {
  case QuantFormat::q8_0:
    return int8 ? runtime::kQ8_0Int8MatmulPrefix : runtime::kQ8_0MatmulPrefix;
  case QuantFormat::q4_0:
    return int8 ? runtime::kQ4_0Int8MatmulPrefix : runtime::kQ4_0MatmulPrefix;
  case QuantFormat::q4_k:
    return int8 ? runtime::kQ4_KInt8MatmulPrefix : runtime::kQ4_KMatmulPrefix;
  case QuantFormat::q5_k:
    return int8 ? runtime::kQ5_KInt8MatmulPrefix : runtime::kQ5_KMatmulPrefix;
  case QuantFormat::q6_k:
    return int8 ? runtime::kQ6_KInt8MatmulPrefix : runtime::kQ6_KMatmulPrefix;
  }
  return {};
}

static void lowerQuantizedMatmul(linalg::GenericOp op,
                                 const QuantizedKernelTarget &target,
                                 QuantFormat format) {
  // A [M, K/32, 32] (Q4_0: [M, K/32, 2, 16]), V [J, K/32, 32 or 16, P],
  // S [J, K/32, P], C [M, J, P]; on int8 activations A [M, K/32, 8, 4]
  // (Q4_0, Q6_K: [M, K/32, 2, 4, 4]) and its blocks' AMAX [M, K/32] before
  // V, V [J, K/32, 8 or 4, P, 4] (Q6_K: [J, K/32, 6, P, 4], read twice).
  // Q4_K: S is its super-blocks' D [J, K/256, 2, P] (read twice, d and
  // dmin), then its sub-blocks' SC [J, K/32, 2, P] (read twice, sc and m).
  // Q6_K: S is its super-blocks' D [J, K/256, P], then the scales of its
  // 16s SC [J, K/16, P].
  bool int8 = op->hasAttr(kInt8ActivationsAttrName);
  // Q5_K: as Q4_K.
  bool q4k = format == QuantFormat::q4_k, q6k = format == QuantFormat::q6_k;
  bool mins = q4k || format == QuantFormat::q5_k;
  unsigned next = 0;
  Value a = op.getDpsInputOperand(next++)->get();
  Value amax = int8 ? op.getDpsInputOperand(next++)->get() : Value();
  Value values = op.getDpsInputOperand(next++)->get();
  // Q6_K's 6-bit values (int8) are read twice, the nibbles and high bits.
  bool sixBit = int8 && q6k;
  if (sixBit && op.getDpsInputOperand(next++)->get() != values)
    return;
  Value scales = op.getDpsInputOperand(next++)->get();
  Value subScales;
  if (mins) {
    subScales = op.getDpsInputOperand(next + 1)->get();
    if (op.getDpsInputOperand(next)->get() != scales ||
        op.getDpsInputOperand(next + 2)->get() != subScales)
      return;
  } else if (q6k) {
    subScales = op.getDpsInputOperand(next)->get();
  }
  Value c = op.getDpsInitOperand(0)->get();
  auto aType = dyn_cast<MemRefType>(a.getType());
  auto vType = dyn_cast<MemRefType>(values.getType());
  auto sType = dyn_cast<MemRefType>(scales.getType());
  auto cType = dyn_cast<MemRefType>(c.getType());
  // A's K as nibbles index it: [K/32, 2, ...].
  bool q4 = format == QuantFormat::q4_0 || q4k || sixBit;
  SmallVector<int64_t> aInner =
      int8 ? (q4 ? SmallVector<int64_t>{32, 16, 4, 1}
                 : SmallVector<int64_t>{32, 4, 1})
           : (q4 ? SmallVector<int64_t>{32, 16, 1} : SmallVector<int64_t>{32, 1});
  if (!aType || !vType || !sType || !cType || !aType.hasStaticShape() ||
      !cType.hasStaticShape() || !vType.hasStaticShape() ||
      cType.getRank() != 3 || !hasInnerStrides(aType, aInner) ||
      !hasInnerStrides(cType, {cType.getDimSize(2), 1}) ||
      !vType.getLayout().isIdentity() || !sType.getLayout().isIdentity())
    return;
  // The kernels read the scales by C's panels and A's blocks: they must
  // have exactly the shapes tfm-cpu-pack-weights gives them.
  int64_t numPanels = cType.getDimSize(1), width = cType.getDimSize(2);
  int64_t k = aType.getDimSize(1) * 32;
  // The f32 kernels have code for panels of up to 32 columns (Kernels.h),
  // the int8 ones for any; a wider f32 panel is left to loops.
  if (!int8 && width > 32)
    return;
  // The f16 scales: the K formats' super-blocks', else the blocks'.
  SmallVector<int64_t, 5> scalesShape = getQuantizedPartShape(
      format, mins || q6k ? QuantizedPart::Super : QuantizedPart::Scales,
      numPanels, k, width);
  if (!sType.hasStaticShape() || sType.getShape() != ArrayRef(scalesShape) ||
      vType.getShape() !=
          ArrayRef(getQuantizedPartShape(format, QuantizedPart::Values,
                                         numPanels, k, width, int8 ? 4 : 1)))
    return;
  if (subScales) {
    auto subType = dyn_cast<MemRefType>(subScales.getType());
    SmallVector<int64_t, 5> subShape = getQuantizedPartShape(
        format, QuantizedPart::Scales, numPanels, k, width);
    if (!subType || !subType.getLayout().isIdentity() ||
        !subType.hasStaticShape() || subType.getShape() != ArrayRef(subShape))
      return;
  }
  if (int8) {
    auto amaxType = dyn_cast<MemRefType>(amax.getType());
    if (!amaxType || !amaxType.hasStaticShape() ||
        !hasInnerStrides(amaxType, {1}))
      return;
  }
  int64_t panels = cType.getDimSize(1);
  int64_t panel = cType.getDimSize(2);
  // Enough blocks for the threads, each long enough to amortise its call
  // and to hold the panels the decode path streams at once: 128 columns.
  int64_t block = std::max<int64_t>(1, 128 / panel);
  int64_t blocks = llvm::divideCeil(panels, block);

  ModuleOp module = op->getParentOfType<ModuleOp>();
  OpBuilder b(op);
  Location loc = op.getLoc();
  // The kernels take A's K as [K/32, 32] either way.
  ReassociationIndices steps{2};
  for (int64_t dim = 3; dim < aType.getRank(); ++dim)
    steps.push_back(dim);
  if (steps.size() > 1)
    a = memref::CollapseShapeOp::create(
        b, loc, a, ArrayRef<ReassociationIndices>{{0}, {1}, steps});
  auto dynamicTypes = [](ValueRange memrefs) {
    SmallVector<Type> types;
    for (Value memref : memrefs)
      types.push_back(getDynamicType(cast<MemRefType>(memref.getType())));
    return types;
  };
  auto castAll = [&](ValueRange memrefs, TypeRange types) {
    SmallVector<Value> cast;
    for (auto [memref, type] : llvm::zip(memrefs, types))
      cast.push_back(memref::CastOp::create(b, loc, type, memref));
    return cast;
  };
  SmallVector<Value> memrefs{a};
  StringRef int8Isa = target.getInt8Isa(format, aType.getDimSize(0));
  if (int8) {
    // A's rows quantized once, before the column blocks read them.
    int64_t m = aType.getDimSize(0);
    int64_t k = aType.getDimSize(1) * 32;
    auto alloc = [&](ArrayRef<int64_t> shape, Type element) -> Value {
      return memref::AllocOp::create(b, loc, MemRefType::get(shape, element),
                                     /*alignment=*/b.getI64IntegerAttr(64));
    };
    Value q = alloc({m, k}, b.getIntegerType(8));
    Value d = alloc({m, k / 32}, b.getF32Type());
    Value sum = alloc({m, k / 32}, b.getIntegerType(32));
    SmallVector<Value> quantizeOperands{a, amax, q, d, sum};
    SmallVector<Type> quantizeTypes = dynamicTypes(quantizeOperands);
    func::FuncOp quantize =
        getKernel(module, (runtime::kInt8QuantizeRowsPrefix + int8Isa).str(),
                  quantizeTypes);
    func::CallOp::create(b, loc, quantize,
                         castAll(quantizeOperands, quantizeTypes));
    memrefs = {q, d, sum};
  }
  memrefs.append({values, scales});
  if (subScales)
    memrefs.push_back(subScales);
  memrefs.push_back(c);
  SmallVector<Type> types = dynamicTypes(memrefs);
  // j0, j1, and for the int8 kernels their decode tile's vectors and their
  // prefetch distance.
  types.append(int8 ? 4 : 2, b.getIndexType());
  StringRef prefix = getMatmulKernelPrefix(format, int8);
  func::FuncOp kernel =
      getKernel(module, (prefix + (int8 ? int8Isa : target.isa)).str(), types);

  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(blocks)},
      /*outputs=*/ValueRange{}, /*mapping=*/std::nullopt);
  b.setInsertionPointToStart(forall.getBody());
  Value index = forall.getInductionVar(0);
  Value first = arith::MulIOp::create(
      b, loc, index, arith::ConstantIndexOp::create(b, loc, block));
  Value last = arith::MinUIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, first,
                            arith::ConstantIndexOp::create(b, loc, block)),
      arith::ConstantIndexOp::create(b, loc, panels));
  SmallVector<Value> operands = castAll(memrefs, types);
  operands.append({first, last});
  if (int8)
    operands.append(
        {arith::ConstantIndexOp::create(b, loc, target.decodeVectors),
         arith::ConstantIndexOp::create(b, loc,
                                        target.getInt8Prefetch(format))});
  func::CallOp::create(b, loc, kernel, operands);
  op.erase();
}

namespace {
struct LowerQuantizedMatmulsPass
    : public tfm::impl::TfmCpuLowerQuantizedMatmulsBase<
          LowerQuantizedMatmulsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<linalg::GenericOp, QuantFormat>> matmuls;
    module.walk([&](linalg::GenericOp op) {
      auto name = op->getAttrOfType<StringAttr>(kQuantizedMatmulAttrName);
      std::optional<QuantFormat> format =
          name ? symbolizeQuantFormat(name.getValue()) : std::nullopt;
      if (format && op.hasPureBufferSemantics())
        matmuls.push_back({op, *format});
    });
    if (matmuls.empty())
      return;
    QuantizedKernelTarget target = getQuantizedKernelTarget(module);
    for (auto [op, format] : matmuls)
      lowerQuantizedMatmul(op, target, format);
  }
};
} // namespace

//===- GpuMatmulKernels.cpp - shared by the tensor-core matmul passes -----===//
#include "GpuMatmulKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tfm;

static bool isIdentityF16(Value v, int64_t rows, int64_t cols) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.getElementType().isF16() &&
         type.getLayout().isIdentity() &&
         type.getShape() == ArrayRef<int64_t>{rows, cols} &&
         !type.getMemorySpace();
}

std::optional<gpu_kernels::F16Matmul>
gpu_kernels::matchF16Matmul(linalg::MatmulOp matmul) {
  if (!matmul.hasPureBufferSemantics())
    return std::nullopt;
  auto cType = dyn_cast<MemRefType>(matmul.getDpsInits()[0].getType());
  if (!cType || !cType.getElementType().isF32() ||
      !cType.getLayout().isIdentity() || !cType.hasStaticShape() ||
      cType.getRank() != 2 || cType.getMemorySpace())
    return std::nullopt;
  auto aType = dyn_cast<MemRefType>(matmul.getDpsInputs()[0].getType());
  if (!aType || !aType.hasStaticShape() || aType.getRank() != 2)
    return std::nullopt;
  F16Matmul shape{cType.getDimSize(0), cType.getDimSize(1),
                  aType.getDimSize(1), false};
  // Which of the two B layouts the indexing maps say.
  MLIRContext *ctx = matmul.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  SmallVector<AffineMap> maps = matmul.getIndexingMapsArray();
  auto map = [&](ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(3, 0, exprs, ctx);
  };
  if (maps[0] != map({m, k}) || maps[2] != map({m, n}))
    return std::nullopt;
  if (maps[1] == map({n, k}))
    shape.transposedB = true;
  else if (maps[1] != map({k, n}))
    return std::nullopt;
  if (!isIdentityF16(matmul.getDpsInputs()[0], shape.m, shape.k) ||
      !isIdentityF16(matmul.getDpsInputs()[1],
                     shape.transposedB ? shape.n : shape.k,
                     shape.transposedB ? shape.k : shape.n))
    return std::nullopt;
  return shape;
}

Value gpu_kernels::truncateToF16(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto f16Type = RankedTensorType::get(type.getShape(), b.getF16Type());
  Value empty =
      tensor::EmptyOp::create(b, loc, f16Type.getShape(), b.getF16Type());
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, f16Type, ValueRange{value}, ValueRange{empty},
             ArrayRef<AffineMap>{identity, identity}, iterators,
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               Value narrow =
                   arith::TruncFOp::create(nb, nloc, nb.getF16Type(), args[0]);
               linalg::YieldOp::create(nb, nloc, narrow);
             })
      .getResult(0);
}

func::FuncOp
gpu_kernels::lookupOrParseKernel(SymbolTable &symbols, StringRef name,
                                 linalg::MatmulOp matmul, StringRef kind,
                                 function_ref<std::string()> buildSource) {
  if (auto kernel = symbols.lookup<func::FuncOp>(name))
    return kernel;
  OwningOpRef<ModuleOp> parsed =
      parseSourceString<ModuleOp>(buildSource(), matmul.getContext());
  if (!parsed) {
    matmul.emitOpError("internal error: the ")
        << kind << " kernel does not parse";
    return nullptr;
  }
  auto kernel = cast<func::FuncOp>(parsed->getBody()->front().clone());
  symbols.insert(kernel);
  return kernel;
}

void gpu_kernels::replaceWithKernelCall(linalg::MatmulOp matmul,
                                        func::FuncOp kernel) {
  OpBuilder b(matmul);
  func::CallOp::create(b, matmul.getLoc(), kernel,
                       ValueRange{matmul.getDpsInputs()[0],
                                  matmul.getDpsInputs()[1],
                                  matmul.getDpsInits()[0]});
  matmul.erase();
}

FailureOr<SmallVector<gpu_kernels::PlannedMatmul>>
gpu_kernels::collectPlannedMatmuls(ModuleOp module, GpuKernelKind kind) {
  SmallVector<PlannedMatmul> planned;
  WalkResult walk = module.walk([&](linalg::MatmulOp matmul) {
    auto plan = matmul->getAttrOfType<GpuKernelAttr>(kGpuKernelAttrName);
    if (!plan || plan.getKind() != kind ||
        matmul->getParentOfType<gpu::LaunchOp>())
      return WalkResult::advance();
    std::optional<F16Matmul> shape = matchF16Matmul(matmul);
    if (!shape) {
      matmul.emitOpError("is planned for a ")
          << stringifyGpuKernelKind(kind)
          << " kernel, but no kernel takes it: the kernels take f16 A and B "
             "and an f32 C, static, with identity layouts";
      return WalkResult::interrupt();
    }
    planned.push_back({matmul, *shape, plan});
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return planned;
}

//===- TfmToLinalg.cpp - lower tfm to linalg on tensors -------------------===//
//
// The --tfm-to-linalg pass and the builders its patterns share. The patterns
// themselves live next door, one file per family of ops.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/Tfm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_CONVERTTFMTOLINALG
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

//===----------------------------------------------------------------------===//
// Shared builders
//===----------------------------------------------------------------------===//

namespace mlir::tfm::lowering {

Value extToF32(OpBuilder &b, Location loc, Value scalar) {
  if (scalar.getType().isF32())
    return scalar;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), scalar);
}

Value truncFromF32(OpBuilder &b, Location loc, Value scalar, Type type) {
  if (type == scalar.getType())
    return scalar;
  return arith::TruncFOp::create(b, loc, type, scalar);
}

Value f32Const(OpBuilder &b, Location loc, double value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

Value indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value clampIndex(OpBuilder &b, Location loc, Value v, int64_t lo, int64_t hi) {
  Value low = arith::MaxSIOp::create(b, loc, v, indexConst(b, loc, lo));
  return arith::MinSIOp::create(b, loc, low, indexConst(b, loc, hi));
}

Value siluF32(OpBuilder &b, Location loc, Value v) {
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, v));
  Value denom = arith::AddFOp::create(b, loc, f32Const(b, loc, 1.0), e);
  return arith::DivFOp::create(b, loc, v, denom);
}

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type elementType, double value) {
  Value init = emptyTensor(b, loc, shape, elementType);
  Value cst = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(elementType, value));
  return linalg::FillOp::create(b, loc, ValueRange{cst}, ValueRange{init})
      .getResult(0);
}

SmallVector<utils::IteratorType> parallelIterators(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, BodyFn body,
                       ArrayRef<AffineMap> inputMaps) {
  unsigned rank = resultType.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(inputMaps);
  if (maps.empty())
    maps.assign(inputs.size(), id);
  maps.push_back(id);
  Value init =
      emptyTensor(b, loc, resultType.getShape(), resultType.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps,
      parallelIterators(rank),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

Value reduceLastDimF32(OpBuilder &b, Location loc, Value input,
                       ValueRange rowInputs, double init, BodyFn body) {
  RankedTensorType type = tensorType(input);
  unsigned rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  // Row maps drop the reduced (last) dimension.
  AffineMap row = AffineMap::getMultiDimIdentityMap(rank, ctx).dropResult(
      rank - 1);
  SmallVector<AffineMap> maps{id};
  SmallVector<Value> inputs{input};
  for (Value r : rowInputs) {
    maps.push_back(row);
    inputs.push_back(r);
  }
  maps.push_back(row);
  SmallVector<utils::IteratorType> iterators = parallelIterators(rank);
  iterators.back() = utils::IteratorType::reduction;
  Value acc =
      filledTensor(b, loc, type.getShape().drop_back(), b.getF32Type(), init);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{acc.getType()}, inputs, ValueRange{acc}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

Value truncTensor(OpBuilder &b, Location loc, Value f32Tensor,
                  Type elementType) {
  RankedTensorType type = tensorType(f32Tensor);
  if (type.getElementType() == elementType)
    return f32Tensor;
  return buildElementwise(
      b, loc, type.clone(elementType), f32Tensor,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
        return {truncFromF32(nb, nloc, args[0], elementType)};
      });
}

Value collapseToMatrix(OpBuilder &b, Location loc, Value v) {
  RankedTensorType type = tensorType(v);
  int64_t rank = type.getRank();
  if (rank == 2)
    return v;
  ReassociationIndices leading;
  for (int64_t i = 0; i + 1 < rank; ++i)
    leading.push_back(i);
  SmallVector<ReassociationIndices> reassociation{leading, {rank - 1}};
  return tensor::CollapseShapeOp::create(b, loc, v, reassociation);
}

Value expandFromMatrix(OpBuilder &b, Location loc, Value v,
                       ArrayRef<int64_t> leading) {
  if (leading.size() == 1)
    return v;
  RankedTensorType type = tensorType(v);
  SmallVector<int64_t> shape(leading);
  shape.push_back(type.getDimSize(1));
  ReassociationIndices first;
  for (int64_t i = 0, e = leading.size(); i < e; ++i)
    first.push_back(i);
  SmallVector<ReassociationIndices> reassociation{
      first, {static_cast<int64_t>(leading.size())}};
  return tensor::ExpandShapeOp::create(
      b, loc, type.clone(shape), v, reassociation,
      getAsIndexOpFoldResult(b.getContext(), shape));
}

Value buildMatmulF32(OpBuilder &b, Location loc, Value x, Value weight,
                     bool weightIsOutIn) {
  int64_t n = tensorType(x).getDimSize(0);
  int64_t out = tensorType(weight).getDimSize(weightIsOutIn ? 0 : 1);
  Value acc = filledTensor(b, loc, {n, out}, b.getF32Type(), 0.0);
  Type resultTypes = acc.getType();
  if (weightIsOutIn)
    return linalg::MatmulTransposeBOp::create(b, loc, TypeRange{resultTypes},
                                              ValueRange{x, weight},
                                              ValueRange{acc})
        .getResult(0);
  return linalg::MatmulOp::create(b, loc, TypeRange{resultTypes}, ValueRange{x, weight},
                                  ValueRange{acc})
      .getResult(0);
}

Value buildSoftmaxF32(OpBuilder &b, Location loc, Value x) {
  RankedTensorType type = tensorType(x);
  unsigned rank = type.getRank();
  AffineMap row = b.getMultiDimIdentityMap(rank).dropResult(rank - 1);
  AffineMap id = b.getMultiDimIdentityMap(rank);
  // Row maximum; -inf is the identity of maximumf.
  Value max = reduceLastDimF32(
      b, loc, x, {}, -std::numeric_limits<double>::infinity(),
      [](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
        return {arith::MaximumFOp::create(nb, nloc, args[0], args[1])};
      });
  // exp(x - max): every exponent is <= 0, so nothing overflows.
  Value exp = buildElementwise(
      b, loc, type, {x, max},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
        Value diff = arith::SubFOp::create(nb, nloc, args[0], args[1]);
        return {math::ExpOp::create(nb, nloc, diff)};
      },
      {id, row});
  Value sum = reduceLastDimF32(
      b, loc, exp, {}, 0.0,
      [](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
        return {arith::AddFOp::create(nb, nloc, args[0], args[1])};
      });
  return buildElementwise(
      b, loc, type, {exp, sum},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
        return {arith::DivFOp::create(nb, nloc, args[0], args[1])};
      },
      {id, row});
}

} // namespace mlir::tfm::lowering

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
/// Rejects, with a clear message, the input that no pattern can lower: the
/// op verifiers accept a residual_add whose sides differ in shape (the
/// contract belongs to --tfm-verify-contracts), but an elementwise add cannot.
LogicalResult checkLowerable(ModuleOp module) {
  WalkResult result = module.walk([](ResidualAddOp op) {
    if (op.getResidual().getType() == op.getBranch().getType())
      return WalkResult::advance();
    op.emitOpError() << "cannot lower: residual " << op.getResidual().getType()
                     << " and branch " << op.getBranch().getType()
                     << " differ in shape (run --tfm-verify-contracts to "
                        "find the sublayer that broke the contract)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

struct ConvertTfmToLinalgPass
    : public tfm::impl::ConvertTfmToLinalgBase<ConvertTfmToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkLowerable(module)))
      return signalPassFailure();

    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<TfmDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect,
                           scf::SCFDialect, func::FuncDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    // Collectives bufferize as f32 sums (Collectives.cpp).
    target.addDynamicallyLegalOp<AllReduceOp>([](AllReduceOp op) {
      return !op.getBias() &&
             op.getResult().getType().getElementType().isF32();
    });
    target.addDynamicallyLegalOp<AllGatherOp>([](AllGatherOp op) {
      return op.getResult().getType().getElementType().isF32();
    });
    // The rank stays a value until tfm-collectives-to-mpi.
    target.addLegalOp<RankOp>();

    RewritePatternSet patterns(ctx);
    lowering::populateProjectionPatterns(patterns);
    lowering::populateMoEPatterns(patterns);
    lowering::populateAttentionPatterns(patterns);
    lowering::populateNormPatterns(patterns);
    lowering::populatePointwisePatterns(patterns);
    lowering::populateReshapePatterns(patterns);
    lowering::populateCollectivePatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

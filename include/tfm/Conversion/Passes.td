//===- Passes.td - tfm conversion passes -------------------*- tablegen -*-===//
#ifndef TFM_CONVERSION_PASSES_TD
#define TFM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTfmToLinalg : Pass<"tfm-to-linalg", "ModuleOp"> {
  let summary = "Lowers every tfm op to linalg, tensor, arith and math on tensors";
  let description = [{
    Named linalg ops where they fit (matmul, batch_matmul), `linalg.generic`
    elsewhere. Softmax subtracts the row maximum; norms and softmax
    accumulate in f32 for f16/bf16 inputs. No tfm op survives.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::tensor::TensorDialect",
    "mlir::scf::SCFDialect"
  ];
}

#endif // TFM_CONVERSION_PASSES_TD

// RUN: transformer-opt %s --tfm-to-linalg -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @residual_add
// CHECK-SAME: %[[R:[^:]*]]: tensor<2x4x8xf32>, %[[B:[^:]*]]: tensor<2x4x8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[R]], %[[B]] : tensor<2x4x8xf32>, tensor<2x4x8xf32>)
// CHECK: arith.addf
// CHECK-NOT: tfm.
func.func @residual_add(%r: tensor<2x4x8xf32>, %b: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %y = tfm.residual_add %r, %b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// The op verifier accepts sides of equal rank; the lowering cannot.
func.func @residual_add_mismatch(%r: tensor<2x4x8xf32>, %b: tensor<2x4x16xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{cannot lower: residual 'tensor<2x4x8xf32>' and branch 'tensor<2x4x16xf32>' differ in shape}}
  %y = tfm.residual_add %r, %b : (tensor<2x4x8xf32>, tensor<2x4x16xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

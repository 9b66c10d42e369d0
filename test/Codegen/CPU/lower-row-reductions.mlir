// RUN: transformer-opt %s --split-input-file --tfm-lower-vectors --canonicalize | FileCheck %s

// A reduction along the innermost dimension (a softmax row's max over a
// flash-attention key tile) becomes one vector.reduction per row, which LLVM
// reduces a register at a time and then as a tree; reassociation is marked
// (exact for max). Not one scalar maximumf per element.
// CHECK-LABEL: func.func @row_max
// CHECK-COUNT-4: vector.reduction <maximumf>, %{{.*}}, %{{.*}} fastmath<reassoc> : vector<64xf32> into f32
// CHECK-NOT: arith.maximumf
// CHECK: return
func.func @row_max(%v: vector<4x64xf32>, %acc: vector<4xf32>) -> vector<4xf32> {
  %r = vector.multi_reduction <maximumf>, %v, %acc [1] : vector<4x64xf32> to vector<4xf32>
  return %r : vector<4xf32>
}

// -----

// A row sum (a softmax denominator, a norm's last partial-sum step) likewise.
// CHECK-LABEL: func.func @row_sum
// CHECK: vector.reduction <add>, %{{.*}}, %{{.*}} fastmath<reassoc> : vector<32xf32> into f32
// CHECK-NOT: arith.addf
// CHECK: return
func.func @row_sum(%v: vector<1x32xf32>, %acc: vector<1xf32>) -> vector<1xf32> {
  %r = vector.multi_reduction <add>, %v, %acc [1] : vector<1x32xf32> to vector<1xf32>
  return %r : vector<1xf32>
}

// -----

// Reducing an outer dimension keeps the elementwise form: whole vectors
// added row by row, in order.
// CHECK-LABEL: func.func @column_sum
// CHECK-NOT: vector.reduction
// CHECK-COUNT-8: arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: return
func.func @column_sum(%v: vector<8x16xf32>, %acc: vector<16xf32>) -> vector<16xf32> {
  %r = vector.multi_reduction <add>, %v, %acc [0] : vector<8x16xf32> to vector<16xf32>
  return %r : vector<16xf32>
}

// RUN: transformer-opt %s --tfm-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @gelu_exact
// CHECK: linalg.generic
// CHECK: %[[X:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[S:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK: %[[E:.*]] = math.erf %[[S]] : f32
// CHECK: arith.addf %{{.*}}, %[[E]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @gelu_exact(%x: tensor<2x8xf16>) -> tensor<2x8xf16> {
  %y = tfm.gelu %x : (tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// CHECK-LABEL: func.func @gelu_tanh
// CHECK: arith.constant 4.471500e-02 : f32
// CHECK: arith.constant 0.797884583 : f32
// CHECK: math.tanh
// CHECK-NOT: math.erf
func.func @gelu_tanh(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = tfm.gelu %x {approximate = #tfm.gelu<tanh>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// silu(x) = x / (1 + exp(-x)).
// CHECK-LABEL: func.func @silu
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK: %[[E:.*]] = math.exp %[[N]] : f32
// CHECK: %[[D:.*]] = arith.addf %{{.*}}, %[[E]] : f32
// CHECK: arith.divf %[[X]], %[[D]] : f32
func.func @silu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = tfm.silu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// swiglu = silu(gate) * up, one generic.
// CHECK-LABEL: func.func @swiglu
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x8xf32>, tensor<1x2x8xf32>)
// CHECK: ^bb0(%[[G:.*]]: f32, %[[U:.*]]: f32, %{{.*}}: f32):
// CHECK: math.exp
// CHECK: %[[S:.*]] = arith.divf %[[G]], %{{.*}} : f32
// CHECK: arith.mulf %[[S]], %[[U]] : f32
// CHECK-NOT: tfm.
func.func @swiglu(%g: tensor<1x2x8xf32>, %u: tensor<1x2x8xf32>) -> tensor<1x2x8xf32> {
  %y = tfm.swiglu %g, %u : (tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  return %y : tensor<1x2x8xf32>
}

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

// GeGLU: the tanh GELU of the gate times up, in f32, rounded once.
// CHECK-LABEL: func.func @geglu_bf16
// CHECK: ^bb0(%[[G:[^:]*]]: bf16, %[[U:[^:]*]]: bf16
// CHECK: %[[GF:.*]] = arith.extf %[[G]] : bf16 to f32
// CHECK: math.tanh
// CHECK: %[[HALF:.*]] = arith.mulf %{{.*}}, %[[GF]] : f32
// CHECK: %[[GELU:.*]] = arith.mulf %[[HALF]], %{{.*}} : f32
// CHECK: %[[UF:.*]] = arith.extf %[[U]] : bf16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[GELU]], %[[UF]] : f32
// CHECK: arith.truncf %[[P]] : f32 to bf16
func.func @geglu_bf16(%g: tensor<2x4x8xbf16>, %u: tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16> {
  %0 = tfm.geglu %g, %u {approximate = #tfm.gelu<tanh>} : (tensor<2x4x8xbf16>, tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16>
  return %0 : tensor<2x4x8xbf16>
}

// GeGLU with the exact GELU.
// CHECK-LABEL: func.func @geglu_erf
// CHECK: math.erf
// CHECK-NOT: math.tanh
func.func @geglu_erf(%g: tensor<2x4x8xf32>, %u: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = tfm.geglu %g, %u : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// ReLU: maximumf with 0 (NaN-propagating, as torch.relu).
// CHECK-LABEL: func.func @relu
// CHECK: ^bb0(%[[IN:[^:]*]]: f32
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.maximumf %[[IN]], %[[Z]] : f32
func.func @relu(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = tfm.relu %x : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

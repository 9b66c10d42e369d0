// RUN: transformer-opt %s --tfm-gpu-contraction-dtype -split-input-file | FileCheck %s

// A weight parameter read by a matmul becomes an f16 parameter after it,
// with its attributes and tfm.param_rounded (bound rounded once); the f32
// argument, now unread, leaves the signature. The activation is rounded by
// a truncf generic on every call.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32> {tfm.input = "x"},
// CHECK-SAME: %[[W:.*]]: tensor<8x16xf16> {tfm.param = "w", tfm.param_rounded})
// CHECK: %[[XH:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>)
// CHECK: arith.truncf
// CHECK: linalg.matmul ins(%[[XH]], %[[W]] : tensor<4x8xf16>, tensor<8x16xf16>)
func.func @linear(%x: tensor<4x8xf32> {tfm.input = "x"},
                  %w: tensor<8x16xf32> {tfm.param = "w"}) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A tied table read by a gather and by the LM head: the f32 argument stays
// for the gather, and an f16 copy (the same tfm.param) follows it; two
// matmuls of one weight share one f16 argument.
// CHECK-LABEL: func.func @tied(
// CHECK-SAME: %[[T:[^:]*]]: tensor<16x8xf32> {tfm.param = "wte"},
// CHECK-SAME: %[[TH:[^:]*]]: tensor<16x8xf16> {tfm.param = "wte", tfm.param_rounded},
// CHECK-SAME: %{{[^:]*}}: tensor<4x8xf32>, %{{[^:]*}}: index)
// CHECK: tensor.extract %[[T]]
// CHECK: linalg.matmul {{.*}} ins(%{{.*}}, %[[TH]] : tensor<4x8xf16>, tensor<16x8xf16>)
// CHECK: linalg.matmul {{.*}} ins(%{{.*}}, %[[TH]] : tensor<4x8xf16>, tensor<16x8xf16>)
func.func @tied(%t: tensor<16x8xf32> {tfm.param = "wte"}, %h: tensor<4x8xf32>, %i: index)
    -> (f32, tensor<4x16xf32>, tensor<4x16xf32>) {
  %g = tensor.extract %t[%i, %i] : tensor<16x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%h, %t : tensor<4x8xf32>, tensor<16x8xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  %z = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%h, %t : tensor<4x8xf32>, tensor<16x8xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %g, %y, %z : f32, tensor<4x16xf32>, tensor<4x16xf32>
}

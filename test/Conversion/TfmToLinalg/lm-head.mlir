// RUN: transformer-opt %s --tfm-to-linalg | FileCheck %s

// Tied [V, d] weight (out_in, the default): transposed-B matmul, no copy.
// CHECK-DAG: #[[MB:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @lm_head
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x4x8xf32>, %[[W:[^:]*]]: tensor<32x8xf32>
// CHECK: %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
// CHECK: %[[L:.*]] = linalg.matmul indexing_maps = [#{{.*}}, #[[MB]], #{{.*}}] ins(%[[XC]], %[[W]] : tensor<4x8xf32>, tensor<32x8xf32>) outs(%{{.*}} : tensor<4x32xf32>)
// CHECK: tensor.expand_shape %[[L]] {{\[\[}}0, 1], [2]] output_shape [1, 4, 32]
// CHECK-NOT: tfm.
func.func @lm_head(%x: tensor<1x4x8xf32>, %w: tensor<32x8xf32>) -> tensor<1x4x32xf32> {
  %y = tfm.lm_head %x, %w : (tensor<1x4x8xf32>, tensor<32x8xf32>) -> tensor<1x4x32xf32>
  return %y : tensor<1x4x32xf32>
}

// in_out [d, V]: a plain matmul.
// CHECK-LABEL: func.func @lm_head_in_out
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x32xf32>)
func.func @lm_head_in_out(%x: tensor<1x4x8xf32>, %w: tensor<8x32xf32>) -> tensor<1x4x32xf32> {
  %y = tfm.lm_head %x, %w {layout = #tfm.layout<in_out>} : (tensor<1x4x8xf32>, tensor<8x32xf32>) -> tensor<1x4x32xf32>
  return %y : tensor<1x4x32xf32>
}

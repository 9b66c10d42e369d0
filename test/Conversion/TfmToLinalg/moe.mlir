// RUN: transformer-opt %s --tfm-to-linalg | FileCheck %s

// Router softmax (max-subtracted), top-k by rank (a reduction counting the
// experts that beat each one), renormalised weights, then every expert on
// every token weighted by its routing weight (0 when not selected).
// CHECK-LABEL: func.func @moe
// CHECK: %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
// CHECK: %[[LOGITS:.*]] = linalg.matmul {{.*}} ins(%[[X]], %{{.*}} : tensor<3x4xf32>, tensor<2x4xf32>)
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: %[[RANK:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpi ult
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[RANK]] : tensor<3x2xf32>, tensor<3x2xf32>)
// CHECK: arith.cmpf olt, %{{.*}}, %cst{{.*}} : f32
// Expert 0: gate, up, silu(gate) * up, down, accumulate.
// CHECK: linalg.matmul {{.*}} ins(%[[X]], %{{.*}} : tensor<3x4xf32>, tensor<5x4xf32>)
// CHECK: linalg.matmul {{.*}} ins(%[[X]], %{{.*}} : tensor<3x4xf32>, tensor<5x4xf32>)
// CHECK: math.exp
// CHECK: %[[DOWN:.*]] = linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<3x5xf32>, tensor<4x5xf32>)
// CHECK: %[[W0:.*]] = tensor.extract_slice %{{.*}}[0, 0] [3, 1] [1, 1] : tensor<3x2xf32> to tensor<3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[DOWN]], %[[W0]] : tensor<3x4xf32>, tensor<3xf32>)
// Expert 1 reads routing column 1.
// CHECK: tensor.extract_slice %{{.*}}[0, 1] [3, 1] [1, 1] : tensor<3x2xf32> to tensor<3xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [1, 3, 4]
// CHECK-NOT: tfm.
func.func @moe(%x: tensor<1x3x4xf32>, %r: tensor<2x4xf32>,
               %g0: tensor<5x4xf32>, %u0: tensor<5x4xf32>, %d0: tensor<4x5xf32>,
               %g1: tensor<5x4xf32>, %u1: tensor<5x4xf32>, %d1: tensor<4x5xf32>) -> tensor<1x3x4xf32> {
  %y = tfm.moe %x, %r, %g0, %u0, %d0, %g1, %u1, %d1 {top_k = 1 : i64} : (tensor<1x3x4xf32>, tensor<2x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>, tensor<4x5xf32>, tensor<5x4xf32>, tensor<5x4xf32>, tensor<4x5xf32>) -> tensor<1x3x4xf32>
  return %y : tensor<1x3x4xf32>
}

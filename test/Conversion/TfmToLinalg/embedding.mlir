// RUN: transformer-opt %s --tfm-to-linalg | FileCheck %s

// A gather in a generic: ids clamped to [0, V) before tensor.extract.
// CHECK-DAG: #[[IDS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: %[[IDS_ARG:[^:]*]]: tensor<2x3xi32>, %[[T:[^:]*]]: tensor<50x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IDS]], {{.*}}]{{.*}} ins(%[[IDS_ARG]] : tensor<2x3xi32>) outs(%{{.*}} : tensor<2x3x8xf32>)
// CHECK: ^bb0(%[[ID:.*]]: i32, %{{.*}}: f32):
// CHECK: %[[I:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK: %[[LO:.*]] = arith.maxsi %[[I]], %c0
// CHECK: %[[ROW:.*]] = arith.minsi %[[LO]], %c49
// CHECK: %[[COL:.*]] = linalg.index 2
// CHECK: tensor.extract %[[T]][%[[ROW]], %[[COL]]] : tensor<50x8xf32>
// CHECK-NOT: tfm.
func.func @embedding(%ids: tensor<2x3xi32>, %t: tensor<50x8xf32>) -> tensor<2x3x8xf32> {
  %y = tfm.embedding %ids, %t : (tensor<2x3xi32>, tensor<50x8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// input + table[offset + s], the position clamped to the table.
// CHECK-LABEL: func.func @position_embedding
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x3x8xf32>, %[[P:[^:]*]]: tensor<16x8xf32>, %[[OFF:[^:]*]]: index
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<1x3x8xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[S:.*]] = linalg.index 1
// CHECK: %[[POS:.*]] = arith.addi %[[S]], %[[OFF]]
// CHECK: arith.maxsi %[[POS]]
// CHECK: %[[ROW:.*]] = arith.minsi %{{.*}}, %c15
// CHECK: %[[E:.*]] = tensor.extract %[[P]][%[[ROW]], %{{.*}}]
// CHECK: arith.addf %[[IN]], %[[E]] : f32
func.func @position_embedding(%x: tensor<1x3x8xf32>, %p: tensor<16x8xf32>, %off: index) -> tensor<1x3x8xf32> {
  %y = tfm.position_embedding %x, %p, %off : (tensor<1x3x8xf32>, tensor<16x8xf32>, index) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// Without an offset the positions start at 0.
// CHECK-LABEL: func.func @position_embedding_no_offset
// CHECK: %[[S:.*]] = linalg.index 1
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: arith.maxsi %[[S]]
func.func @position_embedding_no_offset(%x: tensor<1x3x8xf32>, %p: tensor<16x8xf32>) -> tensor<1x3x8xf32> {
  %y = tfm.position_embedding %x, %p : (tensor<1x3x8xf32>, tensor<16x8xf32>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// A scaled embedding: the factor rounded to bf16 first (sqrt(8) = 2.828427
// becomes 2.828125, as Gemma's bf16 normalizer), the product in f32.
// CHECK-LABEL: func.func @embedding_scale_bf16
// CHECK: %[[ROW:.*]] = tensor.extract
// CHECK: %[[F:.*]] = arith.extf %[[ROW]] : bf16 to f32
// CHECK: %[[C:.*]] = arith.constant 2.828125 : f32
// CHECK: %[[P:.*]] = arith.mulf %[[F]], %[[C]] : f32
// CHECK: arith.truncf %[[P]] : f32 to bf16
func.func @embedding_scale_bf16(%ids: tensor<1x4xi64>, %e: tensor<16x8xbf16>) -> tensor<1x4x8xbf16> {
  %0 = tfm.embedding %ids, %e {scale = 2.828427 : f32} : (tensor<1x4xi64>, tensor<16x8xbf16>) -> tensor<1x4x8xbf16>
  return %0 : tensor<1x4x8xbf16>
}

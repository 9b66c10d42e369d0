// RUN: transformer-opt %s --tfm-to-linalg | FileCheck %s

// tfm.gather_positions' map of the positions (the test at the end).
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1, d2) -> (d0)>

// CHECK-LABEL: func.func @split
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3x20xf32>
// CHECK: %[[A:.*]] = tensor.extract_slice %[[X]][0, 0, 0] [2, 3, 8] [1, 1, 1]
// CHECK: %[[B:.*]] = tensor.extract_slice %[[X]][0, 0, 8] [2, 3, 4] [1, 1, 1]
// CHECK: %[[C:.*]] = tensor.extract_slice %[[X]][0, 0, 12] [2, 3, 8] [1, 1, 1]
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @split(%x: tensor<2x3x20xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x4xf32>, tensor<2x3x8xf32>) {
  %a, %b, %c = tfm.split %x : (tensor<2x3x20xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x4xf32>, tensor<2x3x8xf32>)
  return %a, %b, %c : tensor<2x3x8xf32>, tensor<2x3x4xf32>, tensor<2x3x8xf32>
}

// view(B, S, H, dh).transpose(1, 2)
// CHECK-LABEL: func.func @split_heads
// CHECK: %[[V:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [2, 3, 4, 2] : tensor<2x3x8xf32> into tensor<2x3x4x2xf32>
// CHECK: linalg.transpose ins(%[[V]] : tensor<2x3x4x2xf32>) outs(%{{.*}} : tensor<2x4x3x2xf32>) permutation = [0, 2, 1, 3]
func.func @split_heads(%x: tensor<2x3x8xf32>) -> tensor<2x4x3x2xf32> {
  %y = tfm.split_heads %x {num_heads = 4 : i64} : (tensor<2x3x8xf32>) -> tensor<2x4x3x2xf32>
  return %y : tensor<2x4x3x2xf32>
}

// transpose(1, 2).reshape(B, S, H*dh)
// CHECK-LABEL: func.func @merge_heads
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x4x3x2xf32>) outs(%{{.*}} : tensor<2x3x4x2xf32>) permutation = [0, 2, 1, 3]
// CHECK: tensor.collapse_shape %[[T]] {{\[\[}}0], [1], [2, 3]] : tensor<2x3x4x2xf32> into tensor<2x3x8xf32>
// CHECK-NOT: tfm.
func.func @merge_heads(%x: tensor<2x4x3x2xf32>) -> tensor<2x3x8xf32> {
  %y = tfm.merge_heads %x : (tensor<2x4x3x2xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// A grouped split (GPT-NeoX's per-head QKV, 2 heads of dh = 4): a view
// [.., G, n/G], one slice per piece at offsets 0, 4, 8, collapsed back.
// CHECK-LABEL: func.func @split_groups
// CHECK: %[[V:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [1, 4, 2, 12] : tensor<1x4x24xf32> into tensor<1x4x2x12xf32>
// CHECK: %[[Q:.*]] = tensor.extract_slice %[[V]][0, 0, 0, 0] [1, 4, 2, 4] [1, 1, 1, 1]
// CHECK: tensor.collapse_shape %[[Q]] {{\[\[}}0], [1], [2, 3]] : tensor<1x4x2x4xf32> into tensor<1x4x8xf32>
// CHECK: tensor.extract_slice %[[V]][0, 0, 0, 4] [1, 4, 2, 4]
// CHECK: tensor.extract_slice %[[V]][0, 0, 0, 8] [1, 4, 2, 4]
func.func @split_groups(%x: tensor<1x4x24xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %q, %k, %v = tfm.split %x {groups = 2 : i64} : (tensor<1x4x24xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
  return %q, %k, %v : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// One elementwise generic through f32: widening is one extf; bf16 -> f16
// extends exactly and rounds once.
// CHECK-LABEL: func.func @convert_widen
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:.+]]: bf16, %{{.+}}: f32):
// CHECK-NEXT: %[[E:.+]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: linalg.yield %[[E]] : f32
func.func @convert_widen(%x: tensor<1x4x96xbf16>) -> tensor<1x4x96xf32> {
  %y = tfm.convert %x : (tensor<1x4x96xbf16>) -> tensor<1x4x96xf32>
  return %y : tensor<1x4x96xf32>
}

// CHECK-LABEL: func.func @convert_bf16_to_f16
// CHECK: ^bb0(%[[IN:.+]]: bf16, %{{.+}}: f16):
// CHECK-NEXT: %[[E:.+]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: %[[T:.+]] = arith.truncf %[[E]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[T]] : f16
func.func @convert_bf16_to_f16(%x: tensor<8xbf16>) -> tensor<8xf16> {
  %y = tfm.convert %x : (tensor<8xbf16>) -> tensor<8xf16>
  return %y : tensor<8xf16>
}

// One row per sequence: the position clamped to [0, S) and read by
// tensor.extract at (b, row, j).
// CHECK-LABEL: func.func @gather_positions
// CHECK-SAME: %[[H:[^:]*]]: tensor<2x5x8xf32>, %[[P:[^:]*]]: tensor<2xi64>
// CHECK: linalg.generic {indexing_maps = [#[[ROWS]], {{.*}}]{{.*}} ins(%[[P]] : tensor<2xi64>) outs(%{{.*}} : tensor<2x1x8xf32>)
// CHECK: ^bb0(%[[POS:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[I:.*]] = arith.index_cast %[[POS]] : i64 to index
// CHECK: %[[LO:.*]] = arith.maxsi %[[I]], %c0
// CHECK: %[[ROW:.*]] = arith.minsi %[[LO]], %c4
// CHECK: %[[B:.*]] = linalg.index 0
// CHECK: %[[COL:.*]] = linalg.index 2
// CHECK: tensor.extract %[[H]][%[[B]], %[[ROW]], %[[COL]]] : tensor<2x5x8xf32>
// CHECK-NOT: tfm.
func.func @gather_positions(%h: tensor<2x5x8xf32>, %p: tensor<2xi64>) -> tensor<2x1x8xf32> {
  %y = tfm.gather_positions %h, %p : (tensor<2x5x8xf32>, tensor<2xi64>) -> tensor<2x1x8xf32>
  return %y : tensor<2x1x8xf32>
}

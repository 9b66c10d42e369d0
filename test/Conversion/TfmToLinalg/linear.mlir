// RUN: transformer-opt %s --tfm-to-linalg --split-input-file | FileCheck %s

// in_out (GPT-2 Conv1D): collapse [B, S] into rows, plain linalg.matmul into a
// zero-filled f32 accumulator, bias added by an epilogue generic.
// CHECK-LABEL: func.func @linear_in_out_bias
// CHECK-SAME: %[[X:.*]]: tensor<2x3x8xf32>, %[[W:.*]]: tensor<8x12xf32>, %[[B:.*]]: tensor<12xf32>
// CHECK: %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<6x12xf32>)
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[XC]], %[[W]] : tensor<6x8xf32>, tensor<8x12xf32>) outs(%[[ACC]] : tensor<6x12xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[B]] : tensor<6x12xf32>, tensor<12xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2]] output_shape [2, 3, 12]
// CHECK-NOT: tfm.
func.func @linear_in_out_bias(%x: tensor<2x3x8xf32>, %w: tensor<8x12xf32>, %b: tensor<12xf32>) -> tensor<2x3x12xf32> {
  %y = tfm.linear %x, %w, %b : (tensor<2x3x8xf32>, tensor<8x12xf32>, tensor<12xf32>) -> tensor<2x3x12xf32>
  return %y : tensor<2x3x12xf32>
}

// -----

// out_in (nn.Linear): the weight is read through a transposed B map, never
// copied into a transposed tensor.
// CHECK-DAG: #[[MA:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[MB:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MC:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear_out_in
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul indexing_maps = [#[[MA]], #[[MB]], #[[MC]]] ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<16x8xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @linear_out_in(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// f16: the matmul accumulates in f32; the epilogue extends the bias, adds in
// f32 and rounds once.
// CHECK-LABEL: func.func @linear_f16
// CHECK: linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8xf16>, tensor<16x8xf16>)
// CHECK-SAME: outs(%{{.*}} : tensor<2x16xf32>)
// CHECK: linalg.generic
// CHECK: ^bb0(%[[ACC:.*]]: f32, %[[BIAS:.*]]: f16, %{{.*}}: f16):
// CHECK: %[[BE:.*]] = arith.extf %[[BIAS]] : f16 to f32
// CHECK: %[[S:.*]] = arith.addf %[[ACC]], %[[BE]] : f32
// CHECK: arith.truncf %[[S]] : f32 to f16
// CHECK: -> tensor<2x16xf16>
func.func @linear_f16(%x: tensor<1x2x8xf16>, %w: tensor<16x8xf16>, %b: tensor<16xf16>) -> tensor<1x2x16xf16> {
  %y = tfm.linear %x, %w, %b {layout = #tfm.layout<out_in>} : (tensor<1x2x8xf16>, tensor<16x8xf16>, tensor<16xf16>) -> tensor<1x2x16xf16>
  return %y : tensor<1x2x16xf16>
}

// -----

// tfm.permute_features: a gather along the last dimension, each output
// feature j reading input feature order[j] (clamped into [0, K)), the other
// indices its own.
// CHECK-DAG: #[[ORDER:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @permute_features
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3x8xf32>, %[[O:[^:]*]]: tensor<8xi32>
// CHECK: linalg.generic {indexing_maps = [#[[ORDER]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[O]] : tensor<8xi32>)
// CHECK: ^bb0(%[[J:.*]]: i32, %{{.*}}: f32):
// CHECK: %[[I:.*]] = arith.index_cast %[[J]] : i32 to index
// CHECK: %[[LO:.*]] = arith.maxsi %[[I]], %{{.*}} : index
// CHECK: %[[IN:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK: %[[D1:.*]] = linalg.index 1 : index
// CHECK: tensor.extract %[[X]][%[[D0]], %[[D1]], %[[IN]]] : tensor<2x3x8xf32>
func.func @permute_features(%x: tensor<2x3x8xf32>, %o: tensor<8xi32>) -> tensor<2x3x8xf32> {
  %y = tfm.permute_features %x, %o : (tensor<2x3x8xf32>, tensor<8xi32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

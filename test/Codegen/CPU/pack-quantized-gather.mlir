// RUN: transformer-opt %s --tfm-quantize-weights --tfm-to-linalg --canonicalize --tfm-cpu-configure=cpu=znver3 --tfm-cpu-pack-weights --split-input-file | FileCheck %s
// RUN: transformer-opt %s --tfm-quantize-weights=scheme=q4_0 --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=znver3 int8-dot=1" --tfm-cpu-pack-weights --split-input-file | FileCheck %s --check-prefix=Q4

// A Q8_0 embedding table tied to the LM head: the head's GEMM reads the
// packed values and scales, and so does the gather, element by element:
// row n = id, K step k = column; V[n / P, k / 32, k % 32, n % P] times
// S[n / P, k / 32, n % P]. No f32 table argument is left.
// CHECK-LABEL: func.func @tied
// CHECK-SAME: %{{.*}}: tensor<1x8xi32> {tfm.input = "ids"}
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<7x2x32x16xi8> {tfm.param = "wte", tfm.param_pack = {format = "q8_0_values", layout = "out_in", panel = 16 : i64, shape = array<i64: 100, 64>}}
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<7x2x16xf16> {tfm.param = "wte", tfm.param_pack = {format = "q8_0_scales", layout = "out_in", panel = 16 : i64, shape = array<i64: 100, 64>}})
// CHECK-NOT: tensor<100x64xf32>
// CHECK: linalg.generic
// CHECK: %[[ROW:.*]] = arith.minsi
// CHECK: %[[COL:.*]] = linalg.index 2
// CHECK-DAG: %[[J:.*]] = arith.divui %[[ROW]], %c16
// CHECK-DAG: %[[R:.*]] = arith.remui %[[ROW]], %c16
// CHECK-DAG: %[[B:.*]] = arith.divui %[[COL]], %c32
// CHECK-DAG: %[[T:.*]] = arith.remui %[[COL]], %c32
// CHECK: %[[Q:[a-z0-9_]+]] = tensor.extract %[[V]][%[[J]], %[[B]], %[[T]], %[[R]]] : tensor<7x2x32x16xi8>
// CHECK: %[[D:.*]] = tensor.extract %[[S]][%[[J]], %[[B]], %[[R]]] : tensor<7x2x16xf16>
// CHECK: %[[QF:.*]] = arith.sitofp %[[Q]] : i8 to f32
// CHECK: %[[DF:.*]] = arith.extf %[[D]] : f16 to f32
// CHECK: arith.mulf %[[QF]], %[[DF]] : f32
// CHECK: tfm.quantized_matmul = "q8_0"
//
// Q4_0 on int8 activations: values four K steps of a column together,
// [J, K/32, 4, P, 4]; step k of a block is nibble k / 16 of byte k % 16,
// at [.., (k % 16) / 4, r, (k % 16) % 4], minus 8.
// Q4-LABEL: func.func @tied
// Q4-SAME: %[[V:[a-z0-9]+]]: tensor<4x2x4x32x4xi8> {tfm.param = "wte", tfm.param_pack = {format = "q4_0_values", group = 4 : i64, layout = "out_in", panel = 32 : i64, shape = array<i64: 100, 64>}}
// Q4-SAME: %[[S:[a-z0-9]+]]: tensor<4x2x32xf16> {tfm.param = "wte", tfm.param_pack = {format = "q4_0_scales", layout = "out_in", panel = 32 : i64, shape = array<i64: 100, 64>}})
// Q4: %[[Q:[a-z0-9_]+]] = tensor.extract %[[V]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<4x2x4x32x4xi8>
// Q4: arith.shrui %[[Q]]
// Q4: arith.andi
// Q4: arith.subi
// Q4: tensor.extract %[[S]]
// Q4: tfm.quantized_matmul = "q4_0"
func.func @tied(%ids: tensor<1x8xi32> {tfm.input = "ids"},
                %wte: tensor<100x64xf32> {tfm.param = "wte"}) -> tensor<1x8x100xf32> {
  %e = tfm.embedding %ids, %wte : (tensor<1x8xi32>, tensor<100x64xf32>) -> tensor<1x8x64xf32>
  %l = tfm.lm_head %e, %wte : (tensor<1x8x64xf32>, tensor<100x64xf32>) -> tensor<1x8x100xf32>
  return %l : tensor<1x8x100xf32>
}

// -----

// A table only the gather reads is packed and read so too.
// CHECK-LABEL: func.func @table
// CHECK-SAME: tensor<4x2x32x16xi8> {tfm.param = "table", tfm.param_pack = {format = "q8_0_values", layout = "out_in", panel = 16 : i64, shape = array<i64: 50, 64>}}
// CHECK-SAME: tensor<4x2x16xf16> {tfm.param = "table", tfm.param_pack = {format = "q8_0_scales", layout = "out_in", panel = 16 : i64, shape = array<i64: 50, 64>}})
// CHECK-NOT: tensor<50x64xf32>
func.func @table(%ids: tensor<1x8xi32> {tfm.input = "ids"},
                 %table: tensor<50x64xf32> {tfm.param = "table"}) -> tensor<1x8x64xf32> {
  %e = tfm.embedding %ids, %table : (tensor<1x8xi32>, tensor<50x64xf32>) -> tensor<1x8x64xf32>
  return %e : tensor<1x8x64xf32>
}

// RUN: transformer-opt %s --tfm-quantize-weights --tfm-to-linalg --canonicalize --tfm-cpu-configure=cpu=znver3 --tfm-cpu-pack-weights --split-input-file | FileCheck %s
// RUN: transformer-opt %s --tfm-quantize-weights --tfm-to-linalg --canonicalize --tfm-cpu-configure=cpu=skylake-avx512 --tfm-cpu-pack-weights --split-input-file | FileCheck %s --check-prefix=AVX512

// A Q8_0 weight, in_out [K, N] = [64, 96], on an AVX2 target: read from its
// values [J, K/32, 32, P] and scales [J, K/32, P] in panels of P = 16
// columns (two AVX2 vectors: the micro-kernel's), in place of the weight
// (argument #1 becomes #1 and #2), each recording the file's shape and
// layout; the matmul becomes the exact generic over (m, j, r, b, t) with A
// read as [M, K/32, 32] and C as [M, J, P], marked for the micro-kernel and
// without a register-tile plan.
// CHECK-LABEL: func.func @in_out
// CHECK-SAME: %{{.*}}: tensor<1x8x64xf32> {tfm.input = "x"}
// CHECK-SAME: %[[V:.*]]: tensor<6x2x32x16xi8> {tfm.param = "w", tfm.param_pack = {format = "q8_0_values", layout = "in_out", panel = 16 : i64, shape = array<i64: 64, 96>}}
// CHECK-SAME: %[[S:.*]]: tensor<6x2x16xf16> {tfm.param = "w", tfm.param_pack = {format = "q8_0_scales", layout = "in_out", panel = 16 : i64, shape = array<i64: 64, 96>}})
// CHECK: %[[A:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [8, 2, 32] : tensor<8x64xf32> into tensor<8x2x32xf32>
// CHECK: %[[C:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [8, 6, 16] : tensor<8x96xf32> into tensor<8x6x16xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[A]], %[[V]], %[[S]] : tensor<8x2x32xf32>, tensor<6x2x32x16xi8>, tensor<6x2x16xf16>) outs(%[[C]] : tensor<8x6x16xf32>)
// CHECK-SAME: tfm.quantized_matmul = "q8_0"
// CHECK-NOT: tfm.cpu_tiling
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Q:.*]]: i8, %[[D:.*]]: f16, %[[ACC:.*]]: f32):
// CHECK: %[[QF:.*]] = arith.sitofp %[[Q]] : i8 to f32
// CHECK: %[[DF:.*]] = arith.extf %[[D]] : f16 to f32
// CHECK: %[[W:.*]] = arith.mulf %[[QF]], %[[DF]] : f32
// CHECK: %[[P:.*]] = arith.mulf %[[X]], %[[W]] : f32
// CHECK: arith.addf %[[ACC]], %[[P]] : f32
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<8x6x16xf32> into tensor<8x96xf32>
// On AVX-512, panels of 32 columns.
// AVX512-LABEL: func.func @in_out
// AVX512-SAME: tensor<3x2x32x32xi8> {tfm.param = "w", tfm.param_pack = {format = "q8_0_values", layout = "in_out", panel = 32 : i64, shape = array<i64: 64, 96>}}
// AVX512-SAME: tensor<3x2x32xf16> {tfm.param = "w", tfm.param_pack = {format = "q8_0_scales", layout = "in_out", panel = 32 : i64, shape = array<i64: 64, 96>}}
func.func @in_out(%x: tensor<1x8x64xf32> {tfm.input = "x"}, %w: tensor<64x96xf32> {tfm.param = "w"}) -> tensor<1x8x96xf32> {
  %y = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<64x96xf32>) -> tensor<1x8x96xf32>
  return %y : tensor<1x8x96xf32>
}

// -----

// An out_in LM head [V, d] = [100, 64] keeps its rows: 7 panels of 16, C
// padded to 112 columns and sliced back to 100; a weight left in f32 (K =
// 48) is packed in panels as before.
// CHECK-LABEL: func.func @head
// CHECK-SAME: %{{.*}}: tensor<3x48x24xf32> {tfm.param = "w", tfm.param_pack = {layout = "in_out", panel = 24 : i64, shape = array<i64: 48, 64>}}
// CHECK-SAME: tensor<7x2x32x16xi8> {tfm.param = "head", tfm.param_pack = {format = "q8_0_values", layout = "out_in", panel = 16 : i64, shape = array<i64: 100, 64>}}
// CHECK-SAME: tensor<7x2x16xf16> {tfm.param = "head", tfm.param_pack = {format = "q8_0_scales", layout = "out_in", panel = 16 : i64, shape = array<i64: 100, 64>}})
// CHECK: tfm.cpu_tiling
// CHECK: tensor.pad %{{.*}} low[0, 0] high[0, 12]
// CHECK: tensor<4x112xf32> into tensor<4x7x16xf32>
// CHECK: tfm.quantized_matmul = "q8_0"
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [4, 100] [1, 1] : tensor<4x112xf32> to tensor<4x100xf32>
// AVX512-LABEL: func.func @head
func.func @head(%x: tensor<1x4x48xf32> {tfm.input = "x"}, %w: tensor<48x64xf32> {tfm.param = "w"}, %head: tensor<100x64xf32> {tfm.param = "head"}) -> tensor<1x4x100xf32> {
  %h = tfm.linear %x, %w : (tensor<1x4x48xf32>, tensor<48x64xf32>) -> tensor<1x4x64xf32>
  %l = tfm.lm_head %h, %head : (tensor<1x4x64xf32>, tensor<100x64xf32>) -> tensor<1x4x100xf32>
  return %l : tensor<1x4x100xf32>
}

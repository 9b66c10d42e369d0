// RUN: transformer-opt %s --tfm-quantize-weights --tfm-to-linalg --canonicalize --tfm-cpu-configure=cpu=znver3 --tfm-cpu-pack-weights --split-input-file | FileCheck %s

// A Q8_0 weight, in_out [K, N] = [64, 96]: read from its values [N, K/32,
// 32] and scales [N, K/32] in place of the weight (argument #1 becomes #1
// and #2), each recording the file's shape and layout; the matmul becomes
// the exact generic over (m, n, b, t) with A read as [M, K/32, 32], marked
// for the micro-kernel and without a register-tile plan.
// CHECK-LABEL: func.func @in_out
// CHECK-SAME: %{{.*}}: tensor<1x8x64xf32> {tfm.input = "x"}
// CHECK-SAME: %[[V:.*]]: tensor<96x2x32xi8> {tfm.param = "w", tfm.param_pack = {format = "q8_0_values", layout = "in_out", shape = array<i64: 64, 96>}}
// CHECK-SAME: %[[S:.*]]: tensor<96x2xf16> {tfm.param = "w", tfm.param_pack = {format = "q8_0_scales", layout = "in_out", shape = array<i64: 64, 96>}})
// CHECK: %[[A:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [8, 2, 32] : tensor<8x64xf32> into tensor<8x2x32xf32>
// CHECK: linalg.generic {indexing_maps = [#[[MA:.*]], #[[MV:.*]], #[[MS:.*]], #[[MC:.*]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[A]], %[[V]], %[[S]] : tensor<8x2x32xf32>, tensor<96x2x32xi8>, tensor<96x2xf16>) outs(%{{.*}} : tensor<8x96xf32>)
// CHECK-SAME: tfm.quantized_matmul = "q8_0"
// CHECK-NOT: tfm.cpu_tiling
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Q:.*]]: i8, %[[D:.*]]: f16, %[[ACC:.*]]: f32):
// CHECK: %[[QF:.*]] = arith.sitofp %[[Q]] : i8 to f32
// CHECK: %[[DF:.*]] = arith.extf %[[D]] : f16 to f32
// CHECK: %[[W:.*]] = arith.mulf %[[QF]], %[[DF]] : f32
// CHECK: %[[P:.*]] = arith.mulf %[[X]], %[[W]] : f32
// CHECK: arith.addf %[[ACC]], %[[P]] : f32
func.func @in_out(%x: tensor<1x8x64xf32> {tfm.input = "x"}, %w: tensor<64x96xf32> {tfm.param = "w"}) -> tensor<1x8x96xf32> {
  %y = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<64x96xf32>) -> tensor<1x8x96xf32>
  return %y : tensor<1x8x96xf32>
}

// -----

// An out_in LM head [V, d] = [100, 64] keeps its rows; a weight left in f32
// (K = 48) is packed in panels as before.
// CHECK-LABEL: func.func @head
// CHECK-SAME: %{{.*}}: tensor<3x48x24xf32> {tfm.param = "w", tfm.param_pack = {layout = "in_out", panel = 24 : i64, shape = array<i64: 48, 64>}}
// CHECK-SAME: tensor<100x2x32xi8> {tfm.param = "head", tfm.param_pack = {format = "q8_0_values", layout = "out_in", shape = array<i64: 100, 64>}}
// CHECK-SAME: tensor<100x2xf16> {tfm.param = "head", tfm.param_pack = {format = "q8_0_scales", layout = "out_in", shape = array<i64: 100, 64>}})
// CHECK: tfm.cpu_tiling
// CHECK: tfm.quantized_matmul = "q8_0"
func.func @head(%x: tensor<1x4x48xf32> {tfm.input = "x"}, %w: tensor<48x64xf32> {tfm.param = "w"}, %head: tensor<100x64xf32> {tfm.param = "head"}) -> tensor<1x4x100xf32> {
  %h = tfm.linear %x, %w : (tensor<1x4x48xf32>, tensor<48x64xf32>) -> tensor<1x4x64xf32>
  %l = tfm.lm_head %h, %head : (tensor<1x4x64xf32>, tensor<100x64xf32>) -> tensor<1x4x100xf32>
  return %l : tensor<1x4x100xf32>
}

// RUN: transformer-opt %s --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=sapphirerapids amx=1" --tfm-cpu-pack-weights --tfm-cpu-split-amx-weights --split-input-file | FileCheck %s
// RUN: transformer-opt %s --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=znver3 amx=1" --tfm-cpu-pack-weights --tfm-cpu-split-amx-weights --split-input-file | FileCheck %s --check-prefix=NOAMX

// A weight that only a GEMM planned for AMX tiles reads (64 rows, N = 128
// in two panels of 64, K = 96) is bound as its three bf16 parts in tiles'
// order, [3, N / 16, K / 2, 32], and the binder is told so (format). The
// GEMM reads the parts as [J, panel / 16, K / 2, 16, 2] each and adds them:
// loops (m, j, rc, x, q, t), A as [M, K / 2, 2], C as [M, J, panel / 16, 16],
// marked tfm.amx_weight_parts (its parts are such a split: the AMX kernel
// may drop their high-order products).
// Without AMX (znver3) the packed f32 panels stay.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d4, d5)>
// CHECK-DAG: #[[PART:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d3, d5)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @mm(
// CHECK-SAME: %[[X:.*]]: tensor<1x64x96xf32> {tfm.input = "x"},
// CHECK-SAME: %[[S:.*]]: tensor<3x8x48x32xbf16> {tfm.param = "w", tfm.param_pack = {format = "amx_bf16x3", layout = "in_out", panel = 64 : i64, shape = array<i64: 96, 128>}})
// CHECK: %[[A3:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [64, 48, 2]
// CHECK: %[[C4:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [64, 2, 4, 16]
// CHECK: %[[P0:.*]] = tensor.extract_slice %[[S]][0, 0, 0, 0] [1, 8, 48, 32] [1, 1, 1, 1] : tensor<3x8x48x32xbf16> to tensor<8x48x32xbf16>
// CHECK: %[[S0:.*]] = tensor.expand_shape %[[P0]] {{\[}}[0, 1], [2], [3, 4]] output_shape [2, 4, 48, 16, 2]
// CHECK: tensor.extract_slice %[[S]][1, 0, 0, 0]
// CHECK: tensor.extract_slice %[[S]][2, 0, 0, 0]
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[PART]], #[[PART]], #[[PART]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[A3]], %[[S0]], %{{.*}}, %{{.*}} : tensor<64x48x2xf32>, tensor<2x4x48x16x2xbf16>, tensor<2x4x48x16x2xbf16>, tensor<2x4x48x16x2xbf16>)
// CHECK-SAME: outs(%[[C4]] : tensor<64x2x4x16xf32>)
// CHECK-SAME: tfm.amx_weight_parts, tfm.cpu_tiling = #tfm.cpu_tiling<{{.*}}amx_block_cols =
// CHECK: ^bb0(%[[IA:.*]]: f32, %[[I0:.*]]: bf16, %[[I1:.*]]: bf16, %[[I2:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK: %[[E0:.*]] = arith.extf %[[I0]] : bf16 to f32
// CHECK: %[[E1:.*]] = arith.extf %[[I1]] : bf16 to f32
// CHECK: %[[E01:.*]] = arith.addf %[[E0]], %[[E1]] : f32
// CHECK: %[[E2:.*]] = arith.extf %[[I2]] : bf16 to f32
// CHECK: %[[W:.*]] = arith.addf %[[E01]], %[[E2]] : f32
// CHECK: %[[P:.*]] = arith.mulf %[[IA]], %[[W]] : f32
// CHECK: %[[R:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK: linalg.yield %[[R]] : f32
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<64x2x4x16xf32> into tensor<64x2x64xf32>
// NOAMX-LABEL: func.func @mm(
// NOAMX-SAME: tensor<6x96x24xf32> {tfm.param = "w", tfm.param_pack = {layout = "in_out", panel = 24 : i64, shape = array<i64: 96, 128>}})
// NOAMX-NOT: xbf16
func.func @mm(%x: tensor<1x64x96xf32> {tfm.input = "x"}, %w: tensor<96x128xf32> {tfm.param = "w"}) -> tensor<1x64x128xf32> {
  %y = tfm.linear %x, %w : (tensor<1x64x96xf32>, tensor<96x128xf32>) -> tensor<1x64x128xf32>
  return %y : tensor<1x64x128xf32>
}

// -----

// Two weights, both split, each in its argument's place; the bias after the
// GEMM stays f32.
// CHECK-LABEL: func.func @two(
// CHECK-SAME: tensor<1x64x96xf32> {tfm.input = "x"},
// CHECK-SAME: tensor<3x8x48x32xbf16> {tfm.param = "w1", tfm.param_pack = {format = "amx_bf16x3", layout = "in_out", panel = 64 : i64, shape = array<i64: 96, 128>}},
// CHECK-SAME: tensor<128xf32> {tfm.param = "b1"},
// CHECK-SAME: tensor<3x8x64x32xbf16> {tfm.param = "w2", tfm.param_pack = {format = "amx_bf16x3", layout = "out_in", panel = 64 : i64, shape = array<i64: 128, 128>}})
// CHECK-COUNT-2: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
func.func @two(%x: tensor<1x64x96xf32> {tfm.input = "x"}, %w1: tensor<96x128xf32> {tfm.param = "w1"}, %b1: tensor<128xf32> {tfm.param = "b1"}, %w2: tensor<128x128xf32> {tfm.param = "w2"}) -> tensor<1x64x128xf32> {
  %h = tfm.linear %x, %w1, %b1 : (tensor<1x64x96xf32>, tensor<96x128xf32>, tensor<128xf32>) -> tensor<1x64x128xf32>
  %y = tfm.linear %h, %w2 {layout = #tfm.layout<out_in>} : (tensor<1x64x128xf32>, tensor<128x128xf32>) -> tensor<1x64x128xf32>
  return %y : tensor<1x64x128xf32>
}

// -----

// A weight that another function of the module reads through a GEMM of
// fewer than 64 rows (a decode step: FMA) keeps its f32 panels in both, so
// that it is bound once.
// CHECK-LABEL: func.func @prefill(
// CHECK-SAME: tensor<2x96x64xf32> {tfm.param = "w", tfm.param_pack = {layout = "in_out", panel = 64 : i64, shape = array<i64: 96, 128>}})
// CHECK-NOT: xbf16
// CHECK-LABEL: func.func @decode(
// CHECK-SAME: tensor<2x96x64xf32> {tfm.param = "w", tfm.param_pack = {layout = "in_out", panel = 64 : i64, shape = array<i64: 96, 128>}})
func.func @prefill(%x: tensor<1x64x96xf32> {tfm.input = "x"}, %w: tensor<96x128xf32> {tfm.param = "w"}) -> tensor<1x64x128xf32> {
  %y = tfm.linear %x, %w : (tensor<1x64x96xf32>, tensor<96x128xf32>) -> tensor<1x64x128xf32>
  return %y : tensor<1x64x128xf32>
}
func.func @decode(%x: tensor<1x1x96xf32> {tfm.input = "x"}, %w: tensor<96x128xf32> {tfm.param = "w"}) -> tensor<1x1x128xf32> {
  %y = tfm.linear %x, %w : (tensor<1x1x96xf32>, tensor<96x128xf32>) -> tensor<1x1x128xf32>
  return %y : tensor<1x1x128xf32>
}

// -----

// An LM head whose vocabulary the panels do not divide (N = 100): the last
// panel's 36 columns are a matmul of their own on a slice of the f32 panels,
// which tiles cannot take, so the weight stays f32.
// CHECK-LABEL: func.func @head(
// CHECK-SAME: tensor<2x96x64xf32> {tfm.param = "w", tfm.param_pack = {layout = "out_in"
// CHECK-NOT: xbf16
func.func @head(%x: tensor<1x64x96xf32> {tfm.input = "x"}, %w: tensor<100x96xf32> {tfm.param = "w"}) -> tensor<1x64x100xf32> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x64x96xf32>, tensor<100x96xf32>) -> tensor<1x64x100xf32>
  return %y : tensor<1x64x100xf32>
}

// -----

// A bf16 weight is bound in tiles' order as it is, one part (format
// "amx_bf16"), and the GEMM reads it with A as [M, K / 2, 2] bf16.
// CHECK-LABEL: func.func @bf16(
// CHECK-SAME: tensor<1x8x48x32xbf16> {tfm.param = "w", tfm.param_pack = {format = "amx_bf16", layout = "in_out", panel = 64 : i64, shape = array<i64: 96, 128>}})
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 8, 48, 32] [1, 1, 1, 1] : tensor<1x8x48x32xbf16> to tensor<8x48x32xbf16>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<64x48x2xbf16>, tensor<2x4x48x16x2xbf16>)
// CHECK-SAME: tfm.amx_weight_parts
// CHECK: ^bb0(%[[IA:.*]]: bf16, %[[IW:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK: %[[EA:.*]] = arith.extf %[[IA]] : bf16 to f32
// CHECK: %[[EW:.*]] = arith.extf %[[IW]] : bf16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[EA]], %[[EW]] : f32
// CHECK: arith.addf %[[ACC]], %[[P]] : f32
// NOAMX-LABEL: func.func @bf16(
// NOAMX-NOT: amx_bf16
func.func @bf16(%x: tensor<1x64x96xbf16> {tfm.input = "x"}, %w: tensor<96x128xbf16> {tfm.param = "w"}) -> tensor<1x64x128xbf16> {
  %y = tfm.linear %x, %w : (tensor<1x64x96xbf16>, tensor<96x128xbf16>) -> tensor<1x64x128xbf16>
  return %y : tensor<1x64x128xbf16>
}

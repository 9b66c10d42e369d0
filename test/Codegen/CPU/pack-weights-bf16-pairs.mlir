// RUN: transformer-opt %s --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=znver5 bf16-dot=1" --tfm-cpu-pack-weights --split-input-file | FileCheck %s

// With `bf16_pairs` planned (AVX512-BF16, tfm-cpu-configure), a bf16 weight
// of even K is packed with its K pairs interleaved: [N, K] = [32, 64] out_in
// in panels of 64 becomes [1, 32, 64, 2], P[j, k / 2, r, k % 2] = W(k, j *
// 64 + r), and the GEMM a generic over (m, j, r, q, t) reading A as [M,
// K/2, 2].
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d2, d4)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @pairs
// CHECK-SAME: %[[W:[^:]*]]: tensor<1x32x64x2xbf16> {tfm.param = "w", tfm.param_pack = {format = "bf16_pairs", layout = "out_in", panel = 64 : i64, shape = array<i64: 32, 64>}}
// CHECK: %[[AP:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [8, 32, 2] : tensor<8x64xbf16> into tensor<8x32x2xbf16>
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[P]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[AP]], %[[W]] : tensor<8x32x2xbf16>, tensor<1x32x64x2xbf16>) outs(%{{.*}} : tensor<8x1x64xf32>)
// CHECK-SAME: bf16_pairs
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @pairs(%x: tensor<1x8x64xbf16> {tfm.input = "x"}, %w: tensor<32x64xbf16> {tfm.param = "w"}) -> tensor<1x8x32xbf16> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x8x64xbf16>, tensor<32x64xbf16>) -> tensor<1x8x32xbf16>
  return %y : tensor<1x8x32xbf16>
}

// -----

// An odd K has no pairs: the plain panel layout, extended to f32 as before.
// CHECK-LABEL: func.func @odd_k
// CHECK-SAME: tensor<1x37x64xbf16> {tfm.param = "w", tfm.param_pack = {layout = "out_in", panel = 64 : i64, shape = array<i64: 32, 37>}}
func.func @odd_k(%x: tensor<1x8x37xbf16> {tfm.input = "x"}, %w: tensor<32x37xbf16> {tfm.param = "w"}) -> tensor<1x8x32xbf16> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x8x37xbf16>, tensor<32x37xbf16>) -> tensor<1x8x32xbf16>
  return %y : tensor<1x8x32xbf16>
}

// -----

// f32 weights are never paired.
// CHECK-LABEL: func.func @f32
// CHECK-SAME: tensor<1x64x64xf32> {tfm.param = "w", tfm.param_pack = {layout = "out_in", panel = 64 : i64, shape = array<i64: 32, 64>}}
func.func @f32(%x: tensor<1x8x64xf32> {tfm.input = "x"}, %w: tensor<32x64xf32> {tfm.param = "w"}) -> tensor<1x8x32xf32> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x8x64xf32>, tensor<32x64xf32>) -> tensor<1x8x32xf32>
  return %y : tensor<1x8x32xf32>
}

// -----

// An f32 result with no elementwise consumer: the full panel writes into C,
// the last panel's 8 real columns, [K/2, 8, 2], are a GEMM of their own over
// (m, r, q, t).
// CHECK-DAG: #[[TA:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[TP:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d1, d3)>
// CHECK-DAG: #[[TC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @unpadded_result
// CHECK-SAME: %[[W:[^:]*]]: tensor<2x20x64x2xbf16> {tfm.param = "w", tfm.param_pack = {format = "bf16_pairs", layout = "in_out", panel = 64 : i64, shape = array<i64: 40, 72>}}
// CHECK: tensor.extract_slice %[[W]][0, 0, 0, 0] [1, 20, 64, 2] [1, 1, 1, 1] : tensor<2x20x64x2xbf16> to tensor<1x20x64x2xbf16>
// CHECK: %[[LAST:.*]] = tensor.extract_slice %[[W]][1, 0, 0, 0] [1, 20, 8, 2] [1, 1, 1, 1] : tensor<2x20x64x2xbf16> to tensor<20x8x2xbf16>
// CHECK: linalg.generic {indexing_maps = [#[[TA]], #[[TP]], #[[TC]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %[[LAST]] : tensor<6x20x2xbf16>, tensor<20x8x2xbf16>) outs(%{{.*}} : tensor<6x8xf32>)
func.func @unpadded_result(%a: tensor<6x40xbf16> {tfm.input = "a"}, %w: tensor<40x72xbf16> {tfm.param = "w"}) -> tensor<6x72xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x72xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<6x72xf32>) -> tensor<6x72xf32>
  %y = linalg.matmul ins(%a, %w : tensor<6x40xbf16>, tensor<40x72xbf16>) outs(%c : tensor<6x72xf32>) -> tensor<6x72xf32>
  return %y : tensor<6x72xf32>
}

// -----

// A tied bf16 embedding: the gather reads the packed copy at [id / 64, k /
// 2, id mod 64, k mod 2], so the table is held once.
// CHECK-LABEL: func.func @tied
// CHECK-SAME: %[[P:[^:]*]]: tensor<1x8x64x2xbf16> {tfm.param = "wte", tfm.param_pack = {format = "bf16_pairs", layout = "out_in", panel = 64 : i64, shape = array<i64: 40, 16>}})
// CHECK: %[[ROW:.*]] = arith.minsi
// CHECK: %[[K:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = arith.divui %[[ROW]], %[[NR:.*]] : index
// CHECK: %[[R:.*]] = arith.remui %[[ROW]], %[[NR]] : index
// CHECK: %[[Q:.*]] = arith.divui %[[K]], %[[TWO:.*]] : index
// CHECK: %[[T:.*]] = arith.remui %[[K]], %[[TWO]] : index
// CHECK: tensor.extract %[[P]][%[[J]], %[[Q]], %[[R]], %[[T]]] : tensor<1x8x64x2xbf16>
func.func @tied(%ids: tensor<1x4xi64> {tfm.input = "ids"}, %wte: tensor<40x16xbf16> {tfm.param = "wte"}) -> tensor<1x4x40xbf16> {
  %h = tfm.embedding %ids, %wte : (tensor<1x4xi64>, tensor<40x16xbf16>) -> tensor<1x4x16xbf16>
  %y = tfm.lm_head %h, %wte {layout = #tfm.layout<out_in>} : (tensor<1x4x16xbf16>, tensor<40x16xbf16>) -> tensor<1x4x40xbf16>
  return %y : tensor<1x4x40xbf16>
}

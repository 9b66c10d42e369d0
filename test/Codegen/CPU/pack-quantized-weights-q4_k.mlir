// RUN: transformer-opt %s --tfm-quantize-weights=scheme=q4_k --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=znver3 int8-dot=0" --tfm-cpu-pack-weights --split-input-file | FileCheck %s
// RUN: transformer-opt %s --tfm-quantize-weights=scheme=q4_k --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=sapphirerapids int8-dot=1" --tfm-cpu-pack-weights --split-input-file | FileCheck %s --check-prefix=INT8

// A Q4_K weight, out_in [N, K] = [40, 512], on an AVX2 target with f32
// activations: three arguments in place of the weight -- its values as
// Q4_0's [J, K/32, 16, P], its super-blocks' d and dmin [J, K/256, 2, P]
// (f16) and its sub-blocks' 6-bit scale and min [J, K/32, 2, P] (i8) --
// and the matmul the exact generic over (m, j, r, b, h, u), reading each
// of the last two twice (d and dmin: the super-block b floordiv 8; sc and
// m), its weight (d * sc) * q - dmin * m with q the unsigned nibble h.
// CHECK-DAG: #[[D:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3 floordiv 8, 0, d2)>
// CHECK-DAG: #[[DMIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3 floordiv 8, 1, d2)>
// CHECK-DAG: #[[SC:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, 0, d2)>
// CHECK-DAG: #[[M:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, 1, d2)>
// CHECK-LABEL: func.func @out_in
// CHECK-SAME: %[[V:arg[0-9]+]]: tensor<3x16x16x16xi8> {tfm.param = "w", tfm.param_pack = {format = "q4_k_values", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}}
// CHECK-SAME: %[[S:arg[0-9]+]]: tensor<3x2x2x16xf16> {tfm.param = "w", tfm.param_pack = {format = "q4_k_super", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}}
// CHECK-SAME: %[[SUB:arg[0-9]+]]: tensor<3x16x2x16xi8> {tfm.param = "w", tfm.param_pack = {format = "q4_k_scales", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}})
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[D]], #[[DMIN]], #[[SC]], #[[M]], #{{.*}}], {{.*}} ins(%{{.*}}, %[[V]], %[[S]], %[[S]], %[[SUB]], %[[SUB]] :
// CHECK-SAME: tfm.quantized_matmul = "q4_k"
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Q:.*]]: i8, %[[DH:.*]]: f16, %[[DMINH:.*]]: f16, %[[SCI:.*]]: i8, %[[MI:.*]]: i8, %[[ACC:.*]]: f32):
// CHECK: %[[NIBBLE:.*]] = arith.andi
// CHECK-NOT: arith.subi
// CHECK: %[[DF:.*]] = arith.extf %[[DH]] : f16 to f32
// CHECK: %[[DMINF:.*]] = arith.extf %[[DMINH]] : f16 to f32
// CHECK: %[[SCF:.*]] = arith.sitofp %[[SCI]] : i8 to f32
// CHECK: %[[SCALE:.*]] = arith.mulf %[[DF]], %[[SCF]] : f32
// CHECK: %[[MF:.*]] = arith.sitofp %[[MI]] : i8 to f32
// CHECK: %[[MIN:.*]] = arith.mulf %[[DMINF]], %[[MF]] : f32
// CHECK: %[[QF:.*]] = arith.sitofp %[[NIBBLE]] : i8 to f32
// CHECK: %[[SQ:.*]] = arith.mulf %[[SCALE]], %[[QF]] : f32
// CHECK: %[[W:.*]] = arith.subf %[[SQ]], %[[MIN]] : f32
// CHECK: %[[P:.*]] = arith.mulf %[[X]], %[[W]] : f32
// CHECK: arith.addf %[[ACC]], %[[P]] : f32
// On int8 activations (Sapphire Rapids: VNNI), the values four bytes of a
// column together, [J, K/32, 4, P, 4], the scales as they are.
// INT8-LABEL: func.func @out_in
// INT8-SAME: tensor<1x16x4x64x4xi8> {tfm.param = "w", tfm.param_pack = {format = "q4_k_values", group = 4 : i64, layout = "out_in", panel = 64 : i64, shape = array<i64: 40, 512>}}
// INT8-SAME: tensor<1x2x2x64xf16> {tfm.param = "w", tfm.param_pack = {format = "q4_k_super", layout = "out_in", panel = 64 : i64, shape = array<i64: 40, 512>}}
// INT8-SAME: tensor<1x16x2x64xi8> {tfm.param = "w", tfm.param_pack = {format = "q4_k_scales", layout = "out_in", panel = 64 : i64, shape = array<i64: 40, 512>}})
// INT8: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %arg1, %arg2, %arg2, %arg3, %arg3 :
// INT8-SAME: tfm.int8_activations, tfm.quantized_matmul = "q4_k"
func.func @out_in(%x: tensor<1x8x512xf32> {tfm.input = "x"}, %w: tensor<40x512xf32> {tfm.param = "w"}) -> tensor<1x8x40xf32> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x8x512xf32>, tensor<40x512xf32>) -> tensor<1x8x40xf32>
  return %y : tensor<1x8x40xf32>
}

// -----

// A K that 256 does not divide (288) stays f32 (as llama.cpp leaves it):
// packed in panels as any f32 weight.
// CHECK-LABEL: func.func @short
// CHECK-SAME: tensor<{{.*}}x288x{{.*}}xf32> {tfm.param = "w", tfm.param_pack = {layout = "out_in"
// CHECK-NOT: tfm.quantized_matmul
func.func @short(%x: tensor<1x8x288xf32> {tfm.input = "x"}, %w: tensor<40x288xf32> {tfm.param = "w"}) -> tensor<1x8x40xf32> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x8x288xf32>, tensor<40x288xf32>) -> tensor<1x8x40xf32>
  return %y : tensor<1x8x40xf32>
}

// -----

// A Q4_K embedding table's gather (tensor.extract) reads the element from
// the three arguments, dequantized as the GEMM's weight is.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: format = "q4_k_values"
// CHECK-NOT: tensor<100x256xf32>
// CHECK: linalg.generic
// CHECK: tensor.extract %{{.*}} : tensor<7x8x16x16xi8>
// CHECK: arith.shrui
// CHECK: tensor.extract %{{.*}} : tensor<7x1x2x16xf16>
// CHECK: tensor.extract %{{.*}} : tensor<7x1x2x16xf16>
// CHECK: tensor.extract %{{.*}} : tensor<7x8x2x16xi8>
// CHECK: tensor.extract %{{.*}} : tensor<7x8x2x16xi8>
// CHECK: arith.subf
func.func @gather(%ids: tensor<1x4xi64> {tfm.input = "ids"}, %table: tensor<100x256xf32> {tfm.param = "table"}) -> tensor<1x4x256xf32> {
  %e = tfm.embedding %ids, %table : (tensor<1x4xi64>, tensor<100x256xf32>) -> tensor<1x4x256xf32>
  return %e : tensor<1x4x256xf32>
}

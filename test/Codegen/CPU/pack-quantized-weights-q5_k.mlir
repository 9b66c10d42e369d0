// RUN: transformer-opt %s --tfm-quantize-weights=scheme=q5_k --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=znver3 int8-dot=0" --tfm-cpu-pack-weights | FileCheck %s
// RUN: transformer-opt %s --tfm-quantize-weights=scheme=q5_k --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=sapphirerapids int8-dot=1" --tfm-cpu-pack-weights | FileCheck %s --check-prefix=INT8

// A Q5_K weight, out_in [N, K] = [40, 512], on an AVX2 target with f32
// activations: its 5-bit q a byte a K step as Q8_0's values [J, K/32, 32,
// P], and Q4_K's scales: its super-blocks' d and dmin [J, K/256, 2, P]
// (f16), its sub-blocks' 6-bit scale and min [J, K/32, 2, P] (i8), each
// read twice by the generic over (m, j, r, b, t); its weight (d * sc) * q -
// dmin * m with q the byte itself.
// CHECK-DAG: #[[D:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3 floordiv 8, 0, d2)>
// CHECK-DAG: #[[DMIN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3 floordiv 8, 1, d2)>
// CHECK-DAG: #[[SC:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, 0, d2)>
// CHECK-DAG: #[[M:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, 1, d2)>
// CHECK-LABEL: func.func @out_in
// CHECK-SAME: %[[V:arg[0-9]+]]: tensor<3x16x32x16xi8> {tfm.param = "w", tfm.param_pack = {format = "q5_k_values", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}}
// CHECK-SAME: %[[S:arg[0-9]+]]: tensor<3x2x2x16xf16> {tfm.param = "w", tfm.param_pack = {format = "q5_k_super", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}}
// CHECK-SAME: %[[SUB:arg[0-9]+]]: tensor<3x16x2x16xi8> {tfm.param = "w", tfm.param_pack = {format = "q5_k_scales", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}})
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[D]], #[[DMIN]], #[[SC]], #[[M]], #{{.*}}], {{.*}} ins(%{{.*}}, %[[V]], %[[S]], %[[S]], %[[SUB]], %[[SUB]] :
// CHECK-SAME: tfm.quantized_matmul = "q5_k"
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Q:.*]]: i8, %[[DH:.*]]: f16, %[[DMINH:.*]]: f16, %[[SCI:.*]]: i8, %[[MI:.*]]: i8, %[[ACC:.*]]: f32):
// CHECK-NOT: arith.andi
// CHECK-NOT: arith.subi
// CHECK: %[[DF:.*]] = arith.extf %[[DH]] : f16 to f32
// CHECK: %[[DMINF:.*]] = arith.extf %[[DMINH]] : f16 to f32
// CHECK: %[[SCF:.*]] = arith.sitofp %[[SCI]] : i8 to f32
// CHECK: %[[SCALE:.*]] = arith.mulf %[[DF]], %[[SCF]] : f32
// CHECK: %[[MF:.*]] = arith.sitofp %[[MI]] : i8 to f32
// CHECK: %[[MIN:.*]] = arith.mulf %[[DMINF]], %[[MF]] : f32
// CHECK: %[[QF:.*]] = arith.sitofp %[[Q]] : i8 to f32
// CHECK: %[[SQ:.*]] = arith.mulf %[[SCALE]], %[[QF]] : f32
// CHECK: %[[W:.*]] = arith.subf %[[SQ]], %[[MIN]] : f32
// CHECK: %[[P:.*]] = arith.mulf %[[X]], %[[W]] : f32
// CHECK: arith.addf %[[ACC]], %[[P]] : f32
// On int8 activations, the values four bytes of a column together.
// INT8-LABEL: func.func @out_in
// INT8-SAME: tensor<2x16x8x32x4xi8> {tfm.param = "w", tfm.param_pack = {format = "q5_k_values", group = 4 : i64, layout = "out_in", panel = 32 : i64, shape = array<i64: 40, 512>}}
// INT8: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %arg1, %arg2, %arg2, %arg3, %arg3 :
// INT8-SAME: tfm.int8_activations, tfm.quantized_matmul = "q5_k"
func.func @out_in(%x: tensor<1x8x512xf32> {tfm.input = "x"}, %w: tensor<40x512xf32> {tfm.param = "w"}) -> tensor<1x8x40xf32> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x8x512xf32>, tensor<40x512xf32>) -> tensor<1x8x40xf32>
  return %y : tensor<1x8x40xf32>
}

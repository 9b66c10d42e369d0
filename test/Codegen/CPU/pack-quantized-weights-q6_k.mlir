// RUN: transformer-opt %s --tfm-quantize-weights=scheme=q6_k --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=znver3 int8-dot=0" --tfm-cpu-pack-weights | FileCheck %s
// RUN: transformer-opt %s --tfm-quantize-weights=scheme=q6_k --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=sapphirerapids int8-dot=1" --tfm-cpu-pack-weights | FileCheck %s --check-prefix=INT8

// A Q6_K weight, out_in [N, K] = [40, 512], on an AVX2 target with f32
// activations: its 6-bit q a byte a K step as Q8_0's values [J, K/32, 32,
// P], its super-blocks' d [J, K/256, P] (f16) and the signed scale of each
// 16 steps [J, K/16, P] (i8); the generic over (m, j, r, b, t) reads the
// scale of step t's 16 (2 b + t floordiv 16), its weight (d * sc) * (q -
// 32) as llama.cpp dequantizes it.
// CHECK-DAG: #[[D:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3 floordiv 8, d2)>
// CHECK-DAG: #[[SC:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3 * 2 + d4 floordiv 16, d2)>
// CHECK-LABEL: func.func @out_in
// CHECK-SAME: %[[V:arg[0-9]+]]: tensor<3x16x32x16xi8> {tfm.param = "w", tfm.param_pack = {format = "q6_k_values", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}}
// CHECK-SAME: %[[S:arg[0-9]+]]: tensor<3x2x16xf16> {tfm.param = "w", tfm.param_pack = {format = "q6_k_super", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}}
// CHECK-SAME: %[[SUB:arg[0-9]+]]: tensor<3x32x16xi8> {tfm.param = "w", tfm.param_pack = {format = "q6_k_scales", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}})
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[D]], #[[SC]], #{{.*}}], {{.*}} ins(%{{.*}}, %[[V]], %[[S]], %[[SUB]] :
// CHECK-SAME: tfm.quantized_matmul = "q6_k"
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Q:.*]]: i8, %[[DH:.*]]: f16, %[[SCI:.*]]: i8, %[[ACC:.*]]: f32):
// CHECK: %[[Q32:.*]] = arith.subi %[[Q]], %{{.*}} : i8
// CHECK: %[[DF:.*]] = arith.extf %[[DH]] : f16 to f32
// CHECK: %[[SCF:.*]] = arith.sitofp %[[SCI]] : i8 to f32
// CHECK: %[[SCALE:.*]] = arith.mulf %[[DF]], %[[SCF]] : f32
// CHECK: %[[QF:.*]] = arith.sitofp %[[Q32]] : i8 to f32
// CHECK: %[[W:.*]] = arith.mulf %[[SCALE]], %[[QF]] : f32
// CHECK: %[[P:.*]] = arith.mulf %[[X]], %[[W]] : f32
// CHECK: arith.addf %[[ACC]], %[[P]] : f32
// On int8 activations, the values in 6 bits, four bytes of a column
// together, [J, K/32, 6, P, 4]: the generic over (m, j, r, b, h, u, i), K
// step 32 b + 16 h + 4 u + i, reads nibble h of nibble quad u (at quad u +
// 1 + u floordiv 2) and the two high bits of quad 3 (u floordiv 2) at bit
// 4 (u mod 2) + 2 h; the step's 16 is 2 b + h.
// INT8-DAG: #[[V8:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d5 + d5 floordiv 2 + 1, d2, d6)>
// INT8-DAG: #[[VH8:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, (d5 floordiv 2) * 3, d2, d6)>
// INT8-DAG: #[[SC8:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3 * 2 + d4, d2)>
// INT8-LABEL: func.func @out_in
// INT8-SAME: tensor<2x16x6x32x4xi8> {tfm.param = "w", tfm.param_pack = {format = "q6_k_values", group = 4 : i64, layout = "out_in", panel = 32 : i64, shape = array<i64: 40, 512>}}
// INT8-SAME: tensor<2x2x32xf16> {tfm.param = "w", tfm.param_pack = {format = "q6_k_super", layout = "out_in", panel = 32 : i64, shape = array<i64: 40, 512>}}
// INT8-SAME: tensor<2x32x32xi8> {tfm.param = "w", tfm.param_pack = {format = "q6_k_scales", layout = "out_in", panel = 32 : i64, shape = array<i64: 40, 512>}})
// INT8: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[V8]], #[[VH8]], #{{.*}}, #[[SC8]], #{{.*}}], {{.*}} ins(%{{.*}}, %{{.*}}, %arg1, %arg1, %arg2, %arg3 :
// INT8-SAME: tfm.int8_activations, tfm.quantized_matmul = "q6_k"
// INT8: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %[[NIB:.*]]: i8, %[[TOP:.*]]: i8, %{{.*}}: f16, %{{.*}}: i8, %{{.*}}: f32):
// INT8: %[[H:.*]] = arith.index_cast %{{.*}} : index to i8
// INT8: %[[U:.*]] = arith.index_cast %{{.*}} : index to i8
// INT8: %[[H4:.*]] = arith.muli %[[H]], %[[C4:.*]] : i8
// INT8: %[[LOWS:.*]] = arith.shrui %[[NIB]], %[[H4]] : i8
// INT8: %[[LOW:.*]] = arith.andi %[[LOWS]], %{{.*}} : i8
// INT8: %[[UODD:.*]] = arith.remui %[[U]], %[[C2:.*]] : i8
// INT8: %[[U4:.*]] = arith.muli %[[UODD]], %[[C4]] : i8
// INT8: %[[H2:.*]] = arith.muli %[[H]], %[[C2]] : i8
// INT8: %[[SHIFT:.*]] = arith.addi %[[U4]], %[[H2]] : i8
// INT8: %[[TOPS:.*]] = arith.shrui %[[TOP]], %[[SHIFT]] : i8
// INT8: %[[BITS:.*]] = arith.andi %[[TOPS]], %{{.*}} : i8
// INT8: %[[HIGH:.*]] = arith.shli %[[BITS]], %[[C4]] : i8
// INT8: %[[Q:.*]] = arith.ori %[[LOW]], %[[HIGH]] : i8
// INT8: arith.subi %[[Q]], %{{.*}} : i8
func.func @out_in(%x: tensor<1x8x512xf32> {tfm.input = "x"}, %w: tensor<40x512xf32> {tfm.param = "w"}) -> tensor<1x8x40xf32> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x8x512xf32>, tensor<40x512xf32>) -> tensor<1x8x40xf32>
  return %y : tensor<1x8x40xf32>
}

// RUN: transformer-opt %s --tfm-quantize-weights --tfm-to-linalg --canonicalize --tfm-cpu-configure=cpu=znver3 --tfm-cpu-pack-weights | FileCheck %s
// RUN: transformer-opt %s --tfm-quantize-weights=scheme=q4_k --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=znver3 int8-dot=1" --tfm-cpu-pack-weights | FileCheck %s --check-prefix=INT8

// tfm.moe's experts held quantized (gate and up [48, 256], K = 256; down
// [256, 48], K = 48, left f32): the lowering runs each expert's GEMMs
// token-major (the gathered tokens [T, d] as A, the weight B in its out_in
// layout) on the weights an scf.index_switch on the expert picks. Each
// quantized weight is replaced by its packed values and scales (no f32 copy
// is bound), and a switch beside the original picks among those: its
// matmul becomes the quantized generic on the picked parts. The f32 down
// weights are packed in panels (24 columns: znver3's register tile), picked
// by a switch of their own, and their matmul reads the picked panels; the
// original switch, read by nothing, is gone.
// CHECK-LABEL: func.func @experts
// CHECK-SAME: {tfm.param = "router"
// CHECK-SAME: %[[G0V:[^:]*]]: tensor<3x8x32x16xi8> {tfm.param = "g0", tfm.param_pack = {format = "q8_0_values", layout = "out_in", panel = 16 : i64, shape = array<i64: 48, 256>}}
// CHECK-SAME: %[[G0S:[^:]*]]: tensor<3x8x16xf16> {tfm.param = "g0", tfm.param_pack = {format = "q8_0_scales", layout = "out_in", panel = 16 : i64, shape = array<i64: 48, 256>}}
// CHECK-SAME: %[[U0V:[^:]*]]: tensor<3x8x32x16xi8> {tfm.param = "u0"
// CHECK-SAME: %[[U0S:[^:]*]]: tensor<3x8x16xf16> {tfm.param = "u0"
// CHECK-SAME: %[[D0:[^:]*]]: tensor<11x48x24xf32> {tfm.param = "d0", tfm.param_pack = {layout = "out_in", panel = 24 : i64, shape = array<i64: 256, 48>}}
// CHECK-SAME: %[[G1V:[^:]*]]: tensor<3x8x32x16xi8> {tfm.param = "g1"
// CHECK-SAME: %[[G1S:[^:]*]]: tensor<3x8x16xf16> {tfm.param = "g1"
// CHECK-SAME: %[[U1V:[^:]*]]: tensor<3x8x32x16xi8> {tfm.param = "u1"
// CHECK-SAME: %[[U1S:[^:]*]]: tensor<3x8x16xf16> {tfm.param = "u1"
// CHECK-SAME: %[[D1:[^:]*]]: tensor<11x48x24xf32> {tfm.param = "d1"
// CHECK-NOT: tensor<48x256xf32>
// CHECK-NOT: tensor<256x48xf32>
// CHECK: scf.for %[[E:[^ ]*]] = 
// CHECK: %[[DOWN:.*]] = scf.index_switch %[[E]] -> tensor<11x48x24xf32>
// CHECK: scf.yield %[[D0]] : tensor<11x48x24xf32>
// CHECK: scf.yield %[[D1]] : tensor<11x48x24xf32>
// CHECK: %[[UP:.*]]:2 = scf.index_switch %[[E]] -> tensor<3x8x32x16xi8>, tensor<3x8x16xf16>
// CHECK: scf.yield %[[U0V]], %[[U0S]]
// CHECK: scf.yield %[[U1V]], %[[U1S]]
// CHECK: %[[GATE:.*]]:2 = scf.index_switch %[[E]] -> tensor<3x8x32x16xi8>, tensor<3x8x16xf16>
// CHECK: scf.yield %[[G0V]], %[[G0S]]
// CHECK: scf.yield %[[G1V]], %[[G1S]]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8x256xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[GATE]]#0, %[[GATE]]#1 : tensor<8x8x32xf32>, tensor<3x8x32x16xi8>, tensor<3x8x16xf16>) outs(%{{.*}} : tensor<8x3x16xf32>) {{.*}}tfm.quantized_matmul = "q8_0"
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[UP]]#0, %[[UP]]#1 : tensor<8x8x32xf32>, tensor<3x8x32x16xi8>, tensor<3x8x16xf16>) outs(%{{.*}} : tensor<8x3x16xf32>) {{.*}}tfm.quantized_matmul = "q8_0"
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[DOWN]] : tensor<8x48xf32>, tensor<11x48x24xf32>) outs(%{{.*}} : tensor<8x11x24xf32>)
// CHECK-NOT: scf.index_switch

// With K-format blocks (Q4_K needs K = 256: gate and up here, not down) on
// int8 activations: the picked parts are the values (four K steps of a
// column together), the super-blocks' d and dmin and the sub-blocks' scales.
// INT8-LABEL: func.func @experts
// INT8: scf.index_switch %{{.*}} -> tensor<{{[0-9]+}}x48x{{[0-9]+}}xf32>
// INT8: scf.index_switch %{{.*}} -> tensor<2x8x4x32x4xi8>, tensor<2x1x2x32xf16>, tensor<2x8x2x32xi8>
// INT8: scf.index_switch %{{.*}} -> tensor<2x8x4x32x4xi8>, tensor<2x1x2x32xf16>, tensor<2x8x2x32xi8>
// INT8: tfm.int8_activations, tfm.quantized_matmul = "q4_k"
// INT8: tfm.int8_activations, tfm.quantized_matmul = "q4_k"
func.func @experts(%x: tensor<1x8x256xf32> {tfm.input = "x"},
                   %r: tensor<2x256xf32> {tfm.param = "router"},
                   %g0: tensor<48x256xf32> {tfm.param = "g0"},
                   %u0: tensor<48x256xf32> {tfm.param = "u0"},
                   %d0: tensor<256x48xf32> {tfm.param = "d0"},
                   %g1: tensor<48x256xf32> {tfm.param = "g1"},
                   %u1: tensor<48x256xf32> {tfm.param = "u1"},
                   %d1: tensor<256x48xf32> {tfm.param = "d1"}) -> tensor<1x8x256xf32> {
  %y = tfm.moe %x, %r, %g0, %u0, %d0, %g1, %u1, %d1 {top_k = 1 : i64} : (tensor<1x8x256xf32>, tensor<2x256xf32>, tensor<48x256xf32>, tensor<48x256xf32>, tensor<256x48xf32>, tensor<48x256xf32>, tensor<48x256xf32>, tensor<256x48xf32>) -> tensor<1x8x256xf32>
  return %y : tensor<1x8x256xf32>
}

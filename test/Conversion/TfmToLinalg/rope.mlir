// RUN: transformer-opt %s --tfm-to-linalg | FileCheck %s

// Rotate-half RoPE in f32: inv_freq = 1 / theta^(2 i / dh), a constant
// table computed at compile time (theta = 500000, dh = 8: 1, 500000^-1/4,
// ...), angle = (offset + s) * inv_freq. The angles' cosines and sines are
// computed once per (position, frequency) into [1, S, dh/2] tables (the
// offset is shared by the batch). The rotation is one elementwise generic
// over [B, H, S, 2, dh/2] reading the halves x[..., :4] and x[..., 4:] and
// the tables (as [S, dh/2]) at their own indices: no gather, no powf, and
// no cos or sin per head and element.
// CHECK-DAG: #[[FREQ:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[HALF:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[TAB:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d4)>
// CHECK-LABEL: func.func @rope_f16
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x2x3x8xf16>, %[[OFF:[^:]*]]: index
// CHECK: %[[INV:.*]] = arith.constant dense<[1.000000e+00, 0.0376060307, 0.00141421345, 5.31829573E-5]> : tensor<4xf32>
// CHECK-NOT: math.powf
// CHECK: %[[TABLES:.*]]:2 = linalg.generic {indexing_maps = [#[[FREQ]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[INV]] : tensor<4xf32>) outs(%{{.*}}, %{{.*}} : tensor<1x3x4xf32>, tensor<1x3x4xf32>)
// CHECK: ^bb0(%[[F:[^:]*]]: f32
// CHECK: %[[TS:.*]] = linalg.index 1
// CHECK: arith.addi %[[OFF]], %[[TS]] : index
// CHECK: %[[ANGLE:.*]] = arith.mulf %{{.*}}, %[[F]] : f32
// CHECK: %[[COS:.*]] = math.cos %[[ANGLE]]
// CHECK: %[[SIN:.*]] = math.sin %[[ANGLE]]
// CHECK: linalg.yield %[[COS]], %[[SIN]]
// CHECK-DAG: %[[X1:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [1, 2, 3, 4] [1, 1, 1, 1]
// CHECK-DAG: %[[X2:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 4] [1, 2, 3, 4] [1, 1, 1, 1]
// CHECK-DAG: %[[COST:.*]] = tensor.collapse_shape %[[TABLES]]#0 {{\[}}[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
// CHECK-DAG: %[[SINT:.*]] = tensor.collapse_shape %[[TABLES]]#1 {{\[}}[0, 1], [2]]
// CHECK: %[[ROT:.*]] = linalg.generic {indexing_maps = [#[[HALF]], #[[HALF]], #[[TAB]], #[[TAB]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[X1]], %[[X2]], %[[COST]], %[[SINT]] : {{.*}}) outs(%{{.*}} : tensor<1x2x3x2x4xf16>)
// CHECK: ^bb0(%[[A:[^:]*]]: f16, %[[B:[^:]*]]: f16, %[[C:[^:]*]]: f32, %[[S:[^:]*]]: f32
// CHECK-NOT: tensor.extract
// CHECK: %[[J:.*]] = linalg.index 3
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[J]], %c0
// CHECK: %[[A32:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK: %[[B32:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK: %[[OWN:.*]] = arith.select %[[FIRST]], %[[A32]], %[[B32]]
// CHECK: %[[NEG:.*]] = arith.negf %[[B32]]
// CHECK: %[[PARTNER:.*]] = arith.select %[[FIRST]], %[[NEG]], %[[A32]]
// CHECK: %[[OC:.*]] = arith.mulf %[[OWN]], %[[C]]
// CHECK: %[[PS:.*]] = arith.mulf %[[PARTNER]], %[[S]]
// CHECK: %[[Y:.*]] = arith.addf %[[OC]], %[[PS]]
// CHECK: arith.truncf %[[Y]] : f32 to f16
// CHECK: tensor.collapse_shape %[[ROT]] {{\[}}[0], [1], [2], [3, 4]] : tensor<1x2x3x2x4xf16> into tensor<1x2x3x8xf16>
// CHECK-NOT: tfm.
func.func @rope_f16(%x: tensor<1x2x3x8xf16>, %off: index) -> tensor<1x2x3x8xf16> {
  %y = tfm.rope %x, %off {theta = 500000.0 : f32} : (tensor<1x2x3x8xf16>, index) -> tensor<1x2x3x8xf16>
  return %y : tensor<1x2x3x8xf16>
}

// Given inverse frequencies (scaled RoPE) replace theta's: the same
// constant table, the op's values.
// CHECK-LABEL: func.func @rope_inv_freq
// CHECK: %[[TABLE:.*]] = arith.constant dense<[1.000000e+00, 1.250000e-03]> : tensor<2xf32>
// CHECK-NOT: math.powf
// CHECK: linalg.generic {{.*}} ins(%[[TABLE]] : tensor<2xf32>)
// CHECK: math.cos
func.func @rope_inv_freq(%x: tensor<1x2x3x4xf32>, %off: index) -> tensor<1x2x3x4xf32> {
  %y = tfm.rope %x, %off {inv_freq = array<f32: 1.0, 0.00125>} : (tensor<1x2x3x4xf32>, index) -> tensor<1x2x3x4xf32>
  return %y : tensor<1x2x3x4xf32>
}

// Partial rotary (rotary_dims = 4 of dh = 8): frequencies over r = 4
// (1 / 10000^(2i/4): 1, 0.01), pairs (i, i + 2), and the rotated [.., 4]
// written over the first 4 elements of the input; elements from 4 on pass
// through.
// CHECK-LABEL: func.func @rope_partial
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x2x3x8xf32>
// CHECK: arith.constant dense<[1.000000e+00, 0.00999999977]> : tensor<2xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<1x3x2xf32>, tensor<1x3x2xf32>)
// CHECK-DAG: tensor.extract_slice %[[X]][0, 0, 0, 0] [1, 2, 3, 2] [1, 1, 1, 1]
// CHECK-DAG: tensor.extract_slice %[[X]][0, 0, 0, 2] [1, 2, 3, 2] [1, 1, 1, 1]
// CHECK: %[[ROT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x3x2x2xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[ROT]] {{.*}} into tensor<1x2x3x4xf32>
// CHECK: tensor.insert_slice %[[FLAT]] into %[[X]][0, 0, 0, 0] [1, 2, 3, 4] [1, 1, 1, 1] : tensor<1x2x3x4xf32> into tensor<1x2x3x8xf32>
func.func @rope_partial(%x: tensor<1x2x3x8xf32>, %off: index) -> tensor<1x2x3x8xf32> {
  %y = tfm.rope %x, %off {rotary_dims = 4} : (tensor<1x2x3x8xf32>, index) -> tensor<1x2x3x8xf32>
  return %y : tensor<1x2x3x8xf32>
}

// yarn/longrope's attention factor multiplies the f32 cosine and sine once,
// in the angle tables (not per head and element).
// CHECK-LABEL: func.func @rope_attention_factor
// CHECK: linalg.generic
// CHECK: %[[AC:.*]] = math.cos
// CHECK: %[[AS:.*]] = math.sin
// CHECK: %[[AF:.*]] = arith.constant 1.250000e+00 : f32
// CHECK: %[[FC:.*]] = arith.mulf %[[AC]], %[[AF]] : f32
// CHECK: %[[FS:.*]] = arith.mulf %[[AS]], %[[AF]] : f32
// CHECK: linalg.yield %[[FC]], %[[FS]]
func.func @rope_attention_factor(%x: tensor<1x2x3x4xf32>, %off: index) -> tensor<1x2x3x4xf32> {
  %y = tfm.rope %x, %off {attention_factor = 1.25 : f32} : (tensor<1x2x3x4xf32>, index) -> tensor<1x2x3x4xf32>
  return %y : tensor<1x2x3x4xf32>
}

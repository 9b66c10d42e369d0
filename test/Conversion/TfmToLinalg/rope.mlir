// RUN: transformer-opt %s --tfm-to-linalg | FileCheck %s

// Rotate-half RoPE in f32: inv_freq = 1 / theta^(2 i / dh), angle =
// (offset + s) * inv_freq. The angles' cosines and sines are computed once
// per (position, frequency) into [1, S, dh/2] tables (the offset is shared by
// the batch), which the per-element generic reads at [0, s, i mod dh/2]; the
// partner element x[i +- dh/2] is read with tensor.extract and negated in the
// first half. No powf, cos or sin per head and element.
// CHECK-LABEL: func.func @rope_f16
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x2x3x8xf16>, %[[OFF:[^:]*]]: index
// CHECK: %[[TABLES:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.*}}, %{{.*}} : tensor<1x3x4xf32>, tensor<1x3x4xf32>)
// CHECK: %[[TS:.*]] = linalg.index 1
// CHECK: %[[TF:.*]] = linalg.index 2
// CHECK: arith.constant 8.000000e+00 : f32
// CHECK: %[[POW:.*]] = math.powf %{{.*}}, %{{.*}} : f32
// CHECK: arith.divf %{{.*}}, %[[POW]] : f32
// CHECK: arith.addi %[[OFF]], %[[TS]] : index
// CHECK: %[[COS:.*]] = math.cos
// CHECK: %[[SIN:.*]] = math.sin
// CHECK: linalg.yield %[[COS]], %[[SIN]]
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<1x2x3x8xf16>)
// CHECK: %[[S:.*]] = linalg.index 2
// CHECK: %[[I:.*]] = linalg.index 3
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[I]], %c4
// CHECK: %[[FI:.*]] = arith.remui %[[I]], %c4
// CHECK: %[[PI:.*]] = arith.select %[[FIRST]]
// CHECK: %[[PARTNER:.*]] = tensor.extract %[[X]][%{{.*}}, %{{.*}}, %[[S]], %[[PI]]]
// CHECK: arith.extf %[[PARTNER]] : f16 to f32
// CHECK-NOT: math.powf
// CHECK: tensor.extract %[[TABLES]]#0[%c0, %[[S]], %[[FI]]] : tensor<1x3x4xf32>
// CHECK: tensor.extract %[[TABLES]]#1[%c0, %[[S]], %[[FI]]] : tensor<1x3x4xf32>
// CHECK-NOT: math.cos
// CHECK: arith.negf
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: tfm.
func.func @rope_f16(%x: tensor<1x2x3x8xf16>, %off: index) -> tensor<1x2x3x8xf16> {
  %y = tfm.rope %x, %off {theta = 500000.0 : f32} : (tensor<1x2x3x8xf16>, index) -> tensor<1x2x3x8xf16>
  return %y : tensor<1x2x3x8xf16>
}

// Given inverse frequencies (scaled RoPE) replace theta's: a constant table
// of dh/2 values read at the frequency index, no powf.
// CHECK-LABEL: func.func @rope_inv_freq
// CHECK: %[[TABLE:.*]] = arith.constant dense<[1.000000e+00, 1.250000e-03]> : tensor<2xf32>
// CHECK: linalg.generic
// CHECK: %[[FI:.*]] = linalg.index 2
// CHECK-NOT: math.powf
// CHECK: tensor.extract %[[TABLE]][%[[FI]]] : tensor<2xf32>
// CHECK-NOT: math.powf
// CHECK: math.cos
func.func @rope_inv_freq(%x: tensor<1x2x3x4xf32>, %off: index) -> tensor<1x2x3x4xf32> {
  %y = tfm.rope %x, %off {inv_freq = array<f32: 1.0, 0.00125>} : (tensor<1x2x3x4xf32>, index) -> tensor<1x2x3x4xf32>
  return %y : tensor<1x2x3x4xf32>
}

// Partial rotary (rotary_dims = 4 of dh = 8): frequencies over r = 4, pairs
// (i, i + 2), and elements from 4 on passed through.
// CHECK-LABEL: func.func @rope_partial
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x2x3x8xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<1x3x2xf32>, tensor<1x3x2xf32>)
// CHECK: arith.constant 4.000000e+00 : f32
// CHECK: math.powf
// CHECK: ^bb0(%[[IN:[^:]*]]: f32
// CHECK: %[[I:.*]] = linalg.index 3
// CHECK: arith.cmpi ult, %[[I]], %c2
// CHECK: %[[Y:.*]] = arith.addf
// CHECK: %[[ROT:.*]] = arith.cmpi ult, %[[I]], %c4
// CHECK: %[[OUT:.*]] = arith.select %[[ROT]], %[[Y]], %[[IN]] : f32
// CHECK: linalg.yield %[[OUT]]
func.func @rope_partial(%x: tensor<1x2x3x8xf32>, %off: index) -> tensor<1x2x3x8xf32> {
  %y = tfm.rope %x, %off {rotary_dims = 4} : (tensor<1x2x3x8xf32>, index) -> tensor<1x2x3x8xf32>
  return %y : tensor<1x2x3x8xf32>
}

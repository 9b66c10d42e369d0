// RUN: transformer-opt %s --tfm-to-linalg | FileCheck %s

// LayerNorm in f16: the sum, the centred sum of squares and the normalisation
// all run in f32; the result is rounded once.
// CHECK-LABEL: func.func @layer_norm_f16
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<2x3x8xf16>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: ^bb0(%[[X:.*]]: f16, %[[ACC:.*]]: f32):
// CHECK: %[[XE:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK: arith.addf %[[XE]], %[[ACC]] : f32
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x3xf32>)
// CHECK: arith.constant 1.250000e-01 : f32
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}}"reduction"]{{.*}} ins(%{{.*}}, %[[MEAN]] : tensor<2x3x8xf16>, tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: arith.extf
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[MEAN]], %[[VAR]], %{{.*}}, %{{.*}} : tensor<2x3x8xf16>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<8xf16>, tensor<8xf16>) outs(%{{.*}} : tensor<2x3x8xf16>)
// CHECK: arith.constant 9.99999974E-6 : f32
// CHECK: math.rsqrt %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: tfm.
func.func @layer_norm_f16(%x: tensor<2x3x8xf16>, %g: tensor<8xf16>, %b: tensor<8xf16>) -> tensor<2x3x8xf16> {
  %y = tfm.layer_norm %x, %g, %b : (tensor<2x3x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x3x8xf16>
  return %y : tensor<2x3x8xf16>
}

// RMSNorm in bf16: f32 sum of squares, x * rsqrt(ms + eps) * scale.
// CHECK-LABEL: func.func @rms_norm_bf16
// CHECK: %[[SS:.*]] = linalg.generic {{.*}}"reduction"]{{.*}} ins(%{{.*}} : tensor<4x16xbf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[V:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK: arith.addf %[[SQ]], %{{.*}} : f32
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[SS]], %{{.*}} : tensor<4x16xbf16>, tensor<4xf32>, tensor<16xbf16>)
// CHECK: arith.constant 6.250000e-02 : f32
// CHECK: math.rsqrt
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: tfm.
func.func @rms_norm_bf16(%x: tensor<4x16xbf16>, %g: tensor<16xbf16>) -> tensor<4x16xbf16> {
  %y = tfm.rms_norm %x, %g : (tensor<4x16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// unit_offset: the normalised value times (1 + scale), the sum in f32.
// CHECK-LABEL: func.func @rms_norm_unit_offset
// CHECK: ^bb0(%[[IN:[^:]*]]: f32, %[[SS:[^:]*]]: f32, %[[W:[^:]*]]: f32
// CHECK: %[[N:.*]] = arith.mulf %[[IN]], %{{.*}} : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[F:.*]] = arith.addf %[[ONE]], %[[W]] : f32
// CHECK: arith.mulf %[[N]], %[[F]] : f32
func.func @rms_norm_unit_offset(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %0 = tfm.rms_norm %x, %g {unit_offset} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

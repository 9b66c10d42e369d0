// RUN: transformer-opt %s --tfm-to-linalg | FileCheck %s

// The new keys land at [0, 0, position, 0] of the cache; nothing else moves.
// The position is clamped to [0, 16 - 3] so no write leaves the cache (a
// runner reports out-of-range inputs before the call).
// CHECK-LABEL: func.func @write
// CHECK-SAME: %[[C:[^:]*]]: tensor<2x4x16x8xf32>, %[[U:[^:]*]]: tensor<2x4x3x8xf32>, %[[P:[^:]*]]: index
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: %[[LO:.*]] = arith.maxsi %[[P]], %[[ZERO]] : index
// CHECK: %[[LAST:.*]] = arith.constant 13 : index
// CHECK: %[[POS:.*]] = arith.minsi %[[LO]], %[[LAST]] : index
// CHECK: %[[R:.*]] = tensor.insert_slice %[[U]] into %[[C]][0, 0, %[[POS]], 0] [2, 4, 3, 8] [1, 1, 1, 1] : tensor<2x4x3x8xf32> into tensor<2x4x16x8xf32>
// CHECK: return %[[R]]
// CHECK-NOT: tfm.
func.func @write(%cache: tensor<2x4x16x8xf32>, %update: tensor<2x4x3x8xf32>, %pos: index) -> tensor<2x4x16x8xf32> {
  %r = tfm.kv_cache_write %cache, %update, %pos : (tensor<2x4x16x8xf32>, tensor<2x4x3x8xf32>, index) -> tensor<2x4x16x8xf32>
  return %r : tensor<2x4x16x8xf32>
}

// f16 caches are written as they are (no conversion), one decode token.
// CHECK-LABEL: func.func @write_f16_decode
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, %{{.*}}, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf16> into tensor<1x2x32x4xf16>
// CHECK-NOT: arith.{{.*}}f
func.func @write_f16_decode(%cache: tensor<1x2x32x4xf16>, %update: tensor<1x2x1x4xf16>, %pos: index) -> tensor<1x2x32x4xf16> {
  %r = tfm.kv_cache_write %cache, %update, %pos : (tensor<1x2x32x4xf16>, tensor<1x2x1x4xf16>, index) -> tensor<1x2x32x4xf16>
  return %r : tensor<1x2x32x4xf16>
}

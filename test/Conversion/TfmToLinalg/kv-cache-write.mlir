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

// A ring of 5 slots: row s of the update goes to slot (position mod 5 + s)
// mod 5, one insert per row (here 3), so the rows wrap past the last slot.
// CHECK-LABEL: func.func @write_ring
// CHECK-SAME: %[[C:[^:]*]]: tensor<1x2x5x4xf32>, %[[U:[^:]*]]: tensor<1x2x3x4xf32>, %[[P:[^:]*]]: index
// CHECK-DAG: %[[SLOTS:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: %[[LO:.*]] = arith.maxsi %[[P]], %[[ZERO]] : index
// CHECK: %[[BASE:.*]] = arith.remui %[[LO]], %[[SLOTS]] : index
// CHECK: scf.for %[[S:.*]] = %[[ZERO]] to %c3 step %c1 iter_args(%[[ACC:.*]] = %[[C]])
// CHECK:   %[[SUM:.*]] = arith.addi %[[BASE]], %[[S]] : index
// CHECK:   %[[SLOT:.*]] = arith.remui %[[SUM]], %[[SLOTS]] : index
// CHECK:   %[[ROW:.*]] = tensor.extract_slice %[[U]][0, 0, %[[S]], 0] [1, 2, 1, 4] [1, 1, 1, 1]
// CHECK:   tensor.insert_slice %[[ROW]] into %[[ACC]][0, 0, %[[SLOT]], 0] [1, 2, 1, 4] [1, 1, 1, 1]
// CHECK-NOT: tfm.
func.func @write_ring(%cache: tensor<1x2x5x4xf32>, %update: tensor<1x2x3x4xf32>, %pos: index) -> tensor<1x2x5x4xf32> {
  %r = tfm.kv_cache_write %cache, %update, %pos {ring} : (tensor<1x2x5x4xf32>, tensor<1x2x3x4xf32>, index) -> tensor<1x2x5x4xf32>
  return %r : tensor<1x2x5x4xf32>
}

// A decode step's one row needs no loop; with a position per sequence each
// sequence's row goes to its own slot.
// CHECK-LABEL: func.func @write_ring_decode_ragged
// CHECK: scf.for %[[B:.*]] = {{.*}} iter_args
// CHECK:   arith.remui
// CHECK-NOT: scf.for
// CHECK:   tensor.extract_slice %{{.*}}[%[[B]], 0, %{{.*}}, 0] [1, 2, 1, 4]
// CHECK:   tensor.insert_slice %{{.*}}[%[[B]], 0, %{{.*}}, 0] [1, 2, 1, 4]
func.func @write_ring_decode_ragged(%cache: tensor<2x2x5x4xf32>, %update: tensor<2x2x1x4xf32>, %pos: tensor<2xi64>) -> tensor<2x2x5x4xf32> {
  %r = tfm.kv_cache_write %cache, %update, %pos {ring} : (tensor<2x2x5x4xf32>, tensor<2x2x1x4xf32>, tensor<2xi64>) -> tensor<2x2x5x4xf32>
  return %r : tensor<2x2x5x4xf32>
}

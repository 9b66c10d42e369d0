// RUN: transformer-opt %s -split-input-file --tfm-to-linalg | FileCheck %s
// RUN: transformer-opt %s -split-input-file --tfm-to-linalg --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=BUF

// Ragged batches: every position-dependent op reads sequence b's own start
// position, element b of a [B] tensor, where an index offset would be used.

// The KV cache write loops over the sequences, inserting each one's rows at
// its own (clamped) position; bufferized, the loop copies into subviews of
// the cache itself, never into a copy of it.
// CHECK-LABEL: func.func @cache_write
// CHECK-SAME: (%[[C:[^:]+]]: tensor<3x2x16x8xf32>, %[[U:[^:]+]]: tensor<3x2x1x8xf32>, %[[P:[^:]+]]: tensor<3xi64>)
// CHECK: %[[R:.+]] = scf.for %[[B:.+]] = %c0 to %c3 step %c1 iter_args(%[[ACC:.+]] = %[[C]]) -> (tensor<3x2x16x8xf32>)
// CHECK: %[[E:.+]] = tensor.extract %[[P]][%[[B]]] : tensor<3xi64>
// CHECK: %[[I:.+]] = arith.index_cast %[[E]] : i64 to index
// CHECK: %[[LO:.+]] = arith.maxsi %[[I]], %{{.+}} : index
// CHECK: %[[POS:.+]] = arith.minsi %[[LO]], %c15 : index
// CHECK: %[[ROW:.+]] = tensor.extract_slice %[[U]][%[[B]], 0, 0, 0] [1, 2, 1, 8] [1, 1, 1, 1] : tensor<3x2x1x8xf32> to tensor<1x2x1x8xf32>
// CHECK: %[[INS:.+]] = tensor.insert_slice %[[ROW]] into %[[ACC]][%[[B]], 0, %[[POS]], 0] [1, 2, 1, 8] [1, 1, 1, 1]
// CHECK: scf.yield %[[INS]]
// CHECK: return %[[R]]
// BUF-LABEL: func.func @cache_write
// BUF-NOT: memref.alloc
// BUF: scf.for
// BUF: memref.load
// BUF: memref.copy
// BUF-NOT: memref.alloc
// BUF: return
func.func @cache_write(%cache: tensor<3x2x16x8xf32>, %update: tensor<3x2x1x8xf32>, %pos: tensor<3xi64>) -> tensor<3x2x16x8xf32> {
  %r = tfm.kv_cache_write %cache, %update, %pos : (tensor<3x2x16x8xf32>, tensor<3x2x1x8xf32>, tensor<3xi64>) -> tensor<3x2x16x8xf32>
  return %r : tensor<3x2x16x8xf32>
}

// -----

// GQA decode (Hq = 4, Hkv = 2): score row h of the [B*Hkv, G*S, Skv] matrix
// belongs to sequence h / Hkv; its keys past that sequence's offset are
// masked.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: %[[P:[^:]+]]: tensor<3xi32>)
// CHECK: linalg.generic
// CHECK: %[[R:.+]] = linalg.index 1 : index
// CHECK: %[[J:.+]] = linalg.index 2 : index
// CHECK: %[[H:.+]] = linalg.index 0 : index
// CHECK: %[[SEQ:.+]] = arith.divui %[[H]], %c2 : index
// CHECK: %[[E:.+]] = tensor.extract %[[P]][%[[SEQ]]] : tensor<3xi32>
// CHECK: %[[OFF:.+]] = arith.index_cast %[[E]] : i32 to index
// CHECK: %[[QPOS:.+]] = arith.addi %[[OFF]], %{{.+}} : index
// CHECK: %[[FUT:.+]] = arith.cmpi sgt, %[[J]], %[[QPOS]] : index
// CHECK: arith.select %[[FUT]]
func.func @attention(%q: tensor<3x4x1x8xf32>, %k: tensor<3x2x16x8xf32>, %v: tensor<3x2x16x8xf32>, %pos: tensor<3xi32>) -> tensor<3x4x1x8xf32> {
  %a = tfm.attention %q, %k, %v, %pos : (tensor<3x4x1x8xf32>, tensor<3x2x16x8xf32>, tensor<3x2x16x8xf32>, tensor<3xi32>) -> tensor<3x4x1x8xf32>
  return %a : tensor<3x4x1x8xf32>
}

// -----

// RoPE angles and position-embedding rows from offset[b] + s: the angle
// tables have a row of positions per sequence, which the rotation (loops
// b, h, s, half, i) reads at [b, s, i].
// CHECK: #[[TAB:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>
// CHECK-LABEL: func.func @rope
// CHECK-SAME: %[[P:[^:]+]]: tensor<3xi64>)
// CHECK: %[[T:.+]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<3x1x4xf32>, tensor<3x1x4xf32>)
// CHECK: %[[B:.+]] = linalg.index 0 : index
// CHECK: %[[S:.+]] = linalg.index 1 : index
// CHECK: %[[E:.+]] = tensor.extract %[[P]][%[[B]]] : tensor<3xi64>
// CHECK: %[[OFF:.+]] = arith.index_cast %[[E]] : i64 to index
// CHECK: arith.addi %[[OFF]], %[[S]] : index
// CHECK: math.cos
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #[[TAB]], #[[TAB]], #{{.+}}], {{.*}} ins(%{{.+}}, %{{.+}}, %[[T]]#0, %[[T]]#1 : {{.*}}, tensor<3x1x4xf32>, tensor<3x1x4xf32>) outs(%{{.+}} : tensor<3x2x1x2x4xf32>)
func.func @rope(%x: tensor<3x2x1x8xf32>, %pos: tensor<3xi64>) -> tensor<3x2x1x8xf32> {
  %y = tfm.rope %x, %pos : (tensor<3x2x1x8xf32>, tensor<3xi64>) -> tensor<3x2x1x8xf32>
  return %y : tensor<3x2x1x8xf32>
}

// -----

// CHECK-LABEL: func.func @position_embedding
// CHECK-SAME: %[[T:[^:]+]]: tensor<16x8xf32>, %[[P:[^:]+]]: tensor<3xi64>)
// CHECK: %[[S:.+]] = linalg.index 1 : index
// CHECK: %[[B:.+]] = linalg.index 0 : index
// CHECK: %[[E:.+]] = tensor.extract %[[P]][%[[B]]] : tensor<3xi64>
// CHECK: %[[OFF:.+]] = arith.index_cast %[[E]] : i64 to index
// CHECK: %[[POS:.+]] = arith.addi %[[S]], %[[OFF]] : index
// CHECK: tensor.extract %[[T]]
func.func @position_embedding(%x: tensor<3x1x8xf32>, %table: tensor<16x8xf32>, %pos: tensor<3xi64>) -> tensor<3x1x8xf32> {
  %y = tfm.position_embedding %x, %table, %pos : (tensor<3x1x8xf32>, tensor<16x8xf32>, tensor<3xi64>) -> tensor<3x1x8xf32>
  return %y : tensor<3x1x8xf32>
}

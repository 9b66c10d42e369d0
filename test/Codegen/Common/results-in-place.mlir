// RUN: transformer-opt %s --tfm-results-in-place --split-input-file | FileCheck %s

// A result computed as [M, N] and returned as [1, M, N] (every projection's
// shape): after buffer-results-to-out-params it is a local buffer copied
// into the out-parameter. It is computed in the out-parameter instead,
// viewed as [M, N]; the copy and the buffer go.
// CHECK-LABEL: func.func @reshaped
// CHECK-SAME: %[[OUT:.*]]: memref<1x4x8xf32>
// CHECK: %[[VIEW:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1], [2]] : memref<1x4x8xf32> into memref<4x8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[VIEW]] : memref<4x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @reshaped(%out: memref<1x4x8xf32>) {
  %c = arith.constant 1.0 : f32
  %buf = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  linalg.fill ins(%c : f32) outs(%buf : memref<4x8xf32>)
  %view = memref.expand_shape %buf [[0, 1], [2]] output_shape [1, 4, 8] : memref<4x8xf32> into memref<1x4x8xf32>
  memref.copy %view, %out : memref<1x4x8xf32> to memref<1x4x8xf32>
  memref.dealloc %buf : memref<4x8xf32>
  return
}

// -----

// The buffer is written after the copy: the copy stays.
// CHECK-LABEL: func.func @written_after
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @written_after(%out: memref<1x4x8xf32>) {
  %c = arith.constant 1.0 : f32
  %buf = memref.alloc() : memref<4x8xf32>
  %view = memref.expand_shape %buf [[0, 1], [2]] output_shape [1, 4, 8] : memref<4x8xf32> into memref<1x4x8xf32>
  memref.copy %view, %out : memref<1x4x8xf32> to memref<1x4x8xf32>
  linalg.fill ins(%c : f32) outs(%buf : memref<4x8xf32>)
  memref.dealloc %buf : memref<4x8xf32>
  return
}

// -----

// The out-parameter is read elsewhere too: the copy stays.
// CHECK-LABEL: func.func @out_read
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @out_read(%out: memref<1x4x8xf32>, %other: memref<1x4x8xf32>) {
  %buf = memref.alloc() : memref<4x8xf32>
  %view = memref.expand_shape %buf [[0, 1], [2]] output_shape [1, 4, 8] : memref<4x8xf32> into memref<1x4x8xf32>
  memref.copy %out, %other : memref<1x4x8xf32> to memref<1x4x8xf32>
  memref.copy %view, %out : memref<1x4x8xf32> to memref<1x4x8xf32>
  memref.dealloc %buf : memref<4x8xf32>
  return
}

// -----

// A chain of reshapes (a packed GEMM's [M, N/16, 16] -> [M, N] -> [1, M, N]):
// undone on the out-parameter, last first.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: %[[OUT:.*]]: memref<1x4x32xf32>
// CHECK: %[[M:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1], [2]] : memref<1x4x32xf32> into memref<4x32xf32>
// CHECK: %[[P:.*]] = memref.expand_shape %[[M]] {{\[}}[0], [1, 2]] output_shape [4, 2, 16] : memref<4x32xf32> into memref<4x2x16xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[P]] : memref<4x2x16xf32>)
// CHECK-NOT: memref.copy
func.func @chain(%out: memref<1x4x32xf32>) {
  %c = arith.constant 1.0 : f32
  %buf = memref.alloc() : memref<4x2x16xf32>
  linalg.fill ins(%c : f32) outs(%buf : memref<4x2x16xf32>)
  %mn = memref.collapse_shape %buf [[0], [1, 2]] : memref<4x2x16xf32> into memref<4x32xf32>
  %view = memref.expand_shape %mn [[0, 1], [2]] output_shape [1, 4, 32] : memref<4x32xf32> into memref<1x4x32xf32>
  memref.copy %view, %out : memref<1x4x32xf32> to memref<1x4x32xf32>
  memref.dealloc %buf : memref<4x2x16xf32>
  return
}

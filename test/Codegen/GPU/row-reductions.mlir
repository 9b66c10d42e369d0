// RUN: transformer-opt %s --pass-pipeline="builtin.module(func.func(tfm-gpu-row-reductions))" -split-input-file | FileCheck %s

// Sum of squares over the last dimension of [2, 3, 64] (an RMS norm's
// statistic): one warp a row, 6 rows in 2 blocks of 4 warps; lanes stride
// by 32 from 0.0, five xor shuffles, lane 0 adds the output's value.
// CHECK-DAG: #[[ROWMAP:.*]] = affine_map<()[s0, s1] -> (s0 * 4 + s1 floordiv 32)>
// CHECK-DAG: #[[LANEMAP:.*]] = affine_map<()[s0] -> (s0 mod 32)>
// CHECK-LABEL: func.func @sum_squares(
// CHECK-SAME: %[[X:.*]]: memref<2x3x64xf32>, %[[OUT:.*]]: memref<2x3xf32>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C2]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[C128]],
// CHECK: %[[ROW:.*]] = affine.apply #[[ROWMAP]]()[%{{.*}}, %[[TX]]]
// CHECK: %[[LANE:.*]] = affine.apply #[[LANEMAP]]()[%[[TX]]]
// CHECK: scf.if
// CHECK: %[[RC:.*]]:2 = affine.delinearize_index %[[ROW]] into (2, 3)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PART:.*]] = scf.for %[[K:.*]] = %[[LANE]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK: %[[V:.*]] = memref.load %[[X]][
// CHECK: %[[SQ:.*]] = arith.mulf %[[V]], %[[V]]
// CHECK: %[[S:.*]] = arith.addf %[[SQ]], %[[ACC]]
// CHECK: scf.yield %[[S]]
// CHECK: gpu.shuffle xor %[[PART]], %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK: scf.if
// CHECK: %[[INIT:.*]] = memref.load %[[OUT]][%[[RC]]#0, %[[RC]]#1]
// CHECK: arith.addf
// CHECK: memref.store {{.*}}, %[[OUT]][%[[RC]]#0, %[[RC]]#1]
// CHECK-NOT: linalg.generic
func.func @sum_squares(%x: memref<2x3x64xf32>, %out: memref<2x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<2x3x64xf32>) outs(%out : memref<2x3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A softmax max (the broadcast input misses the reduction dimension only)
// starts lanes from -inf and combines with maximumf.
// CHECK-LABEL: func.func @row_max(
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
// CHECK: gpu.shuffle xor
func.func @row_max(%x: memref<4x128xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x128xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Left alone: a contraction (each input misses a parallel loop), and a
// payload that uses the accumulator besides the combiner.
// CHECK-LABEL: func.func @unsupported(
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: gpu.launch
func.func @unsupported(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>, %x: memref<4x8xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.mulf %v, %acc : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Decode's projections: a matmul of 2 rows against an [N, K] weight runs a
// warp per output element (2 x 96 = 192 warps in 48 blocks), the lanes
// reading consecutive elements of a weight row; an [K, N] weight keeps the
// SIMT path.
// CHECK-LABEL: func.func @gemv(
// CHECK-SAME: %[[A:.*]]: memref<2x64xf16>, %[[B:.*]]: memref<96x64xf16>, %[[C:.*]]: memref<2x96xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c48,
// CHECK: %[[MN:.*]]:2 = affine.delinearize_index %{{.*}} into (2, 96)
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c64 step %c32 iter_args
// CHECK: memref.load %[[A]]
// CHECK: memref.load %[[B]]
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: memref.store {{.*}}, %[[C]][%[[MN]]#0, %[[MN]]#1]
// CHECK: linalg.matmul ins(%{{.*}} : memref<2x64xf16>, memref<64x96xf16>)
func.func @gemv(%a: memref<2x64xf16>, %b: memref<96x64xf16>, %c: memref<2x96xf32>, %bt: memref<64x96xf16>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %b : memref<2x64xf16>, memref<96x64xf16>) outs(%c : memref<2x96xf32>)
  linalg.matmul ins(%a, %bt : memref<2x64xf16>, memref<64x96xf16>) outs(%c : memref<2x96xf32>)
  return
}

// RUN: transformer-opt %s --tfm-gpu-matvec -split-input-file | FileCheck %s

// One row, an [N, K] weight (N = 100: the last block's warps past N do
// nothing): a warp per column, 8 warps a block (grid 13), lanes reading
// 8 f16 at a time 256 apart, then a reduction, five shuffles and lane 0
// adding the dot product to C.
// CHECK-LABEL: func.func @nt(
// CHECK-SAME: %[[A:.*]]: memref<1x64xf16>, %[[B:.*]]: memref<100x64xf16>, %[[C:.*]]: memref<1x100xf32>)
// CHECK: call @tfm_matvec_1x100x64_nt(%[[A]], %[[B]], %[[C]])
// CHECK-NOT: linalg.matmul
// CHECK: func.func private @tfm_matvec_1x100x64_nt(
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C13:.*]] = arith.constant 13 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C13]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[C256]], {{.*}})
// CHECK: %[[LIVE:.*]] = arith.cmpi ult, %[[N:.*]], %{{.*}} : index
// CHECK: scf.if %[[LIVE]]
// CHECK: scf.for {{.*}} -> (vector<8xf32>)
// CHECK: vector.load %{{.*}}[%[[N]], %{{.*}}] : memref<100x64xf16>, vector<8xf16>
// CHECK: vector.load %{{.*}} : memref<1x64xf16>, vector<8xf16>
// CHECK: vector.fma {{.*}} : vector<8xf32>
// CHECK: vector.reduction <add>
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: scf.if
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[N]]] : memref<1x100xf32>
// CHECK: arith.addf
// CHECK: memref.store {{.*}} : memref<1x100xf32>
func.func @nt(%a: memref<1x64xf16>, %b: memref<100x64xf16>, %c: memref<1x100xf32>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %b : memref<1x64xf16>, memref<100x64xf16>) outs(%c : memref<1x100xf32>)
  return
}

// -----

// Two rows, a [K, N] weight: a lane per column (grid ceil(70 / 32) = 3),
// the 8 warps on interleaved K rows, 4 loads a step, two partial sums a
// thread; workgroup memory [8 warps, 2 rows, 32 lanes], then warp m adds up
// row m where the column exists.
// CHECK: #[[MIN:.*]] = affine_map<()[s0] -> (s0, 69)>
// CHECK-LABEL: func.func @nn(
// CHECK: call @tfm_matvec_2x70x64_nn(
// CHECK: func.func private @tfm_matvec_2x70x64_nn(
// CHECK: gpu.launch {{.*}} workgroup(%[[RED:.*]] : memref<8x2x32xf32, #gpu.address_space<workgroup>>)
// CHECK: affine.min #[[MIN]]
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK-COUNT-4: memref.load %{{.*}} : memref<64x70xf16>
// CHECK: scf.yield
// CHECK-COUNT-2: memref.store {{.*}}, %[[RED]]
// CHECK: gpu.barrier
// CHECK: arith.andi
// CHECK-COUNT-8: memref.load %[[RED]]
// CHECK: memref.store {{.*}} : memref<2x70xf32>
func.func @nn(%a: memref<2x64xf16>, %b: memref<64x70xf16>, %c: memref<2x70xf32>) {
  linalg.matmul ins(%a, %b : memref<2x64xf16>, memref<64x70xf16>) outs(%c : memref<2x70xf32>)
  return
}

// -----

// Left alone: 9 rows, K not a whole number of vectors ([N, K]) or of steps
// ([K, N]), f32 operands.
// CHECK-LABEL: func.func @unsupported(
// CHECK-COUNT-4: linalg.matmul
// CHECK-NOT: call
func.func @unsupported(%a: memref<9x64xf16>, %b: memref<64x64xf16>, %c: memref<9x64xf32>,
                       %d: memref<1x60xf16>, %e: memref<64x60xf16>, %f: memref<1x64xf32>,
                       %g: memref<60x64xf16>, %h: memref<1x64xf32>, %i: memref<1x64xf32>, %j: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<9x64xf16>, memref<64x64xf16>) outs(%c : memref<9x64xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%d, %e : memref<1x60xf16>, memref<64x60xf16>) outs(%f : memref<1x64xf32>)
  linalg.matmul ins(%d, %g : memref<1x60xf16>, memref<60x64xf16>) outs(%h : memref<1x64xf32>)
  linalg.matmul ins(%i, %j : memref<1x64xf32>, memref<64x64xf32>) outs(%h : memref<1x64xf32>)
  return
}

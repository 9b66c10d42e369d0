// RUN: transformer-opt %s --tfm-gpu-configure=tensor-cores=0 --tfm-gpu-matvec=async=1 -split-input-file | FileCheck %s
// RUN: transformer-opt %s --tfm-gpu-configure=tensor-cores=0 --tfm-gpu-matvec -split-input-file | FileCheck %s --check-prefix=SYNC

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

// Two rows, a [K, N] weight (N = 72: one block of 256 columns, lanes past N
// load the last 8 columns and store nothing; K = 64: 2 splits of 32 rows).
// Kernel 1: a 16-byte load per lane and K row (4 a step), two vector
// accumulators a thread, the 8 warps' sums meeting in workgroup memory a row
// at a time, partial sums to P[split, m, n]; kernel 2 adds them up in split
// order into C. P is a token-less gpu.alloc with async (chained), else a
// synchronous one.
// CHECK: #[[MIN:.*]] = affine_map<()[s0] -> (s0, 64)>
// CHECK-LABEL: func.func @nn(
// CHECK: call @tfm_matvec_2x72x64_nn(
// CHECK: func.func private @tfm_matvec_2x72x64_nn(
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[P:.*]] = gpu.alloc  () : memref<2x2x72xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}, {{.*}} = %[[C2]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[C256]], {{.*}}) workgroup(%[[RED:.*]] : memref<8x256xf32, #gpu.address_space<workgroup>>)
// CHECK: affine.min #[[MIN]]
// CHECK: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-4: vector.load %{{.*}} : memref<64x72xf16>, vector<8xf16>
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK: vector.store %{{.*}}, %[[RED]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[RED]]
// CHECK: memref.store %{{.*}}, %[[P]]
// CHECK: gpu.barrier
// CHECK: vector.store %{{.*}}, %[[RED]]
// CHECK: gpu.launch
// CHECK-COUNT-2: memref.load %[[P]]
// CHECK: memref.store {{.*}} : memref<2x72xf32>
// CHECK: gpu.dealloc %[[P]]
// SYNC-LABEL: func.func private @tfm_matvec_2x72x64_nn(
// SYNC: %[[T0:.*]] = gpu.wait async
// SYNC: %{{.*}}, %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<2x2x72xf32>
// SYNC: gpu.wait [%[[T1]]]
// SYNC: gpu.dealloc async
func.func @nn(%a: memref<2x64xf16>, %b: memref<64x72xf16>, %c: memref<2x72xf32>) {
  linalg.matmul ins(%a, %b : memref<2x64xf16>, memref<64x72xf16>) outs(%c : memref<2x72xf32>)
  return
}

// -----

// Left alone: 9 rows, K not a whole number of vectors ([N, K]) or of steps
// ([K, N]), f32 operands, a [K, N] weight of N not a multiple of 8.
// CHECK-LABEL: func.func @unsupported(
// CHECK-COUNT-5: linalg.matmul
// CHECK-NOT: call
func.func @unsupported(%a: memref<9x64xf16>, %b: memref<64x64xf16>, %c: memref<9x64xf32>,
                       %d: memref<1x60xf16>, %e: memref<64x60xf16>, %f: memref<1x64xf32>,
                       %g: memref<60x64xf16>, %h: memref<1x64xf32>, %i: memref<1x64xf32>, %j: memref<64x64xf32>,
                       %k: memref<1x64xf16>, %l: memref<64x70xf16>, %m: memref<1x70xf32>) {
  linalg.matmul ins(%a, %b : memref<9x64xf16>, memref<64x64xf16>) outs(%c : memref<9x64xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%d, %e : memref<1x60xf16>, memref<64x60xf16>) outs(%f : memref<1x64xf32>)
  linalg.matmul ins(%d, %g : memref<1x60xf16>, memref<60x64xf16>) outs(%h : memref<1x64xf32>)
  linalg.matmul ins(%i, %j : memref<1x64xf32>, memref<64x64xf32>) outs(%h : memref<1x64xf32>)
  linalg.matmul ins(%k, %l : memref<1x64xf16>, memref<64x70xf16>) outs(%m : memref<1x70xf32>)
  return
}

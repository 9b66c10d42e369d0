// RUN: transformer-opt %s --tfm-gpu-configure=matvec=0 --tfm-gpu-tensor-core-matmul -split-input-file | FileCheck %s

// An f16 matmul with a transposed ([N, K]) B becomes a call of a kernel for
// its shape: 64x64 tiles of C per block (grid 4 x 2), 128 threads, A and B
// tiles in two workgroup-memory slots filled with cp.async, a two-stage
// pipeline (prefetch step i + 1, wait for step i with one group in flight,
// 16x8x16 contractions), then the last step.
// CHECK-LABEL: func.func @nt(
// CHECK-SAME: %[[A:.*]]: memref<128x64xf16>, %[[B:.*]]: memref<256x64xf16>, %[[C:.*]]: memref<128x256xf32>)
// CHECK: call @tfm_mma_matmul_128x256x64_nt(%[[A]], %[[B]], %[[C]])
// CHECK-NOT: linalg.matmul
// CHECK: func.func private @tfm_mma_matmul_128x256x64_nt(
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C4]], {{.*}} = %[[C2]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[C128]], {{.*}}) workgroup(%[[SA:.*]] : memref<2x64x32xf16, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<2x64x32xf16, #gpu.address_space<workgroup>>)
// CHECK-COUNT-8: vector.transfer_read %{{.*}} : memref<128x256xf32>, vector<16x8xf32>
// CHECK-COUNT-4: nvgpu.device_async_copy {{.*}}[%c0,
// CHECK: %[[FIRST:.*]] = nvgpu.device_async_create_group
// CHECK: scf.for
// CHECK-COUNT-4: nvgpu.device_async_copy
// CHECK: %[[NEXT:.*]] = nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %[[NEXT]] {numGroups = 1 : i32}
// CHECK: gpu.barrier
// CHECK-COUNT-16: vector.contract
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %[[FIRST]] {numGroups = 0 : i32}
// CHECK: gpu.barrier
// CHECK-COUNT-16: vector.contract
// CHECK-COUNT-8: vector.transfer_write
func.func @nt(%a: memref<128x64xf16>, %b: memref<256x64xf16>, %c: memref<128x256xf32>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %b : memref<128x64xf16>, memref<256x64xf16>) outs(%c : memref<128x256xf32>)
  return
}

// -----

// B as [K, N]: read transposed (ldmatrix.trans once converted). Two calls of
// one shape share the kernel.
// CHECK-LABEL: func.func @nn(
// CHECK: call @tfm_mma_matmul_64x64x32_nn(
// CHECK: call @tfm_mma_matmul_64x64x32_nn(
// CHECK: func.func private @tfm_mma_matmul_64x64x32_nn(
// CHECK: vector.transfer_read {{.*}}permutation_map{{.*}} : memref<2x32x64xf16, #gpu.address_space<workgroup>>, vector<8x16xf16>
// CHECK-NOT: func.func private @tfm_mma_matmul
func.func @nn(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xf32>, %d: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%d : memref<64x64xf32>)
  return
}

// -----

// Left to the SIMT path: M not a multiple of 64, f32 operands, bf16 operands.
// CHECK-LABEL: func.func @unsupported(
// CHECK-COUNT-3: linalg.matmul
// CHECK-NOT: call
func.func @unsupported(%a: memref<8x32xf16>, %b: memref<32x64xf16>, %c: memref<8x64xf32>,
                       %af: memref<64x32xf32>, %bf: memref<32x64xf32>, %cf: memref<64x64xf32>,
                       %ab: memref<64x32xbf16>, %bb: memref<32x64xbf16>) {
  linalg.matmul ins(%a, %b : memref<8x32xf16>, memref<32x64xf16>) outs(%c : memref<8x64xf32>)
  linalg.matmul ins(%af, %bf : memref<64x32xf32>, memref<32x64xf32>) outs(%cf : memref<64x64xf32>)
  linalg.matmul ins(%ab, %bb : memref<64x32xbf16>, memref<32x64xbf16>) outs(%cf : memref<64x64xf32>)
  return
}

// -----

// An [N, K] weight with N = 200, no multiple of 64: its first 192 rows go
// to the kernel, which writes the first 192 columns of C (rows 200 apart);
// the last 8 rows and columns stay a linalg.matmul for the SIMT path.
// CHECK-LABEL: func.func @split_columns(
// CHECK-SAME: %[[A:.*]]: memref<64x32xf16>, %[[B:.*]]: memref<200x32xf16>, %[[C:.*]]: memref<64x200xf32>)
// CHECK: %[[BB:.*]] = memref.subview %[[B]][0, 0] [192, 32] [1, 1]
// CHECK: %[[BBI:.*]] = memref.cast %[[BB]] : memref<192x32xf16, strided<[32, 1]>> to memref<192x32xf16>
// CHECK: %[[CB:.*]] = memref.subview %[[C]][0, 0] [64, 192] [1, 1] : memref<64x200xf32> to memref<64x192xf32, strided<[200, 1]>>
// CHECK: call @tfm_mma_matmul_64x192x32_nt_ldc200(%[[A]], %[[BBI]], %[[CB]])
// CHECK: %[[BR:.*]] = memref.subview %[[B]][192, 0] [8, 32] [1, 1]
// CHECK: %[[CR:.*]] = memref.subview %[[C]][0, 192] [64, 8] [1, 1]
// CHECK: linalg.matmul {{.*}} ins(%[[A]], %[[BR]] : {{.*}}) outs(%[[CR]] : {{.*}})
// CHECK: func.func private @tfm_mma_matmul_64x192x32_nt_ldc200(%{{.*}}: memref<64x32xf16>, %{{.*}}: memref<192x32xf16>, %{{.*}}: memref<64x192xf32, strided<[200, 1]>>)
// CHECK-COUNT-8: vector.transfer_read %{{.*}} : memref<64x192xf32, strided<[200, 1]>>, vector<16x8xf32>
// CHECK-COUNT-8: vector.transfer_write {{.*}} : vector<16x8xf32>, memref<64x192xf32, strided<[200, 1]>>
func.func @split_columns(%a: memref<64x32xf16>, %b: memref<200x32xf16>, %c: memref<64x200xf32>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %b : memref<64x32xf16>, memref<200x32xf16>) outs(%c : memref<64x200xf32>)
  return
}

// -----

// Not split: a [K, N] B (its rows would lose 16-byte alignment), and N
// below one block.
// CHECK-LABEL: func.func @not_split(
// CHECK-COUNT-2: linalg.matmul
// CHECK-NOT: call
func.func @not_split(%a: memref<64x32xf16>, %b: memref<32x200xf16>, %c: memref<64x200xf32>,
                     %d: memref<40x32xf16>, %e: memref<64x40xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf16>, memref<32x200xf16>) outs(%c : memref<64x200xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %d : memref<64x32xf16>, memref<40x32xf16>) outs(%e : memref<64x40xf32>)
  return
}

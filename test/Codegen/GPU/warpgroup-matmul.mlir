// RUN: transformer-opt %s --tfm-gpu-configure="chip=sm_90a matvec=0" --tfm-gpu-warpgroup-matmul -split-input-file | FileCheck %s
// RUN: transformer-opt %s --tfm-gpu-configure="chip=sm_90a matvec=0 wgmma-stages=4" --tfm-gpu-warpgroup-matmul -split-input-file | FileCheck %s --check-prefix=S4

// B as [K, N]: on the host, TMA descriptors with 128-byte swizzle for A
// (128x64 boxes) and B (64x64 boxes: two per 64x128 tile), passed into the
// kernel as integers; a 2x2 grid of one-warpgroup blocks with 1 KiB of
// alignment slack + 3 stages of 32 KiB of dynamic shared memory; three
// mbarriers initialised by the leader thread; two tiles in flight before the
// K loop; in the loop, wait on the slot's mbarrier (parity of the round),
// eight wgmma (4 K steps of 16 x 2 accumulators of 64x128, B transposed),
// a barrier, and the leader refills the slot of the previous tile; the
// accumulators go through shared memory into C.
// The ring starts at the first 1 KiB boundary above the dynamic shared
// memory symbol (NVPTX demotes that symbol to a static variable placed among
// the mbarriers).
// CHECK: #[[BASE:.*]] = affine_map<()[s0] -> ((s0 floordiv 1024) * 1024 - s0 + 1024)>
// CHECK-LABEL: func.func @nn(
// CHECK: call @tfm_wgmma_matmul_256x256x128_nn_s3(
// CHECK-NOT: linalg.matmul
// CHECK: func.func private @tfm_wgmma_matmul_256x256x128_nn_s3(
// CHECK-DAG: %[[SMEM:.*]] = arith.constant 99328 : i32
// CHECK: %[[DA:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}] : memref<*xf16> -> <tensor = memref<128x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: %[[DB:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}] : memref<*xf16> -> <tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: llvm.ptrtoint
// CHECK: llvm.ptrtoint
// CHECK: gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}}) dynamic_shared_memory_size %[[SMEM]]
// CHECK: llvm.inttoptr
// CHECK: llvm.inttoptr
// CHECK: %[[DYN:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[DYN]]
// CHECK: affine.apply #[[BASE]]()[%[[PTR]]]
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK: scf.if
// CHECK-COUNT-3: nvgpu.mbarrier.init
// CHECK: nvgpu.tma.prefetch.descriptor
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK-COUNT-2: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c32768
// CHECK-NOT: nvgpu.mbarrier.arrive.expect_tx
// CHECK-COUNT-2: nvgpu.warpgroup.mma.init.accumulator -> <fragmented = vector<64x128xf32>>
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK-COUNT-8: nvgpu.warpgroup.mma {{.*}} {transposeB, waitGroup = 8 : i64} : <tensor = memref<64x16xf16, #gpu.address_space<workgroup>>>, <tensor = memref<16x128xf16, #gpu.address_space<workgroup>>>, <fragmented = vector<64x128xf32>>
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK-COUNT-3: nvgpu.tma.async.load
// CHECK: scf.yield
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-2: nvgpu.warpgroup.mma.store
// CHECK: scf.for
// CHECK: vector.load
// CHECK: vector.load
// CHECK: arith.addf
// CHECK: vector.store
// S4: func.func private @tfm_wgmma_matmul_256x256x128_nn_s4(
// S4: arith.constant 132096 : i32
// S4: num_barriers = 4
func.func @nn(%a: memref<256x128xf16>, %b: memref<128x256xf16>, %c: memref<256x256xf32>) {
  linalg.matmul ins(%a, %b : memref<256x128xf16>, memref<128x256xf16>) outs(%c : memref<256x256xf32>)
  return
}

// -----

// B as [N, K] (the out_in weight layout), M = 64: one 128x64 box of B per
// tile, B not transposed, one accumulator (64x128 tiles of C), 24 KiB a
// stage. Two calls of one shape share the kernel.
// CHECK-LABEL: func.func @nt(
// CHECK: call @tfm_wgmma_matmul_64x256x128_nt_s3(
// CHECK: call @tfm_wgmma_matmul_64x256x128_nt_s3(
// CHECK: func.func private @tfm_wgmma_matmul_64x256x128_nt_s3(
// CHECK: arith.constant 74752 : i32
// CHECK: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<128x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c24576
// CHECK-COUNT-1: nvgpu.warpgroup.mma.init.accumulator
// CHECK: scf.for
// CHECK-COUNT-4: nvgpu.warpgroup.mma {{.*}} {waitGroup = 4 : i64} : <tensor = memref<64x16xf16
// CHECK-NOT: transposeB
// CHECK: scf.yield
// CHECK-NOT: func.func private @tfm_wgmma
func.func @nt(%a: memref<64x128xf16>, %b: memref<256x128xf16>, %c: memref<64x256xf32>, %d: memref<64x256xf32>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %b : memref<64x128xf16>, memref<256x128xf16>) outs(%c : memref<64x256xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %b : memref<64x128xf16>, memref<256x128xf16>) outs(%d : memref<64x256xf32>)
  return
}

// -----

// Shapes the kernel does not take stay linalg (N not a multiple of 128; K
// not a multiple of 64; f32 operands).
// CHECK-LABEL: func.func @other(
// CHECK-COUNT-3: linalg.matmul
// CHECK-NOT: tfm_wgmma
func.func @other(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>,
                 %a2: memref<128x32xf16>, %b2: memref<32x128xf16>, %c2: memref<128x128xf32>,
                 %a3: memref<128x64xf32>, %b3: memref<64x128xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a2, %b2 : memref<128x32xf16>, memref<32x128xf16>) outs(%c2 : memref<128x128xf32>)
  linalg.matmul ins(%a3, %b3 : memref<128x64xf32>, memref<64x128xf32>) outs(%c2 : memref<128x128xf32>)
  return
}

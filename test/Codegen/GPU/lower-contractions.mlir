// RUN: transformer-opt %s --pass-pipeline="builtin.module(gpu.module(tfm-gpu-lower-contractions))" | FileCheck %s

// A kernel holding a 16x8x16 vector.contract (the tile of
// tfm-gpu-tensor-core-matmul) becomes nvgpu.mma.sync; a SIMT kernel, whose
// scalar index math the upstream conversion would reject, is left alone; a
// flash-attention kernel may use the registers it needs (nvvm.minctasm).

#map_a = affine_map<(m, n, k) -> (m, k)>
#map_b = affine_map<(m, n, k) -> (n, k)>
#map_c = affine_map<(m, n, k) -> (m, n)>

// CHECK-LABEL: gpu.module @kernels
gpu.module @kernels {
  // CHECK-LABEL: gpu.func @mma
  // CHECK-NOT: vector.contract
  // CHECK: nvgpu.mma.sync
  // CHECK-NOT: vector.contract
  // CHECK: gpu.return
  gpu.func @mma(%a: memref<16x16xf16, 3>, %b: memref<8x16xf16, 3>,
                %c: memref<16x8xf32>) kernel {
    %c0 = arith.constant 0 : index
    %h0 = arith.constant 0.0 : f16
    %f0 = arith.constant 0.0 : f32
    %A = vector.transfer_read %a[%c0, %c0], %h0 {in_bounds = [true, true]} : memref<16x16xf16, 3>, vector<16x16xf16>
    %B = vector.transfer_read %b[%c0, %c0], %h0 {in_bounds = [true, true]} : memref<8x16xf16, 3>, vector<8x16xf16>
    %C = vector.transfer_read %c[%c0, %c0], %f0 {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
    %D = vector.contract {indexing_maps = [#map_a, #map_b, #map_c],
                          iterator_types = ["parallel", "parallel", "reduction"],
                          kind = #vector.kind<add>} %A, %B, %C
        : vector<16x16xf16>, vector<8x16xf16> into vector<16x8xf32>
    vector.transfer_write %D, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    gpu.return
  }

  // CHECK-LABEL: gpu.func @simt
  // CHECK-NOT: nvvm.minctasm
  // CHECK: %[[I:.*]] = arith.muli
  // CHECK: memref.load %{{.*}}[%[[I]]]
  gpu.func @simt(%x: memref<64xf32>) kernel {
    %t = gpu.thread_id x
    %c2 = arith.constant 2 : index
    %i = arith.muli %t, %c2 : index
    %v = memref.load %x[%i] : memref<64xf32>
    %s = arith.addf %v, %v : f32
    memref.store %s, %x[%i] : memref<64xf32>
    gpu.return
  }

  // CHECK-LABEL: gpu.func @tfm_flash_attention_0
  // CHECK-SAME: nvvm.minctasm = 1 : i32
  gpu.func @tfm_flash_attention_0(%x: memref<64xf32>) kernel {
    gpu.return
  }
}

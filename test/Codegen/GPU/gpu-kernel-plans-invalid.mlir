// Plans the kernel passes refuse, each an error on its matmul: a plan on a
// matmul no kernel takes, and plans (written by hand) whose tiles the kernel
// cannot run for that shape; and tfm-gpu-configure's option bounds.
// RUN: transformer-opt %s -split-input-file -verify-diagnostics --tfm-gpu-warpgroup-matmul --tfm-gpu-tensor-core-matmul --tfm-gpu-matvec
// RUN: not transformer-opt %s --tfm-gpu-configure=wgmma-stages=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES
// STAGES: error: --tfm-gpu-configure: wgmma-stages must be in [2, 8], got 1

func.func @f32(%a: memref<128x64xf32>, %b: memref<64x128xf32>, %c: memref<128x128xf32>) {
  // expected-error @+1 {{'linalg.matmul' op is planned for a wgmma kernel, but no kernel takes it: the kernels take f16 A and B and an f32 C, static, with identity layouts}}
  linalg.matmul {tfm.gpu_kernel = #tfm.gpu_kernel<kind = wgmma, tile_m = 128, tile_n = 128, tile_k = 64, warps = 4, stages = 3>}
    ins(%a, %b : memref<128x64xf32>, memref<64x128xf32>) outs(%c : memref<128x128xf32>)
  return
}

// -----

// 64 rows do not fill a 128-row block.
func.func @rows(%a: memref<64x64xf16>, %b: memref<64x128xf16>, %c: memref<64x128xf32>) {
  // expected-error @+1 {{'linalg.matmul' op has a wgmma plan the kernel cannot run: #tfm.gpu_kernel<kind = wgmma, tile_m = 128, tile_n = 128, tile_k = 64, warps = 4, stages = 3>}}
  linalg.matmul {tfm.gpu_kernel = #tfm.gpu_kernel<kind = wgmma, tile_m = 128, tile_n = 128, tile_k = 64, warps = 4, stages = 3>}
    ins(%a, %b : memref<64x64xf16>, memref<64x128xf16>) outs(%c : memref<64x128xf32>)
  return
}

// -----

// 32 rows: no mma.sync block of 64.
func.func @small(%a: memref<32x64xf16>, %b: memref<64x64xf16>, %c: memref<32x64xf32>) {
  // expected-error @+1 {{'linalg.matmul' op has an mma_sync plan the kernel cannot run}}
  linalg.matmul {tfm.gpu_kernel = #tfm.gpu_kernel<kind = mma_sync, tile_m = 64, tile_n = 64, tile_k = 32, warps = 4, stages = 2>}
    ins(%a, %b : memref<32x64xf16>, memref<64x64xf16>) outs(%c : memref<32x64xf32>)
  return
}

// -----

// A split of 64 K rows where the kernel's split is 32.
func.func @split(%x: memref<1x768xf16>, %w: memref<768x768xf16>, %y: memref<1x768xf32>) {
  // expected-error @+1 {{'linalg.matmul' op has a matvec plan the kernel cannot run}}
  linalg.matmul {tfm.gpu_kernel = #tfm.gpu_kernel<kind = matvec, tile_m = 1, tile_n = 256, tile_k = 64, warps = 8, stages = 1>}
    ins(%x, %w : memref<1x768xf16>, memref<768x768xf16>) outs(%y : memref<1x768xf32>)
  return
}

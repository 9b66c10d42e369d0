// tfm-gpu-configure: each f16 matmul's kernel and tiles, chosen from the chip
// and the shape and recorded as #tfm.gpu_kernel, for any chip without a GPU.
// RUN: transformer-opt %s --tfm-gpu-configure=chip=sm_90a -split-input-file | FileCheck %s --check-prefix=H100
// RUN: transformer-opt %s --tfm-gpu-configure=chip=sm_80 -split-input-file | FileCheck %s --check-prefix=A100
// RUN: transformer-opt %s --tfm-gpu-configure="chip=sm_90a wgmma-stages=4 warpgroup-mma=0" -split-input-file | FileCheck %s --check-prefix=NOWG
// RUN: transformer-opt %s --tfm-gpu-configure="chip=sm_90a tensor-cores=0 matvec=0" -split-input-file | FileCheck %s --check-prefix=SIMT

// A prefill projection: wgmma on sm_90a (128-row blocks, 3 stages), mma.sync
// (64 x 64 x 32, 4 warps, 2 stages) elsewhere or without warpgroup MMA.
// H100-LABEL: func.func @prefill
// H100: linalg.matmul {tfm.gpu_kernel = #tfm.gpu_kernel<kind = wgmma, tile_m = 128, tile_n = 128, tile_k = 64, warps = 4, stages = 3>}
// A100-LABEL: func.func @prefill
// A100: linalg.matmul {tfm.gpu_kernel = #tfm.gpu_kernel<kind = mma_sync, tile_m = 64, tile_n = 64, tile_k = 32, warps = 4, stages = 2>}
// NOWG-LABEL: func.func @prefill
// NOWG: kind = mma_sync
// SIMT-LABEL: func.func @prefill
// SIMT-NOT: tfm.gpu_kernel
func.func @prefill(%a: memref<128x64xf16>, %b: memref<64x128xf16>, %c: memref<128x128xf32>) {
  linalg.matmul ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%c : memref<128x128xf32>)
  return
}

// -----

// 64 rows (not 128): 64-row wgmma blocks. An [N, K] LM head of 50257 rows:
// no wgmma (N % 128), mma.sync for its first 50240 columns.
// H100-LABEL: func.func @shapes
// H100: kind = wgmma, tile_m = 64,
// H100: kind = mma_sync
// A100-LABEL: func.func @shapes
// A100: kind = mma_sync
// A100: kind = mma_sync
func.func @shapes(%a: memref<64x64xf16>, %b: memref<64x128xf16>, %c: memref<64x128xf32>,
                  %w: memref<50257x64xf16>, %l: memref<64x50257xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf16>, memref<64x128xf16>) outs(%c : memref<64x128xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %w : memref<64x64xf16>, memref<50257x64xf16>) outs(%l : memref<64x50257xf32>)
  return
}

// -----

// Decode: one row. [K, N] weight of 768 x 768: 256 columns a block, K split
// in 24 ranges of 32 rows (about 264 blocks); [N, K]: a warp per column,
// the whole K. f32 operands (dtype=f32) and matmuls inside a kernel get no
// plan.
// H100-LABEL: func.func @decode
// H100: kind = matvec, tile_m = 1, tile_n = 256, tile_k = 32, warps = 8, stages = 1
// H100: kind = matvec, tile_m = 1, tile_n = 8, tile_k = 768, warps = 8, stages = 1
// H100-NOT: tfm.gpu_kernel
// SIMT-LABEL: func.func @decode
// SIMT-NOT: tfm.gpu_kernel
func.func @decode(%x: memref<1x768xf16>, %w: memref<768x768xf16>, %y: memref<1x768xf32>,
                  %wt: memref<768x768xf16>, %x32: memref<1x768xf32>, %w32: memref<768x768xf32>) {
  linalg.matmul ins(%x, %w : memref<1x768xf16>, memref<768x768xf16>) outs(%y : memref<1x768xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %wt : memref<1x768xf16>, memref<768x768xf16>) outs(%y : memref<1x768xf32>)
  linalg.matmul ins(%x32, %w32 : memref<1x768xf32>, memref<768x768xf32>) outs(%y : memref<1x768xf32>)
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%x, %w : memref<1x768xf16>, memref<768x768xf16>) outs(%y : memref<1x768xf32>)
    gpu.terminator
  }
  return
}

// The errors of #tfm.gpu_kernel itself: its fields, and a tfm.gpu_kernel
// that is not one (gpu-kernel-plans-invalid.mlir: plans the kernels refuse).
// RUN: transformer-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// expected-error @+1 {{tile_m must be positive, got 0}}
"test.plan"() {tfm.gpu_kernel = #tfm.gpu_kernel<kind = wgmma, tile_m = 0, tile_n = 128, tile_k = 64, warps = 4, stages = 3>} : () -> ()

// -----

// expected-error @+1 {{'tfm.gpu_kernel' must be a #tfm.gpu_kernel attribute, got "wgmma"}}
"test.plan"() {tfm.gpu_kernel = "wgmma"} : () -> ()

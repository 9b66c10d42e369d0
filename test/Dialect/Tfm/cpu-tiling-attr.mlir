// #tfm.cpu_tiling, the CPU plan of one contraction: it round-trips with its
// optional fields elided at their defaults, and each verifier error (the
// attribute's fields, and `tfm.cpu_tiling` holding anything else) is
// reported where the attribute is written.
// RUN: transformer-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect | FileCheck %s

// CHECK-LABEL: func.func @plans
// CHECK: tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, min_rows = 3, block_rows = 8, block_cols = 48, block_depth = 32, dot_cols = 4, dot_depth = 32>
// CHECK: tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128, amx_block_depth = 64>
// CHECK: tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 12, block_cols = 1024, block_depth = 32, dot_cols = 4, dot_depth = 32, bf16_pairs = true>
func.func @plans(%a: tensor<8x32xf32>, %b: tensor<32x48xf32>, %c: tensor<8x48xf32>) -> tensor<8x48xf32> {
  %0 = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, min_rows = 3, block_rows = 8, block_cols = 48, block_depth = 32, dot_cols = 4, dot_depth = 32>}
      ins(%a, %b : tensor<8x32xf32>, tensor<32x48xf32>) outs(%c : tensor<8x48xf32>) -> tensor<8x48xf32>
  %1 = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, min_rows = 0, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128, amx_block_depth = 64>}
      ins(%a, %b : tensor<8x32xf32>, tensor<32x48xf32>) outs(%0 : tensor<8x48xf32>) -> tensor<8x48xf32>
  %2 = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 12, block_cols = 1024, block_depth = 32, dot_cols = 4, dot_depth = 32, bf16_pairs = true>}
      ins(%a, %b : tensor<8x32xf32>, tensor<32x48xf32>) outs(%1 : tensor<8x48xf32>) -> tensor<8x48xf32>
  return %2 : tensor<8x48xf32>
}

// -----

func.func @untyped(%a: tensor<8x32xf32>, %b: tensor<32x48xf32>, %c: tensor<8x48xf32>) -> tensor<8x48xf32> {
  // expected-error @+1 {{'tfm.cpu_tiling' must be a #tfm.cpu_tiling attribute, got {block = array<i64: 8, 48, 32>}}}
  %0 = linalg.matmul {tfm.cpu_tiling = {block = array<i64: 8, 48, 32>}}
      ins(%a, %b : tensor<8x32xf32>, tensor<32x48xf32>) outs(%c : tensor<8x48xf32>) -> tensor<8x48xf32>
  return %0 : tensor<8x48xf32>
}

// -----

// expected-error @+1 {{register_cols must be positive, got 0}}
"test.plan"() {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 0, block_rows = 8, block_cols = 48, block_depth = 32, dot_cols = 4, dot_depth = 32>} : () -> ()

// -----

// gemv_panels (the panels a one-row register tile reads at once) is printed
// when not 1, and must be positive.
// CHECK-LABEL: "test.gemv_plan"
// CHECK-SAME: dot_depth = 32, gemv_panels = 4>
"test.gemv_plan"() {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 12, block_cols = 1024, block_depth = 32, dot_cols = 4, dot_depth = 32, gemv_panels = 4>} : () -> ()

// -----

// expected-error @+1 {{gemv_panels must be positive, got 0}}
"test.plan"() {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, block_rows = 8, block_cols = 48, block_depth = 32, dot_cols = 4, dot_depth = 32, gemv_panels = 0>} : () -> ()

// -----

// expected-error @+1 {{block_depth must be positive, got -1}}
"test.plan"() {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, block_rows = 8, block_cols = 48, block_depth = -1, dot_cols = 4, dot_depth = 32>} : () -> ()

// -----

// expected-error @+1 {{min_rows must be in [0, register_rows = 4], got 5}}
"test.plan"() {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, min_rows = 5, block_rows = 8, block_cols = 48, block_depth = 32, dot_cols = 4, dot_depth = 32>} : () -> ()

// -----

// expected-error @+1 {{amx_block_cols and amx_block_depth must both be positive (the AMX form) or both 0, got 128 and 0}}
"test.plan"() {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128>} : () -> ()

// RUN: transformer-opt %s --tfm-cpu-pipeline="cpu=sapphirerapids" --split-input-file | FileCheck %s
// RUN: transformer-opt %s --tfm-cpu-pipeline="cpu=sapphirerapids amx=0" --split-input-file | FileCheck %s --check-prefix=FMA
// RUN: transformer-opt %s --tfm-cpu-pipeline="cpu=znver3" --split-input-file | FileCheck %s --check-prefix=FMA
// RUN: transformer-opt %s --tfm-cpu-pipeline="cpu=sapphirerapids" --split-input-file | FileCheck %s --check-prefix=LOADS
// RUN: transformer-opt %s --tfm-cpu-pipeline="cpu=znver3 dynamic-schedule=0" --split-input-file | FileCheck %s --check-prefix=STATIC

// For a CPU with AMX-BF16 (named here, so that the test runs anywhere: the
// code is only compiled, not run), the pipeline takes a GEMM whose M, N, K
// are multiples of 32 to AMX tiles down to the LLVM dialect: three K steps
// of 32 (K = 96, one K block) of 24 tile multiplies each, 16 tile loads of
// A and B parts a step and C's four tiles loaded and stored once; the
// function asks Linux for the tiles (arch_prctl, from libc). Without `amx`,
// or for a CPU without AMX, the same GEMM is FMA code.
// CHECK-LABEL: llvm.func @mm(
// CHECK: llvm.call @tfm_amx_gemm
// CHECK-LABEL: llvm.func internal @tfm_amx_gemm
// CHECK: llvm.call @arch_prctl
// CHECK-COUNT-72: llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// CHECK-NOT: llvm.x86.tdpbf16ps
// The 52 tile loads: C's 4, and 16 a step (the six part products ordered
// so that consecutive ones share a part of A or B: 8 pairs, not 9).
// LOADS-LABEL: llvm.func internal @tfm_amx_gemm
// LOADS-COUNT-52: llvm.call_intrinsic "llvm.x86.tileloadd64.internal"
// LOADS-NOT: llvm.x86.tileloadd64
// LOADS-LABEL: llvm.func @wide(
// FMA-NOT: arch_prctl
// FMA-NOT: llvm.x86.t
// FMA: llvm.intr.fmuladd
// FMA-NOT: llvm.x86.t
func.func @mm(%x: tensor<1x64x96xf32> {tfm.input = "x"}, %w: tensor<96x128xf32> {tfm.param = "w"}) -> tensor<1x64x128xf32> {
  %y = tfm.linear %x, %w : (tensor<1x64x96xf32>, tensor<96x128xf32>) -> tensor<1x64x128xf32>
  return %y : tensor<1x64x128xf32>
}

// -----

// With several column blocks (1024 columns: eight of 128) the blocks are an
// OpenMP loop that hands them out one at a time (tfm-schedule-block-loops: a
// thread whose core's tiles are shared with another runs at half speed);
// the split of A by rows keeps the static schedule. The FMA path's cache
// blocks are handed out dynamically too.
// CHECK-LABEL: llvm.func internal @tfm_amx_gemm
// CHECK: omp.wsloop {
// CHECK: omp.wsloop schedule(dynamic) {
// CHECK: llvm.x86.tdpbf16ps.internal
// FMA-LABEL: llvm.func @wide(
// FMA: omp.wsloop schedule(dynamic
// STATIC-LABEL: llvm.func @wide(
// STATIC-NOT: schedule(dynamic
// STATIC: llvm.func @_mlir_ciface_wide(
func.func @wide(%x: tensor<1x64x96xf32> {tfm.input = "x"}, %w: tensor<96x1024xf32> {tfm.param = "w"}) -> tensor<1x64x1024xf32> {
  %y = tfm.linear %x, %w : (tensor<1x64x96xf32>, tensor<96x1024xf32>) -> tensor<1x64x1024xf32>
  return %y : tensor<1x64x1024xf32>
}

// -----

// 77 tokens: two blocks of 32 rows on full tiles, the last 13 rows on 13-row
// tiles in a function LLVM must not inline (each tile register has one
// shape per function). 40 tokens: fewer than 64 rows, the FMA path.
// CHECK-LABEL: llvm.func @prompt(
// CHECK: llvm.call @tfm_amx_gemm
// CHECK-LABEL: llvm.func @short(
// CHECK-NOT: tfm_amx_gemm
// CHECK: llvm.intr.fmuladd
// CHECK-LABEL: llvm.func internal @tfm_amx_gemm(
// CHECK: llvm.call @tfm_amx_gemm_rows
// CHECK-LABEL: llvm.func internal @tfm_amx_gemm_rows(
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: %[[ROWS:.*]] = llvm.mlir.constant(13 : i16) : i16
// CHECK: llvm.call_intrinsic "llvm.x86.tileloadd64.internal"(%[[ROWS]]
func.func @prompt(%x: tensor<1x77x96xf32> {tfm.input = "x"}, %w: tensor<96x128xf32> {tfm.param = "w"}) -> tensor<1x77x128xf32> {
  %y = tfm.linear %x, %w : (tensor<1x77x96xf32>, tensor<96x128xf32>) -> tensor<1x77x128xf32>
  return %y : tensor<1x77x128xf32>
}
func.func @short(%x: tensor<1x40x96xf32> {tfm.input = "x"}, %w: tensor<96x128xf32> {tfm.param = "w"}) -> tensor<1x40x128xf32> {
  %y = tfm.linear %x, %w : (tensor<1x40x96xf32>, tensor<96x128xf32>) -> tensor<1x40x128xf32>
  return %y : tensor<1x40x128xf32>
}

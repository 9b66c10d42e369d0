// RUN: transformer-opt %s --tfm-cpu-lower-quantized-matmuls --split-input-file | FileCheck %s

#a = affine_map<(m, j, r, b, t) -> (m, b, t)>
#v = affine_map<(m, j, r, b, t) -> (j, b, t, r)>
#s = affine_map<(m, j, r, b, t) -> (j, b, r)>
#c = affine_map<(m, j, r, b, t) -> (m, j, r)>

// An AVX2 target (256-bit vectors, FMA): 192 columns (12 panels of 16) of
// 8 rows in blocks of 128 columns (8 panels), each block one call of the
// AVX2 kernel on the operands' memrefs (cast to the declaration's fully
// dynamic types; the C interface).
// CHECK-LABEL: module attributes {tfm.cpu_target
// CHECK: func.func private @tfm_q8_0_matmul_avx2(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?x?xi8, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, index, index) attributes {llvm.emit_c_interface, tfm.nocapture}
// CHECK-LABEL: func.func @avx2
// CHECK-SAME: %[[A:.*]]: memref<8x2x32xf32>, %[[V:.*]]: memref<12x2x32x16xi8>, %[[S:.*]]: memref<12x2x16xf16>, %[[C:.*]]: memref<8x12x16xf32>
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%[[I:.*]]) in (2) {
// CHECK: %[[FIRST:.*]] = arith.muli %[[I]], %c8
// CHECK: %[[END:.*]] = arith.addi %[[FIRST]], %c8
// CHECK: %[[LAST:.*]] = arith.minui %[[END]], %c12
// CHECK: %[[CA:.*]] = memref.cast %[[A]]
// CHECK: %[[CV:.*]] = memref.cast %[[V]]
// CHECK: %[[CS:.*]] = memref.cast %[[S]]
// CHECK: %[[CC:.*]] = memref.cast %[[C]]
// CHECK: call @tfm_q8_0_matmul_avx2(%[[CA]], %[[CV]], %[[CS]], %[[CC]], %[[FIRST]], %[[LAST]])
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, vector_bits = 256 : i64}} {
func.func @avx2(%a: memref<8x2x32xf32>, %v: memref<12x2x32x16xi8>, %s: memref<12x2x16xf16>, %c: memref<8x12x16xf32>) {
  linalg.generic {indexing_maps = [#a, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %v, %s : memref<8x2x32xf32>, memref<12x2x32x16xi8>, memref<12x2x16xf16>) outs(%c : memref<8x12x16xf32>) attrs = {tfm.quantized_matmul = "q8_0"} {
  ^bb0(%x: f32, %q: i8, %d: f16, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %d : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
}

// -----

#a = affine_map<(m, j, r, b, t) -> (m, b, t)>
#v = affine_map<(m, j, r, b, t) -> (j, b, t, r)>
#s = affine_map<(m, j, r, b, t) -> (j, b, r)>
#c = affine_map<(m, j, r, b, t) -> (m, j, r)>

// AVX-512 (512-bit vectors): that kernel, panels of 32, in blocks of 128
// columns (4 panels). A C whose rows are not unit-stride is left to loops.
// CHECK: func.func private @tfm_q8_0_matmul_avx512
// CHECK-LABEL: func.func @avx512
// CHECK: scf.forall (%{{.*}}) in (2) {
// CHECK: arith.muli %{{.*}}, %c4
// CHECK: call @tfm_q8_0_matmul_avx512
// CHECK-LABEL: func.func @strided
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
module attributes {tfm.cpu_target = {cpu = "skylake-avx512", fma = true, vector_bits = 512 : i64}} {
func.func @avx512(%a: memref<32x2x32xf32>, %v: memref<8x2x32x32xi8>, %s: memref<8x2x32xf16>, %c: memref<32x8x32xf32>) {
  linalg.generic {indexing_maps = [#a, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %v, %s : memref<32x2x32xf32>, memref<8x2x32x32xi8>, memref<8x2x32xf16>) outs(%c : memref<32x8x32xf32>) attrs = {tfm.quantized_matmul = "q8_0"} {
  ^bb0(%x: f32, %q: i8, %d: f16, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %d : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
func.func @strided(%a: memref<8x2x32xf32>, %v: memref<3x2x32x32xi8>, %s: memref<3x2x32xf16>, %c: memref<8x3x32xf32, strided<[192, 64, 2]>>) {
  linalg.generic {indexing_maps = [#a, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %v, %s : memref<8x2x32xf32>, memref<3x2x32x32xi8>, memref<3x2x32xf16>) outs(%c : memref<8x3x32xf32, strided<[192, 64, 2]>>) attrs = {tfm.quantized_matmul = "q8_0"} {
  ^bb0(%x: f32, %q: i8, %d: f16, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %d : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
}

// -----

#a = affine_map<(m, j, r, b, t) -> (m, b, t)>
#v = affine_map<(m, j, r, b, t) -> (j, b, t, r)>
#s = affine_map<(m, j, r, b, t) -> (j, b, r)>
#c = affine_map<(m, j, r, b, t) -> (m, j, r)>

// A baseline x86-64 target (128-bit vectors, no FMA): the SSE2 kernel.
// CHECK-LABEL: func.func @sse2
// CHECK: call @tfm_q8_0_matmul_sse2
module attributes {tfm.cpu_target = {cpu = "x86-64", fma = false, vector_bits = 128 : i64}} {
func.func @sse2(%a: memref<1x2x32xf32>, %v: memref<12x2x32x8xi8>, %s: memref<12x2x8xf16>, %c: memref<1x12x8xf32>) {
  linalg.generic {indexing_maps = [#a, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %v, %s : memref<1x2x32xf32>, memref<12x2x32x8xi8>, memref<12x2x8xf16>) outs(%c : memref<1x12x8xf32>) attrs = {tfm.quantized_matmul = "q8_0"} {
  ^bb0(%x: f32, %q: i8, %d: f16, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %d : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
}

// -----

#a = affine_map<(m, j, r, b, t) -> (m, b, t)>
#v = affine_map<(m, j, r, b, t) -> (j, b, t, r)>
#s = affine_map<(m, j, r, b, t) -> (j, b, r)>
#c = affine_map<(m, j, r, b, t) -> (m, j, r)>

// The f32 kernels have code for panels of 8, 16 and 32 columns: a wider
// panel (64: the int8 kernels' for Q4_0 on AVX-512 VNNI, here on f32
// activations, as hand-written IR may say) is left to loops, which compute
// the same function, rather than calling a kernel that has no code for it.
// CHECK-LABEL: func.func @f32_wide_panel
// CHECK-NOT: call @tfm_q8_0_matmul
// CHECK: linalg.generic
// CHECK-SAME: tfm.quantized_matmul = "q8_0"
module attributes {tfm.cpu_target = {cpu = "cascadelake", fma = true, vector_bits = 512 : i64}} {
func.func @f32_wide_panel(%a: memref<1x2x32xf32>, %v: memref<2x2x32x64xi8>, %s: memref<2x2x64xf16>, %c: memref<1x2x64xf32>) {
  linalg.generic {indexing_maps = [#a, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %v, %s : memref<1x2x32xf32>, memref<2x2x32x64xi8>, memref<2x2x64xf16>) outs(%c : memref<1x2x64xf32>) attrs = {tfm.quantized_matmul = "q8_0"} {
  ^bb0(%x: f32, %q: i8, %d: f16, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %d : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
}

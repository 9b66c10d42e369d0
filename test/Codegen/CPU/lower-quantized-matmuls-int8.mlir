// RUN: transformer-opt %s --tfm-cpu-lower-quantized-matmuls --split-input-file | FileCheck %s

#a = affine_map<(m, j, r, b, u, i) -> (m, b, u, i)>
#amax = affine_map<(m, j, r, b, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, u, i) -> (j, b, u, r, i)>
#s = affine_map<(m, j, r, b, u, i) -> (j, b, r)>
#c = affine_map<(m, j, r, b, u, i) -> (m, j, r)>

// A Q8_0 GEMM on int8 activations (tfm.int8_activations), AVX-512 with
// VNNI: A's 8 rows are quantized once, before the column blocks, into
// three new buffers (int8 values [M, K], per-block scales and sums [M,
// K/32]) by tfm_int8_quantize_rows_avx512 (A viewed as [M, K/32, 32] and
// its blocks' largest magnitudes); each block of 128 columns (4 panels of
// 32) then calls the VNNI kernel on them, the values [J, K/32, 8, P, 4]
// and the scales.
// CHECK-DAG: func.func private @tfm_int8_quantize_rows_avx512(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xi8, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xi32, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface, tfm.nocapture}
// CHECK-DAG: func.func private @tfm_q8_0_int8_matmul_avx512(memref<?x?xi8, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xi32, strided<[?, ?], offset: ?>>, memref<?x?x?x?x?xi8, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, index, index, index, index) attributes {llvm.emit_c_interface, tfm.nocapture}
// CHECK-LABEL: func.func @vnni
// CHECK-SAME: %[[A:.*]]: memref<8x2x8x4xf32>, %[[AMAX:.*]]: memref<8x2xf32>, %[[V:.*]]: memref<8x2x8x32x4xi8>, %[[S:.*]]: memref<8x2x32xf16>, %[[C:.*]]: memref<8x8x32xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[A3:.*]] = memref.collapse_shape %[[A]] {{\[}}[0], [1], [2, 3]] : memref<8x2x8x4xf32> into memref<8x2x32xf32>
// CHECK: %[[Q:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x64xi8>
// CHECK: %[[D:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x2xf32>
// CHECK: %[[SUM:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x2xi32>
// CHECK: call @tfm_int8_quantize_rows_avx512(
// CHECK: scf.forall (%[[I:.*]]) in (2) {
// CHECK: call @tfm_q8_0_int8_matmul_avx512(
module attributes {tfm.cpu_target = {avx512_vnni = true, cpu = "cascadelake", fma = true, int8_dot = true, vector_bits = 512 : i64}} {
func.func @vnni(%a: memref<8x2x8x4xf32>, %amax: memref<8x2xf32>, %v: memref<8x2x8x32x4xi8>, %s: memref<8x2x32xf16>, %c: memref<8x8x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s : memref<8x2x8x4xf32>, memref<8x2xf32>, memref<8x2x8x32x4xi8>, memref<8x2x32xf16>) outs(%c : memref<8x8x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q8_0"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %d: f16, %acc: f32):
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

#a = affine_map<(m, j, r, b, h, u, i) -> (m, b, h, u, i)>
#amax = affine_map<(m, j, r, b, h, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, h, u, i) -> (j, b, u, r, i)>
#s = affine_map<(m, j, r, b, h, u, i) -> (j, b, r)>
#c = affine_map<(m, j, r, b, h, u, i) -> (m, j, r)>

// Q4_0 on AVX-512 VNNI in its 64-column panels: blocks of 128 columns are
// two panels; 320 columns (5 panels) take three calls, the last one panel.
// The last operands are the decode tile's accumulator vectors and the
// values' prefetch distance: a plan without `int8_decode_vectors` and the
// prefetch fields (this one) takes AVX-512's widest, 8, and 2 KiB.
// CHECK-LABEL: func.func @vnni_q4_0
// CHECK-SAME: %{{.*}}: memref<5x2x4x64x4xi8>, %{{.*}}: memref<5x2x64xf16>, %{{.*}}: memref<1x5x64xf32>
// CHECK: call @tfm_int8_quantize_rows_avx512(
// CHECK: scf.forall (%[[I:.*]]) in (3) {
// CHECK: %[[FIRST:.*]] = arith.muli %[[I]], %c2
// CHECK: %[[END:.*]] = arith.addi %[[FIRST]], %c2
// CHECK: %[[LAST:.*]] = arith.minui %[[END]], %c5
// CHECK: %[[DV:.*]] = arith.constant 8 : index
// CHECK: %[[PF:.*]] = arith.constant 2048 : index
// CHECK: call @tfm_q4_0_int8_matmul_avx512({{.*}}, %[[FIRST]], %[[LAST]], %[[DV]], %[[PF]])
module attributes {tfm.cpu_target = {avx512_vnni = true, cpu = "cascadelake", fma = true, int8_dot = true, vector_bits = 512 : i64}} {
func.func @vnni_q4_0(%a: memref<1x2x2x4x4xf32>, %amax: memref<1x2xf32>, %v: memref<5x2x4x64x4xi8>, %s: memref<5x2x64xf16>, %c: memref<1x5x64xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s : memref<1x2x2x4x4xf32>, memref<1x2xf32>, memref<5x2x4x64x4xi8>, memref<5x2x64xf16>) outs(%c : memref<1x5x64xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q4_0"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %d: f16, %acc: f32):
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

#a = affine_map<(m, j, r, b, h, u, i) -> (m, b, h, u, i)>
#amax = affine_map<(m, j, r, b, h, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, h, u, i) -> (j, b, u, r, i)>
#s = affine_map<(m, j, r, b, h, u, i) -> (j, b, r)>
#c = affine_map<(m, j, r, b, h, u, i) -> (m, j, r)>

// Q4_0 on an AVX-512 target without VNNI (Skylake-X): AVX2's int8 kernels
// on its 32-column panels; A [M, K/32, 2, 4, 4] collapsed to [M, K/32, 32].
// CHECK-LABEL: func.func @novnni
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3, 4]] : memref<1x2x2x4x4xf32> into memref<1x2x32xf32>
// CHECK: call @tfm_int8_quantize_rows_avx2(
// CHECK: call @tfm_q4_0_int8_matmul_avx2(
module attributes {tfm.cpu_target = {avx512_vnni = false, cpu = "skylake-avx512", fma = true, int8_dot = true, vector_bits = 512 : i64}} {
func.func @novnni(%a: memref<1x2x2x4x4xf32>, %amax: memref<1x2xf32>, %v: memref<4x2x4x32x4xi8>, %s: memref<4x2x32xf16>, %c: memref<1x4x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s : memref<1x2x2x4x4xf32>, memref<1x2xf32>, memref<4x2x4x32x4xi8>, memref<4x2x32xf16>) outs(%c : memref<1x4x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q4_0"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %d: f16, %acc: f32):
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

#a = affine_map<(m, j, r, b, h, u, i) -> (m, b, h, u, i)>
#amax = affine_map<(m, j, r, b, h, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, h, u, i) -> (j, b, u, r, i)>
#d = affine_map<(m, j, r, b, h, u, i) -> (j, b floordiv 8, 0, r)>
#dmin = affine_map<(m, j, r, b, h, u, i) -> (j, b floordiv 8, 1, r)>
#sc = affine_map<(m, j, r, b, h, u, i) -> (j, b, 0, r)>
#min = affine_map<(m, j, r, b, h, u, i) -> (j, b, 1, r)>
#c = affine_map<(m, j, r, b, h, u, i) -> (m, j, r)>

// Q4_K with VNNI: the kernel takes its super-blocks' D [J, K/256, 2, P]
// and sub-blocks' SC [J, K/32, 2, P] once each (the generic reads each
// twice), after the values.
// CHECK-DAG: func.func private @tfm_q4_k_int8_matmul_avx512(memref<?x?xi8, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xi32, strided<[?, ?], offset: ?>>, memref<?x?x?x?x?xi8, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf16, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xi8, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, index, index, index, index) attributes {llvm.emit_c_interface, tfm.nocapture}
// CHECK-LABEL: func.func @q4_k
// CHECK-SAME: %[[V:arg[0-9]+]]: memref<2x8x4x32x4xi8>, %[[S:arg[0-9]+]]: memref<2x1x2x32xf16>, %[[SC:arg[0-9]+]]: memref<2x8x2x32xi8>
// CHECK-NOT: linalg.generic
// CHECK: call @tfm_int8_quantize_rows_avx512(
// CHECK: scf.forall
// CHECK: %[[VC:.*]] = memref.cast %[[V]]
// CHECK: %[[SCAST:.*]] = memref.cast %[[S]]
// CHECK: %[[SCC:.*]] = memref.cast %[[SC]]
// CHECK: call @tfm_q4_k_int8_matmul_avx512(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[VC]], %[[SCAST]], %[[SCC]], %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}) :
module attributes {tfm.cpu_target = {avx512_vnni = true, cpu = "cascadelake", fma = true, int8_dot = true, vector_bits = 512 : i64}} {
func.func @q4_k(%a: memref<3x8x2x4x4xf32>, %amax: memref<3x8xf32>, %v: memref<2x8x4x32x4xi8>, %s: memref<2x1x2x32xf16>, %sc: memref<2x8x2x32xi8>, %c: memref<3x2x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #d, #dmin, #sc, #min, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s, %s, %sc, %sc : memref<3x8x2x4x4xf32>, memref<3x8xf32>, memref<2x8x4x32x4xi8>, memref<2x1x2x32xf16>, memref<2x1x2x32xf16>, memref<2x8x2x32xi8>, memref<2x8x2x32xi8>) outs(%c : memref<3x2x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q4_k"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %dh: f16, %dminh: f16, %sci: i8, %mi: i8, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %dh : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
}

// -----

#a = affine_map<(m, j, r, b, h, u, i) -> (m, b, h, u, i)>
#amax = affine_map<(m, j, r, b, h, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, h, u, i) -> (j, b, u, r, i)>
#d = affine_map<(m, j, r, b, h, u, i) -> (j, b floordiv 8, 0, r)>
#dmin = affine_map<(m, j, r, b, h, u, i) -> (j, b floordiv 8, 1, r)>
#sc = affine_map<(m, j, r, b, h, u, i) -> (j, b, 0, r)>
#min = affine_map<(m, j, r, b, h, u, i) -> (j, b, 1, r)>
#c = affine_map<(m, j, r, b, h, u, i) -> (m, j, r)>

// A Q4_K generic whose d and dmin come from different buffers is not the
// form the kernel reads: left to loops.
// CHECK-LABEL: func.func @q4_k_two_buffers
// CHECK: linalg.generic
// CHECK-NOT: call @tfm_q4_k
module attributes {tfm.cpu_target = {avx512_vnni = true, cpu = "cascadelake", fma = true, int8_dot = true, vector_bits = 512 : i64}} {
func.func @q4_k_two_buffers(%a: memref<3x8x2x4x4xf32>, %amax: memref<3x8xf32>, %v: memref<2x8x4x32x4xi8>, %s: memref<2x1x2x32xf16>, %s2: memref<2x1x2x32xf16>, %sc: memref<2x8x2x32xi8>, %c: memref<3x2x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #d, #dmin, #sc, #min, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s, %s2, %sc, %sc : memref<3x8x2x4x4xf32>, memref<3x8xf32>, memref<2x8x4x32x4xi8>, memref<2x1x2x32xf16>, memref<2x1x2x32xf16>, memref<2x8x2x32xi8>, memref<2x8x2x32xi8>) outs(%c : memref<3x2x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q4_k"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %dh: f16, %dminh: f16, %sci: i8, %mi: i8, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %dh : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
}

// -----

#a = affine_map<(m, j, r, b, h, u, i) -> (m, b, h, u, i)>
#amax = affine_map<(m, j, r, b, h, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, h, u, i) -> (j, b, u + 1 + u floordiv 2, r, i)>
#vh = affine_map<(m, j, r, b, h, u, i) -> (j, b, (u floordiv 2) * 3, r, i)>
#d = affine_map<(m, j, r, b, h, u, i) -> (j, b floordiv 8, r)>
#sc = affine_map<(m, j, r, b, h, u, i) -> (j, b * 2 + h, r)>
#c = affine_map<(m, j, r, b, h, u, i) -> (m, j, r)>

// Q6_K on AVX2 (int8 dot products, AVX2's 32-column panels): its 6-bit
// values [J, K/32, 6, P, 4] read twice (the nibbles, the high bits), then
// D [J, K/256, P] and SC [J, K/16, P]; A [M, K/32, 2, 4, 4] collapsed to
// [M, K/32, 32].
// CHECK-DAG: func.func private @tfm_q6_k_int8_matmul_avx2(memref<?x?xi8, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xi32, strided<[?, ?], offset: ?>>, memref<?x?x?x?x?xi8, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xi8, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, index, index, index, index) attributes {llvm.emit_c_interface, tfm.nocapture}
// CHECK-LABEL: func.func @q6_k
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3, 4]] : memref<2x8x2x4x4xf32> into memref<2x8x32xf32>
// CHECK: call @tfm_int8_quantize_rows_avx2(
// CHECK: call @tfm_q6_k_int8_matmul_avx2(
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, int8_dot = true, vector_bits = 256 : i64}} {
func.func @q6_k(%a: memref<2x8x2x4x4xf32>, %amax: memref<2x8xf32>, %v: memref<2x8x6x32x4xi8>, %s: memref<2x1x32xf16>, %sc: memref<2x16x32xi8>, %c: memref<2x2x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #vh, #d, #sc, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %v, %s, %sc : memref<2x8x2x4x4xf32>, memref<2x8xf32>, memref<2x8x6x32x4xi8>, memref<2x8x6x32x4xi8>, memref<2x1x32xf16>, memref<2x16x32xi8>) outs(%c : memref<2x2x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q6_k"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %qh: i8, %dh: f16, %sci: i8, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %dh : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
}

// -----

#a = affine_map<(m, j, r, b, h, u, i) -> (m, b, h, u, i)>
#amax = affine_map<(m, j, r, b, h, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, h, u, i) -> (j, b, u, r, i)>
#d = affine_map<(m, j, r, b, h, u, i) -> (j, b floordiv 8, 0, r)>
#dmin = affine_map<(m, j, r, b, h, u, i) -> (j, b floordiv 8, 1, r)>
#sc = affine_map<(m, j, r, b, h, u, i) -> (j, b, 0, r)>
#min = affine_map<(m, j, r, b, h, u, i) -> (j, b, 1, r)>
#c = affine_map<(m, j, r, b, h, u, i) -> (m, j, r)>

// A Q4_K generic whose super-block scales are not [J, K/256, 2, P] (three
// super-blocks for K = 256; the generic reads only the first): not the
// layout the kernel indexes, left to loops.
// CHECK-LABEL: func.func @q4_k_super_shape
// CHECK: linalg.generic
// CHECK-NOT: call @tfm_q4_k
module attributes {tfm.cpu_target = {avx512_vnni = true, cpu = "cascadelake", fma = true, int8_dot = true, vector_bits = 512 : i64}} {
func.func @q4_k_super_shape(%a: memref<3x8x2x4x4xf32>, %amax: memref<3x8xf32>, %v: memref<2x8x4x32x4xi8>, %s: memref<2x3x2x32xf16>, %sc: memref<2x8x2x32xi8>, %c: memref<3x2x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #d, #dmin, #sc, #min, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s, %s, %sc, %sc : memref<3x8x2x4x4xf32>, memref<3x8xf32>, memref<2x8x4x32x4xi8>, memref<2x3x2x32xf16>, memref<2x3x2x32xf16>, memref<2x8x2x32xi8>, memref<2x8x2x32xi8>) outs(%c : memref<3x2x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q4_k"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %dh: f16, %dminh: f16, %sci: i8, %mi: i8, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %dh : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
}

// -----

#a = affine_map<(m, j, r, b, u, i) -> (m, b, u, i)>
#amax = affine_map<(m, j, r, b, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, u, i) -> (j, b, u, r, i)>
#s = affine_map<(m, j, r, b, u, i) -> (j, b, r)>
#c = affine_map<(m, j, r, b, u, i) -> (m, j, r)>

// AMX-INT8 tiles planned (amx_int8, Sapphire Rapids): a Q8_0 GEMM of 8
// rows (enough for the byte formats' tile kernel) calls the `amx` kernel,
// its rows quantized by the `amx` entry; one of 4 rows stays on VNNI.
// CHECK-DAG: func.func private @tfm_q8_0_int8_matmul_amx(
// CHECK-DAG: func.func private @tfm_int8_quantize_rows_amx(
// CHECK-LABEL: func.func @amx_q8_0
// CHECK: call @tfm_int8_quantize_rows_amx(
// CHECK: scf.forall
// CHECK: call @tfm_q8_0_int8_matmul_amx(
// CHECK-LABEL: func.func @amx_q8_0_few_rows
// CHECK: call @tfm_int8_quantize_rows_avx512(
// CHECK: scf.forall
// CHECK: call @tfm_q8_0_int8_matmul_avx512(
module attributes {tfm.cpu_target = {amx_int8 = true, avx512_vnni = true, cpu = "sapphirerapids", fma = true, int8_dot = true, vector_bits = 512 : i64}} {
func.func @amx_q8_0(%a: memref<8x2x8x4xf32>, %amax: memref<8x2xf32>, %v: memref<8x2x8x32x4xi8>, %s: memref<8x2x32xf16>, %c: memref<8x8x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s : memref<8x2x8x4xf32>, memref<8x2xf32>, memref<8x2x8x32x4xi8>, memref<8x2x32xf16>) outs(%c : memref<8x8x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q8_0"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %d: f16, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %d : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
func.func @amx_q8_0_few_rows(%a: memref<4x2x8x4xf32>, %amax: memref<4x2xf32>, %v: memref<8x2x8x32x4xi8>, %s: memref<8x2x32xf16>, %c: memref<4x8x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s : memref<4x2x8x4xf32>, memref<4x2xf32>, memref<8x2x8x32x4xi8>, memref<8x2x32xf16>) outs(%c : memref<4x8x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q8_0"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %d: f16, %acc: f32):
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

#a = affine_map<(m, j, r, b, h, u, i) -> (m, b, h, u, i)>
#amax = affine_map<(m, j, r, b, h, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, h, u, i) -> (j, b, u, r, i)>
#s = affine_map<(m, j, r, b, h, u, i) -> (j, b, r)>
#c = affine_map<(m, j, r, b, h, u, i) -> (m, j, r)>

// Q4_0 (a nibble format, which the tile kernel unpacks per panel) takes
// the tiles from 32 rows; 16 rows stay on VNNI.
// CHECK-LABEL: func.func @amx_q4_0
// CHECK: call @tfm_int8_quantize_rows_amx(
// CHECK: call @tfm_q4_0_int8_matmul_amx(
// CHECK-LABEL: func.func @amx_q4_0_few_rows
// CHECK: call @tfm_int8_quantize_rows_avx512(
// CHECK: call @tfm_q4_0_int8_matmul_avx512(
module attributes {tfm.cpu_target = {amx_int8 = true, avx512_vnni = true, cpu = "sapphirerapids", fma = true, int8_dot = true, vector_bits = 512 : i64}} {
func.func @amx_q4_0(%a: memref<32x2x2x4x4xf32>, %amax: memref<32x2xf32>, %v: memref<5x2x4x64x4xi8>, %s: memref<5x2x64xf16>, %c: memref<32x5x64xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s : memref<32x2x2x4x4xf32>, memref<32x2xf32>, memref<5x2x4x64x4xi8>, memref<5x2x64xf16>) outs(%c : memref<32x5x64xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q4_0"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %d: f16, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %d : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
func.func @amx_q4_0_few_rows(%a: memref<16x2x2x4x4xf32>, %amax: memref<16x2xf32>, %v: memref<5x2x4x64x4xi8>, %s: memref<5x2x64xf16>, %c: memref<16x5x64xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s : memref<16x2x2x4x4xf32>, memref<16x2xf32>, memref<5x2x4x64x4xi8>, memref<5x2x64xf16>) outs(%c : memref<16x5x64xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q4_0"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %d: f16, %acc: f32):
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

#a = affine_map<(m, j, r, b, h, u, i) -> (m, b, h, u, i)>
#amax = affine_map<(m, j, r, b, h, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, h, u, i) -> (j, b, u + 1 + u floordiv 2, r, i)>
#vh = affine_map<(m, j, r, b, h, u, i) -> (j, b, (u floordiv 2) * 3, r, i)>
#d = affine_map<(m, j, r, b, h, u, i) -> (j, b floordiv 8, r)>
#sc = affine_map<(m, j, r, b, h, u, i) -> (j, b * 2 + h, r)>
#c = affine_map<(m, j, r, b, h, u, i) -> (m, j, r)>

// Q6_K (scales per 16 K steps: two tile products a block) takes the tiles
// from 32 rows, as the nibble formats; 16 rows stay on VNNI.
// CHECK-LABEL: func.func @amx_q6_k
// CHECK: call @tfm_int8_quantize_rows_amx(
// CHECK: call @tfm_q6_k_int8_matmul_amx(
// CHECK-LABEL: func.func @amx_q6_k_few_rows
// CHECK: call @tfm_int8_quantize_rows_avx512(
// CHECK: call @tfm_q6_k_int8_matmul_avx512(
module attributes {tfm.cpu_target = {amx_int8 = true, avx512_vnni = true, cpu = "sapphirerapids", fma = true, int8_dot = true, vector_bits = 512 : i64}} {
func.func @amx_q6_k(%a: memref<64x8x2x4x4xf32>, %amax: memref<64x8xf32>, %v: memref<2x8x6x32x4xi8>, %s: memref<2x1x32xf16>, %sc: memref<2x16x32xi8>, %c: memref<64x2x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #vh, #d, #sc, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %v, %s, %sc : memref<64x8x2x4x4xf32>, memref<64x8xf32>, memref<2x8x6x32x4xi8>, memref<2x8x6x32x4xi8>, memref<2x1x32xf16>, memref<2x16x32xi8>) outs(%c : memref<64x2x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q6_k"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %qh: i8, %dh: f16, %sci: i8, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %dh : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
func.func @amx_q6_k_few_rows(%a: memref<16x8x2x4x4xf32>, %amax: memref<16x8xf32>, %v: memref<2x8x6x32x4xi8>, %s: memref<2x1x32xf16>, %sc: memref<2x16x32xi8>, %c: memref<16x2x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #vh, #d, #sc, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %v, %s, %sc : memref<16x8x2x4x4xf32>, memref<16x8xf32>, memref<2x8x6x32x4xi8>, memref<2x8x6x32x4xi8>, memref<2x1x32xf16>, memref<2x16x32xi8>) outs(%c : memref<16x2x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q6_k"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %qh: i8, %dh: f16, %sci: i8, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %dh : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
}

// -----

#a = affine_map<(m, j, r, b, u, i) -> (m, b, u, i)>
#amax = affine_map<(m, j, r, b, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, u, i) -> (j, b, u, r, i)>
#d = affine_map<(m, j, r, b, u, i) -> (j, b floordiv 8, 0, r)>
#dmin = affine_map<(m, j, r, b, u, i) -> (j, b floordiv 8, 1, r)>
#sc = affine_map<(m, j, r, b, u, i) -> (j, b, 0, r)>
#min = affine_map<(m, j, r, b, u, i) -> (j, b, 1, r)>
#c = affine_map<(m, j, r, b, u, i) -> (m, j, r)>

// Q5_K (its values a byte each, read in place) takes the tiles from 8 rows
// as Q8_0 does; 4 rows stay on VNNI.
// CHECK-LABEL: func.func @amx_q5_k
// CHECK: call @tfm_int8_quantize_rows_amx(
// CHECK: call @tfm_q5_k_int8_matmul_amx(
// CHECK-LABEL: func.func @amx_q5_k_few_rows
// CHECK: call @tfm_int8_quantize_rows_avx512(
// CHECK: call @tfm_q5_k_int8_matmul_avx512(
module attributes {tfm.cpu_target = {amx_int8 = true, avx512_vnni = true, cpu = "sapphirerapids", fma = true, int8_dot = true, vector_bits = 512 : i64}} {
func.func @amx_q5_k(%a: memref<8x8x8x4xf32>, %amax: memref<8x8xf32>, %v: memref<2x8x8x32x4xi8>, %s: memref<2x1x2x32xf16>, %sc: memref<2x8x2x32xi8>, %c: memref<8x2x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #d, #dmin, #sc, #min, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s, %s, %sc, %sc : memref<8x8x8x4xf32>, memref<8x8xf32>, memref<2x8x8x32x4xi8>, memref<2x1x2x32xf16>, memref<2x1x2x32xf16>, memref<2x8x2x32xi8>, memref<2x8x2x32xi8>) outs(%c : memref<8x2x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q5_k"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %dh: f16, %dminh: f16, %sci: i8, %mi: i8, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %dh : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
func.func @amx_q5_k_few_rows(%a: memref<4x8x8x4xf32>, %amax: memref<4x8xf32>, %v: memref<2x8x8x32x4xi8>, %s: memref<2x1x2x32xf16>, %sc: memref<2x8x2x32xi8>, %c: memref<4x2x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #d, #dmin, #sc, #min, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s, %s, %sc, %sc : memref<4x8x8x4xf32>, memref<4x8xf32>, memref<2x8x8x32x4xi8>, memref<2x1x2x32xf16>, memref<2x1x2x32xf16>, memref<2x8x2x32xi8>, memref<2x8x2x32xi8>) outs(%c : memref<4x2x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q5_k"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %dh: f16, %dminh: f16, %sci: i8, %mi: i8, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %dh : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
}

// -----

#a = affine_map<(m, j, r, b, h, u, i) -> (m, b, h, u, i)>
#amax = affine_map<(m, j, r, b, h, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, h, u, i) -> (j, b, u, r, i)>
#d = affine_map<(m, j, r, b, h, u, i) -> (j, b floordiv 8, 0, r)>
#dmin = affine_map<(m, j, r, b, h, u, i) -> (j, b floordiv 8, 1, r)>
#sc = affine_map<(m, j, r, b, h, u, i) -> (j, b, 0, r)>
#min = affine_map<(m, j, r, b, h, u, i) -> (j, b, 1, r)>
#c = affine_map<(m, j, r, b, h, u, i) -> (m, j, r)>

// Q4_K (nibbles, unpacked by the tile kernel) from 32 rows, as Q4_0; 8
// rows (enough for Q5_K) stay on VNNI.
// CHECK-LABEL: func.func @amx_q4_k
// CHECK: call @tfm_int8_quantize_rows_amx(
// CHECK: call @tfm_q4_k_int8_matmul_amx(
// CHECK-LABEL: func.func @amx_q4_k_few_rows
// CHECK: call @tfm_int8_quantize_rows_avx512(
// CHECK: call @tfm_q4_k_int8_matmul_avx512(
module attributes {tfm.cpu_target = {amx_int8 = true, avx512_vnni = true, cpu = "sapphirerapids", fma = true, int8_dot = true, vector_bits = 512 : i64}} {
func.func @amx_q4_k(%a: memref<32x8x2x4x4xf32>, %amax: memref<32x8xf32>, %v: memref<2x8x4x32x4xi8>, %s: memref<2x1x2x32xf16>, %sc: memref<2x8x2x32xi8>, %c: memref<32x2x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #d, #dmin, #sc, #min, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s, %s, %sc, %sc : memref<32x8x2x4x4xf32>, memref<32x8xf32>, memref<2x8x4x32x4xi8>, memref<2x1x2x32xf16>, memref<2x1x2x32xf16>, memref<2x8x2x32xi8>, memref<2x8x2x32xi8>) outs(%c : memref<32x2x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q4_k"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %dh: f16, %dminh: f16, %sci: i8, %mi: i8, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %dh : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
func.func @amx_q4_k_few_rows(%a: memref<8x8x2x4x4xf32>, %amax: memref<8x8xf32>, %v: memref<2x8x4x32x4xi8>, %s: memref<2x1x2x32xf16>, %sc: memref<2x8x2x32xi8>, %c: memref<8x2x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #d, #dmin, #sc, #min, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s, %s, %sc, %sc : memref<8x8x2x4x4xf32>, memref<8x8xf32>, memref<2x8x4x32x4xi8>, memref<2x1x2x32xf16>, memref<2x1x2x32xf16>, memref<2x8x2x32xi8>, memref<2x8x2x32xi8>) outs(%c : memref<8x2x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q4_k"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %dh: f16, %dminh: f16, %sci: i8, %mi: i8, %acc: f32):
    %qf = arith.sitofp %q : i8 to f32
    %df = arith.extf %dh : f16 to f32
    %w = arith.mulf %qf, %df : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
}

// -----

#a = affine_map<(m, j, r, b, h, u, i) -> (m, b, h, u, i)>
#amax = affine_map<(m, j, r, b, h, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, h, u, i) -> (j, b, u, r, i)>
#s = affine_map<(m, j, r, b, h, u, i) -> (j, b, r)>
#c = affine_map<(m, j, r, b, h, u, i) -> (m, j, r)>

// The plan's decode accumulators (tfm-cpu-configure writes 4 for AMD's Zen
// cores: one 64-column panel streamed at a time) reach every call, and its
// prefetch distance for the format's kind: Q4_0's values packed below a
// byte a step take `int8_prefetch_packed`.
// CHECK-LABEL: func.func @zen4_q4_0
// CHECK: scf.forall
// CHECK: %[[DV:.*]] = arith.constant 4 : index
// CHECK: %[[PF:.*]] = arith.constant 8192 : index
// CHECK: call @tfm_q4_0_int8_matmul_avx512({{.*}}, %[[DV]], %[[PF]])
module attributes {tfm.cpu_target = {avx512_vnni = true, cpu = "znver4", fma = true, int8_decode_vectors = 4 : i64, int8_dot = true, int8_prefetch_bytewise = 0 : i64, int8_prefetch_packed = 8192 : i64, vector_bits = 512 : i64}} {
func.func @zen4_q4_0(%a: memref<1x2x2x4x4xf32>, %amax: memref<1x2xf32>, %v: memref<5x2x4x64x4xi8>, %s: memref<5x2x64xf16>, %c: memref<1x5x64xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s : memref<1x2x2x4x4xf32>, memref<1x2xf32>, memref<5x2x4x64x4xi8>, memref<5x2x64xf16>) outs(%c : memref<1x5x64xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q4_0"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %d: f16, %acc: f32):
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

#a = affine_map<(m, j, r, b, u, i) -> (m, b, u, i)>
#amax = affine_map<(m, j, r, b, u, i) -> (m, b)>
#v = affine_map<(m, j, r, b, u, i) -> (j, b, u, r, i)>
#s = affine_map<(m, j, r, b, u, i) -> (j, b, r)>
#c = affine_map<(m, j, r, b, u, i) -> (m, j, r)>

// Q8_0's values, a byte a step, take the plan's `int8_prefetch_bytewise`
// (the same plan as above, whose two distances differ).
// CHECK-LABEL: func.func @zen4_q8_0
// CHECK: scf.forall
// CHECK: %[[LAST:.*]] = arith.minui
// CHECK: %[[DV:.*]] = arith.constant 4 : index
// CHECK: %[[PF:.*]] = arith.constant 0 : index
// CHECK: call @tfm_q8_0_int8_matmul_avx512({{.*}}, %[[LAST]], %[[DV]], %[[PF]])
module attributes {tfm.cpu_target = {avx512_vnni = true, cpu = "znver4", fma = true, int8_decode_vectors = 4 : i64, int8_dot = true, int8_prefetch_bytewise = 0 : i64, int8_prefetch_packed = 8192 : i64, vector_bits = 512 : i64}} {
func.func @zen4_q8_0(%a: memref<1x2x8x4xf32>, %amax: memref<1x2xf32>, %v: memref<4x2x8x32x4xi8>, %s: memref<4x2x32xf16>, %c: memref<1x4x32xf32>) {
  linalg.generic {indexing_maps = [#a, #amax, #v, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %amax, %v, %s : memref<1x2x8x4xf32>, memref<1x2xf32>, memref<4x2x8x32x4xi8>, memref<4x2x32xf16>) outs(%c : memref<1x4x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q8_0"} {
  ^bb0(%x: f32, %m: f32, %q: i8, %d: f16, %acc: f32):
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

// RUN: transformer-opt %s --tfm-cpu-amx-contractions=choice=measured --split-input-file -verify-diagnostics | FileCheck %s
// RUN: transformer-opt %s --tfm-cpu-amx-contractions=parallel=0 --split-input-file -verify-diagnostics | FileCheck %s --check-prefix=SERIAL
// RUN: transformer-opt %s --tfm-cpu-amx-contractions --split-input-file -verify-diagnostics | FileCheck %s --check-prefix=TILES
// RUN: transformer-opt %s --tfm-cpu-amx-contractions=choice=fma --split-input-file -verify-diagnostics | FileCheck %s --check-prefix=FMA
// RUN: not transformer-opt %s --tfm-cpu-amx-contractions=choice=fast --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: tfm-cpu-amx-contractions: choice must be measured, tiles or fma, not 'fast'

// A packed GEMM planned for AMX tiles, C[64, 128] += A[64, 96] * B[96, 128]
// (B as two 64-column panels): A is split into three bf16 parts, in 16 x 32
// tiles, once (4 x 3 tiles a part); B's parts are converted by the thread
// that owns a block (one block of 128 columns, K blocks of 32: the planned
// 64 does not divide 96), into that thread's buffer (one per OpenMP thread;
// one in all without `parallel`), with the K pairs interleaved; each 32 x 32
// block of C
// is four f32 tiles, carried over the K block (one step here) through the
// six part products of each step: 24 tile multiplies, then stored. The code
// asks Linux for the tiles first. A second GEMM of the same shape calls the
// same kernel.
// The GEMM becomes a call of a kernel function (one per shape and operand
// types, shared by every GEMM that has them: below), the parts' buffers
// allocated by the caller (for the workspace plan).
// With choice=measured each block of columns is timed (the cycle
// counter, from an llvm.func the buffer passes need not analyse) on the
// path the thread's row of the kernel's costs picks: on tiles as above, or
// with f32 FMAs from A and the panels (strips of 12 rows, the last of 4,
// 32 columns, A copied once per call into strips of 12 rows, Ap[m / 12, k,
// m % 12]); the time goes back into the costs. choice=tiles (the default)
// and choice=fma emit one path and no costs (tiles: no Ap; fma: no As
// written).
// CHECK-DAG: memref.global "private" @tfm_amx_costs : memref<256x8xi64> = dense<0>
// CHECK-DAG: llvm.func internal @tfm_read_cycles() -> i64
// CHECK-DAG: llvm.call_intrinsic "llvm.readcyclecounter"() : () -> i64
// CHECK-DAG: func.func private @arch_prctl(i32, i64) -> i32
// CHECK-DAG: func.func private @omp_get_max_threads() -> i32
// CHECK-DAG: func.func private @omp_get_thread_num() -> i32
// CHECK-LABEL: func.func @gemm
// CHECK-NOT: linalg.generic
// CHECK: %[[AS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x4x3x16x32xbf16>
// CHECK: %[[T:.*]] = call @omp_get_max_threads() : () -> i32
// CHECK: %[[TI:.*]] = arith.index_cast %[[T]] : i32 to index
// CHECK: %[[BS:.*]] = memref.alloc(%[[TI]]) {alignment = 64 : i64} : memref<?x3x8x16x32xbf16>
// CHECK: %[[AP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<6x96x12xf32>
// CHECK: call @tfm_amx_gemm(%arg0, %arg1, %arg2, %[[AS]], %[[BS]], %[[AP]])
// CHECK: call @tfm_amx_gemm(%arg3, %arg1, %arg4,
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func private @tfm_amx_gemm(
// CHECK-SAME: %[[A:.*]]: memref<64x96xf32>, %[[P:.*]]: memref<2x96x64xf32>, %[[C:.*]]: memref<64x2x64xf32>, %[[KAS:.*]]: memref<3x4x3x16x32xbf16>, %[[KBS:.*]]: memref<?x3x8x16x32xbf16>, %[[KAP:.*]]: memref<6x96x12xf32>)
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK: call @arch_prctl(%{{.*}}, %{{.*}}) : (i32, i64) -> i32
// CHECK: scf.forall (%{{.*}}) in (64)
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store %{{.*}}, %[[KAS]]
// CHECK-COUNT-16: memref.store %{{.*}}, %[[KAP]]
// CHECK: scf.forall (%{{.*}}) in (1)
// CHECK: %[[N:.*]] = memref.dim %[[KBS]]
// CHECK: %[[LAST:.*]] = arith.subi %[[N]]
// CHECK: %[[ME:.*]] = func.call @omp_get_thread_num() : () -> i32
// CHECK: %[[MEI:.*]] = arith.index_cast %[[ME]]
// CHECK: %[[SLOT:.*]] = arith.minui %[[MEI]], %[[LAST]]
// CHECK: %[[ROW:.*]] = arith.minui %[[SLOT]], %c255
// CHECK: %[[COSTS:.*]] = memref.get_global @tfm_amx_costs : memref<256x8xi64>
// CHECK: %[[START:.*]] = llvm.call @tfm_read_cycles() : () -> i64
// CHECK: scf.if
// CHECK: vector.shuffle {{.*}} [0, 16, 1, 17,
// CHECK: vector.store %{{.*}}, %[[KBS]][%[[SLOT]],
// CHECK-COUNT-4: amx.tile_load %[[C]]{{.*}} into !amx.tile<16x16xf32>
// CHECK-COUNT-24: amx.tile_mulf
// CHECK-NOT: amx.tile_mulf
// CHECK-COUNT-4: amx.tile_store %[[C]]
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %{{.*}} to %c60 step %c12
// CHECK-COUNT-24: vector.fma
// CHECK-COUNT-8: vector.fma
// CHECK-NOT: vector.fma
// CHECK: %[[END:.*]] = llvm.call @tfm_read_cycles() : () -> i64
// CHECK: arith.subi %[[END]], %[[START]] : i64
// CHECK: memref.store %{{.*}}, %[[COSTS]][%[[ROW]], %{{.*}}] : memref<256x8xi64>
// CHECK-NOT: func.func private @tfm_amx_gemm
// TILES-NOT: x12xf32
// TILES-NOT: tfm_amx_costs
// TILES-NOT: scf.if
// TILES-NOT: vector.fma
// TILES: amx.tile_mulf
// TILES-NOT: vector.fma
// FMA-NOT: tfm_amx_costs
// FMA-NOT: xbf16>
// FMA-NOT: arch_prctl
// FMA-NOT: arith.truncf
// FMA-NOT: amx.tile_mulf
// FMA: vector.fma
// FMA-NOT: amx.tile_mulf
// SERIAL-NOT: omp_get
// SERIAL: memref.alloc() {alignment = 64 : i64} : memref<1x3x8x16x32xbf16>
// SERIAL-NOT: omp_get
#a = affine_map<(m, j, r, k) -> (m, k)>
#p = affine_map<(m, j, r, k) -> (j, k, r)>
#c = affine_map<(m, j, r, k) -> (m, j, r)>
func.func @gemm(%a: memref<64x96xf32>, %p: memref<2x96x64xf32>, %c: memref<64x2x64xf32>,
                %a2: memref<64x96xf32>, %c2: memref<64x2x64xf32>) {
  linalg.generic {indexing_maps = [#a, #p, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %p : memref<64x96xf32>, memref<2x96x64xf32>) outs(%c : memref<64x2x64xf32>)
      attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128, amx_block_depth = 64>} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#a, #p, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a2, %p : memref<64x96xf32>, memref<2x96x64xf32>) outs(%c2 : memref<64x2x64xf32>)
      attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128, amx_block_depth = 64>} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Not for AMX tiles: 40 rows (fewer than 64: B's conversion would cost more
// than the tiles save), and a GEMM without the plan's `amx` field. Both stay as they are (the FMA path had them).
// CHECK-LABEL: func.func @not_planned
// CHECK-NOT: amx.
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: amx.
#a = affine_map<(m, j, r, k) -> (m, k)>
#p = affine_map<(m, j, r, k) -> (j, k, r)>
#c = affine_map<(m, j, r, k) -> (m, j, r)>
func.func @not_planned(%a: memref<40x96xf32>, %p: memref<2x96x64xf32>, %c: memref<40x2x64xf32>,
                       %a2: memref<64x96xf32>, %c2: memref<64x2x64xf32>) {
  linalg.generic {indexing_maps = [#a, #p, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %p : memref<40x96xf32>, memref<2x96x64xf32>) outs(%c : memref<40x2x64xf32>)
      attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 5, register_cols = 64, block_rows = 40, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128, amx_block_depth = 64>} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#a, #p, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a2, %p : memref<64x96xf32>, memref<2x96x64xf32>) outs(%c2 : memref<64x2x64xf32>)
      attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32>} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// 93 rows: two blocks of 32 rows as above, then the last 29 rows in a
// function of their own (LLVM gives each tile register one shape per
// function; the 32-row blocks use all eight), kept a call: per 32 columns, a
// 16-row and a 13-row tile of C each, which load and store no row beyond 93,
// multiplied by 16- and 13-row tiles of A's parts (A's parts: 6 row tiles,
// the last one partly written).
// CHECK-LABEL: func.func private @tfm_amx_gemm(
// CHECK-SAME: %[[C:[^:]*]]: memref<93x2x64xf32>, %[[AS:[^:]*]]: memref<3x6x3x16x32xbf16>, %[[BS:[^:]*]]: memref<?x3x8x16x32xbf16>, %{{.*}}: memref<8x96x12xf32>)
// CHECK: scf.forall (%{{.*}}) in (1)
// CHECK: scf.for %[[KB:.*]] = %c0{{.*}} to %c96 step %c32
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c64 step %c32
// CHECK-COUNT-4: amx.tile_load %[[C]]{{.*}} into !amx.tile<16x16xf32>
// CHECK-COUNT-24: amx.tile_mulf
// CHECK-NOT: amx.tile_mulf
// CHECK: func.call @tfm_amx_gemm_rows(%[[AS]], %[[BS]], %[[C]], %{{.*}}, %{{.*}}, %{{.*}}, %[[KB]])
// CHECK-LABEL: func.func private @tfm_amx_gemm_rows(
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK: scf.for
// CHECK-COUNT-2: amx.tile_load %{{.*}} into !amx.tile<16x16xf32>
// CHECK-COUNT-2: amx.tile_load %{{.*}} into !amx.tile<13x16xf32>
// CHECK: amx.tile_load %{{.*}} into !amx.tile<16x32xbf16>
// CHECK: amx.tile_load %{{.*}} into !amx.tile<13x32xbf16>
// CHECK-COUNT-2: amx.tile_load %{{.*}} into !amx.tile<16x32xbf16>
// CHECK: amx.tile_mulf {{.*}} !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// CHECK-COUNT-23: amx.tile_mulf
// CHECK-NOT: amx.tile_mulf
// CHECK-COUNT-2: amx.tile_store %{{.*}} !amx.tile<16x16xf32>
// CHECK-COUNT-2: amx.tile_store %{{.*}} !amx.tile<13x16xf32>
#a = affine_map<(m, j, r, k) -> (m, k)>
#p = affine_map<(m, j, r, k) -> (j, k, r)>
#c = affine_map<(m, j, r, k) -> (m, j, r)>
func.func @gemm_rows(%a: memref<93x96xf32>, %p: memref<2x96x64xf32>, %c: memref<93x2x64xf32>) {
  linalg.generic {indexing_maps = [#a, #p, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %p : memref<93x96xf32>, memref<2x96x64xf32>) outs(%c : memref<93x2x64xf32>)
      attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128, amx_block_depth = 64>} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// tfm-cpu-split-amx-weights' form: B bound as its three bf16 parts in
// tiles' order ([3, N / 16, K / 2, 32], read as [J, panel / 16, K / 2, 16,
// 2] each), A as [M, K / 2, 2], C as [M, J, panel / 16, 16]. The kernel takes
// A, C and the three parts seen back as [M, K], [M, J, panel] and
// [N / 16, K / 2, 32]: it splits A as before but converts no B (no buffer
// of B's parts, no thread numbers, no shuffles) and loads B's tiles from the
// parts, at column tile (n0 + nt) / 16 and pair (kb + ks) / 2. There is no
// FMA path to choose (its f32 panels are not bound), so choice=measured and
// choice=fma too give tiles alone. The last 29 rows pass the three parts on to their
// function.
// CHECK-LABEL: func.func @split_weights(
// CHECK-SAME: %[[A3:[^:]*]]: memref<93x48x2xf32>, %[[S:[^:]*]]: memref<3x8x48x32xbf16>, %[[C4:[^:]*]]: memref<93x2x4x16xf32>)
// CHECK-DAG: %[[A:.*]] = memref.collapse_shape %[[A3]] {{\[}}[0], [1, 2]] : memref<93x48x2xf32> into memref<93x96xf32>
// CHECK-DAG: %[[B0:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3, 4]] : memref<2x4x48x16x2xbf16, strided<[6144, 1536, 32, 2, 1]>> into memref<8x48x32xbf16, strided<[1536, 32, 1]>>
// CHECK-DAG: %[[B2:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3, 4]] : memref<2x4x48x16x2xbf16, strided<[6144, 1536, 32, 2, 1], offset: 24576>> into memref<8x48x32xbf16, strided<[1536, 32, 1], offset: 24576>>
// CHECK-DAG: %[[C:.*]] = memref.collapse_shape %[[C4]] {{\[}}[0], [1], [2, 3]] : memref<93x2x4x16xf32> into memref<93x2x64xf32>
// CHECK: %[[AS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x6x3x16x32xbf16>
// CHECK-NOT: memref.alloc
// CHECK: call @tfm_amx_gemm(%[[A]], %[[B0]], %{{.*}}, %[[B2]], %[[C]], %[[AS]])
// CHECK-LABEL: func.func private @tfm_amx_gemm(
// CHECK-SAME: %{{[^:]*}}: memref<93x96xf32>, %[[KB0:[^:]*]]: memref<8x48x32xbf16, strided<[1536, 32, 1]>>, %[[KB1:[^:]*]]: memref<8x48x32xbf16, strided<[1536, 32, 1], offset: 12288>>, %[[KB2:[^:]*]]: memref<8x48x32xbf16, strided<[1536, 32, 1], offset: 24576>>, %[[KC:[^:]*]]: memref<93x2x64xf32>, %[[KAS:[^:]*]]: memref<3x6x3x16x32xbf16>)
// CHECK-NOT: omp_get
// CHECK-NOT: vector.shuffle
// CHECK-NOT: tfm_read_cycles
// CHECK: scf.forall (%[[BLOCK:.*]]) in (1)
// CHECK: scf.for %[[KB:.*]] = %c0{{.*}} to %c96 step %c32
// CHECK-COUNT-4: amx.tile_load %[[KC]]{{.*}} into !amx.tile<16x16xf32>
// CHECK: amx.tile_load %[[KAS]]
// CHECK: amx.tile_load %[[KB0]][%{{.*}}, %{{.*}}, %c0{{.*}}] : memref<8x48x32xbf16, strided<[1536, 32, 1]>> into !amx.tile<16x32xbf16>
// CHECK: amx.tile_load %[[KB1]]
// CHECK: amx.tile_load %[[KB2]]
// CHECK: func.call @tfm_amx_gemm_rows(%[[KAS]], %[[KB0]], %[[KB1]], %[[KB2]], %[[KC]], %{{.*}}, %{{.*}}, %{{.*}}, %[[KB]])
// CHECK-LABEL: func.func private @tfm_amx_gemm_rows(
// CHECK-SAME: memref<8x48x32xbf16, strided<[1536, 32, 1], offset: 24576>>
// CHECK-COUNT-24: amx.tile_mulf
// CHECK-NOT: amx.tile_mulf
// TILES-LABEL: func.func @split_weights(
// TILES-NOT: omp_get_max_threads
// TILES: call @tfm_amx_gemm(
// FMA-LABEL: func.func @split_weights(
// FMA: amx.tile_mulf
#a = affine_map<(m, j, rc, x, q, t) -> (m, q, t)>
#s = affine_map<(m, j, rc, x, q, t) -> (j, rc, q, x, t)>
#c = affine_map<(m, j, rc, x, q, t) -> (m, j, rc, x)>
func.func @split_weights(%a: memref<93x48x2xf32>, %s: memref<3x8x48x32xbf16>, %c: memref<93x2x4x16xf32>) {
  %v0 = memref.subview %s[0, 0, 0, 0] [1, 8, 48, 32] [1, 1, 1, 1] : memref<3x8x48x32xbf16> to memref<8x48x32xbf16, strided<[1536, 32, 1]>>
  %v1 = memref.subview %s[1, 0, 0, 0] [1, 8, 48, 32] [1, 1, 1, 1] : memref<3x8x48x32xbf16> to memref<8x48x32xbf16, strided<[1536, 32, 1], offset: 12288>>
  %v2 = memref.subview %s[2, 0, 0, 0] [1, 8, 48, 32] [1, 1, 1, 1] : memref<3x8x48x32xbf16> to memref<8x48x32xbf16, strided<[1536, 32, 1], offset: 24576>>
  %s0 = memref.expand_shape %v0 [[0, 1], [2], [3, 4]] output_shape [2, 4, 48, 16, 2] : memref<8x48x32xbf16, strided<[1536, 32, 1]>> into memref<2x4x48x16x2xbf16, strided<[6144, 1536, 32, 2, 1]>>
  %s1 = memref.expand_shape %v1 [[0, 1], [2], [3, 4]] output_shape [2, 4, 48, 16, 2] : memref<8x48x32xbf16, strided<[1536, 32, 1], offset: 12288>> into memref<2x4x48x16x2xbf16, strided<[6144, 1536, 32, 2, 1], offset: 12288>>
  %s2 = memref.expand_shape %v2 [[0, 1], [2], [3, 4]] output_shape [2, 4, 48, 16, 2] : memref<8x48x32xbf16, strided<[1536, 32, 1], offset: 24576>> into memref<2x4x48x16x2xbf16, strided<[6144, 1536, 32, 2, 1], offset: 24576>>
  linalg.generic {indexing_maps = [#a, #s, #s, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %s0, %s1, %s2 : memref<93x48x2xf32>, memref<2x4x48x16x2xbf16, strided<[6144, 1536, 32, 2, 1]>>, memref<2x4x48x16x2xbf16, strided<[6144, 1536, 32, 2, 1], offset: 12288>>, memref<2x4x48x16x2xbf16, strided<[6144, 1536, 32, 2, 1], offset: 24576>>)
      outs(%c : memref<93x2x4x16xf32>)
      attrs = {tfm.amx_weight_parts, tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128, amx_block_depth = 64>} {
  ^bb0(%x: f32, %w0: bf16, %w1: bf16, %w2: bf16, %acc: f32):
    %e0 = arith.extf %w0 : bf16 to f32
    %e1 = arith.extf %w1 : bf16 to f32
    %e01 = arith.addf %e0, %e1 : f32
    %e2 = arith.extf %w2 : bf16 to f32
    %w = arith.addf %e01, %e2 : f32
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// C's rows a dynamic stride apart cannot be loaded as tiles: the GEMM is
// left to loops, and the pass says so.
#a = affine_map<(m, j, r, k) -> (m, k)>
#p = affine_map<(m, j, r, k) -> (j, k, r)>
#c = affine_map<(m, j, r, k) -> (m, j, r)>
func.func @dynamic_stride(%a: memref<64x96xf32>, %p: memref<2x96x64xf32>, %c: memref<64x2x64xf32, strided<[?, 64, 1]>>) {
  // expected-remark @below {{C's layout is not tiles'}}
  linalg.generic {indexing_maps = [#a, #p, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %p : memref<64x96xf32>, memref<2x96x64xf32>) outs(%c : memref<64x2x64xf32, strided<[?, 64, 1]>>)
      attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128, amx_block_depth = 64>} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// The split-weight form with C's rows a dynamic stride apart: the same
// remark, the GEMM left to loops (its parts are added up there).
#a = affine_map<(m, j, rc, x, q, t) -> (m, q, t)>
#s = affine_map<(m, j, rc, x, q, t) -> (j, rc, q, x, t)>
#c = affine_map<(m, j, rc, x, q, t) -> (m, j, rc, x)>
func.func @split_dynamic_stride(%a: memref<64x48x2xf32>, %s0: memref<2x4x48x16x2xbf16>, %s1: memref<2x4x48x16x2xbf16>, %s2: memref<2x4x48x16x2xbf16>,
                                %c: memref<64x2x4x16xf32, strided<[?, 64, 16, 1]>>) {
  // expected-remark @below {{C's layout is not tiles'}}
  linalg.generic {indexing_maps = [#a, #s, #s, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %s0, %s1, %s2 : memref<64x48x2xf32>, memref<2x4x48x16x2xbf16>, memref<2x4x48x16x2xbf16>, memref<2x4x48x16x2xbf16>)
      outs(%c : memref<64x2x4x16xf32, strided<[?, 64, 16, 1]>>)
      attrs = {tfm.amx_weight_parts, tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128, amx_block_depth = 64>} {
  ^bb0(%x: f32, %w0: bf16, %w1: bf16, %w2: bf16, %acc: f32):
    %e0 = arith.extf %w0 : bf16 to f32
    %e1 = arith.extf %w1 : bf16 to f32
    %e01 = arith.addf %e0, %e1 : f32
    %e2 = arith.extf %w2 : bf16 to f32
    %w = arith.addf %e01, %e2 : f32
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A split-weight GEMM whose part holds each K pair's two rows 16 apart
// (not interleaved): it cannot be seen as tiles' rows, so the same remark.
#a = affine_map<(m, j, rc, x, q, t) -> (m, q, t)>
#s = affine_map<(m, j, rc, x, q, t) -> (j, rc, q, x, t)>
#c = affine_map<(m, j, rc, x, q, t) -> (m, j, rc, x)>
func.func @split_strided_parts(%a: memref<64x48x2xf32>, %s0: memref<2x4x48x16x2xbf16, strided<[6144, 1536, 32, 1, 16]>>, %s1: memref<2x4x48x16x2xbf16>, %s2: memref<2x4x48x16x2xbf16>,
                               %c: memref<64x2x4x16xf32>) {
  // expected-remark @below {{an operand's split-weight views do not collapse}}
  linalg.generic {indexing_maps = [#a, #s, #s, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %s0, %s1, %s2 : memref<64x48x2xf32>, memref<2x4x48x16x2xbf16, strided<[6144, 1536, 32, 1, 16]>>, memref<2x4x48x16x2xbf16>, memref<2x4x48x16x2xbf16>)
      outs(%c : memref<64x2x4x16xf32>)
      attrs = {tfm.amx_weight_parts, tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128, amx_block_depth = 64>} {
  ^bb0(%x: f32, %w0: bf16, %w1: bf16, %w2: bf16, %acc: f32):
    %e0 = arith.extf %w0 : bf16 to f32
    %e1 = arith.extf %w1 : bf16 to f32
    %e01 = arith.addf %e0, %e1 : f32
    %e2 = arith.extf %w2 : bf16 to f32
    %w = arith.addf %e01, %e2 : f32
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// The split-weight form without tfm.amx_weight_parts: nothing says its
// parts are a split of f32 weights whose high-order products may be dropped
// (here the larger part comes last), so it is not taken to tiles.
// CHECK-LABEL: func.func @unmarked_parts
// CHECK-NOT: amx.
// CHECK: linalg.generic
// CHECK-NOT: amx.
#a = affine_map<(m, j, rc, x, q, t) -> (m, q, t)>
#s = affine_map<(m, j, rc, x, q, t) -> (j, rc, q, x, t)>
#c = affine_map<(m, j, rc, x, q, t) -> (m, j, rc, x)>
func.func @unmarked_parts(%a: memref<64x48x2xf32>, %s0: memref<2x4x48x16x2xbf16>, %s1: memref<2x4x48x16x2xbf16>, %s2: memref<2x4x48x16x2xbf16>,
                          %c: memref<64x2x4x16xf32>) {
  linalg.generic {indexing_maps = [#a, #s, #s, #s, #c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %s0, %s1, %s2 : memref<64x48x2xf32>, memref<2x4x48x16x2xbf16>, memref<2x4x48x16x2xbf16>, memref<2x4x48x16x2xbf16>)
      outs(%c : memref<64x2x4x16xf32>)
      attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128, amx_block_depth = 64>} {
  ^bb0(%x: f32, %w0: bf16, %w1: bf16, %w2: bf16, %acc: f32):
    %e0 = arith.extf %w0 : bf16 to f32
    %e1 = arith.extf %w1 : bf16 to f32
    %e01 = arith.addf %e0, %e1 : f32
    %e2 = arith.extf %w2 : bf16 to f32
    %w = arith.addf %e01, %e2 : f32
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A bf16 GEMM (a bf16 model's, f32 accumulation): one part per operand, so
// A is copied into tiles' order (no split), B's K pairs interleaved per
// block (no split), and each pair of tiles multiplied once (4 tile
// multiplies a 32 x 32 block and K step, not 24; K blocks of 32 here). There is no FMA path for
// it (that reads f32), so choice=measured gives tiles alone, with no costs.
// CHECK-LABEL: func.func @gemm_bf16(
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x4x3x16x32xbf16>
// CHECK: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x1x8x16x32xbf16>
// CHECK-NOT: memref.alloc
// CHECK: call @tfm_amx_gemm(
// CHECK-LABEL: func.func private @tfm_amx_gemm(
// CHECK-SAME: memref<64x96xbf16>, %{{[^:]*}}: memref<2x96x64xbf16>
// CHECK-NOT: arith.truncf
// CHECK-NOT: tfm_read_cycles
// CHECK: vector.shuffle {{.*}} : vector<16xbf16>, vector<16xbf16>
// CHECK-COUNT-4: amx.tile_load %{{.*}} into !amx.tile<16x16xf32>
// CHECK-COUNT-4: amx.tile_load %{{.*}} into !amx.tile<16x32xbf16>
// CHECK-COUNT-4: amx.tile_mulf
// CHECK-NOT: amx.tile_mulf
// CHECK-COUNT-4: amx.tile_store
// CHECK-NOT: vector.fma
// TILES-LABEL: func.func @gemm_bf16(
// FMA-LABEL: func.func @gemm_bf16(
// FMA: amx.tile_mulf
#a = affine_map<(m, j, r, k) -> (m, k)>
#p = affine_map<(m, j, r, k) -> (j, k, r)>
#c = affine_map<(m, j, r, k) -> (m, j, r)>
func.func @gemm_bf16(%a: memref<64x96xbf16>, %p: memref<2x96x64xbf16>, %c: memref<64x2x64xf32>) {
  linalg.generic {indexing_maps = [#a, #p, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %p : memref<64x96xbf16>, memref<2x96x64xbf16>) outs(%c : memref<64x2x64xf32>)
      attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 64, block_cols = 128, block_depth = 96, dot_cols = 4, dot_depth = 32, amx_block_cols = 128, amx_block_depth = 64>} {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %we = arith.extf %w : bf16 to f32
    %0 = arith.mulf %xe, %we : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

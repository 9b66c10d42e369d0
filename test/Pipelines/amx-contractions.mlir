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
      attrs = {tfm.cpu_tiling = {amx = array<i64: 128, 64>, block = array<i64: 64, 128, 96>, dot = array<i64: 4, 32>, register = array<i64: 6, 64>}} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#a, #p, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a2, %p : memref<64x96xf32>, memref<2x96x64xf32>) outs(%c2 : memref<64x2x64xf32>)
      attrs = {tfm.cpu_tiling = {amx = array<i64: 128, 64>, block = array<i64: 64, 128, 96>, dot = array<i64: 4, 32>, register = array<i64: 6, 64>}} {
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
      attrs = {tfm.cpu_tiling = {amx = array<i64: 128, 64>, block = array<i64: 40, 128, 96>, dot = array<i64: 4, 32>, register = array<i64: 5, 64>}} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#a, #p, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a2, %p : memref<64x96xf32>, memref<2x96x64xf32>) outs(%c2 : memref<64x2x64xf32>)
      attrs = {tfm.cpu_tiling = {block = array<i64: 64, 128, 96>, dot = array<i64: 4, 32>, register = array<i64: 6, 64>}} {
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
      attrs = {tfm.cpu_tiling = {amx = array<i64: 128, 64>, block = array<i64: 64, 128, 96>, dot = array<i64: 4, 32>, register = array<i64: 6, 64>}} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
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
      attrs = {tfm.cpu_tiling = {amx = array<i64: 128, 64>, block = array<i64: 64, 128, 96>, dot = array<i64: 4, 32>, register = array<i64: 6, 64>}} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %0 = arith.mulf %x, %w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

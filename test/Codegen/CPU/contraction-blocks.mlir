// RUN: transformer-opt %s --split-input-file --tfm-tile-and-vectorize-contractions --canonicalize | FileCheck %s

// Cache blocks divide the extent they tile. M = 516 = 2^2 x 3 x 43 with
// 6-row register tiles has no multiple of 6 between 12 and 256 that divides
// it, which gave 12-row blocks: every B block read 43 times as often as
// planned (a 516-row GEMM ran at 40% of a 512-row one). The bulk takes full
// blocks of 252 rows (the largest multiple of 6 within the planned 256) and
// the 12 rows left a block of their own.
// CHECK-LABEL: func.func @rows_516
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [504, 16] [1, 1]
// CHECK: scf.for %{{.*}} = %c0 to %c504 step %c252
// CHECK:   scf.for %{{.*}} = %c0 to %c252 step %c6
// CHECK:     vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// CHECK: tensor.extract_slice %{{.*}}[504, 0] [12, 16] [1, 1]
// CHECK: scf.for %{{.*}} = %c0 to %c12 step %c6
// CHECK:   vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @rows_516(%a: tensor<516x32xf32>, %b: tensor<32x16xf32>) -> tensor<516x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<516x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<516x16xf32>) -> tensor<516x16xf32>
    %r = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, block_rows = 256, block_cols = 256, block_depth = 256, dot_cols = 4, dot_depth = 32>}
        ins(%a, %b : tensor<516x32xf32>, tensor<32x16xf32>) outs(%f : tensor<516x16xf32>) -> tensor<516x16xf32>
    return %r : tensor<516x16xf32>
  }
}

// -----

// A divisor close to the planned block is kept: M = 512 takes two blocks of
// 256 (4-row tiles: 6 does not divide 512, 4 does and the plan's `min_rows`
// allows them), no split.
// CHECK-LABEL: func.func @rows_512
// CHECK-NOT: tensor.extract_slice %{{.*}}[0, 0] [
// CHECK: scf.for %{{.*}} = %c0 to %c512 step %c256
// CHECK:   scf.for %{{.*}} = %c0 to %c256 step %c4
// CHECK:     vector.contract {{.*}} into vector<4x16xf32>
// CHECK-NOT: vector.contract
// CHECK: return
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @rows_512(%a: tensor<512x32xf32>, %b: tensor<32x16xf32>) -> tensor<512x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<512x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<512x16xf32>) -> tensor<512x16xf32>
    %r = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, min_rows = 4, block_rows = 256, block_cols = 256, block_depth = 256, dot_cols = 4, dot_depth = 32>}
        ins(%a, %b : tensor<512x32xf32>, tensor<32x16xf32>) outs(%f : tensor<512x16xf32>) -> tensor<512x16xf32>
    return %r : tensor<512x16xf32>
  }
}

// -----

// A plan whose `min_rows` is 5 (min-register-rows=5) keeps 6-row tiles
// for M = 512: 504 rows in two blocks of 252, then a 6-row and a 2-row
// tile. A plan without `min_rows` (hand-written) takes no shorter tile
// either.
// CHECK-LABEL: func.func @rows_512_avx2
// CHECK: scf.for %{{.*}} = %c0 to %c504 step %c252
// CHECK:   scf.for %{{.*}} = %c0 to %c252 step %c6
// CHECK:     vector.contract {{.*}} into vector<6x16xf32>
// CHECK: vector.contract {{.*}} into vector<6x16xf32>
// CHECK: vector.contract {{.*}} into vector<2x16xf32>
// CHECK-NOT: vector<4x16xf32>
// CHECK-LABEL: func.func @rows_512_unstated
// CHECK-NOT: vector<4x16xf32>
// CHECK: vector.contract {{.*}} into vector<2x16xf32>
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @rows_512_avx2(%a: tensor<512x32xf32>, %b: tensor<32x16xf32>) -> tensor<512x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<512x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<512x16xf32>) -> tensor<512x16xf32>
    %r = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, min_rows = 5, block_rows = 256, block_cols = 256, block_depth = 256, dot_cols = 4, dot_depth = 32>}
        ins(%a, %b : tensor<512x32xf32>, tensor<32x16xf32>) outs(%f : tensor<512x16xf32>) -> tensor<512x16xf32>
    return %r : tensor<512x16xf32>
  }
  func.func @rows_512_unstated(%a: tensor<512x32xf32>, %b: tensor<32x16xf32>) -> tensor<512x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<512x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<512x16xf32>) -> tensor<512x16xf32>
    %r = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, block_rows = 256, block_cols = 256, block_depth = 256, dot_cols = 4, dot_depth = 32>}
        ins(%a, %b : tensor<512x32xf32>, tensor<32x16xf32>) outs(%f : tensor<512x16xf32>) -> tensor<512x16xf32>
    return %r : tensor<512x16xf32>
  }
}

// -----

// A row of A read by 8 or more register tiles (here 128 / 16 columns) is
// packed first, into 6-row panels Ap[M / 6, K, 6]: each register tile reads
// the 6 A elements of a K step from one place (Ap[m / 6, k, 0:6]) instead of
// from 6 rows K elements apart. The panel's index is computed once per
// register tile, outside its K loop.
// CHECK-LABEL: func.func @packed_rows
// CHECK-SAME: %[[A:[^:]*]]: tensor<24x32xf32>
// CHECK: %[[EXP:.*]] = tensor.expand_shape %[[A]] {{\[}}[0, 1], [2]] output_shape [4, 6, 32]
// CHECK: %[[AP:.*]] = linalg.transpose ins(%[[EXP]] : tensor<4x6x32xf32>) outs(%{{.*}} : tensor<4x32x6xf32>) permutation = [0, 2, 1]
// CHECK: scf.for
// CHECK:   %[[PANEL:.*]] = affine.apply #{{.*}}()[%{{.*}}, %{{.*}}]
// CHECK:   scf.for %{{.*}} = %c0 to %c16 step %c1
// CHECK:   %[[K:.*]] = affine.apply #{{.*}}()[%{{.*}}, %{{.*}}]
// CHECK:   %[[ROW:.*]] = vector.transfer_read %[[AP]][%[[PANEL]], %[[K]], %c0], %{{.*}} : tensor<4x32x6xf32>, vector<1x6xf32>
// CHECK:   vector.contract {{.*}} %[[ROW]], %{{.*}}, %{{.*}} : vector<1x6xf32>, vector<1x16xf32> into vector<6x16xf32>
// CHECK-NOT: tensor.extract_slice %[[A]]
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @packed_rows(%a: tensor<24x32xf32>, %b: tensor<32x128xf32>) -> tensor<24x128xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<24x128xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<24x128xf32>) -> tensor<24x128xf32>
    %r = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, block_rows = 12, block_cols = 64, block_depth = 16, dot_cols = 4, dot_depth = 32>}
        ins(%a, %b : tensor<24x32xf32>, tensor<32x128xf32>) outs(%f : tensor<24x128xf32>) -> tensor<24x128xf32>
    return %r : tensor<24x128xf32>
  }
}

// -----

// A bf16 GEMM on FMAs (no bf16 instructions: AVX2) reads its operands
// widened to f32 where a register tile would widen them again and again: A's
// panels are packed widened (one generic transposes and widens), and each K
// block of B that 4 or more register tiles of rows read (here 24 / 6) is
// widened once, into a buffer of the block, before them. The register
// tile's contraction is then f32 throughout, as in an f32 GEMM.
// CHECK-LABEL: func.func @widened_operands
// CHECK-SAME: %[[A:[^:]*]]: tensor<24x32xbf16>
// CHECK: %[[EXP:.*]] = tensor.expand_shape %[[A]]
// CHECK: %[[AP:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<4x6x32xbf16>) outs(%{{.*}} : tensor<4x32x6xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT:   arith.extf %[[IN]] : bf16 to f32
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     %[[BK:.*]] = tensor.extract_slice {{.*}} : tensor<32x64xbf16> to tensor<16x64xbf16>
// CHECK:     %[[WB:.*]] = linalg.generic {{.*}} ins(%[[BK]] : tensor<16x64xbf16>) outs(%{{.*}} : tensor<16x64xf32>)
// CHECK:     arith.extf %{{.*}} : bf16 to f32
// CHECK:     scf.for %{{.*}} = %c0 to %c24 step %c6
// CHECK-NOT:   arith.extf
// CHECK:       vector.transfer_read %[[AP]]{{.*}} : tensor<4x32x6xf32>, vector<1x6xf32>
// CHECK-NOT:   arith.extf
// CHECK:       vector.transfer_read %[[WB]]{{.*}} : tensor<16x64xf32>, vector<1x16xf32>
// CHECK-NOT:   arith.extf
// CHECK:       vector.contract {{.*}} : vector<1x6xf32>, vector<1x16xf32> into vector<6x16xf32>
// CHECK-NOT: arith.extf
#widen_a = affine_map<(m, n, k) -> (m, k)>
#widen_b = affine_map<(m, n, k) -> (k, n)>
#widen_c = affine_map<(m, n, k) -> (m, n)>
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @widened_operands(%a: tensor<24x32xbf16>, %b: tensor<32x128xbf16>) -> tensor<24x128xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<24x128xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<24x128xf32>) -> tensor<24x128xf32>
    %r = linalg.generic {indexing_maps = [#widen_a, #widen_b, #widen_c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<24x32xbf16>, tensor<32x128xbf16>) outs(%f : tensor<24x128xf32>)
        attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, block_rows = 24, block_cols = 64, block_depth = 16, dot_cols = 4, dot_depth = 32>} {
    ^bb0(%x: bf16, %w: bf16, %acc: f32):
      %x1 = arith.extf %x : bf16 to f32
      %w1 = arith.extf %w : bf16 to f32
      %m = arith.mulf %x1, %w1 : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<24x128xf32>
    return %r : tensor<24x128xf32>
  }
}

// -----

// Blocks of 12 rows are read by two register tiles of 6 rows only: B stays
// f16 and each tile widens its vectors (A's panels are still packed in f32).
// CHECK-LABEL: func.func @b_read_by_few_tiles
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x32x6xf32>)
// CHECK-NOT: tensor<16x64xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<{{.*}}xf16>, vector<1x16xf16>
// CHECK: arith.extf %{{.*}} : vector<1x16xf16> to vector<1x16xf32>
// CHECK: vector.contract {{.*}} : vector<1x6xf32>, vector<1x16xf32> into vector<6x16xf32>
#few_a = affine_map<(m, n, k) -> (m, k)>
#few_b = affine_map<(m, n, k) -> (k, n)>
#few_c = affine_map<(m, n, k) -> (m, n)>
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @b_read_by_few_tiles(%a: tensor<24x32xf16>, %b: tensor<32x128xf16>) -> tensor<24x128xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<24x128xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<24x128xf32>) -> tensor<24x128xf32>
    %r = linalg.generic {indexing_maps = [#few_a, #few_b, #few_c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<24x32xf16>, tensor<32x128xf16>) outs(%f : tensor<24x128xf32>)
        attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, block_rows = 12, block_cols = 64, block_depth = 16, dot_cols = 4, dot_depth = 32>} {
    ^bb0(%x: f16, %w: f16, %acc: f32):
      %x1 = arith.extf %x : f16 to f32
      %w1 = arith.extf %w : f16 to f32
      %m = arith.mulf %x1, %w1 : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<24x128xf32>
    return %r : tensor<24x128xf32>
  }
}

// -----

// An A read by too few register tiles to be packed (64 columns: 4 tiles of
// 16) is still read in f32: one widened copy of A before the GEMM, which
// each tile reads as an f32 GEMM does (its rows' elements broadcast from
// memory, no column of A widened in a register the plan does not count).
// CHECK-LABEL: func.func @a_widened_unpacked
// CHECK-SAME: %[[A:[^:]*]]: tensor<24x32xbf16>
// CHECK: %[[WA:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<24x32xbf16>) outs(%{{.*}} : tensor<24x32xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT: linalg.transpose
// CHECK: vector.transfer_read %{{.*}} : tensor<{{.*}}xf32>, vector<6x1xf32>
// CHECK: vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
#unpacked_a = affine_map<(m, n, k) -> (m, k)>
#unpacked_b = affine_map<(m, n, k) -> (k, n)>
#unpacked_c = affine_map<(m, n, k) -> (m, n)>
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @a_widened_unpacked(%a: tensor<24x32xbf16>, %b: tensor<32x64xbf16>) -> tensor<24x64xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<24x64xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<24x64xf32>) -> tensor<24x64xf32>
    %r = linalg.generic {indexing_maps = [#unpacked_a, #unpacked_b, #unpacked_c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<24x32xbf16>, tensor<32x64xbf16>) outs(%f : tensor<24x64xf32>)
        attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, block_rows = 24, block_cols = 64, block_depth = 16, dot_cols = 4, dot_depth = 32>} {
    ^bb0(%x: bf16, %w: bf16, %acc: f32):
      %x1 = arith.extf %x : bf16 to f32
      %w1 = arith.extf %w : bf16 to f32
      %m = arith.mulf %x1, %w1 : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<24x64xf32>
    return %r : tensor<24x64xf32>
  }
}

// -----

// No zero fill of a cache block: K = 512 in blocks of 128, and the register
// tiles of the first K block (iv == 0 of the K block loop) start from zero
// vectors instead of reading the block; later K blocks read what the
// previous one wrote.
// CHECK-LABEL: func.func @first_k_block_from_zero
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<4x64xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.forall
// CHECK:   %[[BLOCK:.*]] = tensor.extract_slice
// CHECK:   scf.for %[[KB:.*]] = %c0 to %c512 step %c128 iter_args(%{{.*}} = %[[BLOCK]])
// CHECK:     %[[FIRST:.*]] = arith.cmpi eq, %[[KB]], %c0 : index
// CHECK:     scf.for %{{.*}} = %c0 to %c8 step %c4 iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK:       %[[START:.*]] = scf.if %[[FIRST]] -> (vector<4x64xf32>) {
// CHECK:         scf.yield %[[Z]]
// CHECK:       } else {
// CHECK:         %[[OLD:.*]] = vector.transfer_read %[[ACC]]
// CHECK:         scf.yield %[[OLD]]
// CHECK:       }
// CHECK:       scf.for {{.*}} iter_args(%{{.*}} = %[[START]])
// CHECK:         vector.contract
// CHECK:       vector.transfer_write
// CHECK-NOT: linalg.fill
module attributes {tfm.cpu_target = {cpu = "znver5", fma = true, l1_bytes = 49152 : i64, l2_bytes = 1048576 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func @first_k_block_from_zero(%a: tensor<64x512xf32>, %b: tensor<512x128xf32>) -> tensor<64x128xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<64x128xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
    %r = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 64, block_rows = 32, block_cols = 64, block_depth = 128, dot_cols = 4, dot_depth = 32>}
        ins(%a, %b : tensor<64x512xf32>, tensor<512x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
    return %r : tensor<64x128xf32>
  }
}

// -----

// A zero fill that no register tile reads stays: this matmul has no plan
// (no tfm.cpu_tiling), so it is not tiled and reads its whole accumulator.
// CHECK-LABEL: func.func @unplanned_keeps_fill
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x8xf32>, tensor<8x16xf32>) outs(%[[F]] : tensor<8x16xf32>)
module attributes {tfm.cpu_target = {cpu = "znver5", fma = true, l1_bytes = 49152 : i64, l2_bytes = 1048576 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func @unplanned_keeps_fill(%a: tensor<8x8xf32>, %b: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %r = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
    return %r : tensor<8x16xf32>
  }
}

// -----

// AVX2's 4 x 24 register tile (three vectors per row) is split into one
// contraction per row and per 8-lane piece before the accumulators are
// hoisted: the K step loop carries twelve vector<1x8xf32> (one register
// each), B's row is read as three 8-lane vectors, A's four rows once, and
// no 24-wide vector is left for LLVM to legalise. The first K block (iv ==
// 0) starts all twelve from zero: no fill.
// CHECK-LABEL: func.func @three_vectors
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[KB:.*]] = %c0 to %c64 step %c32
// CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[KB]], %c0
// CHECK:   scf.for %{{.*}} = %c0 to %c8 step %c4
// CHECK:     scf.for %{{.*}} = %c0 to %c48 step %c24
// CHECK:       %{{.*}}:12 = scf.if %[[FIRST]] -> (vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>)
// CHECK:       %{{.*}}:12 = scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args({{.*}}) -> (vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>)
// CHECK:         vector.transfer_read %{{.*}} : tensor<8x64xf32>, vector<4x1xf32>
// CHECK-COUNT-3:  vector.transfer_read %{{.*}} : tensor<64x48xf32>, vector<1x8xf32>
// CHECK-COUNT-12: vector.contract {{.*}} : vector<1x1xf32>, vector<1x8xf32> into vector<1x8xf32>
// CHECK:         scf.yield
// CHECK-COUNT-12: vector.transfer_write %{{.*}} : vector<1x8xf32>, tensor<8x48xf32>
// CHECK-NOT: x24xf32>
// A B of 64 columns (attention's 64-key tiles, not packed) takes 4 x 16
// tiles, the widest multiple of a vector within 24 that divides 64, rather
// than 24-column tiles and a 16-column strip.
// CHECK-LABEL: func.func @three_vectors_64_columns
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c16
// CHECK:   vector.contract {{.*}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
// CHECK-NOT: vector.contract
// CHECK: return
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @three_vectors(%a: tensor<8x64xf32>, %b: tensor<64x48xf32>) -> tensor<8x48xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x48xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x48xf32>) -> tensor<8x48xf32>
    %r = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, min_rows = 3, block_rows = 8, block_cols = 48, block_depth = 32, dot_cols = 4, dot_depth = 32>}
        ins(%a, %b : tensor<8x64xf32>, tensor<64x48xf32>) outs(%f : tensor<8x48xf32>) -> tensor<8x48xf32>
    return %r : tensor<8x48xf32>
  }
  func.func @three_vectors_64_columns(%a: tensor<8x32xf32>, %b: tensor<32x64xf32>) -> tensor<8x64xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x64xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
    %r = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, min_rows = 3, block_rows = 8, block_cols = 64, block_depth = 32, dot_cols = 4, dot_depth = 32>}
        ins(%a, %b : tensor<8x32xf32>, tensor<32x64xf32>) outs(%f : tensor<8x64xf32>) -> tensor<8x64xf32>
    return %r : tensor<8x64xf32>
  }
}

// -----

// Threads for a GEMM inside a sequential loop (a mixture's loop over its
// experts, TfmToLinalg/MoE.cpp): its cache blocks are an scf.forall in each
// iteration, as outside any loop. Inside a loop that already runs in
// parallel (an scf.forall) they stay sequential: nested threads would only
// add fork costs.
// CHECK-LABEL: func.func @in_sequential_loop
// CHECK: scf.for
// CHECK:   scf.forall
// CHECK:     vector.contract
// CHECK-LABEL: func.func @in_parallel_loop
// CHECK: scf.forall
// CHECK-NOT: scf.forall
// CHECK:   vector.contract
// CHECK: return
module attributes {tfm.cpu_target = {cpu = "znver5", fma = true, l1_bytes = 49152 : i64, l2_bytes = 1048576 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func @in_sequential_loop(%a: tensor<64x512xf32>, %b: tensor<512x128xf32>, %n: index) -> tensor<64x128xf32> {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %e = tensor.empty() : tensor<64x128xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %f) -> (tensor<64x128xf32>) {
      %m = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 64, block_rows = 32, block_cols = 64, block_depth = 128, dot_cols = 4, dot_depth = 32>}
          ins(%a, %b : tensor<64x512xf32>, tensor<512x128xf32>) outs(%acc : tensor<64x128xf32>) -> tensor<64x128xf32>
      scf.yield %m : tensor<64x128xf32>
    }
    return %r : tensor<64x128xf32>
  }
  func.func @in_parallel_loop(%a: tensor<64x512xf32>, %b: tensor<512x128xf32>) -> tensor<2x64x128xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x64x128xf32>
    %r = scf.forall (%i) in (2) shared_outs(%out = %e) -> (tensor<2x64x128xf32>) {
      %e1 = tensor.empty() : tensor<64x128xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x128xf32>) -> tensor<64x128xf32>
      %m = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 64, block_rows = 32, block_cols = 64, block_depth = 128, dot_cols = 4, dot_depth = 32>}
          ins(%a, %b : tensor<64x512xf32>, tensor<512x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %m into %out[%i, 0, 0] [1, 64, 128] [1, 1, 1] : tensor<64x128xf32> into tensor<2x64x128xf32>
      }
    }
    return %r : tensor<2x64x128xf32>
  }
}

// -----

// A one-row GEMM on packed panels (a decode step's projection: A [1, K], B
// [J, K, nr]) reads `gemv_panels` panels in each register tile: four
// sequential streams of the weight at once, the accumulators (1 x 4 x 64)
// held over the whole K loop.
// CHECK-LABEL: func.func @gemv_panels
// CHECK: scf.for %[[J:.*]] = %c0 to %c8 step %c4
// CHECK:   vector.transfer_read {{.*}} : tensor<1x4x64xf32>, vector<1x4x64xf32>
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       vector.transfer_read %{{.*}}[%[[J]], %{{.*}}, %c0]{{.*}} : tensor<8x256x64xf32>, vector<4x1x64xf32>
// CHECK:       vector.contract {{.*}} : vector<1x1xf32>, vector<4x1x64xf32> into vector<1x4x64xf32>
#gemv_a = affine_map<(m, j, r, k) -> (m, k)>
#gemv_p = affine_map<(m, j, r, k) -> (j, k, r)>
#gemv_c = affine_map<(m, j, r, k) -> (m, j, r)>
module attributes {tfm.cpu_target = {cpu = "znver5", fma = true, l1_bytes = 49152 : i64, l2_bytes = 1048576 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func @gemv_panels(%a: tensor<1x256xf32>, %p: tensor<8x256x64xf32>) -> tensor<1x8x64xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x8x64xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
    %r = linalg.generic {indexing_maps = [#gemv_a, #gemv_p, #gemv_c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%a, %p : tensor<1x256xf32>, tensor<8x256x64xf32>) outs(%f : tensor<1x8x64xf32>)
        attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, min_rows = 4, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, gemv_panels = 4>} {
    ^bb0(%x: f32, %w: f32, %acc: f32):
      %m = arith.mulf %x, %w : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x8x64xf32>
    return %r : tensor<1x8x64xf32>
  }
}

// -----

// With bf16 pairs too: the pair-dot tile reads each of its four panels'
// pairs as a stream of its own (B's tile [4, 1, 64, 2] as [4, 128]), one
// `vdpbf16ps` per accumulator vector: 4 panels x 4 vectors.
// CHECK-LABEL: func.func @gemv_pairs_panels
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c4
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<4x1x64x2xbf16> into tensor<4x128xbf16>
// CHECK-COUNT-16: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT: vector.contract
#pairs_a = affine_map<(m, j, r, q, t) -> (m, q, t)>
#pairs_p = affine_map<(m, j, r, q, t) -> (j, q, r, t)>
#pairs_c = affine_map<(m, j, r, q, t) -> (m, j, r)>
module attributes {tfm.cpu_target = {avx512_bf16 = true, cpu = "sapphirerapids", fma = true, l1_bytes = 49152 : i64, l2_bytes = 1048576 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func @gemv_pairs_panels(%a: tensor<1x128x2xbf16>, %p: tensor<8x128x64x2xbf16>) -> tensor<1x8x64xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x8x64xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
    %r = linalg.generic {indexing_maps = [#pairs_a, #pairs_p, #pairs_c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
        ins(%a, %p : tensor<1x128x2xbf16>, tensor<8x128x64x2xbf16>) outs(%f : tensor<1x8x64xf32>)
        attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, min_rows = 4, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, gemv_panels = 4, bf16_pairs = true>} {
    ^bb0(%x: bf16, %w: bf16, %acc: f32):
      %x1 = arith.extf %x : bf16 to f32
      %w1 = arith.extf %w : bf16 to f32
      %m = arith.mulf %x1, %w1 : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x8x64xf32>
    return %r : tensor<1x8x64xf32>
  }
}

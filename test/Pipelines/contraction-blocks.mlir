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
    %r = linalg.matmul {tfm.cpu_tiling = {block = array<i64: 256, 256, 256>, dot = array<i64: 4, 32>, register = array<i64: 6, 16>}}
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
    %r = linalg.matmul {tfm.cpu_tiling = {block = array<i64: 256, 256, 256>, dot = array<i64: 4, 32>, min_rows = 4 : i64, register = array<i64: 6, 16>}}
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
    %r = linalg.matmul {tfm.cpu_tiling = {block = array<i64: 256, 256, 256>, dot = array<i64: 4, 32>, min_rows = 5 : i64, register = array<i64: 6, 16>}}
        ins(%a, %b : tensor<512x32xf32>, tensor<32x16xf32>) outs(%f : tensor<512x16xf32>) -> tensor<512x16xf32>
    return %r : tensor<512x16xf32>
  }
  func.func @rows_512_unstated(%a: tensor<512x32xf32>, %b: tensor<32x16xf32>) -> tensor<512x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<512x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<512x16xf32>) -> tensor<512x16xf32>
    %r = linalg.matmul {tfm.cpu_tiling = {block = array<i64: 256, 256, 256>, dot = array<i64: 4, 32>, register = array<i64: 6, 16>}}
        ins(%a, %b : tensor<512x32xf32>, tensor<32x16xf32>) outs(%f : tensor<512x16xf32>) -> tensor<512x16xf32>
    return %r : tensor<512x16xf32>
  }
}

// -----

// A row of A read by 8 or more register tiles (here 128 / 16 columns) is
// packed first, into 6-row panels Ap[M / 6, K, 6]: each register tile reads
// the 6 A elements of a K step from one place (Ap[m / 6, k, 0:6]) instead of
// from 6 rows K elements apart.
// CHECK-LABEL: func.func @packed_rows
// CHECK-SAME: %[[A:[^:]*]]: tensor<24x32xf32>
// CHECK: %[[EXP:.*]] = tensor.expand_shape %[[A]] {{\[}}[0, 1], [2]] output_shape [4, 6, 32]
// CHECK: %[[AP:.*]] = linalg.transpose ins(%[[EXP]] : tensor<4x6x32xf32>) outs(%{{.*}} : tensor<4x32x6xf32>) permutation = [0, 2, 1]
// CHECK: scf.for
// CHECK:   %[[PANEL:.*]] = affine.apply #{{.*}}()[%{{.*}}, %{{.*}}]
// CHECK:   %[[K:.*]] = affine.apply #{{.*}}()[%{{.*}}, %{{.*}}]
// CHECK:   %[[ROW:.*]] = vector.transfer_read %[[AP]][%[[PANEL]], %[[K]], %c0], %{{.*}} : tensor<4x32x6xf32>, vector<1x6xf32>
// CHECK:   vector.contract {{.*}} %[[ROW]], %{{.*}}, %{{.*}} : vector<1x6xf32>, vector<1x16xf32> into vector<6x16xf32>
// CHECK-NOT: tensor.extract_slice %[[A]]
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @packed_rows(%a: tensor<24x32xf32>, %b: tensor<32x128xf32>) -> tensor<24x128xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<24x128xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<24x128xf32>) -> tensor<24x128xf32>
    %r = linalg.matmul {tfm.cpu_tiling = {block = array<i64: 12, 64, 16>, dot = array<i64: 4, 32>, register = array<i64: 6, 16>}}
        ins(%a, %b : tensor<24x32xf32>, tensor<32x128xf32>) outs(%f : tensor<24x128xf32>) -> tensor<24x128xf32>
    return %r : tensor<24x128xf32>
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
    %r = linalg.matmul {tfm.cpu_tiling = {block = array<i64: 32, 64, 128>, dot = array<i64: 4, 32>, register = array<i64: 4, 64>}}
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

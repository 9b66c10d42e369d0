// RUN: transformer-opt %s --split-input-file --tfm-tile-and-vectorize-contractions | FileCheck %s

// The register tiles' accumulators leave a loop as loop-carried vectors
// when their places are provably apart (HoistAccumulators.cpp): rows and
// columns at constant offsets of one base. The pass hoists every loop of a
// function that has a contraction to tile, so each function holds one.

// Three vectors of 8: [r, 0], [r, 8] and [r + 1, 0], apart by their
// constant offsets: read before the loop, carried, written after it.
// CHECK-LABEL: func.func @apart
// CHECK-DAG: %[[R1:.*]] = affine.apply
// CHECK-DAG: vector.transfer_read %{{.*}}[%[[R:[a-z0-9]+]], %c0]
// CHECK-DAG: vector.transfer_read %{{.*}}[%[[R]], %c8]
// CHECK-DAG: vector.transfer_read %{{.*}}[%[[R1]], %c0]
// CHECK: %[[LOOP:.*]]:4 = scf.for {{.*}} -> (tensor<4x16xf32>, vector<1x8xf32>, vector<1x8xf32>, vector<1x8xf32>)
// CHECK-NOT: vector.transfer
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-DAG: vector.transfer_write %[[LOOP]]#{{[1-3]}}, %{{.*}}[%[[R]], %c0]
// CHECK-DAG: vector.transfer_write %[[LOOP]]#{{[1-3]}}, %{{.*}}[%[[R]], %c8]
// CHECK-DAG: vector.transfer_write %[[LOOP]]#{{[1-3]}}, %{{.*}}[%[[R1]], %c0]
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @apart(%t: tensor<4x16xf32>, %v: vector<1x8xf32>, %r: index, %n: index,
                   %a: tensor<12x32xf32>, %b: tensor<32x48xf32>, %c: tensor<12x48xf32>)
      -> (tensor<4x16xf32>, tensor<12x48xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %pad = arith.constant 0.0 : f32
    %r1 = affine.apply affine_map<(d0) -> (d0 + 1)>(%r)
    %out = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %t) -> (tensor<4x16xf32>) {
      %x = vector.transfer_read %acc[%r, %c0], %pad {in_bounds = [true, true]} : tensor<4x16xf32>, vector<1x8xf32>
      %y = vector.transfer_read %acc[%r, %c8], %pad {in_bounds = [true, true]} : tensor<4x16xf32>, vector<1x8xf32>
      %z = vector.transfer_read %acc[%r1, %c0], %pad {in_bounds = [true, true]} : tensor<4x16xf32>, vector<1x8xf32>
      %x2 = arith.addf %x, %v : vector<1x8xf32>
      %y2 = arith.addf %y, %v : vector<1x8xf32>
      %z2 = arith.addf %z, %v : vector<1x8xf32>
      %t1 = vector.transfer_write %x2, %acc[%r, %c0] {in_bounds = [true, true]} : vector<1x8xf32>, tensor<4x16xf32>
      %t2 = vector.transfer_write %y2, %t1[%r, %c8] {in_bounds = [true, true]} : vector<1x8xf32>, tensor<4x16xf32>
      %t3 = vector.transfer_write %z2, %t2[%r1, %c0] {in_bounds = [true, true]} : vector<1x8xf32>, tensor<4x16xf32>
      scf.yield %t3 : tensor<4x16xf32>
    }
    %m = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, block_rows = 12, block_cols = 48, block_depth = 32, dot_cols = 4, dot_depth = 32>}
        ins(%a, %b : tensor<12x32xf32>, tensor<32x48xf32>) outs(%c : tensor<12x48xf32>) -> tensor<12x48xf32>
    return %out, %m : tensor<4x16xf32>, tensor<12x48xf32>
  }
}

// -----

// A vector<1x8> at [0, 0] and a vector<8> at [0, 4] overlap in columns 4-7
// (each box's extent is its own vector's): neither pair is hoisted.
// CHECK-LABEL: func.func @overlapping
// CHECK: scf.for {{.*}} -> (tensor<4x16xf32>) {
// CHECK:   vector.transfer_read
// CHECK:   vector.transfer_read
// CHECK:   vector.transfer_write
// CHECK:   vector.transfer_write
// CHECK:   scf.yield
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @overlapping(%t: tensor<4x16xf32>, %v: vector<1x8xf32>, %w: vector<8xf32>, %n: index,
                         %a: tensor<12x32xf32>, %b: tensor<32x48xf32>, %c: tensor<12x48xf32>)
      -> (tensor<4x16xf32>, tensor<12x48xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %pad = arith.constant 0.0 : f32
    %out = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %t) -> (tensor<4x16xf32>) {
      %x = vector.transfer_read %acc[%c0, %c0], %pad {in_bounds = [true, true]} : tensor<4x16xf32>, vector<1x8xf32>
      %y = vector.transfer_read %acc[%c0, %c4], %pad {in_bounds = [true]} : tensor<4x16xf32>, vector<8xf32>
      %x2 = arith.addf %x, %v : vector<1x8xf32>
      %y2 = arith.addf %y, %w : vector<8xf32>
      %t1 = vector.transfer_write %x2, %acc[%c0, %c0] {in_bounds = [true, true]} : vector<1x8xf32>, tensor<4x16xf32>
      %t2 = vector.transfer_write %y2, %t1[%c0, %c4] {in_bounds = [true]} : vector<8xf32>, tensor<4x16xf32>
      scf.yield %t2 : tensor<4x16xf32>
    }
    %m = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, block_rows = 12, block_cols = 48, block_depth = 32, dot_cols = 4, dot_depth = 32>}
        ins(%a, %b : tensor<12x32xf32>, tensor<32x48xf32>) outs(%c : tensor<12x48xf32>) -> tensor<12x48xf32>
    return %out, %m : tensor<4x16xf32>, tensor<12x48xf32>
  }
}

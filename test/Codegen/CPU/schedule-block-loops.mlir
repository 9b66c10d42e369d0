// RUN: transformer-opt %s --tfm-schedule-block-loops --split-input-file | FileCheck %s

// Sixteen cache blocks of register tiles: handed out one at a time.
// CHECK-LABEL: func.func @blocks
// CHECK: omp.wsloop schedule(dynamic) {
// CHECK-NOT: schedule
func.func @blocks(%a: vector<16xf32>, %b: vector<16xf32>, %out: memref<16xvector<16xf32>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c16) step (%c1) {
        %acc = memref.load %out[%i] : memref<16xvector<16xf32>>
        %r = vector.fma %a, %b, %acc : vector<16xf32>
        memref.store %r, %out[%i] : memref<16xvector<16xf32>>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// 2 x 384 iterations (decode's GEMV column groups): 32 chunks of 24.
// CHECK-LABEL: func.func @many
// CHECK: %[[CHUNK:.*]] = arith.constant 24 : i32
// CHECK: omp.wsloop schedule(dynamic = %[[CHUNK]] : i32) {
#contract = {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> (k)>, affine_map<(k) -> ()>], iterator_types = ["reduction"], kind = #vector.kind<add>}
func.func @many(%a: vector<16xf32>, %b: vector<16xf32>, %out: memref<2x768xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c768 = arith.constant 768 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i, %j) : index = (%c0, %c0) to (%c2, %c768) step (%c1, %c2) {
        %acc = memref.load %out[%i, %j] : memref<2x768xf32>
        %r = vector.contract #contract %a, %b, %acc : vector<16xf32>, vector<16xf32> into f32
        memref.store %r, %out[%i, %j] : memref<2x768xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// Bounds only known at run time: one block at a time.
// CHECK-LABEL: func.func @unknown
// CHECK: omp.wsloop schedule(dynamic) {
func.func @unknown(%n: index, %a: vector<16xf32>, %b: vector<16xf32>, %out: memref<?xvector<16xf32>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        %acc = memref.load %out[%i] : memref<?xvector<16xf32>>
        %r = vector.fma %a, %b, %acc : vector<16xf32>
        memref.store %r, %out[%i] : memref<?xvector<16xf32>>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// No register tiles (an elementwise add): equal static shares.
// CHECK-LABEL: func.func @elementwise
// CHECK: omp.wsloop {
// CHECK-NOT: schedule
func.func @elementwise(%a: vector<16xf32>, %out: memref<4096xvector<16xf32>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c4096) step (%c1) {
        %x = memref.load %out[%i] : memref<4096xvector<16xf32>>
        %r = arith.addf %x, %a : vector<16xf32>
        memref.store %r, %out[%i] : memref<4096xvector<16xf32>>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

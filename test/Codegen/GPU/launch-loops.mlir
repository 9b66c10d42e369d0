// RUN: transformer-opt %s --pass-pipeline="builtin.module(func.func(tfm-gpu-launch-loops{block-size=64}),canonicalize)" -split-input-file -verify-diagnostics | FileCheck %s

// A parallel nest becomes one kernel with a thread per iteration: the 3x5
// space linearised (last dimension fastest), guarded, delinearised. The
// nested parallel loop becomes sequential (and folds away here).
// CHECK-LABEL: func.func @parallel(
// CHECK-SAME: %[[A:.*]]: memref<3x5xf32>, %[[B:.*]]: memref<3x5xf32>)
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C15:.*]] = arith.constant 15 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C1]], {{.*}} = %[[C1]], {{.*}} = %[[C1]]) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[C64]], {{.*}} = %[[C1]], {{.*}} = %[[C1]])
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[TX]], %[[C15]]
// CHECK: scf.if %[[IN]] {
// CHECK: %[[IJ:.*]]:2 = affine.delinearize_index %[[TX]] into (3, 5)
// CHECK: %[[V:.*]] = memref.load %[[A]][%[[IJ]]#0, %[[IJ]]#1]
// CHECK: memref.store %[[V]], %[[B]][%[[IJ]]#0, %[[IJ]]#1]
// CHECK-NOT: scf.parallel
func.func @parallel(%a: memref<3x5xf32>, %b: memref<3x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c3, %c5) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<3x5xf32>
    scf.parallel (%k) = (%c0) to (%c1) step (%c1) {
      memref.store %v, %b[%i, %j] : memref<3x5xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// Blocks: ceil(1000 / 64) = 16; lower bounds and steps are honoured.
// CHECK-LABEL: func.func @bounds(
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C1000:.*]] = arith.constant 1000 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[C16]],
// CHECK-SAME: threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK: arith.cmpi ult, %[[ID]], %[[C1000]]
// CHECK: %[[OFF:.*]] = arith.muli %[[ID]], %{{.*}} : index
// CHECK: %[[IV:.*]] = arith.addi %[[OFF]], %{{.*}} : index
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[IV]]]
func.func @bounds(%b: memref<3000xf32>) {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c3002 = arith.constant 3002 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c2) to (%c3002) step (%c3) {
    memref.store %f, %b[%i] : memref<3000xf32>
    scf.reduce
  }
  return
}

// -----

// A scalar computed from device memory (MoE routing counts) runs in a
// one-thread kernel and is copied back for the host loop that needs it;
// the host loop stays on the host and launches its kernels.
// CHECK-LABEL: func.func @count(
// CHECK: %[[DEV:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<1xindex>
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: %[[N:.*]] = scf.for
// CHECK: memref.load
// CHECK: memref.store %[[N]], %[[DEV]][%c0] : memref<1xindex>
// CHECK: gpu.terminator
// CHECK: %[[HOST:.*]] = memref.alloca() : memref<1xindex>
// CHECK: %[[CP:.*]] = gpu.memcpy async [%{{.*}}] %[[HOST]], %[[DEV]]
// CHECK: gpu.wait [%[[CP]]]
// CHECK: %[[COUNT:.*]] = memref.load %[[HOST]][%c0]
// CHECK: gpu.dealloc async [%{{.*}}] %[[DEV]]
// CHECK: scf.for %{{.*}} = %c0 to %[[COUNT]] step %c1 {
// CHECK-NEXT: gpu.launch
func.func @count(%m: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %n = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %c0) -> index {
    %v = memref.load %m[%i] : memref<8xf32>
    %p = arith.cmpf ogt, %v, %zero : f32
    %inc = arith.select %p, %c1, %c0 : index
    %next = arith.addi %acc, %inc : index
    scf.yield %next : index
  }
  scf.for %e = %c0 to %n step %c1 {
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      memref.store %zero, %out[%j] : memref<8xf32>
      scf.reduce
    }
  }
  return
}

// -----

func.func @reduction(%m: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{'scf.parallel' op with reductions is not supported by tfm-gpu-launch-loops}}
  %s = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    %v = memref.load %m[%i] : memref<8xf32>
    scf.reduce(%v : f32) {
    ^bb0(%l: f32, %r: f32):
      %a = arith.addf %l, %r : f32
      scf.reduce.return %a : f32
    }
  }
  return %s : f32
}

// -----

// A reduction's accumulator stays in a register across the sequential loop:
// loaded once, carried, stored once.
// CHECK-LABEL: func.func @accumulate(
// CHECK-SAME: %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8x4xf32>, %[[C:.*]]: memref<4x4xf32>)
// CHECK: %[[IJ:.*]]:2 = affine.delinearize_index
// CHECK: %[[INIT:.*]] = memref.load %[[C]][%[[IJ]]#0, %[[IJ]]#1]
// CHECK: %[[SUM:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NOT: %[[C]]
// CHECK: %[[NEXT:.*]] = arith.addf %[[ACC]], %{{.*}} : f32
// CHECK: scf.yield %[[NEXT]] : f32
// CHECK: memref.store %[[SUM]], %[[C]][%[[IJ]]#0, %[[IJ]]#1]
func.func @accumulate(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i, %k] : memref<4x8xf32>
      %y = memref.load %b[%k, %j] : memref<8x4xf32>
      %acc = memref.load %c[%i, %j] : memref<4x4xf32>
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      memref.store %s, %c[%i, %j] : memref<4x4xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Not promoted: the loop stores elsewhere too (the location could alias).
// CHECK-LABEL: func.func @two_stores(
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: memref.load
// CHECK: memref.store
// CHECK: memref.store
func.func @two_stores(%a: memref<8xf32>, %c: memref<4xf32>, %d: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      %x = memref.load %a[%k] : memref<8xf32>
      %acc = memref.load %c[%i] : memref<4xf32>
      %s = arith.addf %acc, %x : f32
      memref.store %s, %c[%i] : memref<4xf32>
      memref.store %s, %d[%k] : memref<8xf32>
    }
    scf.reduce
  }
  return
}

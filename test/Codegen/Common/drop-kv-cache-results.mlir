// RUN: transformer-opt %s --tfm-drop-kv-cache-results -split-input-file -verify-diagnostics -allow-unregistered-dialect | FileCheck %s

// After bufferization a cache result is the cache argument's buffer (through
// casts, and through a loop that hands the buffer back unchanged): the result
// is dropped, so no out-parameter is made for it, and a caller in the module
// reads the buffer it passed.
// CHECK-LABEL: func.func @step
// CHECK-SAME: -> memref<1x4xf32> {
// CHECK: return %{{.*}} : memref<1x4xf32>
func.func @step(%x: memref<1x4xf32>,
                %kc: memref<2x8xf32> {tfm.kv_cache = "0.key"},
                %vc: memref<2x8xf32> {tfm.kv_cache = "0.value"})
    -> (memref<1x4xf32>, memref<2x8xf32> {tfm.kv_cache = "0.key"},
        memref<2x8xf32> {tfm.kv_cache = "0.value"}) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %k = scf.for %i = %c0 to %c2 step %c1 iter_args(%b = %kc) -> memref<2x8xf32> {
    scf.yield %b : memref<2x8xf32>
  }
  %dyn = memref.cast %vc : memref<2x8xf32> to memref<?x8xf32>
  %v = memref.cast %dyn : memref<?x8xf32> to memref<2x8xf32>
  return %x, %k, %v : memref<1x4xf32>, memref<2x8xf32>, memref<2x8xf32>
}

// CHECK-LABEL: func.func @caller
// CHECK-SAME: (%[[X:.*]]: memref<1x4xf32>, %[[K:.*]]: memref<2x8xf32>, %[[V:.*]]: memref<2x8xf32>)
// CHECK: %[[Y:.*]] = call @step(%[[X]], %[[K]], %[[V]]) : (memref<1x4xf32>, memref<2x8xf32>, memref<2x8xf32>) -> memref<1x4xf32>
// CHECK: return %[[Y]], %[[K]], %[[V]]
func.func @caller(%x: memref<1x4xf32>, %k: memref<2x8xf32>, %v: memref<2x8xf32>)
    -> (memref<1x4xf32>, memref<2x8xf32>, memref<2x8xf32>) {
  %y, %k2, %v2 = call @step(%x, %k, %v) : (memref<1x4xf32>, memref<2x8xf32>, memref<2x8xf32>) -> (memref<1x4xf32>, memref<2x8xf32>, memref<2x8xf32>)
  return %y, %k2, %v2 : memref<1x4xf32>, memref<2x8xf32>, memref<2x8xf32>
}

// -----

// Bufferization copied the cache: refused rather than silently returning a
// buffer the caller never sees.
func.func @copied(%kc: memref<2x8xf32> {tfm.kv_cache = "0.key"})
    -> (memref<2x8xf32> {tfm.kv_cache = "0.key"}) {
  %new = memref.alloc() : memref<2x8xf32>
  memref.copy %kc, %new : memref<2x8xf32> to memref<2x8xf32>
  // expected-error @+1 {{KV cache '0.key' is not updated in place: bufferization returns a new buffer}}
  return %new : memref<2x8xf32>
}

// -----

func.func @by_pointer(%kc: memref<2x8xf32> {tfm.kv_cache = "0.key"})
    -> (memref<2x8xf32> {tfm.kv_cache = "0.key"}) {
  return %kc : memref<2x8xf32>
}
// expected-error @+1 {{cannot drop the KV-cache results of 'by_pointer': it is used by something other than func.call}}
%f = "test.use_symbol"() {callee = @by_pointer} : () -> i1

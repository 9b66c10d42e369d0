// RUN: transformer-opt %s --pass-pipeline="builtin.module(func.func(tfm-gpu-device-buffers))" -split-input-file -verify-diagnostics | FileCheck %s

// Allocations become synchronous device allocations, copies linalg.copy (a
// kernel later), and a host constant is copied to a device buffer that is
// freed before the return.
// CHECK-LABEL: func.func @buffers(
// CHECK-SAME: %[[A:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[TMP:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<4xf32>
// CHECK: gpu.wait [%[[T1]]]
// CHECK: linalg.copy ins(%[[A]] : memref<4xf32>) outs(%[[TMP]] : memref<4xf32>)
// CHECK: %[[HOST:.*]] = memref.get_global @table
// CHECK: %[[DEV:.*]], %{{.*}} = gpu.alloc async
// CHECK: %[[CP:.*]] = gpu.memcpy async [%{{.*}}] %[[DEV]], %[[HOST]]
// CHECK: gpu.wait [%[[CP]]]
// CHECK: linalg.add ins(%[[TMP]], %[[DEV]] : {{.*}}) outs(%[[OUT]] : memref<4xf32>)
// CHECK: gpu.dealloc async [%{{.*}}] %[[TMP]]
// CHECK: gpu.dealloc async [%{{.*}}] %[[DEV]]
// CHECK-NEXT: gpu.wait
// CHECK-NEXT: return
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK-NOT: memref.copy
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @buffers(%a: memref<4xf32>, %out: memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  memref.copy %a, %t : memref<4xf32> to memref<4xf32>
  %g = memref.get_global @table : memref<4xf32>
  linalg.add ins(%t, %g : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>)
  memref.dealloc %t : memref<4xf32>
  return
}

// -----

// Dynamic sizes carry over; ops already in a kernel are left alone.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[N:.*]]: index)
// CHECK: gpu.alloc async [%{{.*}}] (%[[N]]) : memref<?xf32>
// CHECK: gpu.launch
// CHECK: memref.alloca() : memref<2xf32>
func.func @dynamic(%n: index) {
  %c1 = arith.constant 1 : index
  %t = memref.alloc(%n) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %s = memref.alloca() : memref<2xf32>
    gpu.terminator
  }
  return
}

// -----

// Host code may not keep data on its own stack.
func.func @alloca() {
  // expected-error @below {{in host code: a GPU function may only allocate device memory}}
  %s = memref.alloca() : memref<2xf32>
  return
}

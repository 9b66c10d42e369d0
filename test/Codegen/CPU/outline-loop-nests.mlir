// RUN: transformer-opt %s --tfm-outline-loop-nests --split-input-file | FileCheck %s
// RUN: transformer-opt %s --tfm-outline-loop-nests --split-input-file | transformer-opt --split-input-file --convert-scf-to-cf --convert-to-llvm --tfm-finalize-outlined-loops | FileCheck %s --check-prefix=LLVM

// Sixteen top-level loop nests: each moves into a private function marked
// for no_inline, with its constants (bounds, stored value) cloned in rather
// than passed, and the original function calls them in order.
// CHECK: func.func private @many__loop0(%[[A:.*]]: memref<8xf32>) attributes {tfm.outlined_loop_nest}
// CHECK-DAG: arith.constant 8 : index
// CHECK-DAG: arith.constant 1.5
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: func.func private @many__loop15
// CHECK-LABEL: func.func @many(
// CHECK-SAME: %[[M:.*]]: memref<8xf32>
// CHECK: call @many__loop0(%[[M]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: call @many__loop1(%[[M]])
// CHECK: call @many__loop15(%[[M]])
// CHECK-NOT: scf.for
// CHECK: return

// LLVM: llvm.func internal @many__loop0({{.*}}) attributes {no_inline}
// LLVM-LABEL: llvm.func @many(
// LLVM: llvm.call @many__loop0(
// LLVM-NOT: tfm.outlined_loop_nest
func.func @many(%m: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.5 : f32
  scf.for %i0 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i0] : memref<8xf32>
  }
  scf.for %i1 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i1] : memref<8xf32>
  }
  scf.for %i2 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i2] : memref<8xf32>
  }
  scf.for %i3 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i3] : memref<8xf32>
  }
  scf.for %i4 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i4] : memref<8xf32>
  }
  scf.for %i5 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i5] : memref<8xf32>
  }
  scf.for %i6 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i6] : memref<8xf32>
  }
  scf.for %i7 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i7] : memref<8xf32>
  }
  scf.for %i8 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i8] : memref<8xf32>
  }
  scf.for %i9 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i9] : memref<8xf32>
  }
  scf.for %i10 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i10] : memref<8xf32>
  }
  scf.for %i11 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i11] : memref<8xf32>
  }
  scf.for %i12 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i12] : memref<8xf32>
  }
  scf.for %i13 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i13] : memref<8xf32>
  }
  scf.for %i14 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i14] : memref<8xf32>
  }
  scf.for %i15 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i15] : memref<8xf32>
  }
  return
}

// -----

// A few loops compile fast: left in place.
// CHECK-LABEL: func.func @few(
// CHECK: scf.for
// CHECK-NOT: call
// CHECK-NOT: __loop
// CHECK: return
func.func @few(%m: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.5 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i] : memref<8xf32>
  }
  return
}

// -----

// A function whose nests were outlined on tensors already has the rest of
// its nests outlined however few: what is left of each layer merges too.
// CHECK: func.func private @rest__loop0(%{{.*}}: memref<8xf32>) attributes {tfm.outlined_loop_nest}
// CHECK: scf.for
// CHECK-LABEL: func.func @rest(
// CHECK: call @nest(
// CHECK-NEXT: call @rest__loop0(
// CHECK-NEXT: return
func.func private @nest(%m: memref<8xf32>) attributes {tfm.outlined_loop_nest} {
  return
}
func.func @rest(%m: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.5 : f32
  call @nest(%m) : (memref<8xf32>) -> ()
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i] : memref<8xf32>
  }
  return
}

// -----

// The parallel region of a threaded loop is a nest like any other.
// CHECK: func.func private @threaded__loop15(%{{.*}}: memref<8xf32>) attributes {tfm.outlined_loop_nest}
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: omp.parallel
// CHECK-LABEL: func.func @threaded(
// CHECK: call @threaded__loop15(
// CHECK-NOT: omp.parallel
func.func @threaded(%m: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.5 : f32
  scf.for %i0 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i0] : memref<8xf32>
  }
  scf.for %i1 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i1] : memref<8xf32>
  }
  scf.for %i2 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i2] : memref<8xf32>
  }
  scf.for %i3 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i3] : memref<8xf32>
  }
  scf.for %i4 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i4] : memref<8xf32>
  }
  scf.for %i5 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i5] : memref<8xf32>
  }
  scf.for %i6 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i6] : memref<8xf32>
  }
  scf.for %i7 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i7] : memref<8xf32>
  }
  scf.for %i8 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i8] : memref<8xf32>
  }
  scf.for %i9 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i9] : memref<8xf32>
  }
  scf.for %i10 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i10] : memref<8xf32>
  }
  scf.for %i11 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i11] : memref<8xf32>
  }
  scf.for %i12 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i12] : memref<8xf32>
  }
  scf.for %i13 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i13] : memref<8xf32>
  }
  scf.for %i14 = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i14] : memref<8xf32>
  }
  omp.parallel {
    memref.store %f, %m[%c0] : memref<8xf32>
    omp.terminator
  }
  return
}

// -----

// An entry with a great many arguments is inlined into its C interface
// wrapper: SelectionDAG is slow on a call with thousands of arguments.
// LLVM: llvm.func internal @wide({{.*}}) attributes {always_inline, llvm.emit_c_interface}
// LLVM: llvm.func @_mlir_ciface_wide(
// An entry with few keeps its name.
// LLVM: llvm.func @narrow({{.*}}) attributes {llvm.emit_c_interface}
func.func @wide(%a0: memref<?xf32>, %a1: memref<?xf32>, %a2: memref<?xf32>, %a3: memref<?xf32>, %a4: memref<?xf32>, %a5: memref<?xf32>, %a6: memref<?xf32>, %a7: memref<?xf32>, %a8: memref<?xf32>, %a9: memref<?xf32>, %a10: memref<?xf32>, %a11: memref<?xf32>, %a12: memref<?xf32>) attributes {llvm.emit_c_interface} {
  return
}
func.func @narrow(%a: memref<?xf32>) attributes {llvm.emit_c_interface} {
  return
}

// RUN: transformer-opt %s --tfm-outline-loop-nests=tensors --split-input-file | FileCheck %s --check-prefix=TENSORS

// On tensors (`tensors`, before bufferization): the sixteen scf.for nests
// become functions of tensors returning the loops' results, their
// destinations passed in; a linalg op left for a pass on buffers stays.
// TENSORS: func.func private @chain__loop0(%[[D:.*]]: tensor<8xf32>) -> tensor<8xf32> attributes {tfm.outlined_loop_nest}
// TENSORS: %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[D]])
// TENSORS: return %[[R]] : tensor<8xf32>
// TENSORS-LABEL: func.func @chain(
// TENSORS: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// TENSORS: %[[F:.*]] = linalg.fill {{.*}} outs(%[[E]]
// TENSORS: %[[C0:.*]] = call @chain__loop0(%[[F]]) : (tensor<8xf32>) -> tensor<8xf32>
// TENSORS-NEXT: %[[C1:.*]] = call @chain__loop1(%[[C0]])
// TENSORS: %[[C15:.*]] = call @chain__loop15(
// TENSORS-NOT: scf.for
// TENSORS: return %[[C15]]
func.func @chain() -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.5 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r0 = scf.for %i0 = %c0 to %c8 step %c1 iter_args(%acc = %init) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i0] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r1 = scf.for %i1 = %c0 to %c8 step %c1 iter_args(%acc = %r0) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i1] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r2 = scf.for %i2 = %c0 to %c8 step %c1 iter_args(%acc = %r1) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i2] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r3 = scf.for %i3 = %c0 to %c8 step %c1 iter_args(%acc = %r2) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i3] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r4 = scf.for %i4 = %c0 to %c8 step %c1 iter_args(%acc = %r3) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i4] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r5 = scf.for %i5 = %c0 to %c8 step %c1 iter_args(%acc = %r4) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i5] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r6 = scf.for %i6 = %c0 to %c8 step %c1 iter_args(%acc = %r5) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i6] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r7 = scf.for %i7 = %c0 to %c8 step %c1 iter_args(%acc = %r6) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i7] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r8 = scf.for %i8 = %c0 to %c8 step %c1 iter_args(%acc = %r7) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i8] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r9 = scf.for %i9 = %c0 to %c8 step %c1 iter_args(%acc = %r8) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i9] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r10 = scf.for %i10 = %c0 to %c8 step %c1 iter_args(%acc = %r9) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i10] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r11 = scf.for %i11 = %c0 to %c8 step %c1 iter_args(%acc = %r10) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i11] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r12 = scf.for %i12 = %c0 to %c8 step %c1 iter_args(%acc = %r11) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i12] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r13 = scf.for %i13 = %c0 to %c8 step %c1 iter_args(%acc = %r12) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i13] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r14 = scf.for %i14 = %c0 to %c8 step %c1 iter_args(%acc = %r13) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i14] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  %r15 = scf.for %i15 = %c0 to %c8 step %c1 iter_args(%acc = %r14) -> (tensor<8xf32>) {
    %v = tensor.insert %f into %acc[%i15] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  return %r15 : tensor<8xf32>
}

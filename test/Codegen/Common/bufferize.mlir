// RUN: transformer-opt %s --tfm-bufferize --split-input-file | FileCheck %s

// A private function (a loop nest outlined on tensors) takes the layout of
// the one view its caller passes -- a column slice of the caller's argument
// -- instead of a copy of it; its destination, a fresh tensor, stays
// identity. What it wrote in place is not returned: the caller reads its own
// buffer, and collapses it without a copy.
// CHECK-LABEL: func.func private @rows(
// CHECK-SAME: %[[IN:[a-z0-9]+]]: memref<4x8xf32, strided<[16, 1], offset: 8>>
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<4x8xf32>)
// CHECK: scf.for
// CHECK: memref.load %[[IN]]
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK: return{{$}}
// CHECK-LABEL: func.func @entry(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<4x16xf32>
// CHECK: %[[SLICE:.*]] = memref.subview %[[A]][0, 8] [4, 8] [1, 1]
// CHECK: %[[BUF:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// CHECK: call @rows(%[[SLICE]], %[[BUF]])
// CHECK-NOT: memref.copy
// CHECK: memref.collapse_shape %[[BUF]]
func.func private @rows(%in: tensor<4x8xf32>, %out: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {tfm.outlined_loop_nest} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %out) -> (tensor<4x8xf32>) {
    %x = tensor.extract %in[%i, %c0] : tensor<4x8xf32>
    %y = arith.addf %x, %x : f32
    %w = tensor.insert %y into %acc[%i, %c0] : tensor<4x8xf32>
    scf.yield %w : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

func.func @entry(%a: tensor<4x16xf32> {bufferization.writable = false}) -> tensor<32xf32> {
  %slice = tensor.extract_slice %a[0, 8] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %r = call @rows(%slice, %e) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = tensor.collapse_shape %r [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  return %c : tensor<32xf32>
}

// -----

// Called with two different views, the function takes any view whose rows
// are contiguous: each call casts its own, with no copy.
// CHECK-LABEL: func.func private @rows(
// CHECK-SAME: %{{.*}}: memref<4x8xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: func.func @entry(
// CHECK-NOT: memref.copy
// CHECK: %[[S0:.*]] = memref.cast %{{.*}} : memref<4x8xf32, strided<[16, 1]>> to memref<4x8xf32, strided<[?, 1], offset: ?>>
// CHECK: call @rows(%[[S0]],
// CHECK: %[[S1:.*]] = memref.cast %{{.*}} : memref<4x8xf32, strided<[16, 1], offset: 8>> to memref<4x8xf32, strided<[?, 1], offset: ?>>
// CHECK: call @rows(%[[S1]],
// CHECK-NOT: memref.copy
// CHECK: return
func.func private @rows(%in: tensor<4x8xf32>, %out: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {tfm.outlined_loop_nest} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %out) -> (tensor<4x8xf32>) {
    %x = tensor.extract %in[%i, %c0] : tensor<4x8xf32>
    %w = tensor.insert %x into %acc[%i, %c0] : tensor<4x8xf32>
    scf.yield %w : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

func.func @entry(%a: tensor<4x16xf32> {bufferization.writable = false}) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s0 = tensor.extract_slice %a[0, 0] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %s1 = tensor.extract_slice %a[0, 8] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %r0 = call @rows(%s0, %e0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %r1 = call @rows(%s1, %e1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r0, %r1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Public functions keep the calling convention: a result that is an
// argument stays a result, and one that is a view at offset 0 with identity
// strides keeps the identity layout (a cast, not the view's type).
// CHECK-LABEL: func.func @same(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<4xf32>) -> memref<4xf32>
// CHECK: return %[[A]] : memref<4xf32>
func.func @same(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// CHECK-LABEL: func.func @rows(
// CHECK-SAME: %[[B:[a-z0-9]+]]: memref<8x8xf32>) -> memref<4x8xf32>
// CHECK: %[[V:.*]] = memref.subview %[[B]][0, 0] [4, 8] [1, 1]
// CHECK: %[[C:.*]] = memref.cast %[[V]] : memref<4x8xf32, strided<[8, 1]>> to memref<4x8xf32>
// CHECK: return %[[C]] : memref<4x8xf32>
func.func @rows(%a: tensor<8x8xf32> {bufferization.writable = false}) -> tensor<4x8xf32> {
  %s = tensor.extract_slice %a[0, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// A function whose loop fills a tensor of its own, not an argument: its
// result is a new buffer, not a caller's, so the function keeps returning
// it and the caller reads what it returns.
// CHECK-LABEL: func.func private @fresh(
// CHECK-SAME: -> memref<4xf32
// CHECK: return %{{.*}} : memref<4xf32
// CHECK-LABEL: func.func @entry(
// CHECK: %[[R:.*]] = call @fresh(
// CHECK: memref.expand_shape %[[R]]
func.func private @fresh(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tfm.outlined_loop_nest} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<4xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %e) -> (tensor<4xf32>) {
    %v = tensor.extract %x[%i] : tensor<4xf32>
    %w = tensor.insert %v into %acc[%i] : tensor<4xf32>
    scf.yield %w : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

func.func @entry(%x: tensor<4xf32> {bufferization.writable = false}) -> tensor<2x2xf32> {
  %r = call @fresh(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = tensor.expand_shape %r [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  return %c : tensor<2x2xf32>
}

// RUN: transformer-opt %s --tfm-deduplicate-outlined-functions --split-input-file | FileCheck %s

// Two layers lowered to the same loop nest over different buffers: one
// function is kept and both calls use it. A nest with another body, and a
// function that tfm-outline-loop-nests did not create, are left alone.
// CHECK: func.func private @layers__loop0(
// CHECK-NOT: func.func private @layers__loop1(
// CHECK: func.func private @layers__loop2(
// CHECK: func.func private @user_copy(
// CHECK: func.func private @user_copy_again(
// CHECK-LABEL: func.func @layers(
// CHECK-SAME: %[[A:[^:]*]]: memref<8xf32>, %[[B:[^:]*]]: memref<8xf32>
// CHECK: call @layers__loop0(%[[A]])
// CHECK-NEXT: call @layers__loop0(%[[B]])
// CHECK-NEXT: call @layers__loop2(%[[B]])
// CHECK-NEXT: call @user_copy(%[[A]])
// CHECK-NEXT: call @user_copy_again(%[[B]])
func.func private @layers__loop0(%m: memref<8xf32>) attributes {tfm.outlined_loop_nest} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.5 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i] : memref<8xf32>
  }
  return
}
// The same nest, written with other value names and at other locations.
func.func private @layers__loop1(%buffer: memref<8xf32>) attributes {tfm.outlined_loop_nest} {
  %zero = arith.constant 0 : index loc("layer1.mlir":3:4)
  %one = arith.constant 1 : index
  %eight = arith.constant 8 : index
  %value = arith.constant 1.5 : f32
  scf.for %j = %zero to %eight step %one {
    memref.store %value, %buffer[%j] : memref<8xf32>
  }
  return
}
// Another stored value: another function.
func.func private @layers__loop2(%m: memref<8xf32>) attributes {tfm.outlined_loop_nest} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 2.5 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %f, %m[%i] : memref<8xf32>
  }
  return
}
func.func private @user_copy(%m: memref<8xf32>) {
  return
}
func.func private @user_copy_again(%m: memref<8xf32>) {
  return
}
func.func @layers(%a: memref<8xf32>, %b: memref<8xf32>) {
  call @layers__loop0(%a) : (memref<8xf32>) -> ()
  call @layers__loop1(%b) : (memref<8xf32>) -> ()
  call @layers__loop2(%b) : (memref<8xf32>) -> ()
  call @user_copy(%a) : (memref<8xf32>) -> ()
  call @user_copy_again(%b) : (memref<8xf32>) -> ()
  return
}

// -----

// Same body, different types: both kept.
// CHECK: func.func private @types__loop0(%{{.*}}: memref<8xf32>)
// CHECK: func.func private @types__loop1(%{{.*}}: memref<16xf32>)
// CHECK-LABEL: func.func @types(
// CHECK: call @types__loop0(
// CHECK: call @types__loop1(
func.func private @types__loop0(%m: memref<8xf32>) attributes {tfm.outlined_loop_nest} {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.5 : f32
  memref.store %f, %m[%c0] : memref<8xf32>
  return
}
func.func private @types__loop1(%m: memref<16xf32>) attributes {tfm.outlined_loop_nest} {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.5 : f32
  memref.store %f, %m[%c0] : memref<16xf32>
  return
}
func.func @types(%a: memref<8xf32>, %b: memref<16xf32>) {
  call @types__loop0(%a) : (memref<8xf32>) -> ()
  call @types__loop1(%b) : (memref<16xf32>) -> ()
  return
}

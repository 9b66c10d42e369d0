// RUN: transformer-opt %s --tfm-hoist-loop-scratch --split-input-file | FileCheck %s

// A sequential loop's scratch: one stack slot at the function's entry,
// reused by every iteration; its deallocation goes.
// CHECK-LABEL: func.func @sequential_loop
// CHECK-NEXT: %[[S:.*]] = memref.alloca() {alignment = 64 : i64} : memref<8x64xf32>
// CHECK: scf.for
// CHECK-NEXT: memref.subview %[[S]]
// CHECK-NOT: memref.alloc(
// CHECK-NOT: memref.dealloc
func.func @sequential_loop(%n: index, %x: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloc() {alignment = 64 : i64} : memref<8x64xf32>
    %row = memref.subview %a[0, 0] [1, 64] [1, 1] : memref<8x64xf32> to memref<64xf32, strided<[1]>>
    memref.copy %x, %row : memref<64xf32> to memref<64xf32, strided<[1]>>
    memref.copy %row, %x : memref<64xf32, strided<[1]>> to memref<64xf32>
    memref.dealloc %a : memref<8x64xf32>
  }
  return
}

// -----

// A worksharing loop's scratch, in a key loop: at the entry of the
// omp.parallel region (one slot a thread); a buffer over 16 KiB stays on
// the heap, allocated there once and freed before the region ends; one over
// 1 MiB is left where it is.
// CHECK-LABEL: func.func @worksharing_loop
// CHECK: omp.parallel {
// CHECK-NEXT: %[[SMALL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<8x1xf32>
// CHECK-NEXT: %[[BIG:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x64x64xf32>
// CHECK: omp.wsloop
// CHECK: scf.for
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[SMALL]] : memref<8x1xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[BIG]] : memref<8x64x64xf32>)
// CHECK-NOT: memref.dealloc %[[SMALL]]
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<512x1024xf32>
// CHECK: memref.dealloc %{{.*}} : memref<512x1024xf32>
// CHECK: memref.dealloc %[[BIG]]
// CHECK-NEXT: omp.terminator
func.func @worksharing_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%g) : index = (%c0) to (%c4) step (%c1) {
        scf.for %k = %c0 to %n step %c1 {
          %m = memref.alloc() {alignment = 64 : i64} : memref<8x1xf32>
          linalg.fill ins(%zero : f32) outs(%m : memref<8x1xf32>)
          %s = memref.alloc() {alignment = 64 : i64} : memref<8x64x64xf32>
          linalg.fill ins(%zero : f32) outs(%s : memref<8x64x64xf32>)
          %h = memref.alloc() {alignment = 64 : i64} : memref<512x1024xf32>
          linalg.fill ins(%zero : f32) outs(%h : memref<512x1024xf32>)
          memref.dealloc %h : memref<512x1024xf32>
          memref.dealloc %s : memref<8x64x64xf32>
          memref.dealloc %m : memref<8x1xf32>
        }
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// At most 64 KiB of a scope's scratch on the stack: the fifth buffer of
// 16 KiB is hoisted on the heap.
// CHECK-LABEL: func.func @stack_budget
// CHECK-COUNT-4: memref.alloca() : memref<4096xf32>
// CHECK-NEXT: memref.alloc() : memref<4096xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK: memref.dealloc
// CHECK-NEXT: return
func.func @stack_budget(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloc() : memref<4096xf32>
    %b = memref.alloc() : memref<4096xf32>
    %c = memref.alloc() : memref<4096xf32>
    %d = memref.alloc() : memref<4096xf32>
    %e = memref.alloc() : memref<4096xf32>
    linalg.fill ins(%zero : f32) outs(%a : memref<4096xf32>)
    linalg.fill ins(%zero : f32) outs(%b : memref<4096xf32>)
    linalg.fill ins(%zero : f32) outs(%c : memref<4096xf32>)
    linalg.fill ins(%zero : f32) outs(%d : memref<4096xf32>)
    linalg.fill ins(%zero : f32) outs(%e : memref<4096xf32>)
    memref.dealloc %a : memref<4096xf32>
    memref.dealloc %b : memref<4096xf32>
    memref.dealloc %c : memref<4096xf32>
    memref.dealloc %d : memref<4096xf32>
    memref.dealloc %e : memref<4096xf32>
  }
  return
}

// -----

// Buffers that may outlive their iteration stay where they are: carried to
// the next one, passed to a call that may keep them (a callee marked
// tfm.nocapture may not: that one is hoisted), turned into an address (the
// deallocation pipeline's ownership checks), in an scf.forall (iterations
// at the same time), or not in a loop at all.
// CHECK-LABEL: func.func @stays
// CHECK: %[[B:.*]] = memref.alloca() : memref<4xf32>
// CHECK: scf.for
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: scf.for
// CHECK: memref.alloc() : memref<4xf32>
// CHECK-NEXT: call @keeps
// CHECK-NEXT: call @borrows(%[[B]])
// CHECK: memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.extract_aligned_pointer_as_index
// CHECK: scf.forall
// CHECK-NEXT: memref.alloc() : memref<4xf32>
// CHECK: memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy
// CHECK-NEXT: return
func.func private @keeps(memref<4xf32>)
func.func private @borrows(memref<4xf32>) attributes {tfm.nocapture}
func.func @stays(%n: index, %x: memref<4xf32>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = memref.alloc() : memref<4xf32>
  %carried = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (memref<4xf32>) {
    %next = memref.alloc() : memref<4xf32>
    memref.copy %acc, %next : memref<4xf32> to memref<4xf32>
    scf.yield %next : memref<4xf32>
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%s = %c0) -> (index) {
    %kept = memref.alloc() : memref<4xf32>
    func.call @keeps(%kept) : (memref<4xf32>) -> ()
    %borrowed = memref.alloc() : memref<4xf32>
    func.call @borrows(%borrowed) : (memref<4xf32>) -> ()
    memref.dealloc %borrowed : memref<4xf32>
    %owned = memref.alloc() : memref<4xf32>
    %p = memref.extract_aligned_pointer_as_index %owned : memref<4xf32> -> index
    %t = arith.addi %s, %p : index
    scf.yield %t : index
  }
  scf.forall (%j) in (4) {
    %private = memref.alloc() : memref<4xf32>
    memref.copy %x, %private : memref<4xf32> to memref<4xf32>
    memref.dealloc %private : memref<4xf32>
  }
  %once = memref.alloc() : memref<4xf32>
  memref.copy %carried, %once : memref<4xf32> to memref<4xf32>
  return %sum : index
}

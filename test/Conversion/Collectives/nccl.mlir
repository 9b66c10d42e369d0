// RUN: transformer-opt %s --split-input-file --tfm-collectives-to-nccl | FileCheck %s

// On the GPU a sum over the ranks is a call of the runtime's NCCL all-reduce
// on the two buffers as memref<?xf32> (one function for every shape,
// descriptors passed by pointer: llvm.emit_c_interface).
// CHECK: func.func private @tfm_nccl_all_reduce_f32(memref<?xf32>, memref<?xf32>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @sum
// CHECK: %[[SRC:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : memref<1x4x8xf32> into memref<32xf32>
// CHECK: %[[S:.*]] = memref.cast %[[SRC]] : memref<32xf32> to memref<?xf32>
// CHECK: %[[DST:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : memref<1x4x8xf32> into memref<32xf32>
// CHECK: %[[D:.*]] = memref.cast %[[DST]] : memref<32xf32> to memref<?xf32>
// CHECK: call @tfm_nccl_all_reduce_f32(%[[S]], %[[D]]) : (memref<?xf32>, memref<?xf32>) -> ()
// CHECK-NOT: tfm.buffer
module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @sum(%a: memref<1x4x8xf32>, %b: memref<1x4x8xf32>) {
    tfm.buffer_all_reduce %a, %b : memref<1x4x8xf32>, memref<1x4x8xf32>
    return
  }
}

// -----

// An all-gather of the last dimension: this rank's slice (its rank from the
// runtime) copied into zeros at rank * 4, and the sum of those.
// CHECK: func.func private @tfm_nccl_all_reduce_f32(memref<?xf32>, memref<?xf32>)
// CHECK: func.func private @tfm_nccl_rank() -> i64 attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @gather
// CHECK: %[[RANK:.*]] = call @tfm_nccl_rank() : () -> i64
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]] : i64 to index
// CHECK: %[[PLACED:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[PLACED]] : memref<2x8xf32>)
// CHECK: %[[OFFSET:.*]] = arith.muli %[[R]], %c4
// CHECK: %[[SLOT:.*]] = memref.subview %[[PLACED]][0, %[[OFFSET]]] [2, 4] [1, 1]
// CHECK: memref.copy %{{.*}}, %[[SLOT]]
// CHECK: call @tfm_nccl_all_reduce_f32
// CHECK: memref.dealloc %[[PLACED]]
module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @gather(%a: memref<2x4xf32>, %b: memref<2x8xf32>) {
    tfm.buffer_all_gather %a, %b : memref<2x4xf32>, memref<2x8xf32>
    return
  }
}

// -----

// tfm.rank (a vocab-parallel embedding's first row, a rank's first expert).
// CHECK-LABEL: func.func @rank
// CHECK: %[[RANK:.*]] = call @tfm_nccl_rank() : () -> i64
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]] : i64 to index
// CHECK: return %[[R]] : index
module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @rank() -> index {
    %r = tfm.rank
    return %r : index
  }
}

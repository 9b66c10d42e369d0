// RUN: transformer-opt %s --tfm-to-linalg --one-shot-bufferize=bufferize-function-boundaries --tfm-collectives-to-mpi | FileCheck %s

// A bf16 all-gather moves f32; without an all-gather in the mpi dialect,
// each rank copies its slice into zeros at mpi.comm_rank * 4 and the ranks
// sum those (1-D buffers: MLIR 22's lowering counts the first dimension).
// CHECK-LABEL: func.func @gather
// CHECK: %[[WIDE:.*]] = memref.alloc() {{.*}} : memref<2x4xf32>
// CHECK: arith.extf
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK: %[[COMM:.*]] = mpi.comm_world : !mpi.comm
// CHECK: %[[RANK:.*]] = mpi.comm_rank(%[[COMM]]) : i32
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]] : i32 to index
// CHECK: %[[PLACED:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[PLACED]] : memref<2x8xf32>)
// CHECK: %[[OFFSET:.*]] = arith.muli %[[R]], %c4
// CHECK: %[[SLOT:.*]] = memref.subview %[[PLACED]][0, %[[OFFSET]]] [2, 4] [1, 1]
// CHECK: memref.copy %[[WIDE]], %[[SLOT]]
// CHECK: %[[SRC:.*]] = memref.collapse_shape %[[PLACED]] {{\[\[}}0, 1]] : memref<2x8xf32> into memref<16xf32>
// CHECK: %[[DST:.*]] = memref.collapse_shape %[[OUT]] {{\[\[}}0, 1]] : memref<2x8xf32> into memref<16xf32>
// CHECK: mpi.allreduce(%[[SRC]], %[[DST]], MPI_SUM, %[[COMM]]) : memref<16xf32>, memref<16xf32>
// CHECK: memref.dealloc %[[PLACED]]
// CHECK: arith.truncf
module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @gather(%x: tensor<2x4xbf16>) -> tensor<2x8xbf16> {
    %0 = tfm.all_gather %x : (tensor<2x4xbf16>) -> tensor<2x8xbf16>
    return %0 : tensor<2x8xbf16>
  }
}

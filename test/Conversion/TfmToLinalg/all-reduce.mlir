// RUN: transformer-opt %s --tfm-to-linalg | FileCheck %s
// RUN: transformer-opt %s --tfm-to-linalg --one-shot-bufferize=bufferize-function-boundaries | FileCheck %s --check-prefix=BUF
// RUN: transformer-opt %s --tfm-to-linalg --one-shot-bufferize=bufferize-function-boundaries --tfm-collectives-to-mpi | FileCheck %s --check-prefix=MPI

// An f32 sum without bias stays tfm.all_reduce; a bf16 one is widened, summed
// in f32, its bias added in f32 and the total rounded once.
// CHECK-LABEL: func.func @sums
// CHECK: %[[F:.*]] = tfm.all_reduce %arg0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[WIDE:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<2x4xbf16>)
// CHECK: arith.extf
// CHECK: %[[S:.*]] = tfm.all_reduce %[[WIDE]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%[[S]], %arg2 : tensor<2x4xf32>, tensor<4xbf16>)
// CHECK: arith.extf
// CHECK: arith.addf
// CHECK: arith.truncf
// CHECK: return %[[F]], %[[B]]

// Bufferized: a contiguous copy of a strided input, then the sum into a new
// buffer.
// BUF-LABEL: func.func @sums
// BUF: %[[IN:.*]] = memref.alloc() : memref<2x4xf32>
// BUF: memref.copy %arg0, %[[IN]]
// BUF: %[[OUT:.*]] = memref.alloc() : memref<2x4xf32>
// BUF: tfm.buffer_all_reduce %[[IN]], %[[OUT]] : memref<2x4xf32>, memref<2x4xf32>

// Lowered to the mpi dialect: the world communicator, 1-D buffers (MLIR 22's lowering counts a
// buffer's first dimension), and the DLTI entry naming Open MPI.
// MPI: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">
// MPI: %[[COMM:.*]] = mpi.comm_world : !mpi.comm
// MPI: %[[SRC:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<2x4xf32> into memref<8xf32>
// MPI: %[[DST:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<2x4xf32> into memref<8xf32>
// MPI: mpi.allreduce(%[[SRC]], %[[DST]], MPI_SUM, %[[COMM]]) : memref<8xf32>, memref<8xf32>
// MPI-NOT: tfm.buffer_all_reduce
module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @sums(%x: tensor<2x4xf32>, %h: tensor<2x4xbf16>, %b: tensor<4xbf16>) -> (tensor<2x4xf32>, tensor<2x4xbf16>) {
    %0 = tfm.all_reduce %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %1 = tfm.all_reduce %h, %b : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
    return %0, %1 : tensor<2x4xf32>, tensor<2x4xbf16>
  }
}

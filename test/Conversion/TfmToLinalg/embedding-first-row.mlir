// RUN: transformer-opt %s --tfm-to-linalg | FileCheck %s
// RUN: transformer-opt %s --tfm-to-linalg --one-shot-bufferize=bufferize-function-boundaries --tfm-collectives-to-mpi | FileCheck %s --check-prefix=MPI

// A rank's slice of a vocab-parallel table (tfm-tensor-parallel): rows
// [first, first + 50) of the vocabulary. An id among them gathers row
// id - first; any other id reads row 0 and yields zero, so that the ranks'
// lookups sum to the whole table's. tfm.rank stays a value through
// tfm-to-linalg and bufferization; tfm-collectives-to-mpi makes it
// mpi.comm_rank.
// CHECK-LABEL: func.func @rank_rows
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<2x3xi32>, %[[T:[^:]*]]: tensor<50x8xf32>
// CHECK: %[[RANK:.*]] = tfm.rank
// CHECK: %[[FIRST:.*]] = arith.muli %[[RANK]]
// CHECK: linalg.generic {{.*}} ins(%[[IDS]] : tensor<2x3xi32>)
// CHECK: %[[I:.*]] = arith.index_cast
// CHECK: %[[ROW:.*]] = arith.subi %[[I]], %[[FIRST]] : index
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[ROW]], %[[ZERO:.*]] : index
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[ROW]], %{{.*}} : index
// CHECK: %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: %[[SAFE:.*]] = arith.select %[[IN]], %[[ROW]], %[[ZERO]] : index
// CHECK: %[[V:.*]] = tensor.extract %[[T]][%[[SAFE]], %{{.*}}] : tensor<50x8xf32>
// CHECK: arith.select %[[IN]], %[[V]], %{{.*}} : f32
// MPI-LABEL: func.func @rank_rows
// MPI: %[[COMM:.*]] = mpi.comm_world : !mpi.comm
// MPI: %[[R:.*]] = mpi.comm_rank(%[[COMM]]) : i32
// MPI: %[[RI:.*]] = arith.index_cast %[[R]] : i32 to index
// MPI: arith.muli %[[RI]]
// MPI-NOT: tfm.rank
module attributes {tfm.tensor_parallel = 2 : i64} {
func.func @rank_rows(%ids: tensor<2x3xi32>, %t: tensor<50x8xf32>) -> tensor<2x3x8xf32> {
  %r = tfm.rank
  %c50 = arith.constant 50 : index
  %first = arith.muli %r, %c50 : index
  %y = tfm.embedding %ids, %t, %first : (tensor<2x3xi32>, tensor<50x8xf32>, index) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}
}

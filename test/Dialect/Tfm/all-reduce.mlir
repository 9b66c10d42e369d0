// RUN: transformer-opt %s --split-input-file | transformer-opt --split-input-file | FileCheck %s

// tfm.all_reduce, tfm.all_gather and the shard attributes of a
// tensor-parallel module round-trip; the sum's bias is optional.
// CHECK: module attributes {tfm.tensor_parallel = 2 : i64}
// CHECK-LABEL: func.func @partial_sums
// CHECK-SAME: tfm.param_shard = #tfm.shard<axis = 1, pieces = [128], shards = [2]>
// CHECK-SAME: tfm.param_shard = #tfm.shard<axis = 0, pieces = [64, 16, 16], shards = [2, 1, 1]>
// CHECK: tfm.all_reduce %{{.*}} : (tensor<1x4x64xf32>) -> tensor<1x4x64xf32>
// CHECK: tfm.all_reduce %{{.*}}, %{{.*}} : (tensor<1x4x64xbf16>, tensor<64xbf16>) -> tensor<1x4x64xbf16>
// CHECK: tfm.all_gather %{{.*}} : (tensor<1x4x50xf32>) -> tensor<1x4x100xf32>
module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @partial_sums(
      %x: tensor<1x4x64xf32>, %h: tensor<1x4x64xbf16>, %b: tensor<64xbf16>,
      %o: tensor<64x64xf32> {tfm.param = "o_proj.weight",
          tfm.param_shard = #tfm.shard<axis = 1, pieces = [128], shards = [2]>},
      %qkv: tensor<64x64xf32> {tfm.param = "qkv_proj.weight",
          tfm.param_shard = #tfm.shard<axis = 0, pieces = [64, 16, 16], shards = [2, 1, 1]>})
      -> (tensor<1x4x64xf32>, tensor<1x4x64xbf16>, tensor<1x4x100xf32>) {
    %0 = tfm.all_reduce %x : (tensor<1x4x64xf32>) -> tensor<1x4x64xf32>
    %1 = tfm.all_reduce %h, %b : (tensor<1x4x64xbf16>, tensor<64xbf16>) -> tensor<1x4x64xbf16>
    %s = tensor.empty() : tensor<1x4x50xf32>
    %2 = tfm.all_gather %s : (tensor<1x4x50xf32>) -> tensor<1x4x100xf32>
    return %0, %1, %2 : tensor<1x4x64xf32>, tensor<1x4x64xbf16>, tensor<1x4x100xf32>
  }
}

// -----

// tfm.rank and a vocab-parallel embedding's first row round-trip.
// CHECK-LABEL: func.func @rank_rows
// CHECK: %[[R:.*]] = tfm.rank
// CHECK: tfm.embedding %{{.*}}, %{{.*}}, %[[R]] : (tensor<1x4xi64>, tensor<50x8xf32>, index) -> tensor<1x4x8xf32>
module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @rank_rows(%ids: tensor<1x4xi64>, %t: tensor<50x8xf32>) -> tensor<1x4x8xf32> {
    %r = tfm.rank
    %y = tfm.embedding %ids, %t, %r : (tensor<1x4xi64>, tensor<50x8xf32>, index) -> tensor<1x4x8xf32>
    return %y : tensor<1x4x8xf32>
  }
}

// -----

// The bufferized form: a read of one buffer, a write of another.
// CHECK-LABEL: func.func @buffers
// CHECK: tfm.buffer_all_reduce %{{.*}}, %{{.*}} : memref<2x8xf32>, memref<2x8xf32>
// CHECK: tfm.buffer_all_gather %{{.*}}, %{{.*}} : memref<2x8xf32>, memref<2x32xf32>
module attributes {tfm.tensor_parallel = 4 : i64} {
  func.func @buffers(%a: memref<2x8xf32>, %b: memref<2x8xf32>, %c: memref<2x32xf32>) {
    tfm.buffer_all_reduce %a, %b : memref<2x8xf32>, memref<2x8xf32>
    tfm.buffer_all_gather %a, %c : memref<2x8xf32>, memref<2x32xf32>
    return
  }
}

// -----

// A rank's experts of an expert-parallel tfm.moe: first_expert, and the
// per-rank names of the weights in each held expert's place.
// CHECK-LABEL: func.func @held_experts
// CHECK-SAME: {tfm.param = "e0.w1", tfm.param_rank_names = ["e0.w1", "e1.w1"]}
// CHECK: %[[R:.*]] = tfm.rank
// CHECK: tfm.moe %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} first_expert(%[[R]]) {top_k = 1 : i64} : (tensor<1x4x16xf32>, tensor<2x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, index) -> tensor<1x4x16xf32>
module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @held_experts(%x: tensor<1x4x16xf32>, %r: tensor<2x16xf32> {tfm.param = "router"},
      %g: tensor<8x16xf32> {tfm.param = "e0.w1", tfm.param_rank_names = ["e0.w1", "e1.w1"]},
      %u: tensor<8x16xf32> {tfm.param = "e0.w3", tfm.param_rank_names = ["e0.w3", "e1.w3"]},
      %d: tensor<16x8xf32> {tfm.param = "e0.w2", tfm.param_rank_names = ["e0.w2", "e1.w2"]}) -> tensor<1x4x16xf32> {
    %rank = tfm.rank
    %y = tfm.moe %x, %r, %g, %u, %d first_expert(%rank) {top_k = 1 : i64} : (tensor<1x4x16xf32>, tensor<2x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, index) -> tensor<1x4x16xf32>
    return %y : tensor<1x4x16xf32>
  }
}

// RUN: transformer-opt %s --split-input-file --verify-diagnostics

// A collective outside a tensor-parallel module has no ranks to sum over.
func.func @no_ranks(%x: tensor<1x4x64xf32>) -> tensor<1x4x64xf32> {
  // expected-error @+1 {{'tfm.all_reduce' op is only valid in a module with 'tfm.tensor_parallel' (its ranks)}}
  %0 = tfm.all_reduce %x : (tensor<1x4x64xf32>) -> tensor<1x4x64xf32>
  return %0 : tensor<1x4x64xf32>
}

// -----

module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @bias_shape(%x: tensor<1x4x64xf32>, %b: tensor<32xf32>) -> tensor<1x4x64xf32> {
    // expected-error @+1 {{'tfm.all_reduce' op bias must be [64] of 'f32' (the input's last dimension), got 'tensor<32xf32>'}}
    %0 = tfm.all_reduce %x, %b : (tensor<1x4x64xf32>, tensor<32xf32>) -> tensor<1x4x64xf32>
    return %0 : tensor<1x4x64xf32>
  }
}

// -----

module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @result_type(%x: tensor<1x4x64xf32>) -> tensor<1x4x64xbf16> {
    // expected-error @+1 {{'tfm.all_reduce' op failed to verify that all of {input, result} have same type}}
    %0 = tfm.all_reduce %x : (tensor<1x4x64xf32>) -> tensor<1x4x64xbf16>
    return %0 : tensor<1x4x64xbf16>
  }
}

// -----

module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @buffer_shapes(%a: memref<2x8xf32>, %b: memref<8x2xf32>) {
    // expected-error @+1 {{'tfm.buffer_all_reduce' op source 'memref<2x8xf32>' and target 'memref<8x2xf32>' must have one shape}}
    tfm.buffer_all_reduce %a, %b : memref<2x8xf32>, memref<8x2xf32>
    return
  }
}

// -----

module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @gathered_shape(%x: tensor<1x4x50xf32>) -> tensor<1x4x150xf32> {
    // expected-error @+1 {{'tfm.all_gather' op result 'tensor<1x4x150xf32>' must be 'tensor<1x4x50xf32>' with its last dimension 2 times larger (one slice per rank)}}
    %0 = tfm.all_gather %x : (tensor<1x4x50xf32>) -> tensor<1x4x150xf32>
    return %0 : tensor<1x4x150xf32>
  }
}

// -----

func.func @gather_no_ranks(%x: tensor<1x4x50xf32>) -> tensor<1x4x100xf32> {
  // expected-error @+1 {{'tfm.all_gather' op is only valid in a module with 'tfm.tensor_parallel' (its ranks)}}
  %0 = tfm.all_gather %x : (tensor<1x4x50xf32>) -> tensor<1x4x100xf32>
  return %0 : tensor<1x4x100xf32>
}

// -----

module attributes {tfm.tensor_parallel = 4 : i64} {
  func.func @gathered_buffer(%a: memref<2x8xf32>, %b: memref<2x16xf32>) {
    // expected-error @+1 {{'tfm.buffer_all_gather' op result 'memref<2x16xf32>' must be 'memref<2x8xf32>' with its last dimension 4 times larger (one slice per rank)}}
    tfm.buffer_all_gather %a, %b : memref<2x8xf32>, memref<2x16xf32>
    return
  }
}

// -----

// expected-error @+1 {{'func.func' op 'tfm.tensor_parallel' must be a positive integer on a module (its ranks)}}
func.func @on_a_function() attributes {tfm.tensor_parallel = 2 : i64} {
  return
}

// -----

// expected-error @+1 {{'builtin.module' op 'tfm.tensor_parallel' must be a positive integer on a module (its ranks)}}
module attributes {tfm.tensor_parallel = 0 : i64} {
}

// -----

// expected-error @+1 {{a piece of 100 cannot be divided into 3 equal blocks}}
func.func private @indivisible_piece(tensor<50x64xf32> {tfm.param = "w", tfm.param_shard = #tfm.shard<axis = 0, pieces = [100], shards = [3]>})

// -----

// expected-error @+1 {{needs one shard count per piece and at least one piece, got 2 pieces and 1 shard counts}}
func.func private @counts(tensor<50x64xf32> {tfm.param = "w", tfm.param_shard = #tfm.shard<axis = 0, pieces = [50, 50], shards = [2]>})

// -----

// expected-error @+1 {{'func.func' op argument #0: 'tfm.param_shard' needs a module with 'tfm.tensor_parallel'}}
func.func private @no_module_ranks(tensor<50x64xf32> {tfm.param = "w", tfm.param_shard = #tfm.shard<axis = 0, pieces = [100], shards = [2]>})

// -----

module attributes {tfm.tensor_parallel = 4 : i64} {
  // expected-error @+1 {{'func.func' op argument #0: #tfm.shard<axis = 0, pieces = [102], shards = [3]> divides a piece into 3 blocks, which does not divide the 4 ranks}}
  func.func private @not_dividing_ranks(tensor<34x64xf32> {tfm.param = "w", tfm.param_shard = #tfm.shard<axis = 0, pieces = [102], shards = [3]>})
}

// -----

module attributes {tfm.tensor_parallel = 2 : i64} {
  // expected-error @+1 {{'func.func' op argument #0: #tfm.shard<axis = 1, pieces = [128], shards = [2]> gives each rank 64 along dimension 1, but the argument is 'tensor<64x128xf32>'}}
  func.func private @slice_extent(tensor<64x128xf32> {tfm.param = "w", tfm.param_shard = #tfm.shard<axis = 1, pieces = [128], shards = [2]>})
}

// -----

module attributes {tfm.tensor_parallel = 2 : i64} {
  // expected-error @+1 {{'func.func' op argument #0: 'tfm.param_shard' applies to function arguments annotated with 'tfm.param'}}
  func.func private @not_a_param(tensor<64x64xf32> {tfm.param_shard = #tfm.shard<axis = 1, pieces = [128], shards = [2]>})
}

// -----

module attributes {tfm.tensor_parallel = 2 : i64} {
  // expected-error @+1 {{'func.func' op argument #0: 'tfm.param_shard' must be a #tfm.shard attribute, got 2 : i64}}
  func.func private @not_a_shard(tensor<64x64xf32> {tfm.param = "w", tfm.param_shard = 2})
}

// -----

func.func @rank_alone() -> index {
  // expected-error @+1 {{'tfm.rank' op is only valid in a module with 'tfm.tensor_parallel' (its ranks)}}
  %r = tfm.rank
  return %r : index
}

// -----

// tfm.param_rank_names: a name per rank, rank 0's the tfm.param.
module attributes {tfm.tensor_parallel = 2 : i64} {
  // expected-error @+1 {{'func.func' op argument #0: 'tfm.param_rank_names' names 3 tensors for 2 ranks}}
  func.func private @three_names(tensor<8x16xf32> {tfm.param = "a", tfm.param_rank_names = ["a", "b", "c"]})
}

// -----

module attributes {tfm.tensor_parallel = 2 : i64} {
  // expected-error @+1 {{'func.func' op argument #0: 'tfm.param_rank_names' must start with the argument's 'tfm.param' (rank 0's tensor)}}
  func.func private @not_first(tensor<8x16xf32> {tfm.param = "a", tfm.param_rank_names = ["b", "a"]})
}

// -----

module attributes {tfm.tensor_parallel = 2 : i64} {
  // expected-error @+1 {{'func.func' op argument #0: 'tfm.param_rank_names' must be an array of strings (a weight-file name per rank), got ["a", 1]}}
  func.func private @not_strings(tensor<8x16xf32> {tfm.param = "a", tfm.param_rank_names = ["a", 1]})
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'tfm.param_rank_names' needs a module with 'tfm.tensor_parallel'}}
func.func private @no_ranks_names(tensor<8x16xf32> {tfm.param = "a", tfm.param_rank_names = ["a", "b"]})

// -----

// expected-error @+1 {{'func.func' op argument #0: 'tfm.param_rank_names' applies to function arguments annotated with 'tfm.param'}}
func.func private @not_param(tensor<8x16xf32> {tfm.param_rank_names = ["a", "b"]})

// -----

module attributes {tfm.tensor_parallel = 2 : i64} {
  // expected-error @+1 {{'func.func' op argument #0: 'tfm.param_rank_names' names whole tensors: it cannot be combined with 'tfm.param_parts' or 'tfm.param_shard'}}
  func.func private @sharded(tensor<4x16xf32> {tfm.param = "a", tfm.param_rank_names = ["a", "b"], tfm.param_shard = #tfm.shard<axis = 0, pieces = [8], shards = [2]>})
}

// -----

// A rank's experts: the router's experts a multiple of those held.
module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @experts_not_dividing(%x: tensor<1x4x16xf32>, %r: tensor<3x16xf32>, %g: tensor<8x16xf32>, %u: tensor<8x16xf32>, %d: tensor<16x8xf32>, %first: index) -> tensor<1x4x16xf32> {
    // expected-error @+1 {{'tfm.moe' op router must be [R, 16] with R a multiple of the 2 experts held (first_expert), got 'tensor<3x16xf32>'}}
    %y = tfm.moe %x, %r, %g, %u, %d, %g, %u, %d first_expert(%first) {top_k = 1 : i64} : (tensor<1x4x16xf32>, tensor<3x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, index) -> tensor<1x4x16xf32>
    return %y : tensor<1x4x16xf32>
  }
}

// -----

module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @top_k_of_router(%x: tensor<1x4x16xf32>, %r: tensor<2x16xf32>, %g: tensor<8x16xf32>, %u: tensor<8x16xf32>, %d: tensor<16x8xf32>, %first: index) -> tensor<1x4x16xf32> {
    // expected-error @+1 {{'tfm.moe' op top_k=3 must be in [1, 2]}}
    %y = tfm.moe %x, %r, %g, %u, %d first_expert(%first) {top_k = 3 : i64} : (tensor<1x4x16xf32>, tensor<2x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, index) -> tensor<1x4x16xf32>
    return %y : tensor<1x4x16xf32>
  }
}

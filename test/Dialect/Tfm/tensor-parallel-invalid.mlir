// RUN: transformer-opt %s --tfm-tensor-parallel=ranks=3 --split-input-file --verify-diagnostics
// RUN: not transformer-opt %s --tfm-tensor-parallel=ranks=0 --split-input-file 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: error: tfm-tensor-parallel: ranks must be at least 1, got 0

// Sizes that do not divide over the ranks are errors naming the op.
func.func @heads(%x: tensor<1x3x32xf32> {tfm.input = "x"},
    %wq: tensor<32x32xf32> {tfm.param = "q_proj.weight"},
    %wo: tensor<32x32xf32> {tfm.param = "o_proj.weight"}) -> tensor<1x3x32xf32> {
  %q = tfm.linear %x, %wq {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %qh = tfm.split_heads %q {num_heads = 4 : i64} : (tensor<1x3x32xf32>) -> tensor<1x4x3x8xf32>
  // expected-error @+1 {{tfm-tensor-parallel: 4 query heads cannot be divided over 3 ranks}}
  %a = tfm.attention %qh, %qh, %qh : (tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x8xf32>
  %m = tfm.merge_heads %a : (tensor<1x4x3x8xf32>) -> tensor<1x3x32xf32>
  %o = tfm.linear %m, %wo {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  return %o : tensor<1x3x32xf32>
}

// -----

func.func @kv_heads(%x: tensor<1x3x48xf32> {tfm.input = "x"},
    %wq: tensor<48x48xf32> {tfm.param = "q_proj.weight"},
    %wk: tensor<16x48xf32> {tfm.param = "k_proj.weight"},
    %wo: tensor<48x48xf32> {tfm.param = "o_proj.weight"}) -> tensor<1x3x48xf32> {
  %q = tfm.linear %x, %wq {layout = #tfm.layout<out_in>} : (tensor<1x3x48xf32>, tensor<48x48xf32>) -> tensor<1x3x48xf32>
  %k = tfm.linear %x, %wk {layout = #tfm.layout<out_in>} : (tensor<1x3x48xf32>, tensor<16x48xf32>) -> tensor<1x3x16xf32>
  %qh = tfm.split_heads %q {num_heads = 6 : i64} : (tensor<1x3x48xf32>) -> tensor<1x6x3x8xf32>
  %kh = tfm.split_heads %k {num_heads = 2 : i64} : (tensor<1x3x16xf32>) -> tensor<1x2x3x8xf32>
  // expected-error @+1 {{tfm-tensor-parallel: 2 key/value heads can be neither divided over 3 ranks nor replicated on them (one of the two numbers must divide the other)}}
  %a = tfm.attention %qh, %kh, %kh : (tensor<1x6x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x6x3x8xf32>
  %m = tfm.merge_heads %a : (tensor<1x6x3x8xf32>) -> tensor<1x3x48xf32>
  %o = tfm.linear %m, %wo {layout = #tfm.layout<out_in>} : (tensor<1x3x48xf32>, tensor<48x48xf32>) -> tensor<1x3x48xf32>
  return %o : tensor<1x3x48xf32>
}

// -----

func.func @mlp_width(%x: tensor<1x3x32xf32> {tfm.input = "x"},
    %wu: tensor<40x32xf32> {tfm.param = "up_proj.weight"},
    %wd: tensor<32x40xf32> {tfm.param = "down_proj.weight"}) -> tensor<1x3x32xf32> {
  %u = tfm.linear %x, %wu {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<40x32xf32>) -> tensor<1x3x40xf32>
  // expected-error @+1 {{tfm-tensor-parallel: an MLP width of 40 cannot be divided over 3 ranks}}
  %h = tfm.silu %u : (tensor<1x3x40xf32>) -> tensor<1x3x40xf32>
  %d = tfm.linear %h, %wd {layout = #tfm.layout<out_in>} : (tensor<1x3x40xf32>, tensor<32x40xf32>) -> tensor<1x3x32xf32>
  return %d : tensor<1x3x32xf32>
}

// -----

func.func @expert_width(%x: tensor<1x4x16xf32> {tfm.input = "x"},
    %r: tensor<1x16xf32> {tfm.param = "router.weight"},
    %g0: tensor<20x16xf32> {tfm.param = "e0.w1"}, %u0: tensor<20x16xf32> {tfm.param = "e0.w3"}, %d0: tensor<16x20xf32> {tfm.param = "e0.w2"})
    -> tensor<1x4x16xf32> {
  // expected-error @+1 {{tfm-tensor-parallel: 1 experts cannot be divided over 3 ranks, nor an expert width of 20}}
  %y = tfm.moe %x, %r, %g0, %u0, %d0 {top_k = 1 : i64} : (tensor<1x4x16xf32>, tensor<1x16xf32>, tensor<20x16xf32>, tensor<20x16xf32>, tensor<16x20xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// expected-error @+1 {{tfm-tensor-parallel: the module is already partitioned (2 : i64)}}
module attributes {tfm.tensor_parallel = 2 : i64} {
}

// -----

// A divided projection's weight must be a parameter the binder can cut.
func.func @computed_weight(%x: tensor<1x3x32xf32> {tfm.input = "x"},
    %wu: tensor<48x32xbf16> {tfm.param = "up_proj.weight"},
    %wd: tensor<32x48xf32> {tfm.param = "down_proj.weight"}) -> tensor<1x3x32xf32> {
  %w = tfm.convert %wu : (tensor<48x32xbf16>) -> tensor<48x32xf32>
  // expected-error @+1 {{tfm-tensor-parallel: the weights of a divided projection must be tfm.param arguments}}
  %u = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<48x32xf32>) -> tensor<1x3x48xf32>
  %h = tfm.silu %u : (tensor<1x3x48xf32>) -> tensor<1x3x48xf32>
  %d = tfm.linear %h, %wd {layout = #tfm.layout<out_in>} : (tensor<1x3x48xf32>, tensor<32x48xf32>) -> tensor<1x3x32xf32>
  return %d : tensor<1x3x32xf32>
}

// -----

// A weight something else reads too cannot become one rank's slice.
func.func @shared_weight(%x: tensor<1x3x32xf32> {tfm.input = "x"},
    %wu: tensor<48x32xf32> {tfm.param = "up_proj.weight"},
    %wd: tensor<32x48xf32> {tfm.param = "down_proj.weight"}) -> (tensor<1x3x32xf32>, tensor<48x32xf32>) {
  // expected-error @+1 {{tfm-tensor-parallel: parameter 'up_proj.weight' is read by other ops than the projection it divides}}
  %u = tfm.linear %x, %wu {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<48x32xf32>) -> tensor<1x3x48xf32>
  %h = tfm.silu %u : (tensor<1x3x48xf32>) -> tensor<1x3x48xf32>
  %d = tfm.linear %h, %wd {layout = #tfm.layout<out_in>} : (tensor<1x3x48xf32>, tensor<32x48xf32>) -> tensor<1x3x32xf32>
  return %d, %wu : tensor<1x3x32xf32>, tensor<48x32xf32>
}

// -----

// Expert parallelism binds each expert's weights whole: an expert weight
// computed in the function cannot be named per rank.
func.func @expert_not_param(%x: tensor<1x4x16xf32> {tfm.input = "x"},
    %r: tensor<3x16xf32> {tfm.param = "router.weight"},
    %g: tensor<20x16xf32> {tfm.param = "e.w1"}, %u: tensor<20x16xf32> {tfm.param = "e.w3"}, %d: tensor<16x20xf32> {tfm.param = "e.w2"})
    -> tensor<1x4x16xf32> {
  %g2 = tfm.residual_add %g, %g : (tensor<20x16xf32>, tensor<20x16xf32>) -> tensor<20x16xf32>
  // expected-error @+1 {{tfm-tensor-parallel: the experts of a divided tfm.moe must be tfm.param arguments that it alone reads}}
  %y = tfm.moe %x, %r, %g, %u, %d, %g2, %u, %d, %g, %u, %d {top_k = 1 : i64} : (tensor<1x4x16xf32>, tensor<3x16xf32>, tensor<20x16xf32>, tensor<20x16xf32>, tensor<16x20xf32>, tensor<20x16xf32>, tensor<20x16xf32>, tensor<16x20xf32>, tensor<20x16xf32>, tensor<20x16xf32>, tensor<16x20xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

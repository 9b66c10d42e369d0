// RUN: transformer-opt %s --tfm-tensor-parallel=ranks=2 --split-input-file --verify-diagnostics | FileCheck %s
// RUN: transformer-opt %s --tfm-tensor-parallel=ranks=4 --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=FOUR
// RUN: transformer-opt %s --tfm-tensor-parallel=ranks=2 --split-input-file --tfm-print-ledger -o /dev/null | FileCheck %s --check-prefix=LEDGER

// A Llama decode step (GQA 4:2, a KV cache) over 2 ranks: q/k/v and
// gate/up column-parallel (rows of out_in weights), o and down row-parallel
// (columns) with a sum after each; each rank holds 2 query heads, one
// key/value head and its own KV cache rows. Over 4 ranks each holds one
// query head and the key/value head it reads: k/v cut in 2 blocks, each
// bound by two ranks.
// CHECK: module attributes {tfm.tensor_parallel = 2 : i64}
// CHECK-LABEL: func.func @decode
// CHECK-SAME: tensor<16x32xf32> {tfm.param = "q_proj.weight", tfm.param_shard = #tfm.shard<axis = 0, pieces = [32], shards = [2]>}
// CHECK-SAME: tensor<8x32xf32> {tfm.param = "k_proj.weight", tfm.param_shard = #tfm.shard<axis = 0, pieces = [16], shards = [2]>}
// CHECK-SAME: tensor<8x32xf32> {tfm.param = "v_proj.weight", tfm.param_shard = #tfm.shard<axis = 0, pieces = [16], shards = [2]>}
// CHECK-SAME: tensor<32x16xf32> {tfm.param = "o_proj.weight", tfm.param_shard = #tfm.shard<axis = 1, pieces = [32], shards = [2]>}
// CHECK-SAME: tensor<24x32xf32> {tfm.param = "gate_proj.weight", tfm.param_shard = #tfm.shard<axis = 0, pieces = [48], shards = [2]>}
// CHECK-SAME: tensor<32x24xf32> {tfm.param = "down_proj.weight", tfm.param_shard = #tfm.shard<axis = 1, pieces = [48], shards = [2]>}
// CHECK-SAME: tensor<1x1x16x8xf32> {tfm.kv_cache = "0.key"}
// CHECK-SAME: -> (tensor<1x1x32xf32> {tfm.output = "y"}, tensor<1x1x16x8xf32> {tfm.kv_cache = "0.key"}, tensor<1x1x16x8xf32> {tfm.kv_cache = "0.value"})
// CHECK: tfm.split_heads %{{.*}} {num_heads = 2 : i64} : (tensor<1x1x16xf32>) -> tensor<1x2x1x8xf32>
// CHECK: tfm.split_heads %{{.*}} {num_heads = 1 : i64} : (tensor<1x1x8xf32>) -> tensor<1x1x1x8xf32>
// CHECK: tfm.attention {{.*}} : (tensor<1x2x1x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, index) -> tensor<1x2x1x8xf32>
// CHECK: %[[O:.*]] = tfm.linear {{.*}} : (tensor<1x1x16xf32>, tensor<32x16xf32>) -> tensor<1x1x32xf32>
// CHECK: %[[SUM:.*]] = tfm.all_reduce %[[O]] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
// CHECK: tfm.residual_add %{{.*}}, %[[SUM]]
// CHECK: tfm.swiglu {{.*}} : (tensor<1x1x24xf32>, tensor<1x1x24xf32>) -> tensor<1x1x24xf32>
// CHECK: tfm.all_reduce
// The ledger counts one rank's parameters and KV cache (one key/value head
// of 8: 64 bytes a token), and what it sends: two sums of 1x1x32 f32, each
// 2 (N - 1) / N x 128 bytes in a ring.
// LEDGER: tfm ledger for @decode
// LEDGER: parameters: 3,840 (15,360 bytes)
// LEDGER: KV cache: 64 bytes per token per sequence
// LEDGER-NEXT: tensor parallel: 2 ranks; the counts above are one rank's; each rank sends 256 bytes in 2 all-reduces (256 bytes per token)
// FOUR: module attributes {tfm.tensor_parallel = 4 : i64}
// FOUR-LABEL: func.func @decode
// FOUR-SAME: tensor<8x32xf32> {tfm.param = "q_proj.weight", tfm.param_shard = #tfm.shard<axis = 0, pieces = [32], shards = [4]>}
// FOUR-SAME: tensor<8x32xf32> {tfm.param = "k_proj.weight", tfm.param_shard = #tfm.shard<axis = 0, pieces = [16], shards = [2]>}
// FOUR-SAME: tensor<1x1x16x8xf32> {tfm.kv_cache = "0.key"}
// FOUR: tfm.attention {{.*}} : (tensor<1x1x1x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, index) -> tensor<1x1x1x8xf32>
func.func @decode(%x: tensor<1x1x32xf32> {tfm.input = "x"}, %pos: index {tfm.input = "position"},
    %wq: tensor<32x32xf32> {tfm.param = "q_proj.weight"},
    %wk: tensor<16x32xf32> {tfm.param = "k_proj.weight"},
    %wv: tensor<16x32xf32> {tfm.param = "v_proj.weight"},
    %wo: tensor<32x32xf32> {tfm.param = "o_proj.weight"},
    %wg: tensor<48x32xf32> {tfm.param = "gate_proj.weight"},
    %wu: tensor<48x32xf32> {tfm.param = "up_proj.weight"},
    %wd: tensor<32x48xf32> {tfm.param = "down_proj.weight"},
    %kc: tensor<1x2x16x8xf32> {tfm.kv_cache = "0.key"},
    %vc: tensor<1x2x16x8xf32> {tfm.kv_cache = "0.value"})
    -> (tensor<1x1x32xf32> {tfm.output = "y"}, tensor<1x2x16x8xf32> {tfm.kv_cache = "0.key"}, tensor<1x2x16x8xf32> {tfm.kv_cache = "0.value"}) {
  %q = tfm.linear %x, %wq {layout = #tfm.layout<out_in>} : (tensor<1x1x32xf32>, tensor<32x32xf32>) -> tensor<1x1x32xf32>
  %k = tfm.linear %x, %wk {layout = #tfm.layout<out_in>} : (tensor<1x1x32xf32>, tensor<16x32xf32>) -> tensor<1x1x16xf32>
  %v = tfm.linear %x, %wv {layout = #tfm.layout<out_in>} : (tensor<1x1x32xf32>, tensor<16x32xf32>) -> tensor<1x1x16xf32>
  %qh = tfm.split_heads %q {num_heads = 4 : i64} : (tensor<1x1x32xf32>) -> tensor<1x4x1x8xf32>
  %kh = tfm.split_heads %k {num_heads = 2 : i64} : (tensor<1x1x16xf32>) -> tensor<1x2x1x8xf32>
  %vh = tfm.split_heads %v {num_heads = 2 : i64} : (tensor<1x1x16xf32>) -> tensor<1x2x1x8xf32>
  %qr = tfm.rope %qh, %pos : (tensor<1x4x1x8xf32>, index) -> tensor<1x4x1x8xf32>
  %kr = tfm.rope %kh, %pos : (tensor<1x2x1x8xf32>, index) -> tensor<1x2x1x8xf32>
  %kc2 = tfm.kv_cache_write %kc, %kr, %pos : (tensor<1x2x16x8xf32>, tensor<1x2x1x8xf32>, index) -> tensor<1x2x16x8xf32>
  %vc2 = tfm.kv_cache_write %vc, %vh, %pos : (tensor<1x2x16x8xf32>, tensor<1x2x1x8xf32>, index) -> tensor<1x2x16x8xf32>
  %a = tfm.attention %qr, %kc2, %vc2, %pos : (tensor<1x4x1x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, index) -> tensor<1x4x1x8xf32>
  %m = tfm.merge_heads %a : (tensor<1x4x1x8xf32>) -> tensor<1x1x32xf32>
  %o = tfm.linear %m, %wo {layout = #tfm.layout<out_in>} : (tensor<1x1x32xf32>, tensor<32x32xf32>) -> tensor<1x1x32xf32>
  %r = tfm.residual_add %x, %o : (tensor<1x1x32xf32>, tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
  %g = tfm.linear %r, %wg {layout = #tfm.layout<out_in>} : (tensor<1x1x32xf32>, tensor<48x32xf32>) -> tensor<1x1x48xf32>
  %u = tfm.linear %r, %wu {layout = #tfm.layout<out_in>} : (tensor<1x1x32xf32>, tensor<48x32xf32>) -> tensor<1x1x48xf32>
  %s = tfm.swiglu %g, %u : (tensor<1x1x48xf32>, tensor<1x1x48xf32>) -> tensor<1x1x48xf32>
  %d = tfm.linear %s, %wd {layout = #tfm.layout<out_in>} : (tensor<1x1x48xf32>, tensor<32x48xf32>) -> tensor<1x1x32xf32>
  %y = tfm.residual_add %r, %d : (tensor<1x1x32xf32>, tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
  return %y, %kc2, %vc2 : tensor<1x1x32xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
}

// -----

// GPT-2: the fused c_attn (in_out, with bias) is cut piece by piece through
// its tfm.split (each rank's q, k and v columns, concatenated); c_proj's
// bias is added once, after the sum; the GELU MLP is divided as SwiGLU's.
// CHECK-LABEL: func.func @gpt2
// CHECK-SAME: tensor<32x48xf32> {tfm.param = "c_attn.weight", tfm.param_shard = #tfm.shard<axis = 1, pieces = [32, 32, 32], shards = [2, 2, 2]>}
// CHECK-SAME: tensor<48xf32> {tfm.param = "c_attn.bias", tfm.param_shard = #tfm.shard<axis = 0, pieces = [32, 32, 32], shards = [2, 2, 2]>}
// CHECK-SAME: tensor<16x32xf32> {tfm.param = "c_proj.weight", tfm.param_shard = #tfm.shard<axis = 0, pieces = [32], shards = [2]>}
// CHECK-SAME: tensor<32xf32> {tfm.param = "c_proj.bias"}
// CHECK-SAME: tensor<32x64xf32> {tfm.param = "c_fc.weight", tfm.param_shard = #tfm.shard<axis = 1, pieces = [128], shards = [2]>}
// CHECK-SAME: tensor<64x32xf32> {tfm.param = "mlp_proj.weight", tfm.param_shard = #tfm.shard<axis = 0, pieces = [128], shards = [2]>}
// CHECK-SAME: tensor<32xf32> {tfm.param = "mlp_proj.bias"}
// CHECK: tfm.split %{{.*}} : (tensor<2x5x48xf32>) -> (tensor<2x5x16xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>)
// CHECK: %[[P:.*]] = tfm.linear %{{.*}}, %[[W:.*]] : (tensor<2x5x16xf32>, tensor<16x32xf32>) -> tensor<2x5x32xf32>
// CHECK: tfm.all_reduce %[[P]], %{{.*}} : (tensor<2x5x32xf32>, tensor<32xf32>) -> tensor<2x5x32xf32>
// CHECK: tfm.gelu %{{.*}} : (tensor<2x5x64xf32>) -> tensor<2x5x64xf32>
// CHECK: tfm.all_reduce %{{.*}}, %{{.*}} : (tensor<2x5x32xf32>, tensor<32xf32>) -> tensor<2x5x32xf32>
func.func @gpt2(%x: tensor<2x5x32xf32> {tfm.input = "x"},
    %wa: tensor<32x96xf32> {tfm.param = "c_attn.weight"}, %ba: tensor<96xf32> {tfm.param = "c_attn.bias"},
    %wp: tensor<32x32xf32> {tfm.param = "c_proj.weight"}, %bp: tensor<32xf32> {tfm.param = "c_proj.bias"},
    %wf: tensor<32x128xf32> {tfm.param = "c_fc.weight"},
    %wm: tensor<128x32xf32> {tfm.param = "mlp_proj.weight"}, %bm: tensor<32xf32> {tfm.param = "mlp_proj.bias"})
    -> tensor<2x5x32xf32> {
  %qkv = tfm.linear %x, %wa, %ba : (tensor<2x5x32xf32>, tensor<32x96xf32>, tensor<96xf32>) -> tensor<2x5x96xf32>
  %q, %k, %v = tfm.split %qkv : (tensor<2x5x96xf32>) -> (tensor<2x5x32xf32>, tensor<2x5x32xf32>, tensor<2x5x32xf32>)
  %qh = tfm.split_heads %q {num_heads = 4 : i64} : (tensor<2x5x32xf32>) -> tensor<2x4x5x8xf32>
  %kh = tfm.split_heads %k {num_heads = 4 : i64} : (tensor<2x5x32xf32>) -> tensor<2x4x5x8xf32>
  %vh = tfm.split_heads %v {num_heads = 4 : i64} : (tensor<2x5x32xf32>) -> tensor<2x4x5x8xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  %m = tfm.merge_heads %a : (tensor<2x4x5x8xf32>) -> tensor<2x5x32xf32>
  %o = tfm.linear %m, %wp, %bp : (tensor<2x5x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<2x5x32xf32>
  %r = tfm.residual_add %x, %o : (tensor<2x5x32xf32>, tensor<2x5x32xf32>) -> tensor<2x5x32xf32>
  %f = tfm.linear %r, %wf : (tensor<2x5x32xf32>, tensor<32x128xf32>) -> tensor<2x5x128xf32>
  %g = tfm.gelu %f {approximate = #tfm.gelu<tanh>} : (tensor<2x5x128xf32>) -> tensor<2x5x128xf32>
  %d = tfm.linear %g, %wm, %bm : (tensor<2x5x128xf32>, tensor<128x32xf32>, tensor<32xf32>) -> tensor<2x5x32xf32>
  %y = tfm.residual_add %r, %d : (tensor<2x5x32xf32>, tensor<2x5x32xf32>) -> tensor<2x5x32xf32>
  return %y : tensor<2x5x32xf32>
}

// -----

// A norm over every head's features (OLMo2's q_norm) needs all of them: the
// attention stays whole on every rank; its MLP is still divided.
// CHECK-LABEL: func.func @norm_over_heads
// CHECK-SAME: tensor<32x32xf32> {tfm.param = "q_proj.weight"}
// CHECK-SAME: tensor<32x32xf32> {tfm.param = "o_proj.weight"}
// CHECK-SAME: tensor<24x32xf32> {tfm.param = "up_proj.weight", tfm.param_shard
// CHECK: tfm.attention {{.*}} -> tensor<1x4x3x8xf32>
// CHECK-NOT: tfm.all_reduce
// CHECK: tfm.relu
// CHECK: tfm.all_reduce
func.func @norm_over_heads(%x: tensor<1x3x32xf32> {tfm.input = "x"},
    %wq: tensor<32x32xf32> {tfm.param = "q_proj.weight"},
    %nq: tensor<32xf32> {tfm.param = "q_norm.weight"},
    %wo: tensor<32x32xf32> {tfm.param = "o_proj.weight"},
    %wu: tensor<48x32xf32> {tfm.param = "up_proj.weight"},
    %wd: tensor<32x48xf32> {tfm.param = "down_proj.weight"}) -> tensor<1x3x32xf32> {
  %q = tfm.linear %x, %wq {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %qn = tfm.rms_norm %q, %nq : (tensor<1x3x32xf32>, tensor<32xf32>) -> tensor<1x3x32xf32>
  %qh = tfm.split_heads %qn {num_heads = 4 : i64} : (tensor<1x3x32xf32>) -> tensor<1x4x3x8xf32>
  %a = tfm.attention %qh, %qh, %qh : (tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x8xf32>
  %m = tfm.merge_heads %a : (tensor<1x4x3x8xf32>) -> tensor<1x3x32xf32>
  %o = tfm.linear %m, %wo {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %u = tfm.linear %o, %wu {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<48x32xf32>) -> tensor<1x3x48xf32>
  %h = tfm.relu %u : (tensor<1x3x48xf32>) -> tensor<1x3x48xf32>
  %d = tfm.linear %h, %wd {layout = #tfm.layout<out_in>} : (tensor<1x3x48xf32>, tensor<32x48xf32>) -> tensor<1x3x32xf32>
  return %d : tensor<1x3x32xf32>
}

// -----

// A mixture of experts whose experts the ranks divide is expert-parallel:
// at 2 ranks each holds one whole expert, the op the operands of expert 0,
// each naming every rank's tensor in its place, its routing from expert
// tfm.rank * 1; the other expert's arguments are dropped. At 4 ranks (more
// ranks than experts) each expert's intermediate features are divided.
// Either way the router is whole and the partial outputs summed.
// CHECK-LABEL: func.func @experts
// CHECK-SAME: tensor<2x16xf32> {tfm.param = "router.weight"}
// CHECK-SAME: tensor<24x16xf32> {tfm.param = "e0.w1", tfm.param_rank_names = ["e0.w1", "e1.w1"]}
// CHECK-SAME: tensor<24x16xf32> {tfm.param = "e0.w3", tfm.param_rank_names = ["e0.w3", "e1.w3"]}
// CHECK-SAME: tensor<16x24xf32> {tfm.param = "e0.w2", tfm.param_rank_names = ["e0.w2", "e1.w2"]}) -> tensor<1x4x16xf32>
// CHECK: %[[RANK:.*]] = tfm.rank
// CHECK: %[[FIRST:.*]] = arith.muli %[[RANK]], %c1 : index
// CHECK: %[[Y:.*]] = tfm.moe %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} first_expert(%[[FIRST]]) {top_k = 1 : i64} : (tensor<1x4x16xf32>, tensor<2x16xf32>, tensor<24x16xf32>, tensor<24x16xf32>, tensor<16x24xf32>, index)
// CHECK: tfm.all_reduce %[[Y]] : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
// FOUR-LABEL: func.func @experts
// FOUR-SAME: tensor<6x16xf32> {tfm.param = "e0.w1", tfm.param_shard = #tfm.shard<axis = 0, pieces = [24], shards = [4]>}
// FOUR-SAME: tensor<16x6xf32> {tfm.param = "e1.w2", tfm.param_shard = #tfm.shard<axis = 1, pieces = [24], shards = [4]>}
// FOUR-NOT: first_expert
// FOUR: tfm.all_reduce
func.func @experts(%x: tensor<1x4x16xf32> {tfm.input = "x"},
    %r: tensor<2x16xf32> {tfm.param = "router.weight"},
    %g0: tensor<24x16xf32> {tfm.param = "e0.w1"}, %u0: tensor<24x16xf32> {tfm.param = "e0.w3"}, %d0: tensor<16x24xf32> {tfm.param = "e0.w2"},
    %g1: tensor<24x16xf32> {tfm.param = "e1.w1"}, %u1: tensor<24x16xf32> {tfm.param = "e1.w3"}, %d1: tensor<16x24xf32> {tfm.param = "e1.w2"})
    -> tensor<1x4x16xf32> {
  %y = tfm.moe %x, %r, %g0, %u0, %d0, %g1, %u1, %d1 {top_k = 1 : i64} : (tensor<1x4x16xf32>, tensor<2x16xf32>, tensor<24x16xf32>, tensor<24x16xf32>, tensor<16x24xf32>, tensor<24x16xf32>, tensor<24x16xf32>, tensor<16x24xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// Four experts: two a rank at 2 ranks (rank r holds experts 2r and 2r + 1),
// one at 4. The ledger counts a rank's experts and the whole router.
// CHECK-LABEL: func.func @four_experts
// CHECK-SAME: {tfm.param = "e0.w1", tfm.param_rank_names = ["e0.w1", "e2.w1"]}
// CHECK-SAME: {tfm.param = "e1.w2", tfm.param_rank_names = ["e1.w2", "e3.w2"]}) -> tensor<1x4x16xf32>
// CHECK: arith.muli %{{.*}}, %c2 : index
// CHECK: tfm.moe {{.*}} first_expert(%{{.*}}) {top_k = 2 : i64} : (tensor<1x4x16xf32>, tensor<4x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, index)
// FOUR-LABEL: func.func @four_experts
// FOUR-SAME: {tfm.param = "e0.w3", tfm.param_rank_names = ["e0.w3", "e1.w3", "e2.w3", "e3.w3"]}
// FOUR-SAME: {tfm.param = "e0.w2", tfm.param_rank_names = ["e0.w2", "e1.w2", "e2.w2", "e3.w2"]}) -> tensor<1x4x16xf32>
// FOUR: tfm.moe {{.*}} first_expert(%{{.*}}) {top_k = 2 : i64} : (tensor<1x4x16xf32>, tensor<4x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, index)
// LEDGER-LABEL: @four_experts
// LEDGER: tfm.moe {{.*}} 832
func.func @four_experts(%x: tensor<1x4x16xf32> {tfm.input = "x"},
    %r: tensor<4x16xf32> {tfm.param = "router.weight"},
    %g0: tensor<8x16xf32> {tfm.param = "e0.w1"}, %u0: tensor<8x16xf32> {tfm.param = "e0.w3"}, %d0: tensor<16x8xf32> {tfm.param = "e0.w2"},
    %g1: tensor<8x16xf32> {tfm.param = "e1.w1"}, %u1: tensor<8x16xf32> {tfm.param = "e1.w3"}, %d1: tensor<16x8xf32> {tfm.param = "e1.w2"},
    %g2: tensor<8x16xf32> {tfm.param = "e2.w1"}, %u2: tensor<8x16xf32> {tfm.param = "e2.w3"}, %d2: tensor<16x8xf32> {tfm.param = "e2.w2"},
    %g3: tensor<8x16xf32> {tfm.param = "e3.w1"}, %u3: tensor<8x16xf32> {tfm.param = "e3.w3"}, %d3: tensor<16x8xf32> {tfm.param = "e3.w2"})
    -> tensor<1x4x16xf32> {
  %y = tfm.moe %x, %r, %g0, %u0, %d0, %g1, %u1, %d1, %g2, %u2, %d2, %g3, %u3, %d3 {top_k = 2 : i64} : (tensor<1x4x16xf32>, tensor<4x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// The LM head is vocab-parallel (each rank's rows of the weight, its
// logits gathered); a head tied to the embedding stays whole, as the
// gather reads the whole table (and so does the embedding).
// CHECK-LABEL: func.func @heads
// CHECK-SAME: tensor<100x16xf32> {tfm.param = "embed.weight"}
// CHECK-SAME: tensor<50x16xf32> {tfm.param = "lm_head.weight", tfm.param_shard = #tfm.shard<axis = 0, pieces = [100], shards = [2]>}
// CHECK: %[[L:.*]] = tfm.lm_head %{{.*}}, %{{.*}} : (tensor<1x4x16xf32>, tensor<50x16xf32>) -> tensor<1x4x50xf32>
// CHECK: %[[ALL:.*]] = tfm.all_gather %[[L]] : (tensor<1x4x50xf32>) -> tensor<1x4x100xf32>
// CHECK: %[[T:.*]] = tfm.lm_head %{{.*}}, %{{.*}} : (tensor<1x4x16xf32>, tensor<100x16xf32>) -> tensor<1x4x100xf32>
// CHECK: return %[[ALL]], %[[T]]
func.func @heads(%ids: tensor<1x4xi64> {tfm.input = "ids"},
    %e: tensor<100x16xf32> {tfm.param = "embed.weight"},
    %w: tensor<100x16xf32> {tfm.param = "lm_head.weight"})
    -> (tensor<1x4x100xf32>, tensor<1x4x100xf32>) {
  %h = tfm.embedding %ids, %e : (tensor<1x4xi64>, tensor<100x16xf32>) -> tensor<1x4x16xf32>
  %l = tfm.lm_head %h, %w : (tensor<1x4x16xf32>, tensor<100x16xf32>) -> tensor<1x4x100xf32>
  %t = tfm.lm_head %h, %e : (tensor<1x4x16xf32>, tensor<100x16xf32>) -> tensor<1x4x100xf32>
  return %l, %t : tensor<1x4x100xf32>, tensor<1x4x100xf32>
}

// -----

// An untied embedding is vocab-parallel too: each rank holds V / ranks
// rows from rank * V / ranks (tfm.rank), gathers the ids among them (zero
// rows for the others) and an all-reduce sums the ranks' lookups; the
// ledger counts a rank's rows. A vocabulary the ranks do not divide stays
// whole.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: tensor<50x16xf32> {tfm.param = "embed.weight", tfm.param_shard = #tfm.shard<axis = 0, pieces = [100], shards = [2]>}
// CHECK: %[[RANK:.*]] = tfm.rank
// CHECK: %[[FIRST:.*]] = arith.muli %[[RANK]], %c50 : index
// CHECK: %[[ROWS:.*]] = tfm.embedding %{{.*}}, %{{.*}}, %[[FIRST]] : (tensor<1x4xi64>, tensor<50x16xf32>, index) -> tensor<1x4x16xf32>
// CHECK: %[[SUM:.*]] = tfm.all_reduce %[[ROWS]] : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
// CHECK: return %[[SUM]]
// FOUR-LABEL: func.func @embedding
// FOUR-SAME: tensor<25x16xf32> {tfm.param = "embed.weight", tfm.param_shard = #tfm.shard<axis = 0, pieces = [100], shards = [4]>}
// FOUR: arith.muli %{{.*}}, %c25 : index
// LEDGER-LABEL: @embedding
// LEDGER: tensor parallel: 2 ranks
func.func @embedding(%ids: tensor<1x4xi64> {tfm.input = "ids"},
    %e: tensor<100x16xf32> {tfm.param = "embed.weight"}) -> tensor<1x4x16xf32> {
  %h = tfm.embedding %ids, %e : (tensor<1x4xi64>, tensor<100x16xf32>) -> tensor<1x4x16xf32>
  return %h : tensor<1x4x16xf32>
}

// -----

// CHECK-LABEL: func.func @embedding_whole
// CHECK-SAME: tensor<99x16xf32> {tfm.param = "embed.weight"})
// CHECK-NOT: tfm.rank
// CHECK-NOT: tfm.all_reduce
func.func @embedding_whole(%ids: tensor<1x4xi64> {tfm.input = "ids"},
    %e: tensor<99x16xf32> {tfm.param = "embed.weight"}) -> tensor<1x4x16xf32> {
  %h = tfm.embedding %ids, %e : (tensor<1x4xi64>, tensor<99x16xf32>) -> tensor<1x4x16xf32>
  return %h : tensor<1x4x16xf32>
}

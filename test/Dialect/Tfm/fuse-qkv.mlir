// RUN: transformer-opt %s -split-input-file --tfm-fuse-qkv | FileCheck %s

// GQA with out_in weights and no bias: Q is 64->64, K and V are 64->16.
// CHECK-LABEL: func.func @gqa_out_in
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x5x64xf32> {tfm.input = "hidden"}
// CHECK-SAME: %[[O:[a-z0-9]+]]: tensor<64x64xf32> {tfm.param = "o.weight"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<96x64xf32> {tfm.param = "concat(q.weight, k.weight, v.weight)", tfm.param_concat_axis = 0 : i64, tfm.param_parts = ["q.weight", "k.weight", "v.weight"]}
// CHECK-NOT: tfm.linear %[[X]], %{{.*}} : (tensor<1x5x64xf32>, tensor<64x64xf32>)
// CHECK: %[[F:.+]] = tfm.linear %[[X]], %[[W]] {layout = #tfm.layout<out_in>} : (tensor<1x5x64xf32>, tensor<96x64xf32>) -> tensor<1x5x96xf32>
// CHECK: %[[S:.+]]:3 = tfm.split %[[F]] : (tensor<1x5x96xf32>) -> (tensor<1x5x64xf32>, tensor<1x5x16xf32>, tensor<1x5x16xf32>)
// CHECK: tfm.split_heads %[[S]]#0 {num_heads = 4 : i64}
// CHECK: tfm.split_heads %[[S]]#1 {num_heads = 1 : i64}
// CHECK: tfm.split_heads %[[S]]#2 {num_heads = 1 : i64}
// CHECK-COUNT-1: tfm.linear
func.func @gqa_out_in(%x: tensor<1x5x64xf32> {tfm.input = "hidden"},
                      %wq: tensor<64x64xf32> {tfm.param = "q.weight"},
                      %wk: tensor<16x64xf32> {tfm.param = "k.weight"},
                      %wv: tensor<16x64xf32> {tfm.param = "v.weight"},
                      %wo: tensor<64x64xf32> {tfm.param = "o.weight"}) -> tensor<1x5x64xf32> {
  %q = tfm.linear %x, %wq {layout = #tfm.layout<out_in>} : (tensor<1x5x64xf32>, tensor<64x64xf32>) -> tensor<1x5x64xf32>
  %k = tfm.linear %x, %wk {layout = #tfm.layout<out_in>} : (tensor<1x5x64xf32>, tensor<16x64xf32>) -> tensor<1x5x16xf32>
  %v = tfm.linear %x, %wv {layout = #tfm.layout<out_in>} : (tensor<1x5x64xf32>, tensor<16x64xf32>) -> tensor<1x5x16xf32>
  %qh = tfm.split_heads %q {num_heads = 4 : i64} : (tensor<1x5x64xf32>) -> tensor<1x4x5x16xf32>
  %kh = tfm.split_heads %k {num_heads = 1 : i64} : (tensor<1x5x16xf32>) -> tensor<1x1x5x16xf32>
  %vh = tfm.split_heads %v {num_heads = 1 : i64} : (tensor<1x5x16xf32>) -> tensor<1x1x5x16xf32>
  %qr = tfm.rope %qh : (tensor<1x4x5x16xf32>) -> tensor<1x4x5x16xf32>
  %kr = tfm.rope %kh : (tensor<1x1x5x16xf32>) -> tensor<1x1x5x16xf32>
  %a = tfm.attention %qr, %kr, %vh : (tensor<1x4x5x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>) -> tensor<1x4x5x16xf32>
  %m = tfm.merge_heads %a : (tensor<1x4x5x16xf32>) -> tensor<1x5x64xf32>
  %o = tfm.linear %m, %wo {layout = #tfm.layout<out_in>} : (tensor<1x5x64xf32>, tensor<64x64xf32>) -> tensor<1x5x64xf32>
  return %o : tensor<1x5x64xf32>
}

// -----

// A decode step's attention reads the KV caches its keys and values were
// written into: the projections are found through tfm.kv_cache_write and
// fused as in @gqa_out_in (one GEMV and one pass over the hidden state per
// token instead of three).
// CHECK-LABEL: func.func @decode_through_kv_cache
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<96x64xf32> {tfm.param = "concat(q.weight, k.weight, v.weight)", tfm.param_concat_axis = 0 : i64, tfm.param_parts = ["q.weight", "k.weight", "v.weight"]}
// CHECK: %[[F:.+]] = tfm.linear %{{.*}}, %[[W]] {layout = #tfm.layout<out_in>} : (tensor<1x1x64xf32>, tensor<96x64xf32>) -> tensor<1x1x96xf32>
// CHECK: %[[S:.+]]:3 = tfm.split %[[F]]
// CHECK: %[[KH:.+]] = tfm.split_heads %[[S]]#1
// CHECK: %[[VH:.+]] = tfm.split_heads %[[S]]#2
// CHECK: %[[KR:.+]] = tfm.rope %[[KH]]
// CHECK: tfm.kv_cache_write %{{.*}}, %[[KR]], %{{.*}}
// CHECK: tfm.kv_cache_write %{{.*}}, %[[VH]], %{{.*}}
// CHECK-COUNT-1: tfm.linear
func.func @decode_through_kv_cache(
    %x: tensor<1x1x64xf32> {tfm.input = "hidden"}, %pos: index {tfm.input = "position"},
    %wq: tensor<64x64xf32> {tfm.param = "q.weight"},
    %wk: tensor<16x64xf32> {tfm.param = "k.weight"},
    %wv: tensor<16x64xf32> {tfm.param = "v.weight"},
    %wo: tensor<64x64xf32> {tfm.param = "o.weight"},
    %kc: tensor<1x1x32x16xf32> {tfm.kv_cache = "0.key"},
    %vc: tensor<1x1x32x16xf32> {tfm.kv_cache = "0.value"})
    -> (tensor<1x1x64xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>) {
  %q = tfm.linear %x, %wq {layout = #tfm.layout<out_in>} : (tensor<1x1x64xf32>, tensor<64x64xf32>) -> tensor<1x1x64xf32>
  %k = tfm.linear %x, %wk {layout = #tfm.layout<out_in>} : (tensor<1x1x64xf32>, tensor<16x64xf32>) -> tensor<1x1x16xf32>
  %v = tfm.linear %x, %wv {layout = #tfm.layout<out_in>} : (tensor<1x1x64xf32>, tensor<16x64xf32>) -> tensor<1x1x16xf32>
  %qh = tfm.split_heads %q {num_heads = 4 : i64} : (tensor<1x1x64xf32>) -> tensor<1x4x1x16xf32>
  %kh = tfm.split_heads %k {num_heads = 1 : i64} : (tensor<1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %vh = tfm.split_heads %v {num_heads = 1 : i64} : (tensor<1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %qr = tfm.rope %qh : (tensor<1x4x1x16xf32>) -> tensor<1x4x1x16xf32>
  %kr = tfm.rope %kh : (tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %kw = tfm.kv_cache_write %kc, %kr, %pos : (tensor<1x1x32x16xf32>, tensor<1x1x1x16xf32>, index) -> tensor<1x1x32x16xf32>
  %vw = tfm.kv_cache_write %vc, %vh, %pos : (tensor<1x1x32x16xf32>, tensor<1x1x1x16xf32>, index) -> tensor<1x1x32x16xf32>
  %a = tfm.attention %qr, %kw, %vw, %pos : (tensor<1x4x1x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, index) -> tensor<1x4x1x16xf32>
  %m = tfm.merge_heads %a : (tensor<1x4x1x16xf32>) -> tensor<1x1x64xf32>
  %o = tfm.linear %m, %wo {layout = #tfm.layout<out_in>} : (tensor<1x1x64xf32>, tensor<64x64xf32>) -> tensor<1x1x64xf32>
  return %o, %kw, %vw : tensor<1x1x64xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>
}

// -----

// MHA with in_out weights and biases: weights concatenate along columns,
// biases along their only axis.
// CHECK-LABEL: func.func @mha_in_out_bias
// CHECK-SAME: tensor<32x96xf32> {tfm.param = "concat(q.w, k.w, v.w)", tfm.param_concat_axis = 1 : i64, tfm.param_parts = ["q.w", "k.w", "v.w"]}
// CHECK-SAME: tensor<96xf32> {tfm.param = "concat(q.b, k.b, v.b)", tfm.param_concat_axis = 0 : i64, tfm.param_parts = ["q.b", "k.b", "v.b"]}
// CHECK: %[[F:.+]] = tfm.linear %arg0, %{{.+}}, %{{.+}} : (tensor<2x3x32xf32>, tensor<32x96xf32>, tensor<96xf32>) -> tensor<2x3x96xf32>
// CHECK: tfm.split %[[F]] : (tensor<2x3x96xf32>) -> (tensor<2x3x32xf32>, tensor<2x3x32xf32>, tensor<2x3x32xf32>)
// CHECK-NOT: tfm.linear
func.func @mha_in_out_bias(%x: tensor<2x3x32xf32>,
    %wq: tensor<32x32xf32> {tfm.param = "q.w"}, %bq: tensor<32xf32> {tfm.param = "q.b"},
    %wk: tensor<32x32xf32> {tfm.param = "k.w"}, %bk: tensor<32xf32> {tfm.param = "k.b"},
    %wv: tensor<32x32xf32> {tfm.param = "v.w"}, %bv: tensor<32xf32> {tfm.param = "v.b"}) -> tensor<2x2x3x16xf32> {
  %q = tfm.linear %x, %wq, %bq : (tensor<2x3x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<2x3x32xf32>
  %k = tfm.linear %x, %wk, %bk : (tensor<2x3x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<2x3x32xf32>
  %v = tfm.linear %x, %wv, %bv : (tensor<2x3x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<2x3x32xf32>
  %qh = tfm.split_heads %q {num_heads = 2 : i64} : (tensor<2x3x32xf32>) -> tensor<2x2x3x16xf32>
  %kh = tfm.split_heads %k {num_heads = 2 : i64} : (tensor<2x3x32xf32>) -> tensor<2x2x3x16xf32>
  %vh = tfm.split_heads %v {num_heads = 2 : i64} : (tensor<2x3x32xf32>) -> tensor<2x2x3x16xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>) -> tensor<2x2x3x16xf32>
  return %a : tensor<2x2x3x16xf32>
}

// -----

// Projections of different inputs are left alone.
// CHECK-LABEL: func.func @different_inputs
// CHECK-COUNT-3: tfm.linear
// CHECK-NOT: tfm.split %
func.func @different_inputs(%x: tensor<1x3x32xf32>, %y: tensor<1x3x32xf32>,
    %wq: tensor<32x32xf32> {tfm.param = "q"}, %wk: tensor<32x32xf32> {tfm.param = "k"},
    %wv: tensor<32x32xf32> {tfm.param = "v"}) -> tensor<1x2x3x16xf32> {
  %q = tfm.linear %x, %wq : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %k = tfm.linear %y, %wk : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %v = tfm.linear %y, %wv : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %qh = tfm.split_heads %q {num_heads = 2 : i64} : (tensor<1x3x32xf32>) -> tensor<1x2x3x16xf32>
  %kh = tfm.split_heads %k {num_heads = 2 : i64} : (tensor<1x3x32xf32>) -> tensor<1x2x3x16xf32>
  %vh = tfm.split_heads %v {num_heads = 2 : i64} : (tensor<1x3x32xf32>) -> tensor<1x2x3x16xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<1x2x3x16xf32>, tensor<1x2x3x16xf32>, tensor<1x2x3x16xf32>) -> tensor<1x2x3x16xf32>
  return %a : tensor<1x2x3x16xf32>
}

// -----

// Projections whose weight layouts differ are left alone.
// CHECK-LABEL: func.func @mixed_layouts
// CHECK-COUNT-3: tfm.linear
// CHECK-NOT: tfm.split %
func.func @mixed_layouts(%x: tensor<1x3x32xf32>,
    %wq: tensor<32x32xf32> {tfm.param = "q"}, %wk: tensor<32x32xf32> {tfm.param = "k"},
    %wv: tensor<32x32xf32> {tfm.param = "v"}) -> tensor<1x2x3x16xf32> {
  %q = tfm.linear %x, %wq {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %k = tfm.linear %x, %wk : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %v = tfm.linear %x, %wv : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %qh = tfm.split_heads %q {num_heads = 2 : i64} : (tensor<1x3x32xf32>) -> tensor<1x2x3x16xf32>
  %kh = tfm.split_heads %k {num_heads = 2 : i64} : (tensor<1x3x32xf32>) -> tensor<1x2x3x16xf32>
  %vh = tfm.split_heads %v {num_heads = 2 : i64} : (tensor<1x3x32xf32>) -> tensor<1x2x3x16xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<1x2x3x16xf32>, tensor<1x2x3x16xf32>, tensor<1x2x3x16xf32>) -> tensor<1x2x3x16xf32>
  return %a : tensor<1x2x3x16xf32>
}

// -----

// A value projection in f32 (truncated to f16 afterwards) does not join the
// f16 query and key projections.
// CHECK-LABEL: func.func @f16_and_f32
// CHECK-COUNT-3: tfm.linear
// CHECK-NOT: tfm.split %
func.func @f16_and_f32(%x: tensor<1x3x32xf16>,
    %wq: tensor<32x32xf16> {tfm.param = "q"}, %wk: tensor<32x32xf16> {tfm.param = "k"},
    %wv: tensor<32x32xf16> {tfm.param = "v"}, %x32: tensor<1x3x32xf32>, %wv32: tensor<32x32xf32> {tfm.param = "v32"}) -> tensor<1x2x3x16xf16> {
  %q = tfm.linear %x, %wq : (tensor<1x3x32xf16>, tensor<32x32xf16>) -> tensor<1x3x32xf16>
  %k = tfm.linear %x, %wk : (tensor<1x3x32xf16>, tensor<32x32xf16>) -> tensor<1x3x32xf16>
  %v = tfm.linear %x, %wv : (tensor<1x3x32xf16>, tensor<32x32xf16>) -> tensor<1x3x32xf16>
  %v32 = tfm.linear %x32, %wv32 : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %qh = tfm.split_heads %q {num_heads = 2 : i64} : (tensor<1x3x32xf16>) -> tensor<1x2x3x16xf16>
  %kh = tfm.split_heads %k {num_heads = 2 : i64} : (tensor<1x3x32xf16>) -> tensor<1x2x3x16xf16>
  %vh = tfm.split_heads %v32 {num_heads = 2 : i64} : (tensor<1x3x32xf32>) -> tensor<1x2x3x16xf32>
  %vh16 = arith.truncf %vh : tensor<1x2x3x16xf32> to tensor<1x2x3x16xf16>
  %a = tfm.attention %qh, %kh, %vh16 : (tensor<1x2x3x16xf16>, tensor<1x2x3x16xf16>, tensor<1x2x3x16xf16>) -> tensor<1x2x3x16xf16>
  return %a : tensor<1x2x3x16xf16>
}

// -----

// Weights that are not parameters (here computed in the function) are left
// alone: concatenating them would cost a copy on every call.
// CHECK-LABEL: func.func @not_parameters
// CHECK-COUNT-3: tfm.linear
// CHECK-NOT: tfm.split %
func.func @not_parameters(%x: tensor<1x3x32xf32>, %w: tensor<32x32xf32>) -> tensor<1x2x3x16xf32> {
  %q = tfm.linear %x, %w : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %k = tfm.linear %x, %w : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %v = tfm.linear %x, %w : (tensor<1x3x32xf32>, tensor<32x32xf32>) -> tensor<1x3x32xf32>
  %qh = tfm.split_heads %q {num_heads = 2 : i64} : (tensor<1x3x32xf32>) -> tensor<1x2x3x16xf32>
  %kh = tfm.split_heads %k {num_heads = 2 : i64} : (tensor<1x3x32xf32>) -> tensor<1x2x3x16xf32>
  %vh = tfm.split_heads %v {num_heads = 2 : i64} : (tensor<1x3x32xf32>) -> tensor<1x2x3x16xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<1x2x3x16xf32>, tensor<1x2x3x16xf32>, tensor<1x2x3x16xf32>) -> tensor<1x2x3x16xf32>
  return %a : tensor<1x2x3x16xf32>
}

// -----

// A rank's column-parallel q/k/v slices (tfm-tensor-parallel) fuse into the
// rank's slice of the concatenation, the parts its pieces; k/v replicated
// over the ranks keep their own block counts.
// CHECK-LABEL: func.func @rank_slices
// CHECK-SAME: tensor<24x32xf32> {tfm.param = "concat(q, k, v)", tfm.param_concat_axis = 0 : i64, tfm.param_parts = ["q", "k", "v"], tfm.param_shard = #tfm.shard<axis = 0, pieces = [32, 16, 16], shards = [4, 2, 2]>}
// CHECK: tfm.linear %{{.*}} {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<24x32xf32>) -> tensor<1x3x24xf32>
module attributes {tfm.tensor_parallel = 4 : i64} {
  func.func @rank_slices(%x: tensor<1x3x32xf32> {tfm.input = "x"},
      %wq: tensor<8x32xf32> {tfm.param = "q", tfm.param_shard = #tfm.shard<axis = 0, pieces = [32], shards = [4]>},
      %wk: tensor<8x32xf32> {tfm.param = "k", tfm.param_shard = #tfm.shard<axis = 0, pieces = [16], shards = [2]>},
      %wv: tensor<8x32xf32> {tfm.param = "v", tfm.param_shard = #tfm.shard<axis = 0, pieces = [16], shards = [2]>})
      -> tensor<1x1x3x8xf32> {
    %q = tfm.linear %x, %wq {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<8x32xf32>) -> tensor<1x3x8xf32>
    %k = tfm.linear %x, %wk {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<8x32xf32>) -> tensor<1x3x8xf32>
    %v = tfm.linear %x, %wv {layout = #tfm.layout<out_in>} : (tensor<1x3x32xf32>, tensor<8x32xf32>) -> tensor<1x3x8xf32>
    %qh = tfm.split_heads %q {num_heads = 1 : i64} : (tensor<1x3x8xf32>) -> tensor<1x1x3x8xf32>
    %kh = tfm.split_heads %k {num_heads = 1 : i64} : (tensor<1x3x8xf32>) -> tensor<1x1x3x8xf32>
    %vh = tfm.split_heads %v {num_heads = 1 : i64} : (tensor<1x3x8xf32>) -> tensor<1x1x3x8xf32>
    %a = tfm.attention %qh, %kh, %vh : (tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>) -> tensor<1x1x3x8xf32>
    return %a : tensor<1x1x3x8xf32>
  }
}

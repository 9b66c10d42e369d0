// Positive cases print unchanged (FileCheck); negative cases fail the pass with
// the diagnostics and notes given inline.
// RUN: transformer-opt %s -split-input-file -verify-diagnostics --tfm-verify-contracts | FileCheck %s

// A correct GPT-2 pre-LN block passes unchanged.
// CHECK-LABEL: func.func @gpt2_block
// CHECK-SAME: attributes {tfm.block}
// CHECK: tfm.layer_norm
// CHECK: tfm.linear
// CHECK: tfm.split
// CHECK-COUNT-3: tfm.split_heads
// CHECK: tfm.attention
// CHECK: tfm.merge_heads
// CHECK: tfm.linear
// CHECK: %[[X1:.+]] = tfm.residual_add %arg0, %{{.+}} : (tensor<2x8x768xf32>, tensor<2x8x768xf32>) -> tensor<2x8x768xf32>
// CHECK: tfm.layer_norm %[[X1]]
// CHECK: tfm.linear
// CHECK: tfm.gelu
// CHECK: %[[P:.+]] = tfm.linear
// CHECK: %[[X2:.+]] = tfm.residual_add %[[X1]], %[[P]] : (tensor<2x8x768xf32>, tensor<2x8x768xf32>) -> tensor<2x8x768xf32>
// CHECK: return %[[X2]]
func.func @gpt2_block(
    %x: tensor<2x8x768xf32> {tfm.input = "hidden"},
    %ln1_g: tensor<768xf32> {tfm.param = "h.0.ln_1.weight"},
    %ln1_b: tensor<768xf32> {tfm.param = "h.0.ln_1.bias"},
    %attn_w: tensor<768x2304xf32> {tfm.param = "h.0.attn.c_attn.weight"},
    %attn_b: tensor<2304xf32> {tfm.param = "h.0.attn.c_attn.bias"},
    %proj_w: tensor<768x768xf32> {tfm.param = "h.0.attn.c_proj.weight"},
    %proj_b: tensor<768xf32> {tfm.param = "h.0.attn.c_proj.bias"},
    %ln2_g: tensor<768xf32> {tfm.param = "h.0.ln_2.weight"},
    %ln2_b: tensor<768xf32> {tfm.param = "h.0.ln_2.bias"},
    %fc_w: tensor<768x3072xf32> {tfm.param = "h.0.mlp.c_fc.weight"},
    %fc_b: tensor<3072xf32> {tfm.param = "h.0.mlp.c_fc.bias"},
    %mproj_w: tensor<3072x768xf32> {tfm.param = "h.0.mlp.c_proj.weight"},
    %mproj_b: tensor<768xf32> {tfm.param = "h.0.mlp.c_proj.bias"})
    -> (tensor<2x8x768xf32> {tfm.output = "hidden"}) attributes {tfm.block} {
  %h = tfm.layer_norm %x, %ln1_g, %ln1_b : (tensor<2x8x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x8x768xf32>
  %qkv = tfm.linear %h, %attn_w, %attn_b : (tensor<2x8x768xf32>, tensor<768x2304xf32>, tensor<2304xf32>) -> tensor<2x8x2304xf32>
  %q, %k, %v = tfm.split %qkv : (tensor<2x8x2304xf32>) -> (tensor<2x8x768xf32>, tensor<2x8x768xf32>, tensor<2x8x768xf32>)
  %qh = tfm.split_heads %q {num_heads = 12} : (tensor<2x8x768xf32>) -> tensor<2x12x8x64xf32>
  %kh = tfm.split_heads %k {num_heads = 12} : (tensor<2x8x768xf32>) -> tensor<2x12x8x64xf32>
  %vh = tfm.split_heads %v {num_heads = 12} : (tensor<2x8x768xf32>) -> tensor<2x12x8x64xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<2x12x8x64xf32>, tensor<2x12x8x64xf32>, tensor<2x12x8x64xf32>) -> tensor<2x12x8x64xf32>
  %m = tfm.merge_heads %a : (tensor<2x12x8x64xf32>) -> tensor<2x8x768xf32>
  %o = tfm.linear %m, %proj_w, %proj_b : (tensor<2x8x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<2x8x768xf32>
  %x1 = tfm.residual_add %x, %o : (tensor<2x8x768xf32>, tensor<2x8x768xf32>) -> tensor<2x8x768xf32>
  %h2 = tfm.layer_norm %x1, %ln2_g, %ln2_b : (tensor<2x8x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x8x768xf32>
  %f = tfm.linear %h2, %fc_w, %fc_b : (tensor<2x8x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<2x8x3072xf32>
  %g = tfm.gelu %f {approximate = #tfm.gelu<tanh>} : (tensor<2x8x3072xf32>) -> tensor<2x8x3072xf32>
  %p = tfm.linear %g, %mproj_w, %mproj_b : (tensor<2x8x3072xf32>, tensor<3072x768xf32>, tensor<768xf32>) -> tensor<2x8x768xf32>
  %x2 = tfm.residual_add %x1, %p : (tensor<2x8x768xf32>, tensor<2x8x768xf32>) -> tensor<2x8x768xf32>
  return %x2 : tensor<2x8x768xf32>
}

// -----

// A Llama block in bf16: RMSNorm, GQA with RoPE and dh (32) != d/Hq (64/4 = 16),
// a SwiGLU MLP. Also correct.
// CHECK-LABEL: func.func @llama_block
// CHECK-COUNT-2: tfm.residual_add
func.func @llama_block(
    %x: tensor<1x4x64xbf16>, %pos: index,
    %n1: tensor<64xbf16>, %wq: tensor<128x64xbf16>, %wk: tensor<64x64xbf16>,
    %wv: tensor<64x64xbf16>, %wo: tensor<64x128xbf16>, %n2: tensor<64xbf16>,
    %wg: tensor<96x64xbf16>, %wu: tensor<96x64xbf16>, %wd: tensor<64x96xbf16>)
    -> tensor<1x4x64xbf16> attributes {tfm.block} {
  %h = tfm.rms_norm %x, %n1 : (tensor<1x4x64xbf16>, tensor<64xbf16>) -> tensor<1x4x64xbf16>
  %q = tfm.linear %h, %wq {layout = #tfm.layout<out_in>} : (tensor<1x4x64xbf16>, tensor<128x64xbf16>) -> tensor<1x4x128xbf16>
  %k = tfm.linear %h, %wk {layout = #tfm.layout<out_in>} : (tensor<1x4x64xbf16>, tensor<64x64xbf16>) -> tensor<1x4x64xbf16>
  %v = tfm.linear %h, %wv {layout = #tfm.layout<out_in>} : (tensor<1x4x64xbf16>, tensor<64x64xbf16>) -> tensor<1x4x64xbf16>
  %qh = tfm.split_heads %q {num_heads = 4} : (tensor<1x4x128xbf16>) -> tensor<1x4x4x32xbf16>
  %kh = tfm.split_heads %k {num_heads = 2} : (tensor<1x4x64xbf16>) -> tensor<1x2x4x32xbf16>
  %vh = tfm.split_heads %v {num_heads = 2} : (tensor<1x4x64xbf16>) -> tensor<1x2x4x32xbf16>
  %qr = tfm.rope %qh, %pos : (tensor<1x4x4x32xbf16>, index) -> tensor<1x4x4x32xbf16>
  %kr = tfm.rope %kh, %pos : (tensor<1x2x4x32xbf16>, index) -> tensor<1x2x4x32xbf16>
  %a = tfm.attention %qr, %kr, %vh : (tensor<1x4x4x32xbf16>, tensor<1x2x4x32xbf16>, tensor<1x2x4x32xbf16>) -> tensor<1x4x4x32xbf16>
  %m = tfm.merge_heads %a : (tensor<1x4x4x32xbf16>) -> tensor<1x4x128xbf16>
  %o = tfm.linear %m, %wo {layout = #tfm.layout<out_in>} : (tensor<1x4x128xbf16>, tensor<64x128xbf16>) -> tensor<1x4x64xbf16>
  %x1 = tfm.residual_add %x, %o : (tensor<1x4x64xbf16>, tensor<1x4x64xbf16>) -> tensor<1x4x64xbf16>
  %h2 = tfm.rms_norm %x1, %n2 : (tensor<1x4x64xbf16>, tensor<64xbf16>) -> tensor<1x4x64xbf16>
  %gate = tfm.linear %h2, %wg {layout = #tfm.layout<out_in>} : (tensor<1x4x64xbf16>, tensor<96x64xbf16>) -> tensor<1x4x96xbf16>
  %up = tfm.linear %h2, %wu {layout = #tfm.layout<out_in>} : (tensor<1x4x64xbf16>, tensor<96x64xbf16>) -> tensor<1x4x96xbf16>
  %s = tfm.swiglu %gate, %up : (tensor<1x4x96xbf16>, tensor<1x4x96xbf16>) -> tensor<1x4x96xbf16>
  %d = tfm.linear %s, %wd {layout = #tfm.layout<out_in>} : (tensor<1x4x96xbf16>, tensor<64x96xbf16>) -> tensor<1x4x64xbf16>
  %x2 = tfm.residual_add %x1, %d : (tensor<1x4x64xbf16>, tensor<1x4x64xbf16>) -> tensor<1x4x64xbf16>
  return %x2 : tensor<1x4x64xbf16>
}

// -----

// The GPT-2 MLP without its c_proj: the gelu output (d_ff = 3072) is added
// straight onto the stream.
func.func @mlp_not_projected_back(
    %x: tensor<2x8x768xf32>,
    %ln1_g: tensor<768xf32>, %ln1_b: tensor<768xf32>,
    %attn_w: tensor<768x2304xf32>, %attn_b: tensor<2304xf32>,
    %proj_w: tensor<768x768xf32>, %proj_b: tensor<768xf32>,
    %ln2_g: tensor<768xf32>, %ln2_b: tensor<768xf32>,
    %fc_w: tensor<768x3072xf32>, %fc_b: tensor<3072xf32>)
    -> tensor<2x8x768xf32> attributes {tfm.block} {
  %h = tfm.layer_norm %x, %ln1_g, %ln1_b : (tensor<2x8x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x8x768xf32>
  %qkv = tfm.linear %h, %attn_w, %attn_b : (tensor<2x8x768xf32>, tensor<768x2304xf32>, tensor<2304xf32>) -> tensor<2x8x2304xf32>
  %q, %k, %v = tfm.split %qkv : (tensor<2x8x2304xf32>) -> (tensor<2x8x768xf32>, tensor<2x8x768xf32>, tensor<2x8x768xf32>)
  %qh = tfm.split_heads %q {num_heads = 12} : (tensor<2x8x768xf32>) -> tensor<2x12x8x64xf32>
  %kh = tfm.split_heads %k {num_heads = 12} : (tensor<2x8x768xf32>) -> tensor<2x12x8x64xf32>
  %vh = tfm.split_heads %v {num_heads = 12} : (tensor<2x8x768xf32>) -> tensor<2x12x8x64xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<2x12x8x64xf32>, tensor<2x12x8x64xf32>, tensor<2x12x8x64xf32>) -> tensor<2x12x8x64xf32>
  %m = tfm.merge_heads %a : (tensor<2x12x8x64xf32>) -> tensor<2x8x768xf32>
  %o = tfm.linear %m, %proj_w, %proj_b : (tensor<2x8x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<2x8x768xf32>
  %x1 = tfm.residual_add %x, %o : (tensor<2x8x768xf32>, tensor<2x8x768xf32>) -> tensor<2x8x768xf32>
  %h2 = tfm.layer_norm %x1, %ln2_g, %ln2_b : (tensor<2x8x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x8x768xf32>
  %f = tfm.linear %h2, %fc_w, %fc_b : (tensor<2x8x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<2x8x3072xf32>
  // expected-note @below {{the MLP output is produced here}}
  %g = tfm.gelu %f {approximate = #tfm.gelu<tanh>} : (tensor<2x8x3072xf32>) -> tensor<2x8x3072xf32>
  // expected-error @below {{residual add joins tensor<2x8x768xf32> and tensor<2x8x3072xf32>: the MLP output was not projected back to d=768}}
  %x2 = tfm.residual_add %x1, %g : (tensor<2x8x768xf32>, tensor<2x8x3072xf32>) -> tensor<2x8x768xf32>
  return %x2 : tensor<2x8x768xf32>
}

// -----

// The attention output projection maps to 1024 instead of d = 768.
func.func @attention_wrong_width(
    %x: tensor<2x8x768xf32>,
    %ln1_g: tensor<768xf32>, %ln1_b: tensor<768xf32>,
    %attn_w: tensor<768x2304xf32>, %attn_b: tensor<2304xf32>,
    %proj_w: tensor<768x1024xf32>, %proj_b: tensor<1024xf32>)
    -> tensor<2x8x768xf32> attributes {tfm.block} {
  %h = tfm.layer_norm %x, %ln1_g, %ln1_b : (tensor<2x8x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x8x768xf32>
  %qkv = tfm.linear %h, %attn_w, %attn_b : (tensor<2x8x768xf32>, tensor<768x2304xf32>, tensor<2304xf32>) -> tensor<2x8x2304xf32>
  %q, %k, %v = tfm.split %qkv : (tensor<2x8x2304xf32>) -> (tensor<2x8x768xf32>, tensor<2x8x768xf32>, tensor<2x8x768xf32>)
  %qh = tfm.split_heads %q {num_heads = 12} : (tensor<2x8x768xf32>) -> tensor<2x12x8x64xf32>
  %kh = tfm.split_heads %k {num_heads = 12} : (tensor<2x8x768xf32>) -> tensor<2x12x8x64xf32>
  %vh = tfm.split_heads %v {num_heads = 12} : (tensor<2x8x768xf32>) -> tensor<2x12x8x64xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<2x12x8x64xf32>, tensor<2x12x8x64xf32>, tensor<2x12x8x64xf32>) -> tensor<2x12x8x64xf32>
  %m = tfm.merge_heads %a : (tensor<2x12x8x64xf32>) -> tensor<2x8x768xf32>
  // expected-note @below {{the attention output is produced here}}
  %o = tfm.linear %m, %proj_w, %proj_b : (tensor<2x8x768xf32>, tensor<768x1024xf32>, tensor<1024xf32>) -> tensor<2x8x1024xf32>
  // expected-error @below {{residual add joins tensor<2x8x768xf32> and tensor<2x8x1024xf32>: the attention output was not projected back to d=768}}
  %x1 = tfm.residual_add %x, %o : (tensor<2x8x768xf32>, tensor<2x8x1024xf32>) -> tensor<2x8x768xf32>
  return %x1 : tensor<2x8x768xf32>
}

// -----

// A MoE sublayer run on only the first 4 of 8 tokens: the width is right, the
// sequence length is not. Not a tfm.block, the add is checked all the same.
func.func @moe_wrong_length(%x: tensor<1x8x16xf32>, %y: tensor<1x4x16xf32>,
                            %r: tensor<1x16xf32>, %g: tensor<32x16xf32>,
                            %u: tensor<32x16xf32>, %d: tensor<16x32xf32>)
    -> tensor<1x8x16xf32> {
  // expected-note @below {{the MoE output is produced here}}
  %e = tfm.moe %y, %r, %g, %u, %d {top_k = 1} : (tensor<1x4x16xf32>, tensor<1x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x4x16xf32>
  // expected-error @below {{residual add joins tensor<1x8x16xf32> and tensor<1x4x16xf32>: the MoE output has shape [1, 4, 16] instead of the residual stream's [1, 8, 16]}}
  %0 = tfm.residual_add %x, %e : (tensor<1x8x16xf32>, tensor<1x4x16xf32>) -> tensor<1x8x16xf32>
  return %0 : tensor<1x8x16xf32>
}

// -----

// No attention, MoE or activation behind the branch: a generic "sublayer".
// The slice stops at the residual stream, so the gelu of the previous
// sublayer (behind %x1) does not make this one an MLP.
func.func @unknown_sublayer(%x: tensor<1x4x16xf32>, %b: tensor<1x4x16xf32>, %w: tensor<16x8xf32>)
    -> tensor<1x4x16xf32> {
  %g = tfm.gelu %b : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %x1 = tfm.residual_add %x, %g : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  // expected-note @below {{the sublayer output is produced here}}
  %l = tfm.linear %x1, %w : (tensor<1x4x16xf32>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  // expected-error @below {{residual add joins tensor<1x4x16xf32> and tensor<1x4x8xf32>: the sublayer output was not projected back to d=16}}
  %x2 = tfm.residual_add %x1, %l : (tensor<1x4x16xf32>, tensor<1x4x8xf32>) -> tensor<1x4x16xf32>
  return %x2 : tensor<1x4x16xf32>
}

// -----

// The branch is a function argument: the note points at it.
// expected-note @below {{the sublayer output is function argument #1}}
func.func @branch_is_argument(%x: tensor<1x4x16xf32>, %b: tensor<1x4x32xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{residual add joins tensor<1x4x16xf32> and tensor<1x4x32xf32>: the sublayer output was not projected back to d=16}}
  %0 = tfm.residual_add %x, %b : (tensor<1x4x16xf32>, tensor<1x4x32xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

// A block that forgot its second residual add returns the MLP's up-projected
// hidden state.
// expected-error @below {{tfm.block function @block_output_type returns tensor<2x8x3072xf32> but takes tensor<2x8x768xf32>: a block must return exactly the type of its first argument (the residual stream [B, S, d])}}
func.func @block_output_type(%x: tensor<2x8x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>,
                             %fc_w: tensor<768x3072xf32>) -> tensor<2x8x3072xf32> attributes {tfm.block} {
  %h = tfm.layer_norm %x, %g, %b : (tensor<2x8x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x8x768xf32>
  %f = tfm.linear %h, %fc_w : (tensor<2x8x768xf32>, tensor<768x3072xf32>) -> tensor<2x8x3072xf32>
  %a = tfm.gelu %f : (tensor<2x8x3072xf32>) -> tensor<2x8x3072xf32>
  // expected-note @below {{the block returns here}}
  return %a : tensor<2x8x3072xf32>
}

// -----

// expected-error @below {{tfm.block function @block_two_results returns (tensor<1x4x16xf32>, tensor<1x4x16xf32>) but takes tensor<1x4x16xf32>}}
func.func @block_two_results(%x: tensor<1x4x16xf32>) -> (tensor<1x4x16xf32>, tensor<1x4x16xf32>) attributes {tfm.block} {
  // expected-note @below {{the block returns here}}
  return %x, %x : tensor<1x4x16xf32>, tensor<1x4x16xf32>
}

// -----

// expected-error @below {{tfm.block function @block_no_stream must take the residual stream [B, S, d] as its first argument, got index}}
func.func @block_no_stream(%pos: index, %x: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> attributes {tfm.block} {
  return %x : tensor<1x4x16xf32>
}

// -----

// expected-error @below {{tfm.block function @block_no_args must take the residual stream [B, S, d] as its first argument}}
func.func private @block_no_args() attributes {tfm.block}

// -----

// A dtype the op verifiers cannot see: the block takes an f32 stream but runs
// its residual adds on an f16 copy (both sides of the add agree) and returns
// f16.
// expected-error @below {{tfm.block function @block_stream_dtype returns tensor<2x8x16xf16> but takes tensor<2x8x16xf32>}}
func.func @block_stream_dtype(%x: tensor<2x8x16xf32>, %w: tensor<16x16xf16>)
    -> tensor<2x8x16xf16> attributes {tfm.block} {
  // expected-note @below {{the residual operand is produced here}}
  %x16 = arith.truncf %x : tensor<2x8x16xf32> to tensor<2x8x16xf16>
  %l = tfm.linear %x16, %w : (tensor<2x8x16xf16>, tensor<16x16xf16>) -> tensor<2x8x16xf16>
  // expected-error @below {{residual add runs on tensor<2x8x16xf16>, not on the block's residual stream tensor<2x8x16xf32> (the type of its first argument)}}
  %x1 = tfm.residual_add %x16, %l : (tensor<2x8x16xf16>, tensor<2x8x16xf16>) -> tensor<2x8x16xf16>
  // expected-note @below {{the block returns here}}
  return %x1 : tensor<2x8x16xf16>
}

// -----

// A block whose MLP widened both its branch and the stream it is added to:
// the add is consistent on its own, but no longer on the block's [B, S, d].
func.func @block_stream_width(%x: tensor<1x4x16xf32>, %w: tensor<16x32xf32>,
                              %w2: tensor<32x32xf32>, %w3: tensor<32x16xf32>)
    -> tensor<1x4x16xf32> attributes {tfm.block} {
  // expected-note @below {{the residual operand is produced here}}
  %wide = tfm.linear %x, %w : (tensor<1x4x16xf32>, tensor<16x32xf32>) -> tensor<1x4x32xf32>
  %s = tfm.silu %wide : (tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %l = tfm.linear %s, %w2 : (tensor<1x4x32xf32>, tensor<32x32xf32>) -> tensor<1x4x32xf32>
  // expected-error @below {{residual add runs on tensor<1x4x32xf32>, not on the block's residual stream tensor<1x4x16xf32> (the type of its first argument)}}
  %x1 = tfm.residual_add %wide, %l : (tensor<1x4x32xf32>, tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %back = tfm.linear %x1, %w3 : (tensor<1x4x32xf32>, tensor<32x16xf32>) -> tensor<1x4x16xf32>
  return %back : tensor<1x4x16xf32>
}

// -----

// Several broken contracts in one block are all reported: the attention
// output width, the MLP not projected back, and the block's return type.
// expected-error @below {{tfm.block function @many_errors returns tensor<2x8x3072xf32> but takes tensor<2x8x768xf32>}}
func.func @many_errors(
    %x: tensor<2x8x768xf32>,
    %ln1_g: tensor<768xf32>, %ln1_b: tensor<768xf32>,
    %attn_w: tensor<768x2304xf32>, %attn_b: tensor<2304xf32>,
    %proj_w: tensor<768x512xf32>,
    %ln2_g: tensor<768xf32>, %ln2_b: tensor<768xf32>,
    %fc_w: tensor<768x3072xf32>, %fc_b: tensor<3072xf32>,
    %mproj_w: tensor<3072x3072xf32>)
    -> tensor<2x8x3072xf32> attributes {tfm.block} {
  %h = tfm.layer_norm %x, %ln1_g, %ln1_b : (tensor<2x8x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x8x768xf32>
  %qkv = tfm.linear %h, %attn_w, %attn_b : (tensor<2x8x768xf32>, tensor<768x2304xf32>, tensor<2304xf32>) -> tensor<2x8x2304xf32>
  %q, %k, %v = tfm.split %qkv : (tensor<2x8x2304xf32>) -> (tensor<2x8x768xf32>, tensor<2x8x768xf32>, tensor<2x8x768xf32>)
  %qh = tfm.split_heads %q {num_heads = 12} : (tensor<2x8x768xf32>) -> tensor<2x12x8x64xf32>
  %kh = tfm.split_heads %k {num_heads = 12} : (tensor<2x8x768xf32>) -> tensor<2x12x8x64xf32>
  %vh = tfm.split_heads %v {num_heads = 12} : (tensor<2x8x768xf32>) -> tensor<2x12x8x64xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<2x12x8x64xf32>, tensor<2x12x8x64xf32>, tensor<2x12x8x64xf32>) -> tensor<2x12x8x64xf32>
  %m = tfm.merge_heads %a : (tensor<2x12x8x64xf32>) -> tensor<2x8x768xf32>
  // expected-note @below {{the attention output is produced here}}
  %o = tfm.linear %m, %proj_w {layout = #tfm.layout<in_out>} : (tensor<2x8x768xf32>, tensor<768x512xf32>) -> tensor<2x8x512xf32>
  // expected-error @below {{residual add joins tensor<2x8x768xf32> and tensor<2x8x512xf32>: the attention output was not projected back to d=768}}
  %x1 = tfm.residual_add %x, %o : (tensor<2x8x768xf32>, tensor<2x8x512xf32>) -> tensor<2x8x768xf32>
  %h2 = tfm.layer_norm %x1, %ln2_g, %ln2_b : (tensor<2x8x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x8x768xf32>
  %f = tfm.linear %h2, %fc_w, %fc_b : (tensor<2x8x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<2x8x3072xf32>
  %g = tfm.gelu %f : (tensor<2x8x3072xf32>) -> tensor<2x8x3072xf32>
  // expected-note @below {{the MLP output is produced here}}
  %p = tfm.linear %g, %mproj_w : (tensor<2x8x3072xf32>, tensor<3072x3072xf32>) -> tensor<2x8x3072xf32>
  // expected-error @below {{residual add joins tensor<2x8x768xf32> and tensor<2x8x3072xf32>: the MLP output was not projected back to d=768}}
  %x2 = tfm.residual_add %x1, %p : (tensor<2x8x768xf32>, tensor<2x8x3072xf32>) -> tensor<2x8x768xf32>
  // The block returns the MLP branch instead of the stream.
  // expected-note @below {{the block returns here}}
  return %p : tensor<2x8x3072xf32>
}

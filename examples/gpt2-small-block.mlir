// One GPT-2-small decoder block (pre-LN), as Hugging Face's GPT2Block:
//   h = x + c_proj(attn(split(c_attn(ln_1(x)))))
//   y = h + mlp.c_proj(gelu_new(mlp.c_fc(ln_2(h))))
// B=1, S=8, d=768, 12 heads of 64, MLP width 3072. GPT-2's Conv1D stores
// weights [in, out], the default `in_out` layout. Parameter names are the
// checkpoint's, without the `transformer.` prefix.
//
// Try: transformer-opt --tfm-print-ledger examples/gpt2-small-block.mlir -o /dev/null
module {
  func.func @gpt2_block(
      %x: tensor<1x8x768xf32> {tfm.input = "hidden"},
      %ln1_w: tensor<768xf32> {tfm.param = "h.0.ln_1.weight"},
      %ln1_b: tensor<768xf32> {tfm.param = "h.0.ln_1.bias"},
      %attn_w: tensor<768x2304xf32> {tfm.param = "h.0.attn.c_attn.weight"},
      %attn_b: tensor<2304xf32> {tfm.param = "h.0.attn.c_attn.bias"},
      %aproj_w: tensor<768x768xf32> {tfm.param = "h.0.attn.c_proj.weight"},
      %aproj_b: tensor<768xf32> {tfm.param = "h.0.attn.c_proj.bias"},
      %ln2_w: tensor<768xf32> {tfm.param = "h.0.ln_2.weight"},
      %ln2_b: tensor<768xf32> {tfm.param = "h.0.ln_2.bias"},
      %fc_w: tensor<768x3072xf32> {tfm.param = "h.0.mlp.c_fc.weight"},
      %fc_b: tensor<3072xf32> {tfm.param = "h.0.mlp.c_fc.bias"},
      %mproj_w: tensor<3072x768xf32> {tfm.param = "h.0.mlp.c_proj.weight"},
      %mproj_b: tensor<768xf32> {tfm.param = "h.0.mlp.c_proj.bias"})
      -> (tensor<1x8x768xf32> {tfm.output = "hidden"})
      attributes {tfm.block} {
    // Attention sublayer.
    %ln1 = tfm.layer_norm %x, %ln1_w, %ln1_b {epsilon = 1.0e-05 : f32}
        : (tensor<1x8x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x8x768xf32> loc("h.0.ln_1")
    %qkv = tfm.linear %ln1, %attn_w, %attn_b
        : (tensor<1x8x768xf32>, tensor<768x2304xf32>, tensor<2304xf32>) -> tensor<1x8x2304xf32> loc("h.0.attn.c_attn")
    %q, %k, %v = tfm.split %qkv
        : (tensor<1x8x2304xf32>) -> (tensor<1x8x768xf32>, tensor<1x8x768xf32>, tensor<1x8x768xf32>) loc("h.0.attn.split_qkv")
    %qh = tfm.split_heads %q {num_heads = 12 : i64}
        : (tensor<1x8x768xf32>) -> tensor<1x12x8x64xf32> loc("h.0.attn.split_heads_q")
    %kh = tfm.split_heads %k {num_heads = 12 : i64}
        : (tensor<1x8x768xf32>) -> tensor<1x12x8x64xf32> loc("h.0.attn.split_heads_k")
    %vh = tfm.split_heads %v {num_heads = 12 : i64}
        : (tensor<1x8x768xf32>) -> tensor<1x12x8x64xf32> loc("h.0.attn.split_heads_v")
    %a = tfm.attention %qh, %kh, %vh
        : (tensor<1x12x8x64xf32>, tensor<1x12x8x64xf32>, tensor<1x12x8x64xf32>) -> tensor<1x12x8x64xf32> loc("h.0.attn.attention")
    %merged = tfm.merge_heads %a
        : (tensor<1x12x8x64xf32>) -> tensor<1x8x768xf32> loc("h.0.attn.merge_heads")
    %aout = tfm.linear %merged, %aproj_w, %aproj_b
        : (tensor<1x8x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<1x8x768xf32> loc("h.0.attn.c_proj")
    %h = tfm.residual_add %x, %aout
        : (tensor<1x8x768xf32>, tensor<1x8x768xf32>) -> tensor<1x8x768xf32> loc("h.0.attn.residual")
    // MLP sublayer.
    %ln2 = tfm.layer_norm %h, %ln2_w, %ln2_b {epsilon = 1.0e-05 : f32}
        : (tensor<1x8x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x8x768xf32> loc("h.0.ln_2")
    %fc = tfm.linear %ln2, %fc_w, %fc_b
        : (tensor<1x8x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<1x8x3072xf32> loc("h.0.mlp.c_fc")
    %act = tfm.gelu %fc {approximate = #tfm.gelu<tanh>}
        : (tensor<1x8x3072xf32>) -> tensor<1x8x3072xf32> loc("h.0.mlp.act")
    %mout = tfm.linear %act, %mproj_w, %mproj_b
        : (tensor<1x8x3072xf32>, tensor<3072x768xf32>, tensor<768xf32>) -> tensor<1x8x768xf32> loc("h.0.mlp.c_proj")
    %y = tfm.residual_add %h, %mout
        : (tensor<1x8x768xf32>, tensor<1x8x768xf32>) -> tensor<1x8x768xf32> loc("h.0.mlp.residual")
    return %y : tensor<1x8x768xf32>
  }
}

// One Llama-style decoder block with multi-query attention (a single
// key/value head) and a head size that is not d/Hq: d=256, 8 query heads of
// dh=64, so the query width d_q = 512 differs from d and o_proj maps 512 back
// to 256. B=1, S=4, SwiGLU MLP width 688, RMSNorm, RoPE theta 10000, `out_in`
// weights named as in Hugging Face Llama checkpoints.
//
// Try: transformer-opt --tfm-print-ledger examples/mqa-block.mlir -o /dev/null
module {
  func.func @mqa_block(
      %x: tensor<1x4x256xf32> {tfm.input = "hidden"},
      %in_norm: tensor<256xf32> {tfm.param = "model.layers.0.input_layernorm.weight"},
      %wq: tensor<512x256xf32> {tfm.param = "model.layers.0.self_attn.q_proj.weight"},
      %wk: tensor<64x256xf32> {tfm.param = "model.layers.0.self_attn.k_proj.weight"},
      %wv: tensor<64x256xf32> {tfm.param = "model.layers.0.self_attn.v_proj.weight"},
      %wo: tensor<256x512xf32> {tfm.param = "model.layers.0.self_attn.o_proj.weight"},
      %post_norm: tensor<256xf32> {tfm.param = "model.layers.0.post_attention_layernorm.weight"},
      %wgate: tensor<688x256xf32> {tfm.param = "model.layers.0.mlp.gate_proj.weight"},
      %wup: tensor<688x256xf32> {tfm.param = "model.layers.0.mlp.up_proj.weight"},
      %wdown: tensor<256x688xf32> {tfm.param = "model.layers.0.mlp.down_proj.weight"})
      -> (tensor<1x4x256xf32> {tfm.output = "hidden"})
      attributes {tfm.block} {
    // Attention sublayer.
    %h0 = tfm.rms_norm %x, %in_norm {epsilon = 1.0e-05 : f32}
        : (tensor<1x4x256xf32>, tensor<256xf32>) -> tensor<1x4x256xf32> loc("model.layers.0.input_layernorm")
    %q = tfm.linear %h0, %wq {layout = #tfm.layout<out_in>}
        : (tensor<1x4x256xf32>, tensor<512x256xf32>) -> tensor<1x4x512xf32> loc("model.layers.0.self_attn.q_proj")
    %k = tfm.linear %h0, %wk {layout = #tfm.layout<out_in>}
        : (tensor<1x4x256xf32>, tensor<64x256xf32>) -> tensor<1x4x64xf32> loc("model.layers.0.self_attn.k_proj")
    %v = tfm.linear %h0, %wv {layout = #tfm.layout<out_in>}
        : (tensor<1x4x256xf32>, tensor<64x256xf32>) -> tensor<1x4x64xf32> loc("model.layers.0.self_attn.v_proj")
    %qh = tfm.split_heads %q {num_heads = 8 : i64}
        : (tensor<1x4x512xf32>) -> tensor<1x8x4x64xf32> loc("model.layers.0.self_attn.split_heads_q")
    %kh = tfm.split_heads %k {num_heads = 1 : i64}
        : (tensor<1x4x64xf32>) -> tensor<1x1x4x64xf32> loc("model.layers.0.self_attn.split_heads_k")
    %vh = tfm.split_heads %v {num_heads = 1 : i64}
        : (tensor<1x4x64xf32>) -> tensor<1x1x4x64xf32> loc("model.layers.0.self_attn.split_heads_v")
    %qr = tfm.rope %qh {theta = 1.0e+04 : f32}
        : (tensor<1x8x4x64xf32>) -> tensor<1x8x4x64xf32> loc("model.layers.0.self_attn.rope_q")
    %kr = tfm.rope %kh {theta = 1.0e+04 : f32}
        : (tensor<1x1x4x64xf32>) -> tensor<1x1x4x64xf32> loc("model.layers.0.self_attn.rope_k")
    %a = tfm.attention %qr, %kr, %vh
        : (tensor<1x8x4x64xf32>, tensor<1x1x4x64xf32>, tensor<1x1x4x64xf32>) -> tensor<1x8x4x64xf32> loc("model.layers.0.self_attn.attention")
    %merged = tfm.merge_heads %a
        : (tensor<1x8x4x64xf32>) -> tensor<1x4x512xf32> loc("model.layers.0.self_attn.merge_heads")
    %o = tfm.linear %merged, %wo {layout = #tfm.layout<out_in>}
        : (tensor<1x4x512xf32>, tensor<256x512xf32>) -> tensor<1x4x256xf32> loc("model.layers.0.self_attn.o_proj")
    %h = tfm.residual_add %x, %o
        : (tensor<1x4x256xf32>, tensor<1x4x256xf32>) -> tensor<1x4x256xf32> loc("model.layers.0.self_attn.residual")
    // SwiGLU MLP sublayer: down(silu(gate(x)) * up(x)).
    %h1 = tfm.rms_norm %h, %post_norm {epsilon = 1.0e-05 : f32}
        : (tensor<1x4x256xf32>, tensor<256xf32>) -> tensor<1x4x256xf32> loc("model.layers.0.post_attention_layernorm")
    %g = tfm.linear %h1, %wgate {layout = #tfm.layout<out_in>}
        : (tensor<1x4x256xf32>, tensor<688x256xf32>) -> tensor<1x4x688xf32> loc("model.layers.0.mlp.gate_proj")
    %u = tfm.linear %h1, %wup {layout = #tfm.layout<out_in>}
        : (tensor<1x4x256xf32>, tensor<688x256xf32>) -> tensor<1x4x688xf32> loc("model.layers.0.mlp.up_proj")
    %s = tfm.swiglu %g, %u
        : (tensor<1x4x688xf32>, tensor<1x4x688xf32>) -> tensor<1x4x688xf32> loc("model.layers.0.mlp.act")
    %dn = tfm.linear %s, %wdown {layout = #tfm.layout<out_in>}
        : (tensor<1x4x688xf32>, tensor<256x688xf32>) -> tensor<1x4x256xf32> loc("model.layers.0.mlp.down_proj")
    %y = tfm.residual_add %h, %dn
        : (tensor<1x4x256xf32>, tensor<1x4x256xf32>) -> tensor<1x4x256xf32> loc("model.layers.0.mlp.residual")
    return %y : tensor<1x4x256xf32>
  }
}

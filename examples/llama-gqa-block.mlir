// One Llama-style decoder block with grouped-query attention, as Hugging
// Face's LlamaDecoderLayer: Llama-2-7B sizes with the 8 key/value heads of
// Llama-3-8B (grouped-query attention, 4 query heads per key/value head):
//   h = x + o_proj(attn(rope(q_proj(n)), rope(k_proj(n)), v_proj(n))),  n = input_layernorm(x)
//   y = h + down_proj(silu(gate_proj(m)) * up_proj(m)),                 m = post_attention_layernorm(h)
// B=1, S=4, d=4096, 32 query heads and 8 key/value heads of dh=128, MLP
// width 11008, RMSNorm eps 1e-5, RoPE theta 10000. nn.Linear weights are
// stored [out, in] (`out_in` layout); no biases.
//
// Try: transformer-opt --tfm-print-ledger examples/llama-gqa-block.mlir -o /dev/null
module {
  func.func @llama_gqa_block(
      %x: tensor<1x4x4096xf32> {tfm.input = "hidden"},
      %in_norm: tensor<4096xf32> {tfm.param = "model.layers.0.input_layernorm.weight"},
      %wq: tensor<4096x4096xf32> {tfm.param = "model.layers.0.self_attn.q_proj.weight"},
      %wk: tensor<1024x4096xf32> {tfm.param = "model.layers.0.self_attn.k_proj.weight"},
      %wv: tensor<1024x4096xf32> {tfm.param = "model.layers.0.self_attn.v_proj.weight"},
      %wo: tensor<4096x4096xf32> {tfm.param = "model.layers.0.self_attn.o_proj.weight"},
      %post_norm: tensor<4096xf32> {tfm.param = "model.layers.0.post_attention_layernorm.weight"},
      %wgate: tensor<11008x4096xf32> {tfm.param = "model.layers.0.mlp.gate_proj.weight"},
      %wup: tensor<11008x4096xf32> {tfm.param = "model.layers.0.mlp.up_proj.weight"},
      %wdown: tensor<4096x11008xf32> {tfm.param = "model.layers.0.mlp.down_proj.weight"})
      -> (tensor<1x4x4096xf32> {tfm.output = "hidden"})
      attributes {tfm.block} {
    // Attention sublayer.
    %h0 = tfm.rms_norm %x, %in_norm {epsilon = 1.0e-05 : f32}
        : (tensor<1x4x4096xf32>, tensor<4096xf32>) -> tensor<1x4x4096xf32> loc("model.layers.0.input_layernorm")
    %q = tfm.linear %h0, %wq {layout = #tfm.layout<out_in>}
        : (tensor<1x4x4096xf32>, tensor<4096x4096xf32>) -> tensor<1x4x4096xf32> loc("model.layers.0.self_attn.q_proj")
    %k = tfm.linear %h0, %wk {layout = #tfm.layout<out_in>}
        : (tensor<1x4x4096xf32>, tensor<1024x4096xf32>) -> tensor<1x4x1024xf32> loc("model.layers.0.self_attn.k_proj")
    %v = tfm.linear %h0, %wv {layout = #tfm.layout<out_in>}
        : (tensor<1x4x4096xf32>, tensor<1024x4096xf32>) -> tensor<1x4x1024xf32> loc("model.layers.0.self_attn.v_proj")
    %qh = tfm.split_heads %q {num_heads = 32 : i64}
        : (tensor<1x4x4096xf32>) -> tensor<1x32x4x128xf32> loc("model.layers.0.self_attn.split_heads_q")
    %kh = tfm.split_heads %k {num_heads = 8 : i64}
        : (tensor<1x4x1024xf32>) -> tensor<1x8x4x128xf32> loc("model.layers.0.self_attn.split_heads_k")
    %vh = tfm.split_heads %v {num_heads = 8 : i64}
        : (tensor<1x4x1024xf32>) -> tensor<1x8x4x128xf32> loc("model.layers.0.self_attn.split_heads_v")
    %qr = tfm.rope %qh {theta = 1.0e+04 : f32}
        : (tensor<1x32x4x128xf32>) -> tensor<1x32x4x128xf32> loc("model.layers.0.self_attn.rope_q")
    %kr = tfm.rope %kh {theta = 1.0e+04 : f32}
        : (tensor<1x8x4x128xf32>) -> tensor<1x8x4x128xf32> loc("model.layers.0.self_attn.rope_k")
    %a = tfm.attention %qr, %kr, %vh
        : (tensor<1x32x4x128xf32>, tensor<1x8x4x128xf32>, tensor<1x8x4x128xf32>) -> tensor<1x32x4x128xf32> loc("model.layers.0.self_attn.attention")
    %merged = tfm.merge_heads %a
        : (tensor<1x32x4x128xf32>) -> tensor<1x4x4096xf32> loc("model.layers.0.self_attn.merge_heads")
    %o = tfm.linear %merged, %wo {layout = #tfm.layout<out_in>}
        : (tensor<1x4x4096xf32>, tensor<4096x4096xf32>) -> tensor<1x4x4096xf32> loc("model.layers.0.self_attn.o_proj")
    %h = tfm.residual_add %x, %o
        : (tensor<1x4x4096xf32>, tensor<1x4x4096xf32>) -> tensor<1x4x4096xf32> loc("model.layers.0.self_attn.residual")
    // SwiGLU MLP sublayer: down(silu(gate(x)) * up(x)).
    %h1 = tfm.rms_norm %h, %post_norm {epsilon = 1.0e-05 : f32}
        : (tensor<1x4x4096xf32>, tensor<4096xf32>) -> tensor<1x4x4096xf32> loc("model.layers.0.post_attention_layernorm")
    %g = tfm.linear %h1, %wgate {layout = #tfm.layout<out_in>}
        : (tensor<1x4x4096xf32>, tensor<11008x4096xf32>) -> tensor<1x4x11008xf32> loc("model.layers.0.mlp.gate_proj")
    %u = tfm.linear %h1, %wup {layout = #tfm.layout<out_in>}
        : (tensor<1x4x4096xf32>, tensor<11008x4096xf32>) -> tensor<1x4x11008xf32> loc("model.layers.0.mlp.up_proj")
    %s = tfm.swiglu %g, %u
        : (tensor<1x4x11008xf32>, tensor<1x4x11008xf32>) -> tensor<1x4x11008xf32> loc("model.layers.0.mlp.act")
    %dn = tfm.linear %s, %wdown {layout = #tfm.layout<out_in>}
        : (tensor<1x4x11008xf32>, tensor<4096x11008xf32>) -> tensor<1x4x4096xf32> loc("model.layers.0.mlp.down_proj")
    %y = tfm.residual_add %h, %dn
        : (tensor<1x4x4096xf32>, tensor<1x4x4096xf32>) -> tensor<1x4x4096xf32> loc("model.layers.0.mlp.residual")
    return %y : tensor<1x4x4096xf32>
  }
}

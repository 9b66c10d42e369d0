// A tiny two-layer GPT-2 (GPT2LMHeadModel with vocab 256, n_positions 64,
// n_embd 64, 4 heads, MLP width 256) over one sequence of 8 tokens:
// token + position embeddings, two pre-LN blocks, ln_f, and an lm_head tied to
// the token embedding (the same `wte.weight` argument, read as [V, d] in the
// default `out_in` layout). Parameter names as in the checkpoint, without the
// `transformer.` prefix.
//
// Try: transformer-opt --tfm-print-ledger examples/tiny-gpt2.mlir -o /dev/null
module {
  func.func @forward(
      %ids: tensor<1x8xi64> {tfm.input = "input_ids"},
      %wte: tensor<256x64xf32> {tfm.param = "wte.weight"},
      %wpe: tensor<64x64xf32> {tfm.param = "wpe.weight"},
      %l0_ln_1_weight: tensor<64xf32> {tfm.param = "h.0.ln_1.weight"},
      %l0_ln_1_bias: tensor<64xf32> {tfm.param = "h.0.ln_1.bias"},
      %l0_attn_c_attn_weight: tensor<64x192xf32> {tfm.param = "h.0.attn.c_attn.weight"},
      %l0_attn_c_attn_bias: tensor<192xf32> {tfm.param = "h.0.attn.c_attn.bias"},
      %l0_attn_c_proj_weight: tensor<64x64xf32> {tfm.param = "h.0.attn.c_proj.weight"},
      %l0_attn_c_proj_bias: tensor<64xf32> {tfm.param = "h.0.attn.c_proj.bias"},
      %l0_ln_2_weight: tensor<64xf32> {tfm.param = "h.0.ln_2.weight"},
      %l0_ln_2_bias: tensor<64xf32> {tfm.param = "h.0.ln_2.bias"},
      %l0_mlp_c_fc_weight: tensor<64x256xf32> {tfm.param = "h.0.mlp.c_fc.weight"},
      %l0_mlp_c_fc_bias: tensor<256xf32> {tfm.param = "h.0.mlp.c_fc.bias"},
      %l0_mlp_c_proj_weight: tensor<256x64xf32> {tfm.param = "h.0.mlp.c_proj.weight"},
      %l0_mlp_c_proj_bias: tensor<64xf32> {tfm.param = "h.0.mlp.c_proj.bias"},
      %l1_ln_1_weight: tensor<64xf32> {tfm.param = "h.1.ln_1.weight"},
      %l1_ln_1_bias: tensor<64xf32> {tfm.param = "h.1.ln_1.bias"},
      %l1_attn_c_attn_weight: tensor<64x192xf32> {tfm.param = "h.1.attn.c_attn.weight"},
      %l1_attn_c_attn_bias: tensor<192xf32> {tfm.param = "h.1.attn.c_attn.bias"},
      %l1_attn_c_proj_weight: tensor<64x64xf32> {tfm.param = "h.1.attn.c_proj.weight"},
      %l1_attn_c_proj_bias: tensor<64xf32> {tfm.param = "h.1.attn.c_proj.bias"},
      %l1_ln_2_weight: tensor<64xf32> {tfm.param = "h.1.ln_2.weight"},
      %l1_ln_2_bias: tensor<64xf32> {tfm.param = "h.1.ln_2.bias"},
      %l1_mlp_c_fc_weight: tensor<64x256xf32> {tfm.param = "h.1.mlp.c_fc.weight"},
      %l1_mlp_c_fc_bias: tensor<256xf32> {tfm.param = "h.1.mlp.c_fc.bias"},
      %l1_mlp_c_proj_weight: tensor<256x64xf32> {tfm.param = "h.1.mlp.c_proj.weight"},
      %l1_mlp_c_proj_bias: tensor<64xf32> {tfm.param = "h.1.mlp.c_proj.bias"},
      %ln_f_weight: tensor<64xf32> {tfm.param = "ln_f.weight"},
      %ln_f_bias: tensor<64xf32> {tfm.param = "ln_f.bias"})
      -> (tensor<1x8x256xf32> {tfm.output = "logits"}) {
    %tok = tfm.embedding %ids, %wte
        : (tensor<1x8xi64>, tensor<256x64xf32>) -> tensor<1x8x64xf32> loc("wte")
    %h0 = tfm.position_embedding %tok, %wpe
        : (tensor<1x8x64xf32>, tensor<64x64xf32>) -> tensor<1x8x64xf32> loc("wpe")
    // Block 0.
    %l0_ln1 = tfm.layer_norm %h0, %l0_ln_1_weight, %l0_ln_1_bias {epsilon = 1.0e-05 : f32}
        : (tensor<1x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32> loc("h.0.ln_1")
    %l0_qkv = tfm.linear %l0_ln1, %l0_attn_c_attn_weight, %l0_attn_c_attn_bias
        : (tensor<1x8x64xf32>, tensor<64x192xf32>, tensor<192xf32>) -> tensor<1x8x192xf32> loc("h.0.attn.c_attn")
    %l0_q, %l0_k, %l0_v = tfm.split %l0_qkv
        : (tensor<1x8x192xf32>) -> (tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>) loc("h.0.attn.split_qkv")
    %l0_qh = tfm.split_heads %l0_q {num_heads = 4 : i64}
        : (tensor<1x8x64xf32>) -> tensor<1x4x8x16xf32> loc("h.0.attn.split_heads_q")
    %l0_kh = tfm.split_heads %l0_k {num_heads = 4 : i64}
        : (tensor<1x8x64xf32>) -> tensor<1x4x8x16xf32> loc("h.0.attn.split_heads_k")
    %l0_vh = tfm.split_heads %l0_v {num_heads = 4 : i64}
        : (tensor<1x8x64xf32>) -> tensor<1x4x8x16xf32> loc("h.0.attn.split_heads_v")
    %l0_a = tfm.attention %l0_qh, %l0_kh, %l0_vh
        : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> loc("h.0.attn.attention")
    %l0_merged = tfm.merge_heads %l0_a
        : (tensor<1x4x8x16xf32>) -> tensor<1x8x64xf32> loc("h.0.attn.merge_heads")
    %l0_aout = tfm.linear %l0_merged, %l0_attn_c_proj_weight, %l0_attn_c_proj_bias
        : (tensor<1x8x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32> loc("h.0.attn.c_proj")
    %l0_h = tfm.residual_add %h0, %l0_aout
        : (tensor<1x8x64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x64xf32> loc("h.0.attn.residual")
    %l0_ln2 = tfm.layer_norm %l0_h, %l0_ln_2_weight, %l0_ln_2_bias {epsilon = 1.0e-05 : f32}
        : (tensor<1x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32> loc("h.0.ln_2")
    %l0_fc = tfm.linear %l0_ln2, %l0_mlp_c_fc_weight, %l0_mlp_c_fc_bias
        : (tensor<1x8x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<1x8x256xf32> loc("h.0.mlp.c_fc")
    %l0_act = tfm.gelu %l0_fc {approximate = #tfm.gelu<tanh>}
        : (tensor<1x8x256xf32>) -> tensor<1x8x256xf32> loc("h.0.mlp.act")
    %l0_mout = tfm.linear %l0_act, %l0_mlp_c_proj_weight, %l0_mlp_c_proj_bias
        : (tensor<1x8x256xf32>, tensor<256x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32> loc("h.0.mlp.c_proj")
    %h1 = tfm.residual_add %l0_h, %l0_mout
        : (tensor<1x8x64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x64xf32> loc("h.0.mlp.residual")
    // Block 1.
    %l1_ln1 = tfm.layer_norm %h1, %l1_ln_1_weight, %l1_ln_1_bias {epsilon = 1.0e-05 : f32}
        : (tensor<1x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32> loc("h.1.ln_1")
    %l1_qkv = tfm.linear %l1_ln1, %l1_attn_c_attn_weight, %l1_attn_c_attn_bias
        : (tensor<1x8x64xf32>, tensor<64x192xf32>, tensor<192xf32>) -> tensor<1x8x192xf32> loc("h.1.attn.c_attn")
    %l1_q, %l1_k, %l1_v = tfm.split %l1_qkv
        : (tensor<1x8x192xf32>) -> (tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>) loc("h.1.attn.split_qkv")
    %l1_qh = tfm.split_heads %l1_q {num_heads = 4 : i64}
        : (tensor<1x8x64xf32>) -> tensor<1x4x8x16xf32> loc("h.1.attn.split_heads_q")
    %l1_kh = tfm.split_heads %l1_k {num_heads = 4 : i64}
        : (tensor<1x8x64xf32>) -> tensor<1x4x8x16xf32> loc("h.1.attn.split_heads_k")
    %l1_vh = tfm.split_heads %l1_v {num_heads = 4 : i64}
        : (tensor<1x8x64xf32>) -> tensor<1x4x8x16xf32> loc("h.1.attn.split_heads_v")
    %l1_a = tfm.attention %l1_qh, %l1_kh, %l1_vh
        : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> loc("h.1.attn.attention")
    %l1_merged = tfm.merge_heads %l1_a
        : (tensor<1x4x8x16xf32>) -> tensor<1x8x64xf32> loc("h.1.attn.merge_heads")
    %l1_aout = tfm.linear %l1_merged, %l1_attn_c_proj_weight, %l1_attn_c_proj_bias
        : (tensor<1x8x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32> loc("h.1.attn.c_proj")
    %l1_h = tfm.residual_add %h1, %l1_aout
        : (tensor<1x8x64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x64xf32> loc("h.1.attn.residual")
    %l1_ln2 = tfm.layer_norm %l1_h, %l1_ln_2_weight, %l1_ln_2_bias {epsilon = 1.0e-05 : f32}
        : (tensor<1x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32> loc("h.1.ln_2")
    %l1_fc = tfm.linear %l1_ln2, %l1_mlp_c_fc_weight, %l1_mlp_c_fc_bias
        : (tensor<1x8x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<1x8x256xf32> loc("h.1.mlp.c_fc")
    %l1_act = tfm.gelu %l1_fc {approximate = #tfm.gelu<tanh>}
        : (tensor<1x8x256xf32>) -> tensor<1x8x256xf32> loc("h.1.mlp.act")
    %l1_mout = tfm.linear %l1_act, %l1_mlp_c_proj_weight, %l1_mlp_c_proj_bias
        : (tensor<1x8x256xf32>, tensor<256x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32> loc("h.1.mlp.c_proj")
    %h2 = tfm.residual_add %l1_h, %l1_mout
        : (tensor<1x8x64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x64xf32> loc("h.1.mlp.residual")
    %hf = tfm.layer_norm %h2, %ln_f_weight, %ln_f_bias {epsilon = 1.0e-05 : f32}
        : (tensor<1x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32> loc("ln_f")
    %logits = tfm.lm_head %hf, %wte
        : (tensor<1x8x64xf32>, tensor<256x64xf32>) -> tensor<1x8x256xf32> loc("lm_head")
    return %logits : tensor<1x8x256xf32>
  }
}

// A final LayerNorm and an LM head whose vocabulary is no multiple of the
// register tile's columns (V = 257 over 77 tokens): the full weight panels
// write straight into the logits, the last panel's remaining columns are a
// narrow matmul of their own (tfm-cpu-pack-weights), and the logits are
// computed in the caller's buffer (tfm-results-in-place).
func.func @head(%x: tensor<1x77x130xf32> {tfm.input = "hidden"},
                %ln_w: tensor<130xf32> {tfm.param = "ln_f.weight"},
                %ln_b: tensor<130xf32> {tfm.param = "ln_f.bias"},
                %w: tensor<257x130xf32> {tfm.param = "lm_head.weight"})
    -> (tensor<1x77x257xf32> {tfm.output = "logits"}) {
  %h = tfm.layer_norm %x, %ln_w, %ln_b {epsilon = 1.0e-05 : f32}
      : (tensor<1x77x130xf32>, tensor<130xf32>, tensor<130xf32>) -> tensor<1x77x130xf32>
  %y = tfm.lm_head %h, %w {layout = #tfm.layout<out_in>}
      : (tensor<1x77x130xf32>, tensor<257x130xf32>) -> tensor<1x77x257xf32>
  return %y : tensor<1x77x257xf32>
}

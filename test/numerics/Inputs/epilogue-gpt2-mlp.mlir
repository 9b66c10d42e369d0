// GPT-2's MLP and residual at odd and prime sizes (M = 77 tokens, d = 130,
// hidden 257): x + c_proj(gelu_tanh(c_fc(x) + b_fc)) + b_proj, in_out
// weights. The bias and GELU run in c_fc's blocks, the bias and residual in
// c_proj's.
func.func @mlp(%x: tensor<1x77x130xf32> {tfm.input = "hidden"},
               %fc_w: tensor<130x257xf32> {tfm.param = "mlp.c_fc.weight"},
               %fc_b: tensor<257xf32> {tfm.param = "mlp.c_fc.bias"},
               %proj_w: tensor<257x130xf32> {tfm.param = "mlp.c_proj.weight"},
               %proj_b: tensor<130xf32> {tfm.param = "mlp.c_proj.bias"})
    -> (tensor<1x77x130xf32> {tfm.output = "hidden"}) {
  %fc = tfm.linear %x, %fc_w, %fc_b
      : (tensor<1x77x130xf32>, tensor<130x257xf32>, tensor<257xf32>) -> tensor<1x77x257xf32>
  %act = tfm.gelu %fc {approximate = #tfm.gelu<tanh>}
      : (tensor<1x77x257xf32>) -> tensor<1x77x257xf32>
  %out = tfm.linear %act, %proj_w, %proj_b
      : (tensor<1x77x257xf32>, tensor<257x130xf32>, tensor<130xf32>) -> tensor<1x77x130xf32>
  %y = tfm.residual_add %x, %out
      : (tensor<1x77x130xf32>, tensor<1x77x130xf32>) -> tensor<1x77x130xf32>
  return %y : tensor<1x77x130xf32>
}

// GPT-2's MLP and residual at sizes whose GEMMs run on AMX tiles where the
// host has them (M = 96 tokens, d = 160, hidden 640: multiples of 32, not of
// the 128-column block), in_out weights: x + c_proj(gelu_tanh(c_fc(x) +
// b_fc)) + b_proj. The bias, GELU and residual are elementwise passes after
// the tiles.
func.func @mlp(%x: tensor<1x96x160xf32> {tfm.input = "hidden"},
               %fc_w: tensor<160x640xf32> {tfm.param = "mlp.c_fc.weight"},
               %fc_b: tensor<640xf32> {tfm.param = "mlp.c_fc.bias"},
               %proj_w: tensor<640x160xf32> {tfm.param = "mlp.c_proj.weight"},
               %proj_b: tensor<160xf32> {tfm.param = "mlp.c_proj.bias"})
    -> (tensor<1x96x160xf32> {tfm.output = "hidden"}) {
  %fc = tfm.linear %x, %fc_w, %fc_b
      : (tensor<1x96x160xf32>, tensor<160x640xf32>, tensor<640xf32>) -> tensor<1x96x640xf32>
  %act = tfm.gelu %fc {approximate = #tfm.gelu<tanh>}
      : (tensor<1x96x640xf32>) -> tensor<1x96x640xf32>
  %out = tfm.linear %act, %proj_w, %proj_b
      : (tensor<1x96x640xf32>, tensor<640x160xf32>, tensor<160xf32>) -> tensor<1x96x160xf32>
  %y = tfm.residual_add %x, %out
      : (tensor<1x96x160xf32>, tensor<1x96x160xf32>) -> tensor<1x96x160xf32>
  return %y : tensor<1x96x160xf32>
}

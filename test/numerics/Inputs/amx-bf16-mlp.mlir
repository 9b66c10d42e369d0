// A bf16 model's MLP (weights, activations and results in bf16; matmuls
// accumulate in f32), 77 tokens: on a CPU with AMX-BF16 both GEMMs run on
// AMX tiles with one bf16 product (the last 13 rows on tiles of their own),
// reading weights the runner binds in tiles' order. f32 in and out, so that
// .npy files carry them.
func.func @mlp(%x: tensor<1x77x160xf32> {tfm.input = "hidden"},
               %fc_w: tensor<160x640xbf16> {tfm.param = "mlp.c_fc.weight"},
               %fc_b: tensor<640xbf16> {tfm.param = "mlp.c_fc.bias"},
               %proj_w: tensor<256x640xbf16> {tfm.param = "mlp.down_proj.weight"})
    -> (tensor<1x77x256xf32> {tfm.output = "hidden"}) {
  %xb = tfm.convert %x : (tensor<1x77x160xf32>) -> tensor<1x77x160xbf16>
  %h = tfm.linear %xb, %fc_w, %fc_b : (tensor<1x77x160xbf16>, tensor<160x640xbf16>, tensor<640xbf16>) -> tensor<1x77x640xbf16>
  %g = tfm.gelu %h {approximate = #tfm.gelu<tanh>} : (tensor<1x77x640xbf16>) -> tensor<1x77x640xbf16>
  %y = tfm.linear %g, %proj_w {layout = #tfm.layout<out_in>} : (tensor<1x77x640xbf16>, tensor<256x640xbf16>) -> tensor<1x77x256xbf16>
  %yf = tfm.convert %y : (tensor<1x77x256xbf16>) -> tensor<1x77x256xf32>
  return %yf : tensor<1x77x256xf32>
}

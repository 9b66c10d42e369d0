// A Llama MLP and residual at odd and prime sizes (M = 77, d = 130, hidden
// 257), nn.Linear ([out, in]) weights: x + down(silu(gate(x)) * up(x)). The
// SiLU and the product run in one projection's blocks, reading the other's
// output; the residual in down's.
func.func @mlp(%x: tensor<1x77x130xf32> {tfm.input = "hidden"},
               %gate_w: tensor<257x130xf32> {tfm.param = "mlp.gate_proj.weight"},
               %up_w: tensor<257x130xf32> {tfm.param = "mlp.up_proj.weight"},
               %down_w: tensor<130x257xf32> {tfm.param = "mlp.down_proj.weight"})
    -> (tensor<1x77x130xf32> {tfm.output = "hidden"}) {
  %g = tfm.linear %x, %gate_w {layout = #tfm.layout<out_in>}
      : (tensor<1x77x130xf32>, tensor<257x130xf32>) -> tensor<1x77x257xf32>
  %u = tfm.linear %x, %up_w {layout = #tfm.layout<out_in>}
      : (tensor<1x77x130xf32>, tensor<257x130xf32>) -> tensor<1x77x257xf32>
  %h = tfm.swiglu %g, %u
      : (tensor<1x77x257xf32>, tensor<1x77x257xf32>) -> tensor<1x77x257xf32>
  %d = tfm.linear %h, %down_w {layout = #tfm.layout<out_in>}
      : (tensor<1x77x257xf32>, tensor<130x257xf32>) -> tensor<1x77x130xf32>
  %y = tfm.residual_add %x, %d
      : (tensor<1x77x130xf32>, tensor<1x77x130xf32>) -> tensor<1x77x130xf32>
  return %y : tensor<1x77x130xf32>
}

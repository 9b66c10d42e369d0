// res + gelu_erf(x W^T + b) with an nn.Linear weight [257, 130] and 77
// tokens: bias, the erf GELU and the add of another input in the blocks of
// one projection.
func.func @f(%x: tensor<1x77x130xf32> {tfm.input = "hidden"},
             %res: tensor<1x77x257xf32> {tfm.input = "res"},
             %w: tensor<257x130xf32> {tfm.param = "fc.weight"},
             %b: tensor<257xf32> {tfm.param = "fc.bias"})
    -> (tensor<1x77x257xf32> {tfm.output = "hidden"}) {
  %fc = tfm.linear %x, %w, %b {layout = #tfm.layout<out_in>}
      : (tensor<1x77x130xf32>, tensor<257x130xf32>, tensor<257xf32>) -> tensor<1x77x257xf32>
  %act = tfm.gelu %fc {approximate = #tfm.gelu<none>}
      : (tensor<1x77x257xf32>) -> tensor<1x77x257xf32>
  %y = tfm.residual_add %res, %act
      : (tensor<1x77x257xf32>, tensor<1x77x257xf32>) -> tensor<1x77x257xf32>
  return %y : tensor<1x77x257xf32>
}

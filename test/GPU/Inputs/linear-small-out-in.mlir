func.func @forward(%x: tensor<1x4x64xf32> {tfm.input = "x"},
                   %w: tensor<32x64xf32> {tfm.param = "w"})
    -> (tensor<1x4x32xf32> {tfm.output = "y"}) {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x4x64xf32>, tensor<32x64xf32>) -> tensor<1x4x32xf32>
  return %y : tensor<1x4x32xf32>
}

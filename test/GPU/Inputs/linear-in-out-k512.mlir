func.func @proj(%x: tensor<1x64x512xf32> {tfm.input = "x"},
                %w: tensor<512x256xf32> {tfm.param = "w"})
    -> (tensor<1x64x256xf32> {tfm.output = "y"}) {
  %y = tfm.linear %x, %w {layout = #tfm.layout<in_out>} : (tensor<1x64x512xf32>, tensor<512x256xf32>) -> tensor<1x64x256xf32>
  return %y : tensor<1x64x256xf32>
}

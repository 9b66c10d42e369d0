func.func @proj(%x: tensor<1x128x512xf32> {tfm.input = "x"},
                %w: tensor<256x512xf32> {tfm.param = "w"})
    -> (tensor<1x128x256xf32> {tfm.output = "y"}) {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x128x512xf32>, tensor<256x512xf32>) -> tensor<1x128x256xf32>
  return %y : tensor<1x128x256xf32>
}

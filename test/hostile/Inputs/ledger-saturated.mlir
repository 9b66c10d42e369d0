func.func @f(%x: tensor<1x1048576x1048576xf32> {tfm.input = "x"}, %w: tensor<1048576x1048576xf32> {tfm.param = "w"}) -> (tensor<1x1048576x1048576xf32> {tfm.output = "y"}) {
  %y0 = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x1048576x1048576xf32>, tensor<1048576x1048576xf32>) -> tensor<1x1048576x1048576xf32>
  %y1 = tfm.linear %y0, %w {layout = #tfm.layout<out_in>} : (tensor<1x1048576x1048576xf32>, tensor<1048576x1048576xf32>) -> tensor<1x1048576x1048576xf32>
  %y2 = tfm.linear %y1, %w {layout = #tfm.layout<out_in>} : (tensor<1x1048576x1048576xf32>, tensor<1048576x1048576xf32>) -> tensor<1x1048576x1048576xf32>
  %y3 = tfm.linear %y2, %w {layout = #tfm.layout<out_in>} : (tensor<1x1048576x1048576xf32>, tensor<1048576x1048576xf32>) -> tensor<1x1048576x1048576xf32>
  %y4 = tfm.linear %y3, %w {layout = #tfm.layout<out_in>} : (tensor<1x1048576x1048576xf32>, tensor<1048576x1048576xf32>) -> tensor<1x1048576x1048576xf32>
  %y5 = tfm.linear %y4, %w {layout = #tfm.layout<out_in>} : (tensor<1x1048576x1048576xf32>, tensor<1048576x1048576xf32>) -> tensor<1x1048576x1048576xf32>
  %y6 = tfm.linear %y5, %w {layout = #tfm.layout<out_in>} : (tensor<1x1048576x1048576xf32>, tensor<1048576x1048576xf32>) -> tensor<1x1048576x1048576xf32>
  %y7 = tfm.linear %y6, %w {layout = #tfm.layout<out_in>} : (tensor<1x1048576x1048576xf32>, tensor<1048576x1048576xf32>) -> tensor<1x1048576x1048576xf32>
  %y8 = tfm.linear %y7, %w {layout = #tfm.layout<out_in>} : (tensor<1x1048576x1048576xf32>, tensor<1048576x1048576xf32>) -> tensor<1x1048576x1048576xf32>
  %y9 = tfm.linear %y8, %w {layout = #tfm.layout<out_in>} : (tensor<1x1048576x1048576xf32>, tensor<1048576x1048576xf32>) -> tensor<1x1048576x1048576xf32>
  %y10 = tfm.linear %y9, %w {layout = #tfm.layout<out_in>} : (tensor<1x1048576x1048576xf32>, tensor<1048576x1048576xf32>) -> tensor<1x1048576x1048576xf32>
  %y11 = tfm.linear %y10, %w {layout = #tfm.layout<out_in>} : (tensor<1x1048576x1048576xf32>, tensor<1048576x1048576xf32>) -> tensor<1x1048576x1048576xf32>
  return %y11 : tensor<1x1048576x1048576xf32>
}

func.func @decode(%q: tensor<1x8x1x128xf32> {tfm.input = "q"},
                  %k: tensor<1x2x4096x128xf32> {tfm.input = "k"},
                  %v: tensor<1x2x4096x128xf32> {tfm.input = "v"},
                  %pos: index {tfm.input = "position"})
    -> (tensor<1x8x1x128xf32> {tfm.output = "o"}) {
  %a = tfm.attention %q, %k, %v, %pos : (tensor<1x8x1x128xf32>, tensor<1x2x4096x128xf32>, tensor<1x2x4096x128xf32>, index) -> tensor<1x8x1x128xf32>
  return %a : tensor<1x8x1x128xf32>
}

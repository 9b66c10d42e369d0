func.func @attn(%q: tensor<1x4x77x64xf32> {tfm.input = "q"},
                %k: tensor<1x2x77x64xf32> {tfm.input = "k"},
                %v: tensor<1x2x77x64xf32> {tfm.input = "v"})
    -> (tensor<1x4x77x64xf32> {tfm.output = "o"}) {
  %a = tfm.attention %q, %k, %v : (tensor<1x4x77x64xf32>, tensor<1x2x77x64xf32>, tensor<1x2x77x64xf32>) -> tensor<1x4x77x64xf32>
  return %a : tensor<1x4x77x64xf32>
}

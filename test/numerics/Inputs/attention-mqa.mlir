// Attention case for test/numerics/attention.test: B=1 Hq=6 S=40 Hkv=1 Skv=40 dh=24.
func.func @forward(%q: tensor<1x6x40x24xf32> {tfm.input = "q"}, %k: tensor<1x1x40x24xf32> {tfm.input = "k"}, %v: tensor<1x1x40x24xf32> {tfm.input = "v"}) -> (tensor<1x6x40x24xf32> {tfm.output = "out"}) {
  %a = tfm.attention %q, %k, %v : (tensor<1x6x40x24xf32>, tensor<1x1x40x24xf32>, tensor<1x1x40x24xf32>) -> tensor<1x6x40x24xf32>
  return %a : tensor<1x6x40x24xf32>
}

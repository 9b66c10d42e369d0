// Attention case for test/numerics/attention.test: B=1 Hq=8 S=48 Hkv=2 Skv=48 dh=16.
func.func @forward(%q: tensor<1x8x48x16xf32> {tfm.input = "q"}, %k: tensor<1x2x48x16xf32> {tfm.input = "k"}, %v: tensor<1x2x48x16xf32> {tfm.input = "v"}) -> (tensor<1x8x48x16xf32> {tfm.output = "out"}) {
  %a = tfm.attention %q, %k, %v : (tensor<1x8x48x16xf32>, tensor<1x2x48x16xf32>, tensor<1x2x48x16xf32>) -> tensor<1x8x48x16xf32>
  return %a : tensor<1x8x48x16xf32>
}

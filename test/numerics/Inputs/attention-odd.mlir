// Attention case for test/numerics/attention.test: B=1 Hq=4 S=37 Hkv=2 Skv=37 dh=16.
func.func @forward(%q: tensor<1x4x37x16xf32> {tfm.input = "q"}, %k: tensor<1x2x37x16xf32> {tfm.input = "k"}, %v: tensor<1x2x37x16xf32> {tfm.input = "v"}) -> (tensor<1x4x37x16xf32> {tfm.output = "out"}) {
  %a = tfm.attention %q, %k, %v : (tensor<1x4x37x16xf32>, tensor<1x2x37x16xf32>, tensor<1x2x37x16xf32>) -> tensor<1x4x37x16xf32>
  return %a : tensor<1x4x37x16xf32>
}

// Attention case for test/numerics/attention.test: B=1 Hq=4 S=21 Hkv=2 Skv=45 dh=16, not causal.
func.func @forward(%q: tensor<1x4x21x16xf32> {tfm.input = "q"}, %k: tensor<1x2x45x16xf32> {tfm.input = "k"}, %v: tensor<1x2x45x16xf32> {tfm.input = "v"}) -> (tensor<1x4x21x16xf32> {tfm.output = "out"}) {
  %a = tfm.attention %q, %k, %v {causal = false} : (tensor<1x4x21x16xf32>, tensor<1x2x45x16xf32>, tensor<1x2x45x16xf32>) -> tensor<1x4x21x16xf32>
  return %a : tensor<1x4x21x16xf32>
}

// Attention case for test/numerics/attention.test: B=2 Hq=4 S=64 Hkv=4 Skv=64 dh=32.
func.func @forward(%q: tensor<2x4x64x32xf32> {tfm.input = "q"}, %k: tensor<2x4x64x32xf32> {tfm.input = "k"}, %v: tensor<2x4x64x32xf32> {tfm.input = "v"}) -> (tensor<2x4x64x32xf32> {tfm.output = "out"}) {
  %a = tfm.attention %q, %k, %v : (tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>) -> tensor<2x4x64x32xf32>
  return %a : tensor<2x4x64x32xf32>
}

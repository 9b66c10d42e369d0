// Attention case for test/numerics/attention.test: a ragged batch, B=3 Hq=4 S=5 Hkv=2 Skv=64 dh=16, each sequence's queries at its own position.
func.func @forward(%q: tensor<3x4x5x16xf32> {tfm.input = "q"}, %k: tensor<3x2x64x16xf32> {tfm.input = "k"}, %v: tensor<3x2x64x16xf32> {tfm.input = "v"}, %pos: tensor<3xi64> {tfm.input = "pos"}) -> (tensor<3x4x5x16xf32> {tfm.output = "out"}) {
  %a = tfm.attention %q, %k, %v, %pos : (tensor<3x4x5x16xf32>, tensor<3x2x64x16xf32>, tensor<3x2x64x16xf32>, tensor<3xi64>) -> tensor<3x4x5x16xf32>
  return %a : tensor<3x4x5x16xf32>
}

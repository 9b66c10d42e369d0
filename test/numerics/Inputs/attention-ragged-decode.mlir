// Attention case for test/numerics/attention.test: a ragged decode step, B=3 Hq=4 S=1 Hkv=1 Skv=48 dh=8, each sequence at its own position.
func.func @forward(%q: tensor<3x4x1x8xf32> {tfm.input = "q"}, %k: tensor<3x1x48x8xf32> {tfm.input = "k"}, %v: tensor<3x1x48x8xf32> {tfm.input = "v"}, %pos: tensor<3xi32> {tfm.input = "pos"}) -> (tensor<3x4x1x8xf32> {tfm.output = "out"}) {
  %a = tfm.attention %q, %k, %v, %pos : (tensor<3x4x1x8xf32>, tensor<3x1x48x8xf32>, tensor<3x1x48x8xf32>, tensor<3xi32>) -> tensor<3x4x1x8xf32>
  return %a : tensor<3x4x1x8xf32>
}

// Attention case for test/numerics/attention.test: B=1 Hq=4 S=5 Hkv=2 Skv=64 dh=16, queries at position 40 of a cache, a sliding window of 7.
func.func @forward(%q: tensor<1x4x5x16xf32> {tfm.input = "q"}, %k: tensor<1x2x64x16xf32> {tfm.input = "k"}, %v: tensor<1x2x64x16xf32> {tfm.input = "v"}, %pos: index {tfm.input = "pos"}) -> (tensor<1x4x5x16xf32> {tfm.output = "out"}) {
  %a = tfm.attention %q, %k, %v, %pos {sliding_window = 7 : i64} : (tensor<1x4x5x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, index) -> tensor<1x4x5x16xf32>
  return %a : tensor<1x4x5x16xf32>
}

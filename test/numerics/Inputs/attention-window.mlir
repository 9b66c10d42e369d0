// Attention case for test/numerics/attention.test: B=2 Hq=4 S=37 Hkv=2 dh=8, a sliding window of 10.
func.func @forward(%q: tensor<2x4x37x8xf32> {tfm.input = "q"}, %k: tensor<2x2x37x8xf32> {tfm.input = "k"}, %v: tensor<2x2x37x8xf32> {tfm.input = "v"}) -> (tensor<2x4x37x8xf32> {tfm.output = "out"}) {
  %a = tfm.attention %q, %k, %v {sliding_window = 10 : i64} : (tensor<2x4x37x8xf32>, tensor<2x2x37x8xf32>, tensor<2x2x37x8xf32>) -> tensor<2x4x37x8xf32>
  return %a : tensor<2x4x37x8xf32>
}

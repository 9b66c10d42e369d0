// One GEMM whose M, N and K are multiples of 32 (AMX tiles where planned).
func.func @gemm(%x: tensor<1x64x96xf32> {tfm.input = "x"}, %w: tensor<96x128xf32> {tfm.param = "w"}) -> tensor<1x64x128xf32> {
  %y = tfm.linear %x, %w : (tensor<1x64x96xf32>, tensor<96x128xf32>) -> tensor<1x64x128xf32>
  return %y : tensor<1x64x128xf32>
}

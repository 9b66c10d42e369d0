// Transposes of the shapes the CPU pipeline produces (heads split and
// merged, K transposed for the scores, the GEMMs' A panels), at sizes that
// are and are not multiples of the vector width; see transposes.test.
func.func @heads(%x: tensor<1x77x12x40xf32> {tfm.input = "x"})
    -> (tensor<1x12x77x40xf32> {tfm.output = "y"}) {
  %e = tensor.empty() : tensor<1x12x77x40xf32>
  %t = linalg.transpose ins(%x : tensor<1x77x12x40xf32>)
      outs(%e : tensor<1x12x77x40xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x12x77x40xf32>
}
func.func @keys(%x: tensor<1x77x12x40xf32> {tfm.input = "x"})
    -> (tensor<1x12x40x77xf32> {tfm.output = "y"}) {
  %e = tensor.empty() : tensor<1x12x40x77xf32>
  %t = linalg.transpose ins(%x : tensor<1x77x12x40xf32>)
      outs(%e : tensor<1x12x40x77xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x12x40x77xf32>
}
func.func @keys_square(%x: tensor<1x128x12x64xf32> {tfm.input = "x"})
    -> (tensor<1x12x64x128xf32> {tfm.output = "y"}) {
  %e = tensor.empty() : tensor<1x12x64x128xf32>
  %t = linalg.transpose ins(%x : tensor<1x128x12x64xf32>)
      outs(%e : tensor<1x12x64x128xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x12x64x128xf32>
}
func.func @panels(%x: tensor<20x6x768xf32> {tfm.input = "x"})
    -> (tensor<20x768x6xf32> {tfm.output = "y"}) {
  %e = tensor.empty() : tensor<20x768x6xf32>
  %t = linalg.transpose ins(%x : tensor<20x6x768xf32>)
      outs(%e : tensor<20x768x6xf32>) permutation = [0, 2, 1]
  return %t : tensor<20x768x6xf32>
}

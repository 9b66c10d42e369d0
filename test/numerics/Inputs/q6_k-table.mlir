// An embedding table of 50 rows of 512 that only the gather reads
// (numerics/q6_k.test): held as Q6_K, each row read element by element
// from its packed parts.
func.func @table(%ids: tensor<1x8xi32> {tfm.input = "ids"},
                 %table: tensor<50x512xf32> {tfm.param = "table"})
    -> (tensor<1x8x512xf32> {tfm.output = "y"}) {
  %e = tfm.embedding %ids, %table : (tensor<1x8xi32>, tensor<50x512xf32>) -> tensor<1x8x512xf32>
  return %e : tensor<1x8x512xf32>
}

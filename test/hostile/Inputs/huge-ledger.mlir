// 2^64 elements: the ledger's int64 counts would wrap to 0.
func.func @f(%a: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  %r = tfm.gelu %a : (tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32>
  return %r : tensor<4294967296x4294967296xf32>
}

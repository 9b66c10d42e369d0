// The model of the bad-input tests: out = hidden + hidden @ W + b.
func.func @forward(%x: tensor<2x4x8xf32> {tfm.input = "hidden"},
                   %w: tensor<8x8xf32> {tfm.param = "h.0.mlp.c_proj.weight"},
                   %b: tensor<8xf32> {tfm.param = "h.0.mlp.c_proj.bias"})
    -> (tensor<2x4x8xf32> {tfm.output = "out"}) {
  %y = tfm.linear %x, %w, %b : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %r = tfm.residual_add %x, %y : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

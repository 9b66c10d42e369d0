// A parameter fused from parts along dimension 1 but cut along dimension 0:
// no slice of the checkpoint's tensors (test/parallel/errors.test).
module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @forward(%x: tensor<1x2x8xf32> {tfm.input = "x"},
      %w: tensor<4x8xf32> {tfm.param = "concat(a, b)", tfm.param_parts = ["a", "b"], tfm.param_concat_axis = 1 : i64,
                            tfm.param_shard = #tfm.shard<axis = 0, pieces = [8], shards = [2]>})
      -> (tensor<1x2x4xf32> {tfm.output = "y"}) {
    %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x2x8xf32>, tensor<4x8xf32>) -> tensor<1x2x4xf32>
    return %y : tensor<1x2x4xf32>
  }
}

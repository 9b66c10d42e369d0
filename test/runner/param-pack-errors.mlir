// A module may carry `tfm.param_pack` itself (e.g. saved after the CPU
// pipeline's signature stage). A malformed one is refused before anything is
// bound or compiled, naming the argument.
// RUN: not transformer-runner %s --random-weights 1 --entry bad_layout 2>&1 | FileCheck %s --check-prefix=LAYOUT
// RUN: not transformer-runner %s --random-weights 1 --entry bad_shape 2>&1 | FileCheck %s --check-prefix=SHAPE
// LAYOUT: error: argument #0 ('w') of @bad_layout: tfm.param_pack needs tfm.param and {layout = "in_out" | "out_in", panel = N > 0, shape = array<i64: rows, cols>}
// SHAPE: error: argument #0 ('w') of @bad_shape: tfm.param_pack of a 40x16 weight in panels of 16 needs an f32, bf16 or f16 argument of shape 3x16x16

func.func @bad_layout(%w: tensor<3x16x16xf32> {tfm.param = "w", tfm.param_pack = {layout = "sideways", panel = 16 : i64, shape = array<i64: 40, 16>}})
    -> (tensor<3x16x16xf32> {tfm.output = "y"}) {
  return %w : tensor<3x16x16xf32>
}

func.func @bad_shape(%w: tensor<2x16x16xf32> {tfm.param = "w", tfm.param_pack = {layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 16>}})
    -> (tensor<2x16x16xf32> {tfm.output = "y"}) {
  return %w : tensor<2x16x16xf32>
}

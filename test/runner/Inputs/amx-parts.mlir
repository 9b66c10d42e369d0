// The parts of a 40x16 weight (out_in: N = 40 columns, padded to 48 in
// panels of 16; K = 16) as amx-split-binding.test checks them, and the same
// weight unpacked.
func.func @parts(%w: tensor<3x3x8x32xbf16> {tfm.param = "w", tfm.param_pack = {format = "amx_bf16x3", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 16>}})
    -> (tensor<3x3x8x32xf32> {tfm.output = "parts"}) {
  %f = tfm.convert %w : (tensor<3x3x8x32xbf16>) -> tensor<3x3x8x32xf32>
  return %f : tensor<3x3x8x32xf32>
}

func.func @unsplit(%w: tensor<40x16xf32> {tfm.param = "w"})
    -> (tensor<40x16xf32> {tfm.output = "w"}) {
  return %w : tensor<40x16xf32>
}

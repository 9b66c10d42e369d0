// Weights bound with K pairs interleaved (format = "bf16_pairs"), returned
// as bound (widened to f32) so that bf16-pairs.test can check the layout:
// P[j, k / 2, r, k % 2] = W(k, j * 16 + r), zero past N = 40.
func.func @out_in(%w: tensor<3x4x16x2xbf16> {tfm.param = "w", tfm.param_pack = {format = "bf16_pairs", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 8>}})
    -> (tensor<3x4x16x2xf32> {tfm.output = "p"}) {
  %p = tfm.convert %w : (tensor<3x4x16x2xbf16>) -> tensor<3x4x16x2xf32>
  return %p : tensor<3x4x16x2xf32>
}

func.func @in_out(%w: tensor<3x4x16x2xbf16> {tfm.param = "wt", tfm.param_pack = {format = "bf16_pairs", layout = "in_out", panel = 16 : i64, shape = array<i64: 8, 40>}})
    -> (tensor<3x4x16x2xf32> {tfm.output = "p"}) {
  %p = tfm.convert %w : (tensor<3x4x16x2xbf16>) -> tensor<3x4x16x2xf32>
  return %p : tensor<3x4x16x2xf32>
}

// A weight quantized along the wrong dimension for the matmul that reads it
// (a module that says axis 0 of an out_in weight, whose K is dimension 1),
// and tfm-quantize-weights with a format it does not know: errors naming the
// weight or the scheme, exit code 1.
// RUN: not transformer-opt %s --tfm-to-linalg --canonicalize --tfm-cpu-configure=cpu=znver3 --tfm-cpu-pack-weights 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not transformer-opt %s --tfm-quantize-weights=scheme=q4_9 2>&1 | FileCheck %s --check-prefix=SCHEME
// AXIS: error: tfm-cpu-pack-weights: the weight 'w' is quantized along dimension 0 but read by this matmul with K along dimension 1
// SCHEME: error: tfm-quantize-weights: unknown scheme 'q4_9' (supported: q8_0, q4_0, q4_k, q5_k, q6_k, none)
func.func @wrong_axis(%x: tensor<1x8x64xf32> {tfm.input = "x"}, %w: tensor<96x64xf32> {tfm.param = "w", tfm.param_quant = #tfm.quant<q8_0, axis = 0>}) -> tensor<1x8x96xf32> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x8x64xf32>, tensor<96x64xf32>) -> tensor<1x8x96xf32>
  return %y : tensor<1x8x96xf32>
}

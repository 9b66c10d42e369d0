// RUN: transformer-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{argument #1: 'tfm.param_quant' must be a #tfm.quant attribute, got "q8_0"}}
func.func @not_an_attr(%x: tensor<8x64xf32>, %w: tensor<64x96xf32> {tfm.param = "w", tfm.param_quant = "q8_0"}) {
  return
}

// -----

// expected-error @+1 {{axis must be 0 or 1 (a weight matrix's K), got 2}}
func.func @axis(%x: tensor<8x64xf32>, %w: tensor<64x96xf32> {tfm.param = "w", tfm.param_quant = #tfm.quant<q8_0, axis = 2>}) {
  return
}

// -----

// expected-error @+2 {{expected ::mlir::tfm::QuantFormat to be one of: q8_0}}
// expected-error @+1 {{failed to parse Tfm_WeightQuantAttr parameter 'format'}}
func.func @format(%x: tensor<8x64xf32>, %w: tensor<64x96xf32> {tfm.param = "w", tfm.param_quant = #tfm.quant<q4_9, axis = 0>}) {
  return
}

// -----

// expected-error @+1 {{argument #1: 'tfm.param_quant' applies to function arguments annotated with 'tfm.param'}}
func.func @not_a_param(%x: tensor<8x64xf32>, %w: tensor<64x96xf32> {tfm.param_quant = #tfm.quant<q8_0, axis = 0>}) {
  return
}

// -----

// expected-error @+1 {{argument #1: 'tfm.param_quant' applies to an f32 weight matrix (its dequantized value), not 'tensor<64x96xbf16>'}}
func.func @bf16(%x: tensor<8x64xf32>, %w: tensor<64x96xbf16> {tfm.param = "w", tfm.param_quant = #tfm.quant<q8_0, axis = 0>}) {
  return
}

// -----

// expected-error @+1 {{argument #1: 'tfm.param_quant' applies to an f32 weight matrix (its dequantized value), not 'tensor<64xf32>'}}
func.func @vector(%x: tensor<8x64xf32>, %w: tensor<64xf32> {tfm.param = "w", tfm.param_quant = #tfm.quant<q8_0, axis = 0>}) {
  return
}

// -----

// expected-error @+1 {{argument #1: #tfm.quant<q8_0, axis = 1> needs dimension 1 of 'tensor<64x80xf32>' (80) to be a multiple of its blocks of 32}}
func.func @blocks(%x: tensor<8x64xf32>, %w: tensor<64x80xf32> {tfm.param = "w", tfm.param_quant = #tfm.quant<q8_0, axis = 1>}) {
  return
}

// -----

// expected-error @+1 {{argument #1: #tfm.quant<q4_k, axis = 1> needs dimension 1 of 'tensor<64x288xf32>' (288) to be a multiple of its blocks of 256}}
func.func @super_blocks(%x: tensor<8x64xf32>, %w: tensor<64x288xf32> {tfm.param = "w", tfm.param_quant = #tfm.quant<q4_k, axis = 1>}) {
  return
}

// -----

// expected-error @+1 {{argument #1: #tfm.quant<q6_k, axis = 0> needs dimension 0 of 'tensor<128x96xf32>' (128) to be a multiple of its blocks of 256}}
func.func @q6_k_blocks(%x: tensor<8x128xf32>, %w: tensor<128x96xf32> {tfm.param = "w", tfm.param_quant = #tfm.quant<q6_k, axis = 0>}) {
  return
}

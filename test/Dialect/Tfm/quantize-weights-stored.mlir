// RUN: transformer-opt %s --split-input-file --verify-diagnostics --tfm-quantize-weights="scheme=none stored=w:q4_0,head:q8_0,q.weight:q8_0,k.weight:q8_0,v.weight:q8_0,a.weight:q8_0,b.weight:q4_0" | FileCheck %s
// RUN: transformer-opt %s --split-input-file --tfm-quantize-weights="scheme=q4_0 stored=head:q8_0" | FileCheck %s --check-prefix=SCHEME
// RUN: not transformer-opt %s --split-input-file --tfm-quantize-weights="scheme=none stored=w:q5_1" 2>&1 | FileCheck %s --check-prefix=BAD

// Weights a file stores quantized (a GGUF file's Q8_0 and Q4_0 tensors) are
// held in the file's format; with scheme=none nothing else is marked. A
// fused weight is held quantized when its parts are all stored in one
// format.
// CHECK-LABEL: func.func @stored
// CHECK-SAME: tensor<64x96xf32> {tfm.param = "w", tfm.param_quant = #tfm.quant<q4_0, axis = 0>}
// CHECK-SAME: tensor<64x96xf32> {tfm.param = "v"}
// CHECK-SAME: tensor<100x64xf32> {tfm.param = "head", tfm.param_quant = #tfm.quant<q8_0, axis = 1>}
// With scheme=q4_0 the others are q4_0, the stored one keeps its format.
// SCHEME-LABEL: func.func @stored
// SCHEME-SAME: tensor<64x96xf32> {tfm.param = "w", tfm.param_quant = #tfm.quant<q4_0, axis = 0>}
// SCHEME-SAME: tensor<64x96xf32> {tfm.param = "v", tfm.param_quant = #tfm.quant<q4_0, axis = 1>}
// SCHEME-SAME: tensor<100x64xf32> {tfm.param = "head", tfm.param_quant = #tfm.quant<q8_0, axis = 1>}
// BAD: error: tfm-quantize-weights: stored 'w:q5_1': expected name:format, format q8_0, q4_0, q4_k, q5_k or q6_k
func.func @stored(%x: tensor<1x8x64xf32> {tfm.input = "x"},
                  %w: tensor<64x96xf32> {tfm.param = "w"},
                  %v: tensor<64x96xf32> {tfm.param = "v"},
                  %head: tensor<100x64xf32> {tfm.param = "head"}) -> tensor<1x8x100xf32> {
  %y = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<64x96xf32>) -> tensor<1x8x96xf32>
  %z = tfm.linear %y, %v {layout = #tfm.layout<out_in>} : (tensor<1x8x96xf32>, tensor<64x96xf32>) -> tensor<1x8x64xf32>
  %l = tfm.lm_head %z, %head : (tensor<1x8x64xf32>, tensor<100x64xf32>) -> tensor<1x8x100xf32>
  return %l : tensor<1x8x100xf32>
}

// -----

// CHECK-LABEL: func.func @fused
// CHECK-SAME: {tfm.param = "concat(q.weight, k.weight, v.weight)", tfm.param_concat_axis = 0 : i64, tfm.param_parts = ["q.weight", "k.weight", "v.weight"], tfm.param_quant = #tfm.quant<q8_0, axis = 1>}
// CHECK-SAME: {tfm.param = "concat(a.weight, b.weight)", tfm.param_concat_axis = 0 : i64, tfm.param_parts = ["a.weight", "b.weight"]}
func.func @fused(%x: tensor<1x8x64xf32> {tfm.input = "x"},
                 %qkv: tensor<96x64xf32> {tfm.param = "concat(q.weight, k.weight, v.weight)", tfm.param_concat_axis = 0 : i64, tfm.param_parts = ["q.weight", "k.weight", "v.weight"]},
                 %ab: tensor<64x64xf32> {tfm.param = "concat(a.weight, b.weight)", tfm.param_concat_axis = 0 : i64, tfm.param_parts = ["a.weight", "b.weight"]}) -> (tensor<1x8x96xf32>, tensor<1x8x64xf32>) {
  %y = tfm.linear %x, %qkv {layout = #tfm.layout<out_in>} : (tensor<1x8x64xf32>, tensor<96x64xf32>) -> tensor<1x8x96xf32>
  %z = tfm.linear %x, %ab {layout = #tfm.layout<out_in>} : (tensor<1x8x64xf32>, tensor<64x64xf32>) -> tensor<1x8x64xf32>
  return %y, %z : tensor<1x8x96xf32>, tensor<1x8x64xf32>
}

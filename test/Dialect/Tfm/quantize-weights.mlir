// RUN: transformer-opt %s --tfm-quantize-weights --split-input-file --verify-diagnostics | FileCheck %s

// Projection weights are marked (in either layout, the LM head's too; the
// axis is K's: 0 for in_out, 1 for out_in); the argument keeps its f32
// type: its value is now the dequantized weights.
// CHECK-LABEL: func.func @projections
// CHECK-SAME: tensor<64x96xf32> {tfm.param = "w", tfm.param_quant = #tfm.quant<q8_0, axis = 0>}
// CHECK-SAME: tensor<64x96xf32> {tfm.param = "v", tfm.param_quant = #tfm.quant<q8_0, axis = 1>}
// CHECK-SAME: tensor<100x64xf32> {tfm.param = "head", tfm.param_quant = #tfm.quant<q8_0, axis = 1>}
func.func @projections(%x: tensor<1x8x64xf32> {tfm.input = "x"},
                       %w: tensor<64x96xf32> {tfm.param = "w"},
                       %v: tensor<64x96xf32> {tfm.param = "v"},
                       %head: tensor<100x64xf32> {tfm.param = "head"}) -> tensor<1x8x100xf32> {
  %y = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<64x96xf32>) -> tensor<1x8x96xf32>
  %z = tfm.linear %y, %v {layout = #tfm.layout<out_in>} : (tensor<1x8x96xf32>, tensor<64x96xf32>) -> tensor<1x8x64xf32>
  %l = tfm.lm_head %z, %head : (tensor<1x8x64xf32>, tensor<100x64xf32>) -> tensor<1x8x100xf32>
  return %l : tensor<1x8x100xf32>
}

// -----

// Embedding tables are marked too, their rows blocks along K as an out_in
// LM head's: a tied table (gather and head read one weight), and one the
// gather alone reads.
// CHECK-LABEL: func.func @tables
// CHECK-SAME: %{{.*}}: tensor<100x64xf32> {tfm.param = "wte", tfm.param_quant = #tfm.quant<q8_0, axis = 1>}
// CHECK-SAME: %{{.*}}: tensor<50x64xf32> {tfm.param = "table", tfm.param_quant = #tfm.quant<q8_0, axis = 1>}
func.func @tables(%ids: tensor<1x8xi32> {tfm.input = "ids"},
                  %wte: tensor<100x64xf32> {tfm.param = "wte"},
                  %table: tensor<50x64xf32> {tfm.param = "table"}) -> (tensor<1x8x100xf32>, tensor<1x8x64xf32>) {
  %e = tfm.embedding %ids, %wte : (tensor<1x8xi32>, tensor<100x64xf32>) -> tensor<1x8x64xf32>
  %l = tfm.lm_head %e, %wte : (tensor<1x8x64xf32>, tensor<100x64xf32>) -> tensor<1x8x100xf32>
  %t = tfm.embedding %ids, %table : (tensor<1x8xi32>, tensor<50x64xf32>) -> tensor<1x8x64xf32>
  return %l, %t : tensor<1x8x100xf32>, tensor<1x8x64xf32>
}

// -----

// Left in f32: a table read in the in_out layout by a linear as well as
// gathered (no one axis of blocks), a K that 32 does not divide (48), and a
// bias.
// CHECK-LABEL: func.func @left_alone
// CHECK-SAME: %{{.*}}: tensor<64x64xf32> {tfm.param = "wte"}
// CHECK-SAME: %{{.*}}: tensor<48x64xf32> {tfm.param = "w"}
// CHECK-SAME: %{{.*}}: tensor<64xf32> {tfm.param = "b"}
// CHECK-NOT: tfm.param_quant
func.func @left_alone(%ids: tensor<1x8xi32> {tfm.input = "ids"},
                      %wte: tensor<64x64xf32> {tfm.param = "wte"},
                      %w: tensor<48x64xf32> {tfm.param = "w"},
                      %b: tensor<64xf32> {tfm.param = "b"},
                      %h: tensor<1x8x48xf32> {tfm.input = "h"}) -> (tensor<1x8x64xf32>, tensor<1x8x64xf32>) {
  %e = tfm.embedding %ids, %wte : (tensor<1x8xi32>, tensor<64x64xf32>) -> tensor<1x8x64xf32>
  %l = tfm.linear %e, %wte : (tensor<1x8x64xf32>, tensor<64x64xf32>) -> tensor<1x8x64xf32>
  %y = tfm.linear %h, %w, %b : (tensor<1x8x48xf32>, tensor<48x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  return %l, %y : tensor<1x8x64xf32>, tensor<1x8x64xf32>
}

// -----

// A bf16 model's weights: q8_0 is read with f32 activations.
// expected-error @+1 {{tfm-quantize-weights: parameter 'w' is 'tensor<64x96xbf16>'; q8_0 weights are read with f32 activations (quantize an f32 model: --dtype f32)}}
func.func @bf16(%x: tensor<1x8x64xbf16> {tfm.input = "x"}, %w: tensor<64x96xbf16> {tfm.param = "w"}) -> tensor<1x8x96xbf16> {
  %y = tfm.linear %x, %w : (tensor<1x8x64xbf16>, tensor<64x96xbf16>) -> tensor<1x8x96xbf16>
  return %y : tensor<1x8x96xbf16>
}

// -----

// A mixture of experts' gate, up and down weights are marked in nn.Linear's
// layout (axis 1, K = d for gate and up, m for down); the router stays f32
// (llama.cpp keeps it so), as does an expert weight whose K 32 does not
// divide (down at m = 48).
// CHECK-LABEL: func.func @experts
// CHECK-SAME: %{{.*}}: tensor<2x64xf32> {tfm.param = "router"}
// CHECK-SAME: %{{.*}}: tensor<48x64xf32> {tfm.param = "g0", tfm.param_quant = #tfm.quant<q8_0, axis = 1>}
// CHECK-SAME: %{{.*}}: tensor<48x64xf32> {tfm.param = "u0", tfm.param_quant = #tfm.quant<q8_0, axis = 1>}
// CHECK-SAME: %{{.*}}: tensor<64x48xf32> {tfm.param = "d0"}
// CHECK-SAME: %{{.*}}: tensor<48x64xf32> {tfm.param = "g1", tfm.param_quant = #tfm.quant<q8_0, axis = 1>}
// CHECK-SAME: %{{.*}}: tensor<48x64xf32> {tfm.param = "u1", tfm.param_quant = #tfm.quant<q8_0, axis = 1>}
// CHECK-SAME: %{{.*}}: tensor<64x48xf32> {tfm.param = "d1"})
func.func @experts(%x: tensor<1x8x64xf32> {tfm.input = "x"},
                   %r: tensor<2x64xf32> {tfm.param = "router"},
                   %g0: tensor<48x64xf32> {tfm.param = "g0"},
                   %u0: tensor<48x64xf32> {tfm.param = "u0"},
                   %d0: tensor<64x48xf32> {tfm.param = "d0"},
                   %g1: tensor<48x64xf32> {tfm.param = "g1"},
                   %u1: tensor<48x64xf32> {tfm.param = "u1"},
                   %d1: tensor<64x48xf32> {tfm.param = "d1"}) -> tensor<1x8x64xf32> {
  %y = tfm.moe %x, %r, %g0, %u0, %d0, %g1, %u1, %d1 {top_k = 1 : i64} : (tensor<1x8x64xf32>, tensor<2x64xf32>, tensor<48x64xf32>, tensor<48x64xf32>, tensor<64x48xf32>, tensor<48x64xf32>, tensor<48x64xf32>, tensor<64x48xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

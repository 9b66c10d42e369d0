// RUN: transformer-opt %s -split-input-file --tfm-fuse-qkv="stored=q.weight:q4_k,k.weight:q4_k,v.weight:q6_k,q2.weight:q4_k,k2.weight:q4_k,v2.weight:q4_k" | FileCheck %s
// RUN: not transformer-opt %s -split-input-file --tfm-fuse-qkv="stored=q.weight:q5_1" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not transformer-opt %s -split-input-file --tfm-fuse-qkv="stored=q4_k" 2>&1 | FileCheck %s --check-prefix=NONAME

// A malformed entry is an error naming it (tfm-quantize-weights reads the
// same list alike: quantize-weights-stored.mlir).
// BAD: error: tfm-fuse-qkv: stored 'q.weight:q5_1': expected name:format, format q8_0, q4_0, q4_k, q5_k or q6_k
// NONAME: error: tfm-fuse-qkv: stored 'q4_k': expected name:format

// A weight file holds the value projection in another block format (a
// Q4_K_M GGUF file's Q6_K attn_v beside Q4_K attn_q and attn_k): fused,
// the three would be held in one format, requantizing the value weight.
// They stay apart, each bound as stored.
// CHECK-LABEL: func.func @mixed_stored_formats
// CHECK-NOT: tfm.param_parts
// CHECK-COUNT-3: tfm.linear %arg0
func.func @mixed_stored_formats(%x: tensor<1x5x64xf32> {tfm.input = "hidden"},
                                %wq: tensor<64x64xf32> {tfm.param = "q.weight"},
                                %wk: tensor<16x64xf32> {tfm.param = "k.weight"},
                                %wv: tensor<16x64xf32> {tfm.param = "v.weight"}) -> tensor<1x4x5x16xf32> {
  %q = tfm.linear %x, %wq {layout = #tfm.layout<out_in>} : (tensor<1x5x64xf32>, tensor<64x64xf32>) -> tensor<1x5x64xf32>
  %k = tfm.linear %x, %wk {layout = #tfm.layout<out_in>} : (tensor<1x5x64xf32>, tensor<16x64xf32>) -> tensor<1x5x16xf32>
  %v = tfm.linear %x, %wv {layout = #tfm.layout<out_in>} : (tensor<1x5x64xf32>, tensor<16x64xf32>) -> tensor<1x5x16xf32>
  %qh = tfm.split_heads %q {num_heads = 4 : i64} : (tensor<1x5x64xf32>) -> tensor<1x4x5x16xf32>
  %kh = tfm.split_heads %k {num_heads = 1 : i64} : (tensor<1x5x16xf32>) -> tensor<1x1x5x16xf32>
  %vh = tfm.split_heads %v {num_heads = 1 : i64} : (tensor<1x5x16xf32>) -> tensor<1x1x5x16xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<1x4x5x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>) -> tensor<1x4x5x16xf32>
  return %a : tensor<1x4x5x16xf32>
}

// -----

// All three stored in one format: fused, and bound from the file's blocks.
// CHECK-LABEL: func.func @one_stored_format
// CHECK-SAME: tfm.param_parts = ["q2.weight", "k2.weight", "v2.weight"]
// CHECK-COUNT-1: tfm.linear %arg0
func.func @one_stored_format(%x: tensor<1x5x64xf32> {tfm.input = "hidden"},
                             %wq: tensor<64x64xf32> {tfm.param = "q2.weight"},
                             %wk: tensor<16x64xf32> {tfm.param = "k2.weight"},
                             %wv: tensor<16x64xf32> {tfm.param = "v2.weight"}) -> tensor<1x4x5x16xf32> {
  %q = tfm.linear %x, %wq {layout = #tfm.layout<out_in>} : (tensor<1x5x64xf32>, tensor<64x64xf32>) -> tensor<1x5x64xf32>
  %k = tfm.linear %x, %wk {layout = #tfm.layout<out_in>} : (tensor<1x5x64xf32>, tensor<16x64xf32>) -> tensor<1x5x16xf32>
  %v = tfm.linear %x, %wv {layout = #tfm.layout<out_in>} : (tensor<1x5x64xf32>, tensor<16x64xf32>) -> tensor<1x5x16xf32>
  %qh = tfm.split_heads %q {num_heads = 4 : i64} : (tensor<1x5x64xf32>) -> tensor<1x4x5x16xf32>
  %kh = tfm.split_heads %k {num_heads = 1 : i64} : (tensor<1x5x16xf32>) -> tensor<1x1x5x16xf32>
  %vh = tfm.split_heads %v {num_heads = 1 : i64} : (tensor<1x5x16xf32>) -> tensor<1x1x5x16xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<1x4x5x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>) -> tensor<1x4x5x16xf32>
  return %a : tensor<1x4x5x16xf32>
}

// RUN: transformer-opt %s --one-shot-bufferize=bufferize-function-boundaries --split-input-file --verify-diagnostics

// Collectives bufferize as the f32 sums --tfm-to-linalg leaves: a bias (or
// a bf16 input) still on the op is refused, not bufferized wrongly.
module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @bias(%x: tensor<2x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
    // expected-error @+2 {{failed to bufferize op}}
    // expected-error @+1 {{'tfm.all_reduce' op bufferizes only in f32 without bias (run --tfm-to-linalg first)}}
    %0 = tfm.all_reduce %x, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}

// -----

module attributes {tfm.tensor_parallel = 2 : i64} {
  func.func @half(%x: tensor<2x4xbf16>) -> tensor<2x8xbf16> {
    // expected-error @+2 {{failed to bufferize op}}
    // expected-error @+1 {{'tfm.all_gather' op bufferizes only in f32 without bias (run --tfm-to-linalg first)}}
    %0 = tfm.all_gather %x : (tensor<2x4xbf16>) -> tensor<2x8xbf16>
    return %0 : tensor<2x8xbf16>
  }
}

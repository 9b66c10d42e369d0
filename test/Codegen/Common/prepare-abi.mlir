// RUN: transformer-opt %s --tfm-prepare-abi -split-input-file -verify-diagnostics | FileCheck %s

// A public function gets the C interface; its KV caches are writable, so a
// cache write bufferizes into the caller's buffer, and every other tensor
// argument read-only, so a caller's weight or input is never scratch space.
// Non-tensor arguments get no writability.
// CHECK-LABEL: func.func @decode
// CHECK-SAME: %{{.*}}: tensor<1x4xf32> {bufferization.writable = false, tfm.input = "x"}
// CHECK-SAME: %{{.*}}: tensor<4x4xf32> {bufferization.writable = false, tfm.param = "w"}
// CHECK-SAME: %{{.*}}: tensor<1x2x16x8xf32> {bufferization.writable = true, tfm.kv_cache = "0.key"}
// CHECK-SAME: %[[POS:.*]]: index)
// CHECK-NOT: bufferization.writable
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func @decode(%x: tensor<1x4xf32> {tfm.input = "x"},
                  %w: tensor<4x4xf32> {tfm.param = "w"},
                  %kc: tensor<1x2x16x8xf32> {tfm.kv_cache = "0.key"},
                  %pos: index)
    -> (tensor<1x4xf32>, tensor<1x2x16x8xf32> {tfm.kv_cache = "0.key"}) {
  return %x, %kc : tensor<1x4xf32>, tensor<1x2x16x8xf32>
}

// Private functions and declarations are not entry points: untouched.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%{{.*}}: tensor<4xf32>) -> tensor<4xf32> {
func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
// CHECK: func.func private @external(tensor<4xf32>)
// CHECK-NOT: attributes
func.func private @external(tensor<4xf32>)

// -----

// Malformed cache annotations are refused before bufferization sees them.
// The pass-level errors; test/Pipelines/kv-cache-invalid.mlir has each
// through the whole pipeline.
// expected-error @+1 {{two arguments are the KV cache 'c'}}
func.func @twice(%a: tensor<2xf32> {tfm.kv_cache = "c"},
                 %b: tensor<2xf32> {tfm.kv_cache = "c"}) {
  return
}

// -----

// expected-error @+1 {{argument 0: 'tfm.kv_cache' must be a string on a tensor argument}}
func.func @on_index(%a: index {tfm.kv_cache = "c"}) {
  return
}

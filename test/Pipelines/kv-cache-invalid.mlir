// RUN: transformer-opt %s --tfm-cpu-pipeline -split-input-file -verify-diagnostics

// The old cache is read after the write: bufferization would have to copy
// the cache, which the pipeline refuses rather than do silently.
func.func @stale_read(%q: tensor<1x2x1x8xf32>, %k: tensor<1x2x1x8xf32>,
                      %kc: tensor<1x2x16x8xf32> {tfm.kv_cache = "0.key"},
                      %pos: index)
    -> (tensor<1x2x1x8xf32>, tensor<1x2x16x8xf32> {tfm.kv_cache = "0.key"}) {
  %kc2 = tfm.kv_cache_write %kc, %k, %pos : (tensor<1x2x16x8xf32>, tensor<1x2x1x8xf32>, index) -> tensor<1x2x16x8xf32>
  %a = tfm.attention %q, %kc, %kc, %pos : (tensor<1x2x1x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, index) -> tensor<1x2x1x8xf32>
  // expected-error @+1 {{KV cache '0.key' is not updated in place}}
  return %a, %kc2 : tensor<1x2x1x8xf32>, tensor<1x2x16x8xf32>
}

// -----

// expected-error @+1 {{result 0 is marked 'tfm.kv_cache' but no argument is the KV cache of that name}}
func.func @no_cache_arg(%kc: tensor<1x2x16x8xf32> {tfm.kv_cache = "0.key"})
    -> (tensor<1x2x16x8xf32> {tfm.kv_cache = "0.value"}) {
  return %kc : tensor<1x2x16x8xf32>
}

// -----

// expected-error @+1 {{argument 0: 'tfm.kv_cache' must be a string on a tensor argument}}
func.func @not_a_string(%kc: tensor<1x2x16x8xf32> {tfm.kv_cache = 1 : i64})
    -> tensor<1x2x16x8xf32> {
  return %kc : tensor<1x2x16x8xf32>
}

// -----

// expected-error @+1 {{two arguments are the KV cache '0.key'}}
func.func @twice(%a: tensor<1x2x16x8xf32> {tfm.kv_cache = "0.key"},
                 %b: tensor<1x2x16x8xf32> {tfm.kv_cache = "0.key"})
    -> tensor<1x2x16x8xf32> {
  return %a : tensor<1x2x16x8xf32>
}

// -----

// expected-error @+1 {{result 0: KV cache '0.key' must have its argument's type}}
func.func @wrong_type(%kc: tensor<1x2x16x8xf32> {tfm.kv_cache = "0.key"})
    -> (tensor<1x2x8x8xf32> {tfm.kv_cache = "0.key"}) {
  %s = tensor.extract_slice %kc[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<1x2x8x8xf32>
  return %s : tensor<1x2x8x8xf32>
}

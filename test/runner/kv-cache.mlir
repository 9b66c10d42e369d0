// REQUIRES: torch
// A KV cache argument is updated in place: it is zero unless --input
// preloads it, it has no out-parameter, and --output writes its new contents.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/k.npy', np.full((1, 1, 1, 2), 7, np.float32)); np.save('%t/c.npy', np.ones((1, 1, 4, 2), np.float32))"
// RUN: transformer-runner %s --input k=%t/k.npy --input position=2 \
// RUN:   --output 0.key=%t/cache.npy --print-values 8 | FileCheck %s
// CHECK: sum: 1 f32 [14]
// CHECK: 0.key (kv cache): 1x1x4x2 f32 [0, 0, 0, 0, 7, 7, 0, 0]
// RUN: %python -c "import numpy as np, sys; c = np.load('%t/cache.npy'); e = np.zeros((1, 1, 4, 2), np.float32); e[0, 0, 2] = 7; sys.exit(0 if (c == e).all() else f'bad {c!r}')"
// RUN: transformer-runner %s --input k=%t/k.npy --input position=0 \
// RUN:   --input 0.key=%t/c.npy --print-values 8 | FileCheck %s --check-prefix=PRELOAD
// PRELOAD: sum: 1 f32 [20]
// PRELOAD: 0.key (kv cache): 1x1x4x2 f32 [7, 7, 1, 1, 1, 1, 1, 1]

func.func @decode(%k: tensor<1x1x1x2xf32> {tfm.input = "k"},
                  %pos: index {tfm.input = "position"},
                  %cache: tensor<1x1x4x2xf32> {tfm.kv_cache = "0.key"})
    -> (tensor<1xf32> {tfm.output = "sum"}, tensor<1x1x4x2xf32> {tfm.kv_cache = "0.key"}) {
  %c = tfm.kv_cache_write %cache, %k, %pos : (tensor<1x1x4x2xf32>, tensor<1x1x1x2xf32>, index) -> tensor<1x1x4x2xf32>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1xf32>) -> tensor<1xf32>
  %s = linalg.reduce ins(%c : tensor<1x1x4x2xf32>) outs(%acc : tensor<1xf32>) dimensions = [1, 2, 3]
    (%a: f32, %b: f32) {
      %t = arith.addf %a, %b : f32
      linalg.yield %t : f32
    }
  return %s, %c : tensor<1xf32>, tensor<1x1x4x2xf32>
}

// A KV cache written at a position per sequence (ragged batches): row b of
// the update lands at slot positions[b] of sequence b's cache, in place
// (the loop over the batch is bufferized onto the cache argument), and
// nothing else changes. Positions are checked per element before the call.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/k.npy', np.arange(1, 7, dtype=np.float32).reshape(3, 1, 1, 2)); np.save('%t/pos.npy', np.array([2, 0, 3])); np.save('%t/pos32.npy', np.array([1, 1, 0], np.int32)); np.save('%t/c.npy', np.ones((3, 1, 4, 2), np.float32)); np.save('%t/past.npy', np.array([0, 4, 1])); np.save('%t/neg.npy', np.array([0, 1, -1]))"
// RUN: transformer-runner %s --input k=%t/k.npy --input positions=%t/pos.npy \
// RUN:   --input 0.key=%t/c.npy --output 0.key=%t/cache.npy --print-values 0
// RUN: %python -c "import numpy as np, sys; c = np.load('%t/cache.npy'); e = np.ones((3, 1, 4, 2), np.float32); k = np.arange(1, 7, dtype=np.float32).reshape(3, 1, 1, 2); [e.__setitem__((b, 0, p), k[b, 0, 0]) for b, p in enumerate([2, 0, 3])]; sys.exit(0 if (c == e).all() else f'bad {c!r}')"
// RUN: not transformer-runner %s --input k=%t/k.npy --input positions=%t/past.npy 2>&1 | FileCheck %s --check-prefix=PAST
// PAST: transformer-runner: error: input 'positions': element 1 is 4, outside [0, 3]: tfm.kv_cache_write writes 1 row(s) from it into the 4 positions of the KV cache '0.key'
// RUN: not transformer-runner %s --input k=%t/k.npy --input positions=%t/neg.npy 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: transformer-runner: error: input 'positions': element 2 is -1, outside [0, 3]
// An int32 file is converted, like any integer input.
// RUN: transformer-runner %s --input k=%t/k.npy --input positions=%t/pos32.npy --print-values 8 | FileCheck %s --check-prefix=I32
// I32: 0.key (kv cache): 3x1x4x2 f32 [0, 0, 1, 2, 0, 0, 0, 0, ...]

func.func @decode(%k: tensor<3x1x1x2xf32> {tfm.input = "k"},
                  %pos: tensor<3xi64> {tfm.input = "positions"},
                  %cache: tensor<3x1x4x2xf32> {tfm.kv_cache = "0.key"})
    -> (tensor<3x1x4x2xf32> {tfm.kv_cache = "0.key"}) {
  %c = tfm.kv_cache_write %cache, %k, %pos : (tensor<3x1x4x2xf32>, tensor<3x1x1x2xf32>, tensor<3xi64>) -> tensor<3x1x4x2xf32>
  return %c : tensor<3x1x4x2xf32>
}

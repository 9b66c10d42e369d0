// RUN: transformer-opt %s --tfm-cpu-pipeline --mlir-print-ir-after=buffer-results-to-out-params -o %t.ll 2>&1 | FileCheck %s --check-prefix=BUF --implicit-check-not="memref.alloc() {alignment = 64 : i64} : memref<1x2x128x16xf32>" --implicit-check-not="to memref<1x2x128x16xf32>"
// RUN: FileCheck %s --check-prefix=LLVM < %t.ll

// A decode step with KV caches: the cache arguments (tfm.kv_cache) are
// written in place. After bufferization the new key/value row is copied into
// a subview of the caller's cache at `position`; nothing allocates or copies a
// whole cache; the cache results are gone, so the only out-parameter is the
// attention output; attention reads the cache buffers directly.
// BUF-LABEL: func.func @decode(
// BUF-SAME: %[[K:[^:]*]]: memref<1x2x1x16xf32> {tfm.input = "k"}
// BUF-SAME: %[[V:[^:]*]]: memref<1x2x1x16xf32> {tfm.input = "v"}
// BUF-SAME: %[[KC:[^:]*]]: memref<1x2x128x16xf32> {tfm.kv_cache = "0.key"}
// BUF-SAME: %[[VC:[^:]*]]: memref<1x2x128x16xf32> {tfm.kv_cache = "0.value"}
// BUF-SAME: %[[POS:[^:]*]]: index {tfm.input = "position"}
// BUF-SAME: %{{[^:]*}}: memref<1x4x1x16xf32> {tfm.output = "attn"})
// BUF-SAME: {
// The position is clamped into the cache (tfm-to-linalg) before the write.
// BUF: %[[KLO:.*]] = arith.maxsi %[[POS]], %{{.*}} : index
// BUF: %[[KP:.*]] = arith.minsi %[[KLO]], %{{.*}} : index
// BUF: %[[KS:.*]] = memref.subview %[[KC]][0, 0, %[[KP]], 0] [1, 2, 1, 16] [1, 1, 1, 1]
// BUF: memref.copy %[[K]], %[[KS]]
// BUF: %[[VLO:.*]] = arith.maxsi %[[POS]], %{{.*}} : index
// BUF: %[[VP:.*]] = arith.minsi %[[VLO]], %{{.*}} : index
// BUF: %[[VS:.*]] = memref.subview %[[VC]][0, 0, %[[VP]], 0] [1, 2, 1, 16] [1, 1, 1, 1]
// BUF: memref.copy %[[V]], %[[VS]]
// BUF: {{memref.subview|vector.transfer_read|memref.collapse_shape}} %[[KC]]
// BUF: return{{$}}

// The C interface: five memrefs, the position, one out-parameter.
// LLVM: llvm.func @_mlir_ciface_decode(%{{[^:]*}}: !llvm.ptr {tfm.input = "q"}, %{{[^:]*}}: !llvm.ptr {tfm.input = "k"}, %{{[^:]*}}: !llvm.ptr {tfm.input = "v"}, %{{[^:]*}}: !llvm.ptr {tfm.kv_cache = "0.key"}, %{{[^:]*}}: !llvm.ptr {tfm.kv_cache = "0.value"}, %{{[^:]*}}: i64 {tfm.input = "position"}, %{{[^:]*}}: !llvm.ptr {tfm.output = "attn"})
// LLVM-NOT: tfm.kv_cache
func.func @decode(%q: tensor<1x4x1x16xf32> {tfm.input = "q"},
                  %k: tensor<1x2x1x16xf32> {tfm.input = "k"},
                  %v: tensor<1x2x1x16xf32> {tfm.input = "v"},
                  %kc: tensor<1x2x128x16xf32> {tfm.kv_cache = "0.key"},
                  %vc: tensor<1x2x128x16xf32> {tfm.kv_cache = "0.value"},
                  %pos: index {tfm.input = "position"})
    -> (tensor<1x4x1x16xf32> {tfm.output = "attn"},
        tensor<1x2x128x16xf32> {tfm.kv_cache = "0.key"},
        tensor<1x2x128x16xf32> {tfm.kv_cache = "0.value"}) {
  %kc2 = tfm.kv_cache_write %kc, %k, %pos : (tensor<1x2x128x16xf32>, tensor<1x2x1x16xf32>, index) -> tensor<1x2x128x16xf32>
  %vc2 = tfm.kv_cache_write %vc, %v, %pos : (tensor<1x2x128x16xf32>, tensor<1x2x1x16xf32>, index) -> tensor<1x2x128x16xf32>
  %a = tfm.attention %q, %kc2, %vc2, %pos : (tensor<1x4x1x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, index) -> tensor<1x4x1x16xf32>
  return %a, %kc2, %vc2 : tensor<1x4x1x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>
}

// RUN: transformer-opt %s --tfm-gpu-flash-attention -split-input-file | FileCheck %s
// RUN: transformer-opt %s --tfm-gpu-flash-attention --tfm-gpu-flash-attention-kernels -split-input-file | FileCheck %s --check-prefix=KERNEL

// A causal GQA attention (8 query heads over 2 key/value heads, head_dim 64,
// S = 77): q, k and v are rounded to f16 and passed, with the implicit
// offset Skv - S = 0, to a function on tensors that calls the launcher on
// their buffers. Two attentions of one shape share the function.
// CHECK-LABEL: func.func @gqa(
// CHECK: %[[OFF:.*]] = arith.constant 0 : index
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x8x77x64xf32>) outs(%{{.*}} : tensor<1x8x77x64xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[K:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<1x2x77x64xf32>)
// CHECK: %[[V:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<1x2x77x64xf32>)
// CHECK: %[[A:.*]] = call @tfm_flash_attention_1x8x77x64_kv2x77_causal_0(%[[Q]], %[[K]], %[[V]], %[[OFF]])
// CHECK: call @tfm_flash_attention_1x8x77x64_kv2x77_causal_0(
// CHECK-NOT: tfm.attention
// CHECK: func.func private @tfm_flash_attention_1x8x77x64_kv2x77_causal_0(%{{.*}}: tensor<1x8x77x64xf16>, %{{.*}}: tensor<1x2x77x64xf16>, %{{.*}}: tensor<1x2x77x64xf16>, %{{.*}}: index) -> tensor<1x8x77x64xf32>
// CHECK: bufferization.to_buffer %{{.*}} read_only : tensor<1x8x77x64xf16> to memref<1x8x77x64xf16>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<1x8x77x64xf32>
// CHECK: call @tfm_flash_attention_1x8x77x64_kv2x77_causal_0_launch({{.*}}, %[[OUT]])
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: func.func private @tfm_flash_attention_1x8x77x64_kv2x77_causal_0_launch(memref<1x8x77x64xf16>, memref<1x2x77x64xf16>, memref<1x2x77x64xf16>, index, memref<1x8x77x64xf32>) attributes {tfm.flash_attention_kernel = {causal = true, scale = 1.250000e-01 : f64, splits = 1 : i64}}
// CHECK-NOT: func.func

// The launcher after --tfm-gpu-flash-attention-kernels: grid (2 query tiles,
// 8 heads), 128 threads, 36,864 bytes of dynamic shared memory (K and V: two
// slots of 64 keys x (64 + 8) f16 each), K/V head = head / 4.
// KERNEL-LABEL: func.func private @tfm_flash_attention_1x8x77x64_kv2x77_causal_0_launch(
// KERNEL-SAME: %[[QM:[^:]*]]: memref<1x8x77x64xf16>, %[[KM:[^:]*]]: memref<1x2x77x64xf16>, %[[VM:[^:]*]]: memref<1x2x77x64xf16>, %[[OFF:[^:]*]]: index, %[[OM:[^:]*]]: memref<1x8x77x64xf32>)
// KERNEL-NOT: tfm.flash_attention_kernel
// KERNEL-DAG: %[[C2:.*]] = arith.constant 2 : index
// KERNEL-DAG: %[[C8:.*]] = arith.constant 8 : index
// KERNEL-DAG: %[[C128:.*]] = arith.constant 128 : index
// KERNEL-DAG: %[[SMEM:.*]] = arith.constant 36864 : i32
// KERNEL: gpu.launch blocks(%[[BX:.*]], %[[BY:.*]], %{{.*}}) in (%{{.*}} = %[[C2]], %{{.*}} = %[[C8]], %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]], %{{.*}}) dynamic_shared_memory_size %[[SMEM]]
// KERNEL: %[[RAW:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// KERNEL: %[[SK:.*]] = memref.view %[[RAW]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x72xf16, #gpu.address_space<workgroup>>
// KERNEL: %[[SV:.*]] = memref.view %[[RAW]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x72xf16, #gpu.address_space<workgroup>>
// Heaviest query tile first; the K/V head of a query head.
// KERNEL: %[[QT:.*]] = arith.subi %{{.*}}, %[[BX]] : index
// KERNEL: %[[HEAD:.*]] = arith.remui %[[BY]], %{{.*}} : index
// KERNEL: %[[KVH:.*]] = arith.divui %[[HEAD]], %{{.*}} : index
// Q once, as the A fragments of the 4 k-steps of Q K^T.
// KERNEL-COUNT-16: vector.load %[[QM]]
// Causal bounds: tiles wholly visible to the block's first row
// ((offset + q0 + 1) / 64, at most Skv / 64 = 1) run unmasked; the loop
// stops at the block's last visible key (min(offset + min(q0 + 64, S), Skv),
// in tiles rounded up): later tiles are never visited.
// KERNEL: %[[POS:.*]] = arith.addi %[[OFF]], %{{.*}} : index
// KERNEL: %[[P1:.*]] = arith.addi %[[POS]], %{{.*}} : index
// KERNEL: %[[UD:.*]] = arith.divui %[[P1]], %{{.*}} : index
// KERNEL: %[[UNMASKED:.*]] = arith.minui %[[UD]], %{{.*}} : index
// KERNEL: %[[ROWSEND:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// KERNEL: %[[KEYSEND:.*]] = arith.addi %[[OFF]], %[[ROWSEND]] : index
// KERNEL: %[[KEYSENDC:.*]] = arith.minui %[[KEYSEND]], %{{.*}} : index
// KERNEL: %[[KR:.*]] = arith.addi %[[KEYSENDC]], %{{.*}} : index
// KERNEL: %[[TOTAL:.*]] = arith.divui %[[KR]], %{{.*}} : index
// Tile 0 of K and V in flight (4 chunks of 16 bytes each per thread).
// KERNEL-COUNT-8: nvgpu.device_async_copy
// KERNEL: %[[FIRST:.*]] = nvgpu.device_async_create_group
// Unmasked loop: prefetch tile t + 1, wait for tile t, 32 mma for S = Q K^T,
// online softmax (quad max by shuffles, exp2), 32 mma for O += P V.
// KERNEL: scf.for %[[T:.*]] = %{{.*}} to %[[UNMASKED]] step
// KERNEL-COUNT-8: nvgpu.device_async_copy
// KERNEL: %[[NEXT:.*]] = nvgpu.device_async_create_group
// KERNEL: nvgpu.device_async_wait %[[NEXT]] {numGroups = 1 : i32}
// KERNEL-NEXT: gpu.barrier
// KERNEL: nvgpu.ldmatrix %[[SK]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// KERNEL-COUNT-32: nvgpu.mma.sync
// KERNEL-NOT: arith.cmpi
// KERNEL: gpu.shuffle  xor
// KERNEL: gpu.shuffle  xor
// KERNEL: math.exp2
// KERNEL: nvgpu.ldmatrix %[[SV]][{{.*}}] {numTiles = 4 : i32, transpose = true}
// KERNEL-COUNT-32: nvgpu.mma.sync
// KERNEL: gpu.barrier
// KERNEL-NEXT: scf.yield
// Masked loop: the diagonal tile and a partial last tile.
// KERNEL: scf.for %{{.*}} = %[[UNMASKED]] to %[[TOTAL]] step
// KERNEL-COUNT-32: nvgpu.mma.sync
// KERNEL: arith.cmpi ugt
// KERNEL: arith.select
// KERNEL-COUNT-32: nvgpu.mma.sync
// KERNEL: scf.yield
// KERNEL: nvgpu.device_async_wait %[[FIRST]] {numGroups = 0 : i32}
// Row sums across the quad; rows < S stored.
// KERNEL: gpu.shuffle  xor
// KERNEL: arith.divf
// KERNEL: arith.cmpi ult, %{{.*}}, %{{.*}} : index
// KERNEL: scf.if
// KERNEL: vector.store %{{.*}}, %[[OM]]
func.func @gqa(%q: tensor<1x8x77x64xf32>, %k: tensor<1x2x77x64xf32>, %v: tensor<1x2x77x64xf32>) -> (tensor<1x8x77x64xf32>, tensor<1x8x77x64xf32>) {
  %a = tfm.attention %q, %k, %v : (tensor<1x8x77x64xf32>, tensor<1x2x77x64xf32>, tensor<1x2x77x64xf32>) -> tensor<1x8x77x64xf32>
  %b = tfm.attention %q, %k, %v : (tensor<1x8x77x64xf32>, tensor<1x2x77x64xf32>, tensor<1x2x77x64xf32>) -> tensor<1x8x77x64xf32>
  return %a, %b : tensor<1x8x77x64xf32>, tensor<1x8x77x64xf32>
}

// -----

// A decode step over a KV cache: the offset operand is passed through.
// head_dim 128: 32-key tiles, Q staged in shared memory (2 x 2 x 32 x 136 x 2
// + 64 x 136 x 2 = 52,224 bytes) and read with ldmatrix. One query tile of 4
// (batch, head) pairs over 16 key tiles: split-KV, 8 splits of 2 tiles (as
// many as fill about 264 blocks, at least 2 tiles each), partial O and
// (max, sum) in scratch buffers the function on tensors allocates, then a
// combine kernel. Likewise the non-causal 16-query chunk.
// CHECK-LABEL: func.func @decode(
// CHECK-SAME: %[[POS:[^:]*]]: index
// CHECK: call @tfm_flash_attention_1x4x1x128_kv4x512_causal_0(%{{.*}}, %{{.*}}, %{{.*}}, %[[POS]])
// CHECK: call @tfm_flash_attention_1x4x16x128_kv4x512_1(
// CHECK: func.func private @tfm_flash_attention_1x4x1x128_kv4x512_causal_0(
// CHECK: %[[PO:.*]] = memref.alloc() : memref<8x1x4x1x128xf32>
// CHECK: %[[PML:.*]] = memref.alloc() : memref<8x1x4x1x2xf32>
// CHECK: call @tfm_flash_attention_1x4x1x128_kv4x512_causal_0_launch({{.*}}, %[[PO]], %[[PML]])
// CHECK: {tfm.flash_attention_kernel = {causal = true, scale = 1.000000e+00 : f64, splits = 8 : i64}}
// CHECK: {tfm.flash_attention_kernel = {causal = false, scale = 0.0883883476{{[0-9]*}} : f64, splits = 8 : i64}}
// KERNEL-LABEL: func.func private @tfm_flash_attention_1x4x1x128_kv4x512_causal_0_launch(
// KERNEL-SAME: %[[OM:[^:]*]]: memref<1x4x1x128xf32>, %[[PO:[^:]*]]: memref<8x1x4x1x128xf32>, %[[PML:[^:]*]]: memref<8x1x4x1x2xf32>)
// KERNEL: %[[C8:.*]] = arith.constant 8 : index
// KERNEL: arith.constant 52224 : i32
// KERNEL: gpu.launch blocks(%{{.*}}, %{{.*}}, %[[BZ:.*]]) in (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %[[C8]])
// KERNEL: memref.view {{.*}} to memref<2x32x136xf16, #gpu.address_space<workgroup>>
// KERNEL: memref.view {{.*}} to memref<2x32x136xf16, #gpu.address_space<workgroup>>
// KERNEL: %[[SQ:.*]] = memref.view {{.*}} to memref<64x136xf16, #gpu.address_space<workgroup>>
// KERNEL-COUNT-8: nvgpu.device_async_copy %{{.*}}, %[[SQ]]
// Split z visits tiles [2 z, 2 z + 2) of those the query tile needs.
// KERNEL: %[[LO:.*]] = arith.muli %[[BZ]], %{{.*}} : index
// KERNEL: %[[END:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// KERNEL: %[[MID:.*]] = arith.maxui %[[LO]], %{{.*}} : index
// KERNEL: %[[HI:.*]] = arith.maxui %[[MID]], %[[END]] : index
// KERNEL: scf.for %{{.*}} = %[[LO]] to %[[MID]] step
// KERNEL: nvgpu.ldmatrix %[[SQ]]
// KERNEL: scf.for %{{.*}} = %[[MID]] to %[[HI]] step
// KERNEL: vector.store %{{.*}}, %[[PO]][%[[BZ]],
// KERNEL: memref.store %{{.*}}, %[[PML]][%[[BZ]],
// KERNEL: gpu.terminator
// Combine: a block per query row, a thread per column.
// KERNEL: gpu.launch blocks({{.*}}) threads(%[[CT:[^,]*]], {{.*}}) in (%{{.*}} = %[[COLS:[^,]*]],
// KERNEL: scf.for {{.*}} -> (f32)
// KERNEL: memref.load %[[PML]]
// KERNEL: arith.maximumf
// KERNEL: scf.for {{.*}} -> (f32, f32)
// KERNEL: memref.load %[[PO]]
// KERNEL: math.exp2
// KERNEL: arith.divf
// KERNEL: memref.store %{{.*}}, %[[OM]][{{.*}}, %[[CT]]] : memref<1x4x1x128xf32>
// KERNEL-LABEL: func.func private @tfm_flash_attention_1x4x16x128_kv4x512_1_launch(
// KERNEL: gpu.launch
// KERNEL: gpu.launch
func.func @decode(%q: tensor<1x4x1x128xf32>, %k: tensor<1x4x512x128xf32>, %v: tensor<1x4x512x128xf32>, %pos: index, %q16: tensor<1x4x16x128xf32>) -> (tensor<1x4x1x128xf32>, tensor<1x4x16x128xf32>) {
  %a = tfm.attention %q, %k, %v, %pos {scale = 1.0 : f32} : (tensor<1x4x1x128xf32>, tensor<1x4x512x128xf32>, tensor<1x4x512x128xf32>, index) -> tensor<1x4x1x128xf32>
  %b = tfm.attention %q16, %k, %v {causal = false} : (tensor<1x4x16x128xf32>, tensor<1x4x512x128xf32>, tensor<1x4x512x128xf32>) -> tensor<1x4x16x128xf32>
  return %a, %b : tensor<1x4x1x128xf32>, tensor<1x4x16x128xf32>
}

// -----

// What the kernel does not handle keeps tfm.attention (the generic path):
// per-sequence [B] offsets, a sliding window, head_dim 32, dh != dv.
// CHECK-LABEL: func.func @fallback(
// CHECK-COUNT-4: tfm.attention
// CHECK-NOT: call @tfm_flash_attention
func.func @fallback(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x64x64xf32>, %v: tensor<2x4x64x64xf32>, %pos: tensor<2xi64>,
                    %q32: tensor<1x4x16x32xf32>, %k32: tensor<1x4x16x32xf32>, %v128: tensor<2x4x64x128xf32>)
    -> (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<1x4x16x32xf32>, tensor<2x4x16x128xf32>) {
  %a = tfm.attention %q, %k, %v, %pos : (tensor<2x4x16x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2xi64>) -> tensor<2x4x16x64xf32>
  %b = tfm.attention %q, %k, %v {sliding_window = 8 : i64} : (tensor<2x4x16x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>) -> tensor<2x4x16x64xf32>
  %c = tfm.attention %q32, %k32, %k32 : (tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>) -> tensor<1x4x16x32xf32>
  %d = tfm.attention %q, %k, %v128 : (tensor<2x4x16x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x128xf32>) -> tensor<2x4x16x128xf32>
  return %a, %b, %c, %d : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<1x4x16x32xf32>, tensor<2x4x16x128xf32>
}

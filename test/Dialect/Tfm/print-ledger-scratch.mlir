// RUN: transformer-opt %s -split-input-file --tfm-print-ledger -o /dev/null | FileCheck %s
// RUN: transformer-opt %s -split-input-file --tfm-print-ledger="flash-query-tile=128 flash-key-tile=32" -o /dev/null | FileCheck %s --check-prefix=TILES
// RUN: transformer-opt %s -split-input-file --tfm-print-ledger=format=json -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: not transformer-opt %s --tfm-print-ledger="flash-key-tile=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// The attention of the flash benchmark: S = 8192, 12 heads, dh = 64.
// Naive: scores and probabilities, 2 * 12 * 8192 * 8192 * 4 bytes.
// Flash, 64x64 tiles: (2*64*64 + 4*64 + 2*64*64) * 4 = 66,560 bytes.
// 128x32 tiles: (2*128*32 + 4*128 + 2*128*64) * 4 = 100,352 bytes.
// CHECK-LABEL: tfm ledger for @long
// CHECK: scratch: naive 6,442,450,944 bytes (f32 scores + probabilities, S x S_kv each), flash 66,560 bytes (64x64 tiles)
// CHECK: attention peak scratch: naive 6,442,450,944 bytes, flash 66,560 bytes (--tfm-flash-attention with 64x64 tiles)
// TILES: flash 100,352 bytes (128x32 tiles)
// JSON: "scratch_naive_bytes": 6442450944,
// JSON-NEXT: "scratch_flash_bytes": 66560
// JSON: "attention_peak_scratch": {
// JSON-NEXT: "scratch_naive_bytes": 6442450944,
// JSON-NEXT: "scratch_flash_bytes": 66560
// BAD: tfm-print-ledger: tile sizes must be positive
func.func @long(%q: tensor<1x12x8192x64xf32>, %k: tensor<1x12x8192x64xf32>, %v: tensor<1x12x8192x64xf32>) -> tensor<1x12x8192x64xf32> {
  %a = tfm.attention %q, %k, %v : (tensor<1x12x8192x64xf32>, tensor<1x12x8192x64xf32>, tensor<1x12x8192x64xf32>) -> tensor<1x12x8192x64xf32>
  return %a : tensor<1x12x8192x64xf32>
}

// -----

// GQA with a length that is not a multiple of the tile: a tile holds the 4
// query heads of a group; q/out (8 heads) are padded from 100 to 128 rows
// and k/v (2 heads) likewise, in f16 (2 bytes).
// tile: (3*4*64*64 + 4*4*64 + 2*4*64*32) * 4 = 266,240 (scores,
// probabilities, and the probabilities rounded to f16 for P V, held as f32)
// padding: 1*8*128*(32+32)*2 + 1*2*128*(32+32)*2 = 131,072 + 32,768
// naive: 2 * 8 * 100 * 100 * 4 = 640,000
// CHECK-LABEL: tfm ledger for @gqa_padded
// CHECK: attention peak scratch: naive 640,000 bytes, flash 430,080 bytes
func.func @gqa_padded(%q: tensor<1x8x100x32xf16>, %k: tensor<1x2x100x32xf16>, %v: tensor<1x2x100x32xf16>) -> tensor<1x8x100x32xf16> {
  %a = tfm.attention %q, %k, %v : (tensor<1x8x100x32xf16>, tensor<1x2x100x32xf16>, tensor<1x2x100x32xf16>) -> tensor<1x8x100x32xf16>
  return %a : tensor<1x8x100x32xf16>
}

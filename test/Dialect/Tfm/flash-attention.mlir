// RUN: transformer-opt %s -split-input-file --tfm-flash-attention="query-tile=32 key-tile=16" | FileCheck %s
// RUN: transformer-opt %s -split-input-file --tfm-flash-attention="query-tile=32 key-tile=16" --tfm-to-linalg --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=BUF

// Causal MHA, S = 128: the score matrix would be 128x128 per head. After the
// rewrite only 32x16 score tiles exist, before and after bufferization.
// CHECK-LABEL: func.func @causal_mha
// CHECK-NOT: tfm.attention
// CHECK-NOT: x128x128x
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// Batch x kv head x query tile: independent, one scf.forall.
// CHECK: scf.forall (%[[B:.+]], %[[G:.+]], %[[QS:.+]]) = (0, 0, 0) to (1, 4, 128) step (1, 1, 32) shared_outs
// Causal skip: the key loop stops after the query tile's last position.
// CHECK: %[[POS:.+]] = arith.addi %{{.+}}, %[[QS]] : index
// CHECK: %[[LAST:.+]] = arith.addi %[[POS]], %[[C32]] : index
// CHECK: %[[END:.+]] = arith.minsi %[[C128]], %[[LAST]] : index
// The key tiles every row of the query tile sees whole (those ending at or
// before its first row: (POS + 1) / 16 * 16) run first, without the mask;
// then the tiles from there to END, masked.
// CHECK: %[[NEXT:.+]] = arith.addi %[[POS]], %c1 : index
// CHECK: %[[TILES:.+]] = arith.divui %[[NEXT]], %[[C16]] : index
// CHECK: %[[SEEN:.+]] = arith.muli %[[TILES]], %[[C16]] : index
// CHECK: %[[WHOLE:.+]] = arith.minsi %[[C128]], %[[SEEN]] : index
// CHECK: %[[UNMASKED:.+]]:3 = scf.for %{{.+}} = %{{.+}} to %[[WHOLE]] step %[[C16]] iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<1x32xf32>, tensor<1x32xf32>, tensor<1x32x64xf32>)
// CHECK-NOT: arith.cmpi
// CHECK: arith.maxnumf
// CHECK-NOT: arith.cmpi
// CHECK: scf.for %{{.+}} = %[[WHOLE]] to %[[END]] step %[[C16]] iter_args(%{{.+}} = %[[UNMASKED]]#0, %{{.+}} = %[[UNMASKED]]#1, %{{.+}} = %[[UNMASKED]]#2)
// Scores of one tile, the running max (maxnumf: a NaN score still reaches
// the sum through exp), exp(s - m), the rescaling factor.
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<1x32x16xf32>)
// CHECK: arith.cmpi
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: math.exp
// CHECK: scf.yield
// CHECK: arith.divf
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[B]], %{{.+}}, %[[QS]], 0] [1, 1, 32, 64]
// CHECK-NOT: x128x128x
// BUF-LABEL: func.func @causal_mha
// BUF-NOT: x128x128x
// BUF-NOT: 128x128
func.func @causal_mha(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>, %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  %a = tfm.attention %q, %k, %v : (tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32>
  return %a : tensor<1x4x128x64xf32>
}

// -----

// GQA (8 query heads, 2 key/value heads): a query tile holds the 4 heads of
// one group and each K/V tile is sliced once per group. Non-causal: the key
// loop covers every tile. The query tile has 4 x 32 rows, so the keys are
// transposed once, before the loops, and each key tile is a [dh x 16] slice
// of K^T (no transpose per tile); with transpose-keys=false a [16 x dh]
// slice of K. 48 keys fill three tiles, none of which any row sees only in
// part: one key loop, without the mask.
// CHECK-LABEL: func.func @gqa_not_causal
// CHECK-DAG: %[[C48:.+]] = arith.constant 48 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK: %[[KT:.+]] = linalg.transpose ins(%{{.+}} : tensor<2x2x48x16xf32>) outs(%{{.+}} : tensor<2x2x16x48xf32>) permutation = [0, 1, 3, 2]
// CHECK: scf.forall
// CHECK: tensor.extract_slice %{{.+}} [1, 4, 32, 16] [1, 1, 1, 1] : tensor<2x8x32x16xf32> to tensor<4x32x16xf32>
// CHECK-NOT: arith.minsi
// CHECK: scf.for %[[KS:.+]] = %{{.+}} to %[[C48]] step %[[C16]]
// CHECK: tensor.extract_slice %[[KT]][%{{.+}}, %{{.+}}, 0, %[[KS]]] [1, 1, 16, 16] [1, 1, 1, 1] : tensor<2x2x16x48xf32> to tensor<16x16xf32>
// CHECK: tensor.extract_slice %{{.+}} [1, 1, 16, 16] [1, 1, 1, 1] : tensor<2x2x48x16xf32> to tensor<16x16xf32>
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<4x32x16xf32>)
// CHECK-NOT: arith.cmpi
// CHECK-NOT: scf.for
// CHECK: scf.forall.in_parallel
// NOKT-LABEL: func.func @gqa_not_causal
// NOKT-NOT: linalg.transpose
// NOKT: tensor.extract_slice %{{.+}} [1, 1, 16, 16] [1, 1, 1, 1] : tensor<2x2x48x16xf32> to tensor<16x16xf32>
func.func @gqa_not_causal(%q: tensor<2x8x32x16xf32>, %k: tensor<2x2x48x16xf32>, %v: tensor<2x2x48x16xf32>) -> tensor<2x8x32x16xf32> {
  %a = tfm.attention %q, %k, %v {causal = false} : (tensor<2x8x32x16xf32>, tensor<2x2x48x16xf32>, tensor<2x2x48x16xf32>) -> tensor<2x8x32x16xf32>
  return %a : tensor<2x8x32x16xf32>
}

// -----

// Odd lengths: S = 37 pads to 64 for 32-row query tiles, Skv = 37 to 48 for
// 16-row key tiles; padding keys (index >= 37) are masked and the padded
// output rows are sliced away.
// CHECK-LABEL: func.func @odd_lengths
// CHECK: tensor.pad %{{.+}} high[0, 0, 27, 0]
// CHECK: tensor.pad %{{.+}} high[0, 0, 11, 0]
// CHECK: tensor.pad %{{.+}} high[0, 0, 11, 0]
// CHECK: arith.cmpi sge, %{{.+}}, %c37
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, 0] [1, 2, 37, 8] [1, 1, 1, 1] : tensor<1x2x64x8xf32> to tensor<1x2x37x8xf32>
func.func @odd_lengths(%q: tensor<1x2x37x8xf32>, %k: tensor<1x2x37x8xf32>, %v: tensor<1x2x37x8xf32>) -> tensor<1x2x37x8xf32> {
  %a = tfm.attention %q, %k, %v : (tensor<1x2x37x8xf32>, tensor<1x2x37x8xf32>, tensor<1x2x37x8xf32>) -> tensor<1x2x37x8xf32>
  return %a : tensor<1x2x37x8xf32>
}

// -----

// Decode: one query at an explicit position against a 64-slot cache. Its
// scores are one row of 64: below decode-min-keys (512) nothing to tile,
// the attention is left for the plain lowering. From decode-min-keys on, the
// key loop stops at the position: keys [0, min(64, pos + 1)) in tiles of
// 16, the unmasked ones first.
// RUN: transformer-opt %s -split-input-file --tfm-flash-attention="query-tile=32 key-tile=16 decode-min-keys=64" | FileCheck %s --check-prefix=DECODE
// CHECK-LABEL: func.func @decode_step
// CHECK-NOT: scf.for
// CHECK: tfm.attention
// DECODE-LABEL: func.func @decode_step(
// DECODE-SAME: %[[POS:arg[0-9]+]]: index
// DECODE: scf.forall
// DECODE: %[[ROW:.*]] = arith.addi %[[POS]], %{{.*}} : index
// DECODE: %[[NEXT:.*]] = arith.addi %[[ROW]], %c1 : index
// DECODE: %[[END:.*]] = arith.minsi %c64, %[[NEXT]] : index
// DECODE: scf.for %{{.*}} = %c0 to %[[UNMASKED:.*]] step %c16
// DECODE: scf.for %{{.*}} = %[[UNMASKED]] to %[[END]] step %c16
// DECODE-NOT: tfm.attention
func.func @decode_step(%q: tensor<1x2x1x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>, %pos: index) -> tensor<1x2x1x8xf32> {
  %a = tfm.attention %q, %k, %v, %pos : (tensor<1x2x1x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, index) -> tensor<1x2x1x8xf32>
  return %a : tensor<1x2x1x8xf32>
}

// -----

// Ragged batch: each sequence's queries start at its own offset (element b
// of the [B] tensor), read inside the (batch, head, query tile) loop; the
// causal skip then ends each sequence's key loop at its own last tile.
// CHECK-LABEL: func.func @ragged
// CHECK-SAME: %[[P:[^:]+]]: tensor<2xi64>)
// CHECK: scf.forall (%[[B:.+]], %{{.+}}, %[[QS:.+]]) = (0, 0, 0) to (2, 2, 8) step (1, 1, 8)
// CHECK: %[[E:.+]] = tensor.extract %[[P]][%[[B]]] : tensor<2xi64>
// CHECK: %[[OFF:.+]] = arith.index_cast %[[E]] : i64 to index
// CHECK: %[[POS:.+]] = arith.addi %[[OFF]], %[[QS]] : index
// CHECK: %[[LAST:.+]] = arith.addi %[[POS]], %c8 : index
// CHECK: %[[END:.+]] = arith.minsi %c64, %[[LAST]] : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[END]] step %c16
func.func @ragged(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x64x16xf32>, %v: tensor<2x2x64x16xf32>, %pos: tensor<2xi64>) -> tensor<2x2x8x16xf32> {
  %a = tfm.attention %q, %k, %v, %pos : (tensor<2x2x8x16xf32>, tensor<2x2x64x16xf32>, tensor<2x2x64x16xf32>, tensor<2xi64>) -> tensor<2x2x8x16xf32>
  return %a : tensor<2x2x8x16xf32>
}

// -----

// f16 inputs: scores, running statistics and the accumulator are f32; the
// probabilities p are rounded to f16 for P V (as Hugging Face rounds them to
// the value type; held as f32, a round trip) while the row sum l adds them
// unrounded; the output tile is truncated once.
// CHECK-LABEL: func.func @half
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x16x16xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<1x16x16xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<1x16x16xf32>) outs(%{{.*}} : tensor<1x16xf32>)
// CHECK: %[[P16:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<1x16x16xf32>) outs(%{{.*}} : tensor<1x16x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[LOW:.*]] = arith.truncf %{{.+}} : f32 to f16
// CHECK-NEXT: arith.extf %[[LOW]] : f16 to f32
// CHECK: linalg.generic {{.*}} ins(%[[P16]], %{{.*}} : tensor<1x16x16xf32>, tensor<16x8xf16>) outs(%{{.*}} : tensor<1x16x8xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @half(%q: tensor<1x1x16x8xf16>, %k: tensor<1x1x16x8xf16>, %v: tensor<1x1x16x8xf16>) -> tensor<1x1x16x8xf16> {
  %a = tfm.attention %q, %k, %v : (tensor<1x1x16x8xf16>, tensor<1x1x16x8xf16>, tensor<1x1x16x8xf16>) -> tensor<1x1x16x8xf16>
  return %a : tensor<1x1x16x8xf16>
}

// -----

// Sliding window of 40 over S = 128: the key loop starts at the tile holding
// key queryPos0 - 39 (rounded down to a multiple of the 16-key tile; 0 when
// negative) and ends at the causal limit, so tiles wholly before every row's
// window are skipped. Inside a tile, keys at least 40 positions before their
// row are masked; a row whose keys in a tile are all masked keeps m = -inf,
// and the safe max (0 for -inf) keeps exp() from producing NaN.
// CHECK-LABEL: func.func @sliding_window
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[C39:.+]] = arith.constant 39 : index
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %[[QS:.+]]) = (0, 0, 0) to (1, 2, 128) step (1, 1, 32)
// CHECK: %[[POS:.+]] = arith.addi %{{.+}}, %[[QS]] : index
// CHECK: %[[END:.+]] = arith.minsi
// CHECK: %[[FROM:.+]] = arith.subi %[[POS]], %[[C39]] : index
// CHECK: %[[FIRST:.+]] = arith.maxsi %[[C0]], %[[FROM]] : index
// CHECK: %[[TILE:.+]] = arith.divui %[[FIRST]], %[[C16]] : index
// CHECK: %[[BEGIN:.+]] = arith.muli %[[TILE]], %[[C16]] : index
// CHECK: scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step %[[C16]]
// CHECK: arith.cmpi sgt
// CHECK: %[[AGE:.+]] = arith.subi
// CHECK: arith.cmpi sge, %[[AGE]], %c40
// CHECK: arith.cmpf oeq, %{{.+}}, %cst
// CHECK: scf.forall.in_parallel
// CHECK-NOT: sliding_window
func.func @sliding_window(%q: tensor<1x2x128x8xf32>, %k: tensor<1x2x128x8xf32>, %v: tensor<1x2x128x8xf32>) -> tensor<1x2x128x8xf32> {
  %a = tfm.attention %q, %k, %v {sliding_window = 40 : i64} : (tensor<1x2x128x8xf32>, tensor<1x2x128x8xf32>, tensor<1x2x128x8xf32>) -> tensor<1x2x128x8xf32>
  return %a : tensor<1x2x128x8xf32>
}

// -----

// A ring cache of 71 slots (window 40, 32 queries at %pos): a slot's position
// is not its index, so every key tile is visited (0 to 71, the last tile
// padded and its padding masked)
// and the mask places each slot from the sequence's last query, pos + 31.
// CHECK-LABEL: func.func @ring_cache
// CHECK-SAME: %[[OFF:[^:]+]]: index
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %[[QS:.+]]) = (0, 0, 0) to (1, 2, 32) step (1, 1, 32)
// CHECK: %[[POS:.+]] = arith.addi %[[OFF]], %[[QS]] : index
// CHECK: %[[LAST:.+]] = arith.addi %[[OFF]], %c31 : index
// CHECK: scf.for %{{.+}} = %c0 to %c71 step %c16
// CHECK: arith.subi %[[LAST]], %{{.+}} : index
// CHECK: arith.remsi %{{.+}}, %c71 : index
// CHECK: scf.forall.in_parallel
func.func @ring_cache(%q: tensor<1x2x32x8xf32>, %k: tensor<1x2x71x8xf32>, %v: tensor<1x2x71x8xf32>, %pos: index) -> tensor<1x2x32x8xf32> {
  %a = tfm.attention %q, %k, %v, %pos {ring_cache, sliding_window = 40 : i64} : (tensor<1x2x32x8xf32>, tensor<1x2x71x8xf32>, tensor<1x2x71x8xf32>, index) -> tensor<1x2x32x8xf32>
  return %a : tensor<1x2x32x8xf32>
}

// -----

// With causal-skip=false every key tile is visited and the future is masked:
// the baseline the benchmark measures the skip against.
// RUN: transformer-opt %s -split-input-file --tfm-flash-attention="query-tile=32 key-tile=16 causal-skip=false" | FileCheck %s --check-prefix=NOSKIP
// RUN: transformer-opt %s -split-input-file --tfm-flash-attention="query-tile=32 key-tile=16 transpose-keys=false" | FileCheck %s --check-prefix=NOKT
// NOSKIP-LABEL: func.func @causal_mha
// NOSKIP-NOT: arith.addi %{{.+}}, %c32 : index
// NOSKIP: scf.for %{{.+}} = %{{.+}} to %c128 step %c16
// NOSKIP: arith.cmpi sgt

// Tile sizes must be positive.
// RUN: not transformer-opt %s -split-input-file --tfm-flash-attention="query-tile=0" 2>&1 | FileCheck %s --check-prefix=BADTILE
// BADTILE: tfm-flash-attention: tile sizes must be positive, got query-tile=0 key-tile=64

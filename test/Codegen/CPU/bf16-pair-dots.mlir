// RUN: transformer-opt %s --split-input-file --tfm-tile-and-vectorize-contractions --canonicalize | FileCheck %s

// A bf16 GEMM in tfm-cpu-pack-weights' K-pair form (plan `bf16_pairs`):
// A [M, K/2, 2], the panels P[j, K/2, r, 2], loops (m, j, r, q, t). The K
// step is a pair: A is packed into [M/6, K/2, 6, 2] row panels (each row's
// pair together); the 6x64 register tile keeps its accumulators in
// registers across the K loop (vector iter_args, the first K block from
// zero); per pair step, B's 64 columns are four 32-bf16 loads of one
// contiguous row of pairs, each row's A pair is one i32 broadcast, and each
// of the 6 x 4 accumulator vectors takes one x86vector.avx512.dot.
// CHECK-LABEL: func.func @pair_dots
// CHECK: %[[AP:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x6x64x2xbf16>) outs(%{{.*}} : tensor<2x64x6x2xbf16>) permutation = [0, 2, 1, 3]
// CHECK: scf.forall
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c32
// CHECK: scf.for %{{.*}} = %c0 to %c12 step %c6
// CHECK: scf.if
// CHECK: %[[K:.*]] = scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<6x1x64xf32>)
// CHECK: %[[ROW:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3]] : tensor<1x1x64x2xbf16> into tensor<128xbf16>
// CHECK: %[[B0:.*]] = vector.transfer_read %[[ROW]][%c0], %{{.*}} {in_bounds = [true]} : tensor<128xbf16>, vector<32xbf16>
// CHECK: %[[B1:.*]] = vector.transfer_read %[[ROW]][%c32]
// CHECK: %[[B2:.*]] = vector.transfer_read %[[ROW]][%c64]
// CHECK: %[[B3:.*]] = vector.transfer_read %[[ROW]][%c96]
// CHECK: %[[PAIR:.*]] = vector.transfer_read %[[AP]][%{{.*}}, %{{.*}}, %c0, %c0], %{{.*}} {in_bounds = [true]} : tensor<2x64x6x2xbf16>, vector<2xbf16>
// CHECK: %[[WORD:.*]] = vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
// CHECK: %[[SCALAR:.*]] = vector.extract %[[WORD]][0] : i32 from vector<1xi32>
// CHECK: %[[WORDS:.*]] = vector.broadcast %[[SCALAR]] : i32 to vector<16xi32>
// CHECK: %[[A0:.*]] = vector.bitcast %[[WORDS]] : vector<16xi32> to vector<32xbf16>
// CHECK: vector.extract %[[ACC]][0, 0] : vector<64xf32> from vector<6x1x64xf32>
// CHECK: x86vector.avx512.dot %{{.*}}, %[[A0]], %[[B0]] : vector<32xbf16> -> vector<16xf32>
// CHECK: x86vector.avx512.dot %{{.*}}, %[[A0]], %[[B1]]
// CHECK: x86vector.avx512.dot %{{.*}}, %[[A0]], %[[B2]]
// CHECK: x86vector.avx512.dot %{{.*}}, %[[A0]], %[[B3]]
// CHECK-COUNT-20: x86vector.avx512.dot
// CHECK-NOT: x86vector.avx512.dot
// CHECK: scf.yield %{{.*}} : vector<6x1x64xf32>
// CHECK: vector.transfer_write %[[K]]
// CHECK-NOT: arith.extf
#a = affine_map<(m, j, r, q, t) -> (m, q, t)>
#p = affine_map<(m, j, r, q, t) -> (j, q, r, t)>
#c = affine_map<(m, j, r, q, t) -> (m, j, r)>
func.func @pair_dots(%a: tensor<12x64x2xbf16>, %p: tensor<16x64x64x2xbf16>) -> tensor<12x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x16x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<12x16x64xf32>) -> tensor<12x16x64xf32>
  %y = linalg.generic {indexing_maps = [#a, #p, #c],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %p : tensor<12x64x2xbf16>, tensor<16x64x64x2xbf16>) outs(%init : tensor<12x16x64xf32>)
      attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 12, block_cols = 1024, block_depth = 32, dot_cols = 4, dot_depth = 32, bf16_pairs = true>} {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %we = arith.extf %w : bf16 to f32
    %prod = arith.mulf %xe, %we : f32
    %sum = arith.addf %acc, %prod : f32
    linalg.yield %sum : f32
  } -> tensor<12x16x64xf32>
  return %y : tensor<12x16x64xf32>
}

// -----

// The same GEMM planned without `bf16_pairs` (a target without AVX512-BF16):
// not the pair form, no dot products; the contraction keeps the f32 path.
// CHECK-LABEL: func.func @not_planned
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
#a = affine_map<(m, j, r, q, t) -> (m, q, t)>
#p = affine_map<(m, j, r, q, t) -> (j, q, r, t)>
#c = affine_map<(m, j, r, q, t) -> (m, j, r)>
func.func @not_planned(%a: tensor<12x64x2xbf16>, %p: tensor<16x64x64x2xbf16>) -> tensor<12x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x16x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<12x16x64xf32>) -> tensor<12x16x64xf32>
  %y = linalg.generic {indexing_maps = [#a, #p, #c],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %p : tensor<12x64x2xbf16>, tensor<16x64x64x2xbf16>) outs(%init : tensor<12x16x64xf32>)
      attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 12, block_cols = 1024, block_depth = 32, dot_cols = 4, dot_depth = 32>} {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %we = arith.extf %w : bf16 to f32
    %prod = arith.mulf %xe, %we : f32
    %sum = arith.addf %acc, %prod : f32
    linalg.yield %sum : f32
  } -> tensor<12x16x64xf32>
  return %y : tensor<12x16x64xf32>
}

// -----

// A narrow strip (the last 8 columns of a weight, [K/2, 8, 2]): 256-bit dot
// products, one per row.
// CHECK-LABEL: func.func @narrow
// CHECK-COUNT-5: x86vector.avx512.dot %{{.*}}, %{{.*}}, %{{.*}} : vector<16xbf16> -> vector<8xf32>
// CHECK-NOT: x86vector.avx512.dot
#ta = affine_map<(m, r, q, t) -> (m, q, t)>
#tp = affine_map<(m, r, q, t) -> (q, r, t)>
#tc = affine_map<(m, r, q, t) -> (m, r)>
func.func @narrow(%a: tensor<5x20x2xbf16>, %p: tensor<20x8x2xbf16>) -> tensor<5x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<5x8xf32>) -> tensor<5x8xf32>
  %y = linalg.generic {indexing_maps = [#ta, #tp, #tc],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %p : tensor<5x20x2xbf16>, tensor<20x8x2xbf16>) outs(%init : tensor<5x8xf32>)
      attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, bf16_pairs = true>} {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %we = arith.extf %w : bf16 to f32
    %prod = arith.mulf %xe, %we : f32
    %sum = arith.addf %acc, %prod : f32
    linalg.yield %sum : f32
  } -> tensor<5x8xf32>
  return %y : tensor<5x8xf32>
}

// -----

// A bf16 contraction in a parallel loop whose B is a [K, N] slice of a
// tensor made outside it (flash attention's Q K^T: key tiles of K^T [H, dh,
// S]), read by as many rows of A (2 x 128) as K^T has columns (2 x 128): K^T
// is copied once, before the loop, into pairs [H, dh/2, S, 2], and each tile
// reads its slice of the copy with pair dot products.
// CHECK-LABEL: func.func @sliced_b
// CHECK-SAME: (%{{.*}}: tensor<128x64xbf16>, %[[KT:.*]]: tensor<2x64x128xbf16>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[KT]] {{\[}}[0], [1, 2], [3]] output_shape [2, 32, 2, 128] : tensor<2x64x128xbf16> into tensor<2x32x2x128xbf16>
// CHECK: %[[PAIRS:.*]] = linalg.transpose ins(%[[E]] : tensor<2x32x2x128xbf16>) outs(%{{.*}} : tensor<2x32x128x2xbf16>) permutation = [0, 1, 3, 2]
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[PAIRS]][%{{.*}}, 0, 0, 0] [1, 32, 128, 2] [1, 1, 1, 1] : tensor<2x32x128x2xbf16> to tensor<32x128x2xbf16>
// CHECK: x86vector.avx512.dot
func.func @sliced_b(%q: tensor<128x64xbf16>, %kt: tensor<2x64x128xbf16>, %out: tensor<2x128x128xf32>) -> tensor<2x128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %r = scf.forall (%h) in (2) shared_outs(%acc = %out) -> (tensor<2x128x128xf32>) {
    %b = tensor.extract_slice %kt[%h, 0, 0] [1, 64, 128] [1, 1, 1] : tensor<2x64x128xbf16> to tensor<64x128xbf16>
    %e = tensor.empty() : tensor<128x128xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%q, %b : tensor<128x64xbf16>, tensor<64x128xbf16>) outs(%c : tensor<128x128xf32>)
        attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, bf16_pairs = true>} {
    ^bb0(%x: bf16, %w: bf16, %a: f32):
      %xe = arith.extf %x : bf16 to f32
      %we = arith.extf %w : bf16 to f32
      %p = arith.mulf %xe, %we : f32
      %sum = arith.addf %a, %p : f32
      linalg.yield %sum : f32
    } -> tensor<128x128xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %acc[%h, 0, 0] [1, 128, 128] [1, 1, 1] : tensor<128x128xf32> into tensor<2x128x128xf32>
    }
  }
  return %r : tensor<2x128x128xf32>
}

// -----

// The same with 8 rows of A against 2 x 128 columns (a prompt chunk, or a
// decode step, against a long KV cache): no copy of all of K^T for so few
// rows; the tiles keep f32 FMAs on B extended as loaded.
// CHECK-LABEL: func.func @few_rows
// CHECK-NOT: x2xbf16
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
func.func @few_rows(%q: tensor<8x64xbf16>, %kt: tensor<2x64x128xbf16>, %out: tensor<2x8x128xf32>) -> tensor<2x8x128xf32> {
  %zero = arith.constant 0.0 : f32
  %r = scf.forall (%h) in (2) shared_outs(%acc = %out) -> (tensor<2x8x128xf32>) {
    %b = tensor.extract_slice %kt[%h, 0, 0] [1, 64, 128] [1, 1, 1] : tensor<2x64x128xbf16> to tensor<64x128xbf16>
    %e = tensor.empty() : tensor<8x128xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x128xf32>) -> tensor<8x128xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%q, %b : tensor<8x64xbf16>, tensor<64x128xbf16>) outs(%c : tensor<8x128xf32>)
        attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, bf16_pairs = true>} {
    ^bb0(%x: bf16, %w: bf16, %a: f32):
      %xe = arith.extf %x : bf16 to f32
      %we = arith.extf %w : bf16 to f32
      %p = arith.mulf %xe, %we : f32
      %sum = arith.addf %a, %p : f32
      linalg.yield %sum : f32
    } -> tensor<8x128xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %acc[%h, 0, 0] [1, 8, 128] [1, 1, 1] : tensor<8x128xf32> into tensor<2x8x128xf32>
    }
  }
  return %r : tensor<2x8x128xf32>
}

// -----

// Flash attention's P V: B is a [K, N] tile of V [H, S, dv] at rows [ks, ks
// + 32) of a key loop, A the bf16 probabilities of a group of 4 query heads
// x 64 rows (4 x 64 x 2 rows read V's 2 x 64 columns). The key offset is a
// multiple of the tile, so even: V is copied once, before the loops, into
// pairs [H, S/2, dv, 2], and each tile reads pairs [ks/2, ks/2 + 16).
// CHECK: #[[HALF:.*]] = affine_map<(d0) -> (d0 floordiv 2)>
// CHECK-LABEL: func.func @sliced_v
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<2x128x64xbf16>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[V]] {{\[}}[0], [1, 2], [3]] output_shape [2, 64, 2, 64] : tensor<2x128x64xbf16> into tensor<2x64x2x64xbf16>
// CHECK: %[[PAIRS:.*]] = linalg.transpose ins(%[[E]] : tensor<2x64x2x64xbf16>) outs(%{{.*}} : tensor<2x64x64x2xbf16>) permutation = [0, 1, 3, 2]
// CHECK: scf.forall (%[[H:.*]]) in (2)
// CHECK: scf.for %[[KS:.*]] = %c0 to %c128 step %c32
// CHECK: %[[Q:.*]] = affine.apply #[[HALF]](%[[KS]])
// CHECK: tensor.extract_slice %[[PAIRS]][%[[H]], %[[Q]], 0, 0] [1, 16, 64, 2] [1, 1, 1, 1] : tensor<2x64x64x2xbf16> to tensor<16x64x2xbf16>
// CHECK: x86vector.avx512.dot
func.func @sliced_v(%p: tensor<4x64x32xbf16>, %v: tensor<2x128x64xbf16>, %out: tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf32> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.forall (%h) in (2) shared_outs(%acc = %out) -> (tensor<2x4x64x64xf32>) {
    %e = tensor.empty() : tensor<4x64x64xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
    %s = scf.for %ks = %c0 to %c128 step %c32 iter_args(%o = %c) -> (tensor<4x64x64xf32>) {
      %b = tensor.extract_slice %v[%h, %ks, 0] [1, 32, 64] [1, 1, 1] : tensor<2x128x64xbf16> to tensor<32x64xbf16>
      %t = linalg.generic {indexing_maps = [affine_map<(g, m, n, k) -> (g, m, k)>, affine_map<(g, m, n, k) -> (k, n)>, affine_map<(g, m, n, k) -> (g, m, n)>],
                           iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
          ins(%p, %b : tensor<4x64x32xbf16>, tensor<32x64xbf16>) outs(%o : tensor<4x64x64xf32>)
          attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, bf16_pairs = true>} {
      ^bb0(%x: bf16, %w: bf16, %a: f32):
        %xe = arith.extf %x : bf16 to f32
        %we = arith.extf %w : bf16 to f32
        %m = arith.mulf %xe, %we : f32
        %sum = arith.addf %a, %m : f32
        linalg.yield %sum : f32
      } -> tensor<4x64x64xf32>
      scf.yield %t : tensor<4x64x64xf32>
    }
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %acc[%h, 0, 0, 0] [1, 4, 64, 64] [1, 1, 1, 1] : tensor<4x64x64xf32> into tensor<2x4x64x64xf32>
    }
  }
  return %r : tensor<2x4x64x64xf32>
}

// -----

// The same with tiles starting at rows 1, 33, 65: not a pair boundary (and
// nothing proves one), so no pairs; the tiles keep f32 FMAs.
// CHECK-LABEL: func.func @odd_offset
// CHECK-NOT: x2xbf16
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
func.func @odd_offset(%p: tensor<4x64x32xbf16>, %v: tensor<2x128x64xbf16>, %out: tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf32> {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c97 = arith.constant 97 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.forall (%h) in (2) shared_outs(%acc = %out) -> (tensor<2x4x64x64xf32>) {
    %e = tensor.empty() : tensor<4x64x64xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
    %s = scf.for %ks = %c1 to %c97 step %c32 iter_args(%o = %c) -> (tensor<4x64x64xf32>) {
      %b = tensor.extract_slice %v[%h, %ks, 0] [1, 32, 64] [1, 1, 1] : tensor<2x128x64xbf16> to tensor<32x64xbf16>
      %t = linalg.generic {indexing_maps = [affine_map<(g, m, n, k) -> (g, m, k)>, affine_map<(g, m, n, k) -> (k, n)>, affine_map<(g, m, n, k) -> (g, m, n)>],
                           iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
          ins(%p, %b : tensor<4x64x32xbf16>, tensor<32x64xbf16>) outs(%o : tensor<4x64x64xf32>)
          attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, bf16_pairs = true>} {
      ^bb0(%x: bf16, %w: bf16, %a: f32):
        %xe = arith.extf %x : bf16 to f32
        %we = arith.extf %w : bf16 to f32
        %m = arith.mulf %xe, %we : f32
        %sum = arith.addf %a, %m : f32
        linalg.yield %sum : f32
      } -> tensor<4x64x64xf32>
      scf.yield %t : tensor<4x64x64xf32>
    }
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %acc[%h, 0, 0, 0] [1, 4, 64, 64] [1, 1, 1, 1] : tensor<4x64x64xf32> into tensor<2x4x64x64xf32>
    }
  }
  return %r : tensor<2x4x64x64xf32>
}

// -----

// As flash attention builds it: the probabilities are f32 values rounded
// through bf16 (a generic that truncates each to bf16 and extends it back,
// so that a P V on f32 FMAs reads f32). Their values are exact in bf16: the
// pair form reads them as bf16 (one rounding of the unrounded source, the
// same values), its body extending A as it does B.
// CHECK-LABEL: func.func @rounded_probabilities
// CHECK: linalg.transpose {{.*}} outs(%{{.*}} : tensor<2x64x64x2xbf16>)
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x64x32xf32>) outs(%{{.*}} : tensor<4x64x32xbf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
// CHECK: x86vector.avx512.dot
func.func @rounded_probabilities(%p: tensor<4x64x32xf32>, %v: tensor<2x128x64xbf16>, %out: tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf32> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.forall (%h) in (2) shared_outs(%acc = %out) -> (tensor<2x4x64x64xf32>) {
    %e = tensor.empty() : tensor<4x64x64xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
    %s = scf.for %ks = %c0 to %c128 step %c32 iter_args(%o = %c) -> (tensor<4x64x64xf32>) {
      %re = tensor.empty() : tensor<4x64x32xf32>
      %rounded = linalg.generic {indexing_maps = [affine_map<(g, m, k) -> (g, m, k)>, affine_map<(g, m, k) -> (g, m, k)>],
                                 iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%p : tensor<4x64x32xf32>) outs(%re : tensor<4x64x32xf32>) {
      ^bb0(%x: f32, %unused: f32):
        %low = arith.truncf %x : f32 to bf16
        %back = arith.extf %low : bf16 to f32
        linalg.yield %back : f32
      } -> tensor<4x64x32xf32>
      %b = tensor.extract_slice %v[%h, %ks, 0] [1, 32, 64] [1, 1, 1] : tensor<2x128x64xbf16> to tensor<32x64xbf16>
      %t = linalg.generic {indexing_maps = [affine_map<(g, m, n, k) -> (g, m, k)>, affine_map<(g, m, n, k) -> (k, n)>, affine_map<(g, m, n, k) -> (g, m, n)>],
                           iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
          ins(%rounded, %b : tensor<4x64x32xf32>, tensor<32x64xbf16>) outs(%o : tensor<4x64x64xf32>)
          attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, bf16_pairs = true>} {
      ^bb0(%x: f32, %w: bf16, %a: f32):
        %we = arith.extf %w : bf16 to f32
        %m = arith.mulf %x, %we : f32
        %sum = arith.addf %a, %m : f32
        linalg.yield %sum : f32
      } -> tensor<4x64x64xf32>
      scf.yield %t : tensor<4x64x64xf32>
    }
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %acc[%h, 0, 0, 0] [1, 4, 64, 64] [1, 1, 1, 1] : tensor<4x64x64xf32> into tensor<2x4x64x64xf32>
    }
  }
  return %r : tensor<2x4x64x64xf32>
}

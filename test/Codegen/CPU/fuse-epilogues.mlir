// RUN: transformer-opt %s --tfm-tile-and-vectorize-contractions --canonicalize --split-input-file | FileCheck %s

// Elementwise consumers of a contraction run on each of its cache blocks,
// right after the block's K loop (EpilogueFusion.cpp): the input is what
// tfm-cpu-pack-weights leaves for `gelu(x W + b)` with W packed in panels of
// 16 columns ([M, N/16, 16]), the bias add and the GELU behind the reshapes
// back to [1, M, N]. Enough work for threads: the blocks are an scf.forall.
// Each block accumulates over K in registers in the output block (its
// register tiles start from zero vectors: no fill of the block), then
// applies the bias and the GELU to the block (reading it as the epilogue's
// own output: the accumulator is the output block, no temporary), and only
// then is the block inserted. Nothing is left over the whole output.
// CHECK-LABEL: func.func @bias_gelu
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<4x1x16xf32>
// CHECK: %[[BIAS:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [8, 16] : tensor<128xf32> into tensor<8x16xf32>
// CHECK: scf.forall (%[[I:.*]], %[[J:.*]]) = (0, 0) to (64, 8) step (32, 1) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<64x8x16xf32>)
// CHECK:   %[[BLOCK:.*]] = tensor.extract_slice %[[OUT]][%[[I]], %[[J]], 0] [32, 1, 16]
// CHECK-NOT: linalg.fill
// CHECK:   %[[ACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[BLOCK]])
// CHECK:     scf.for {{.*}} iter_args(%{{.*}} = %[[Z]])
// CHECK:       vector.contract
// CHECK:   %[[B:.*]] = tensor.extract_slice %[[BIAS]][%[[J]], 0] [1, 16]
// CHECK:   %[[EPI:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<1x16xf32>) outs(%[[ACC]] : tensor<32x1x16xf32>)
// CHECK:     arith.addf
// CHECK:     math.tanh
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %[[EPI]] into %[[OUT]][%[[I]], %[[J]], 0] [32, 1, 16]
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill
// CHECK: return
#a = affine_map<(m, j, r, k) -> (m, k)>
#b = affine_map<(m, j, r, k) -> (j, k, r)>
#c = affine_map<(m, j, r, k) -> (m, j, r)>
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#id3 = affine_map<(i, j, k) -> (i, j, k)>
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @bias_gelu(%x: tensor<64x128xf32>, %w: tensor<8x128x16xf32>, %bias: tensor<128xf32>) -> tensor<1x64x128xf32> {
    %zero = arith.constant 0.0 : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %s = arith.constant 0.797884583 : f32
    %c = arith.constant 4.471500e-02 : f32
    %e = tensor.empty() : tensor<64x128xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
    %fp = tensor.expand_shape %f [[0], [1, 2]] output_shape [64, 8, 16] : tensor<64x128xf32> into tensor<64x8x16xf32>
    %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<64x128xf32>, tensor<8x128x16xf32>) outs(%fp : tensor<64x8x16xf32>)
        attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, min_rows = 4, block_rows = 126, block_cols = 256, block_depth = 256, dot_cols = 4, dot_depth = 32>} {
    ^bb0(%in: f32, %in_w: f32, %out: f32):
      %p = arith.mulf %in, %in_w : f32
      %r = arith.addf %out, %p : f32
      linalg.yield %r : f32
    } -> tensor<64x8x16xf32>
    %y = tensor.collapse_shape %mm [[0], [1, 2]] : tensor<64x8x16xf32> into tensor<64x128xf32>
    %e2 = tensor.empty() : tensor<64x128xf32>
    %biased = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%y, %bias : tensor<64x128xf32>, tensor<128xf32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%in: f32, %b: f32, %out: f32):
      %r = arith.addf %in, %b : f32
      linalg.yield %r : f32
    } -> tensor<64x128xf32>
    %y3 = tensor.expand_shape %biased [[0, 1], [2]] output_shape [1, 64, 128] : tensor<64x128xf32> into tensor<1x64x128xf32>
    %e3 = tensor.empty() : tensor<1x64x128xf32>
    %gelu = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%y3 : tensor<1x64x128xf32>) outs(%e3 : tensor<1x64x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %x2 = arith.mulf %in, %in : f32
      %x3 = arith.mulf %in, %x2 : f32
      %t0 = arith.mulf %x3, %c : f32
      %t1 = arith.addf %in, %t0 : f32
      %t2 = arith.mulf %t1, %s : f32
      %t3 = math.tanh %t2 : f32
      %t4 = arith.addf %t3, %one : f32
      %t5 = arith.mulf %in, %half : f32
      %r = arith.mulf %t5, %t4 : f32
      linalg.yield %r : f32
    } -> tensor<1x64x128xf32>
    return %gelu : tensor<1x64x128xf32>
  }
}

// -----

// An odd N (37 = 2 panels + 5 columns, padded to 48 in the weights) and an
// odd M (13 rows: a bulk of 12, a remainder row): the residual add reads the
// other operand padded once to [13, 48] and viewed as panels; the bulk and
// the remainder row each run the epilogue inside their own block loop, and
// the padding columns are sliced off only at the end.
// CHECK-LABEL: func.func @odd_residual
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<6x1x16xf32>
// CHECK-DAG: %[[Z1:.*]] = arith.constant dense<0.000000e+00> : vector<1x1x16xf32>
// CHECK: %[[PAD:.*]] = tensor.pad %{{.*}} low[0, 0] high[0, 11]
// CHECK: %[[RES:.*]] = tensor.expand_shape %[[PAD]] {{\[}}[0], [1, 2]] output_shape [13, 3, 16]
// CHECK: %[[BULK:.*]] = tensor.extract_slice %[[RES]][0, 0, 0] [12, 3, 16]
// CHECK: scf.for %[[J:.*]] = %c0 to %c3 step %c1
// CHECK:   %[[R:.*]] = tensor.extract_slice %[[BULK]][0, %[[J]], 0] [12, 1, 16]
// CHECK-NOT: linalg.fill
// CHECK:   scf.for {{.*}} iter_args(%{{.*}} = %[[Z]])
// CHECK:   vector.contract
// CHECK:   linalg.generic {{.*}} ins(%[[R]] : tensor<12x1x16xf32>) outs(%{{.*}} : tensor<12x1x16xf32>)
// CHECK:     arith.addf
// CHECK:   tensor.insert_slice
// CHECK: tensor.extract_slice %[[RES]][12, 0, 0] [1, 3, 16]
// CHECK: scf.for
// CHECK-NOT: linalg.fill
// CHECK:   scf.for {{.*}} iter_args(%{{.*}} = %[[Z1]])
// CHECK:   vector.contract
// CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x16xf32>)
// CHECK:     arith.addf
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [13, 37] [1, 1] : tensor<13x48xf32> to tensor<13x37xf32>
// CHECK-NOT: linalg.generic
#a = affine_map<(m, j, r, k) -> (m, k)>
#b = affine_map<(m, j, r, k) -> (j, k, r)>
#c = affine_map<(m, j, r, k) -> (m, j, r)>
#id3 = affine_map<(i, j, k) -> (i, j, k)>
module {
  func.func @odd_residual(%x: tensor<13x24xf32>, %w: tensor<3x24x16xf32>, %res: tensor<1x13x37xf32>) -> tensor<1x13x37xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<13x37xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<13x37xf32>) -> tensor<13x37xf32>
    %fpad = tensor.pad %f low[0, 0] high[0, 11] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<13x37xf32> to tensor<13x48xf32>
    %fp = tensor.expand_shape %fpad [[0], [1, 2]] output_shape [13, 3, 16] : tensor<13x48xf32> into tensor<13x3x16xf32>
    %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<13x24xf32>, tensor<3x24x16xf32>) outs(%fp : tensor<13x3x16xf32>)
        attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, min_rows = 4, block_rows = 126, block_cols = 256, block_depth = 256, dot_cols = 4, dot_depth = 32>} {
    ^bb0(%in: f32, %in_w: f32, %out: f32):
      %p = arith.mulf %in, %in_w : f32
      %r = arith.addf %out, %p : f32
      linalg.yield %r : f32
    } -> tensor<13x3x16xf32>
    %y = tensor.collapse_shape %mm [[0], [1, 2]] : tensor<13x3x16xf32> into tensor<13x48xf32>
    %ys = tensor.extract_slice %y[0, 0] [13, 37] [1, 1] : tensor<13x48xf32> to tensor<13x37xf32>
    %y3 = tensor.expand_shape %ys [[0, 1], [2]] output_shape [1, 13, 37] : tensor<13x37xf32> into tensor<1x13x37xf32>
    %e3 = tensor.empty() : tensor<1x13x37xf32>
    %sum = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%res, %y3 : tensor<1x13x37xf32>, tensor<1x13x37xf32>) outs(%e3 : tensor<1x13x37xf32>) {
    ^bb0(%a0: f32, %a1: f32, %out: f32):
      %r = arith.addf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<1x13x37xf32>
    return %sum : tensor<1x13x37xf32>
  }
}

// -----

// SwiGLU: silu(x Wg) * (x Wu). The product runs in the blocks of the first
// projection, reading the second projection's output [M, N/16, 16] directly
// (no reshapes or padding of it), which is computed first, whole.
// CHECK-LABEL: func.func @swiglu
// CHECK: %[[UP:.*]] = scf.for
// CHECK:   vector.contract
// CHECK: scf.for %[[J:.*]] = %c0 to %c3 step %c1
// CHECK-NOT: linalg.fill
// CHECK:   %[[GATE:.*]] = scf.for
// CHECK:     vector.contract
// CHECK:   %[[U:.*]] = tensor.extract_slice %[[UP]][0, %[[J]], 0] [12, 1, 16]
// CHECK:   linalg.generic {{.*}} ins(%[[U]] : tensor<12x1x16xf32>) outs(%[[GATE]] : tensor<12x1x16xf32>)
// CHECK:     math.exp
// CHECK:     arith.mulf
// CHECK-NOT: linalg.generic
#a = affine_map<(m, j, r, k) -> (m, k)>
#b = affine_map<(m, j, r, k) -> (j, k, r)>
#c = affine_map<(m, j, r, k) -> (m, j, r)>
#id3 = affine_map<(i, j, k) -> (i, j, k)>
module {
  func.func @swiglu(%x: tensor<12x32xf32>, %wg: tensor<3x32x16xf32>, %wu: tensor<3x32x16xf32>) -> tensor<1x12x48xf32> {
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %e = tensor.empty() : tensor<12x48xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<12x48xf32>) -> tensor<12x48xf32>
    %fp = tensor.expand_shape %f [[0], [1, 2]] output_shape [12, 3, 16] : tensor<12x48xf32> into tensor<12x3x16xf32>
    %g = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%x, %wg : tensor<12x32xf32>, tensor<3x32x16xf32>) outs(%fp : tensor<12x3x16xf32>)
        attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, min_rows = 4, block_rows = 126, block_cols = 256, block_depth = 256, dot_cols = 4, dot_depth = 32>} {
    ^bb0(%in: f32, %in_w: f32, %out: f32):
      %p = arith.mulf %in, %in_w : f32
      %r = arith.addf %out, %p : f32
      linalg.yield %r : f32
    } -> tensor<12x3x16xf32>
    %u = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%x, %wu : tensor<12x32xf32>, tensor<3x32x16xf32>) outs(%fp : tensor<12x3x16xf32>)
        attrs = {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, min_rows = 4, block_rows = 126, block_cols = 256, block_depth = 256, dot_cols = 4, dot_depth = 32>} {
    ^bb0(%in: f32, %in_w: f32, %out: f32):
      %p = arith.mulf %in, %in_w : f32
      %r = arith.addf %out, %p : f32
      linalg.yield %r : f32
    } -> tensor<12x3x16xf32>
    %g2 = tensor.collapse_shape %g [[0], [1, 2]] : tensor<12x3x16xf32> into tensor<12x48xf32>
    %g3 = tensor.expand_shape %g2 [[0, 1], [2]] output_shape [1, 12, 48] : tensor<12x48xf32> into tensor<1x12x48xf32>
    %u2 = tensor.collapse_shape %u [[0], [1, 2]] : tensor<12x3x16xf32> into tensor<12x48xf32>
    %u3 = tensor.expand_shape %u2 [[0, 1], [2]] output_shape [1, 12, 48] : tensor<12x48xf32> into tensor<1x12x48xf32>
    %e3 = tensor.empty() : tensor<1x12x48xf32>
    %y = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%g3, %u3 : tensor<1x12x48xf32>, tensor<1x12x48xf32>) outs(%e3 : tensor<1x12x48xf32>) {
    ^bb0(%a0: f32, %a1: f32, %out: f32):
      %n = arith.negf %a0 : f32
      %ex = math.exp %n : f32
      %d = arith.addf %ex, %one : f32
      %s = arith.divf %a0, %d : f32
      %r = arith.mulf %s, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<1x12x48xf32>
    return %y : tensor<1x12x48xf32>
  }
}

// -----

// Unpacked weights (pack-weights=0): a plain matmul [16 x 20] with N = 20 =
// 16 + 4 split into a full-width bulk and a 4-column strip; the bias add
// runs on each of them (one cache block each) right after its K loop, in
// the accumulator.
// CHECK-LABEL: func.func @unpacked_bias
// CHECK-DAG: %[[Z1:.*]] = arith.constant dense<0.000000e+00> : vector<8x4xf32>
// CHECK-DAG: %[[Z0:.*]] = arith.constant dense<0.000000e+00> : vector<8x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[A0:.*]] = scf.for
// CHECK:   scf.for {{.*}} iter_args(%{{.*}} = %[[Z0]])
// CHECK:   vector.contract
// CHECK: linalg.generic {{.*}} outs(%[[A0]] : tensor<16x16xf32>)
// CHECK:   arith.addf
// CHECK-NOT: linalg.fill
// CHECK: %[[A1:.*]] = scf.for
// CHECK:   scf.for {{.*}} iter_args(%{{.*}} = %[[Z1]])
// CHECK:   vector.contract
// CHECK: linalg.generic {{.*}} outs(%[[A1]] : tensor<16x4xf32>)
// CHECK:   arith.addf
// CHECK-NOT: linalg.generic
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
module {
  func.func @unpacked_bias(%x: tensor<16x8xf32>, %w: tensor<8x20xf32>, %bias: tensor<20xf32>) -> tensor<16x20xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x20xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x20xf32>) -> tensor<16x20xf32>
    %mm = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 8, register_cols = 16, block_rows = 126, block_cols = 256, block_depth = 256, dot_cols = 4, dot_depth = 32>}
        ins(%x, %w : tensor<16x8xf32>, tensor<8x20xf32>) outs(%f : tensor<16x20xf32>) -> tensor<16x20xf32>
    %e2 = tensor.empty() : tensor<16x20xf32>
    %biased = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%mm, %bias : tensor<16x20xf32>, tensor<20xf32>) outs(%e2 : tensor<16x20xf32>) {
    ^bb0(%in: f32, %b: f32, %out: f32):
      %r = arith.addf %in, %b : f32
      linalg.yield %r : f32
    } -> tensor<16x20xf32>
    return %biased : tensor<16x20xf32>
  }
}

// -----

// A result read by something else too (here: returned) stays whole, and its
// consumer a separate op over the whole output.
// CHECK-LABEL: func.func @shared_result
// CHECK: vector.contract
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<16x16xf32>)
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
module {
  func.func @shared_result(%x: tensor<16x8xf32>, %w: tensor<8x16xf32>, %bias: tensor<16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
    %mm = linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 8, register_cols = 16, block_rows = 126, block_cols = 256, block_depth = 256, dot_cols = 4, dot_depth = 32>}
        ins(%x, %w : tensor<16x8xf32>, tensor<8x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
    %e2 = tensor.empty() : tensor<16x16xf32>
    %biased = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%mm, %bias : tensor<16x16xf32>, tensor<16xf32>) outs(%e2 : tensor<16x16xf32>) {
    ^bb0(%in: f32, %b: f32, %out: f32):
      %r = arith.addf %in, %b : f32
      linalg.yield %r : f32
    } -> tensor<16x16xf32>
    return %mm, %biased : tensor<16x16xf32>, tensor<16x16xf32>
  }
}

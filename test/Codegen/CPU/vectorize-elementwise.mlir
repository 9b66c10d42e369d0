// RUN: transformer-opt %s --tfm-to-linalg --canonicalize --tfm-cpu-configure=cpu=znver3 --tfm-vectorize-elementwise --canonicalize | FileCheck %s
// RUN: transformer-opt %s --tfm-to-linalg --canonicalize --tfm-cpu-configure=cpu=skylake-avx512 --tfm-vectorize-elementwise --canonicalize | FileCheck %s --check-prefix=AVX512

// GELU over rows of 37: two AVX2 registers (16 lanes) at a time over the
// first 32, the last 5 as one vector<5>; tanh stays math.tanh here (the
// polynomial replaces it later, in tfm-approximate-math).
// CHECK-LABEL: func.func @gelu
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c16
// CHECK: math.tanh %{{.*}} : vector<1x1x16xf32>
// CHECK: math.tanh %{{.*}} : vector<1x1x5xf32>
// CHECK-NOT: linalg.generic
// AVX512-LABEL: func.func @gelu
// AVX512: math.tanh %{{.*}} : vector<1x1x32xf32>
// AVX512: math.tanh %{{.*}} : vector<1x1x5xf32>
func.func @gelu(%x: tensor<1x5x37xf32>) -> tensor<1x5x37xf32> {
  %y = tfm.gelu %x {approximate = #tfm.gelu<tanh>} : (tensor<1x5x37xf32>) -> tensor<1x5x37xf32>
  return %y : tensor<1x5x37xf32>
}

// RMSNorm over rows of 100: the sum of squares as partial sums 16 wide over
// 96, 4 wide over the rest, each reduced once; the scaling elementwise.
// CHECK-LABEL: func.func @rms
// CHECK: scf.for %{{.*}} = %c0 to %c96 step %c16 iter_args(%{{.*}}) -> (tensor<1x1x16xf32>)
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [2] : vector<1x1x16xf32> to vector<1x1xf32>
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [2] : vector<1x1x4xf32> to vector<1x1xf32>
// CHECK: math.rsqrt %{{.*}} : vector<1x1x16xf32>
// CHECK: math.rsqrt %{{.*}} : vector<1x1x4xf32>
// CHECK-NOT: linalg.generic
func.func @rms(%x: tensor<1x3x100xf32>, %w: tensor<100xf32>) -> tensor<1x3x100xf32> {
  %y = tfm.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<1x3x100xf32>, tensor<100xf32>) -> tensor<1x3x100xf32>
  return %y : tensor<1x3x100xf32>
}

// A short row (at most 4 vectors: 40 <= 4 x 16) is reduced as one vector.
// CHECK-LABEL: func.func @short_rows
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [2] : vector<1x1x40xf32> to vector<1x1xf32>
func.func @short_rows(%x: tensor<1x3x40xf32>, %w: tensor<40xf32>) -> tensor<1x3x40xf32> {
  %y = tfm.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<1x3x40xf32>, tensor<40xf32>) -> tensor<1x3x40xf32>
  return %y : tensor<1x3x40xf32>
}

// A gather (the embedding) is left as a scalar loop nest.
// CHECK-LABEL: func.func @embedding
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @embedding(%ids: tensor<1x4xi64>, %table: tensor<10x16xf32>) -> tensor<1x4x16xf32> {
  %h = tfm.embedding %ids, %table : (tensor<1x4xi64>, tensor<10x16xf32>) -> tensor<1x4x16xf32>
  return %h : tensor<1x4x16xf32>
}

// Transposes become generics. Splitting the heads keeps the innermost
// dimension in place: a copy of contiguous rows, two registers at a time,
// its rows on threads (98304 elements).
// CHECK-LABEL: func.func @heads_split
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (12, 128, 64) step (1, 1, 16)
// CHECK: vector.transfer_read {{.*}} : tensor<1x1x1x16xf32>, vector<1x1x1x16xf32>
// CHECK-NOT: linalg.generic
// AVX512-LABEL: func.func @heads_split
// AVX512: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (12, 128, 64) step (1, 1, 32)
func.func @heads_split(%x: tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32> {
  %e = tensor.empty() : tensor<1x12x128x64xf32>
  %t = linalg.transpose ins(%x : tensor<1x128x12x64xf32>) outs(%e : tensor<1x12x128x64xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x12x128x64xf32>
}

// The A panels of a GEMM (rows of 4): the innermost dimension moves. Tiles
// of lanes x 4 read 4 input rows of `lanes` and write `lanes` rows of 4, the
// tiles on threads.
// CHECK-LABEL: func.func @a_panels
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (32, 768) step (1, 8)
// CHECK: vector.transfer_read {{.*}} permutation_map = {{.*}} : tensor<1x4x8xf32>, vector<1x8x4xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x8x4xf32>, tensor<1x8x4xf32>
// CHECK-NOT: linalg.generic
// AVX512-LABEL: func.func @a_panels
// AVX512: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (32, 768) step (1, 16)
// AVX512: vector.transfer_read {{.*}} : tensor<1x4x16xf32>, vector<1x16x4xf32>
func.func @a_panels(%x: tensor<32x4x768xf32>) -> tensor<32x768x4xf32> {
  %e = tensor.empty() : tensor<32x768x4xf32>
  %t = linalg.transpose ins(%x : tensor<32x4x768xf32>) outs(%e : tensor<32x768x4xf32>) permutation = [0, 2, 1]
  return %t : tensor<32x768x4xf32>
}

// The A panels of a bf16 GEMM, packed widened to f32 (RegisterTiles.cpp):
// the same tiles, each widened in registers.
// CHECK-LABEL: func.func @a_panels_widened
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (32, 768) step (1, 8)
// CHECK: vector.transfer_read {{.*}} permutation_map = {{.*}} : tensor<1x4x8xbf16>, vector<1x8x4xbf16>
// CHECK: arith.extf %{{.*}} : vector<1x8x4xbf16> to vector<1x8x4xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x8x4xf32>, tensor<1x8x4xf32>
// CHECK-NOT: linalg.generic
#panel_in = affine_map<(p, k, i) -> (p, i, k)>
#panel_out = affine_map<(p, k, i) -> (p, k, i)>
func.func @a_panels_widened(%x: tensor<32x4x768xbf16>) -> tensor<32x768x4xf32> {
  %e = tensor.empty() : tensor<32x768x4xf32>
  %t = linalg.generic {indexing_maps = [#panel_in, #panel_out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<32x4x768xbf16>) outs(%e : tensor<32x768x4xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<32x768x4xf32>
  return %t : tensor<32x768x4xf32>
}

// K transposed for the attention scores: lanes x lanes squares.
// CHECK-LABEL: func.func @keys_transposed
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (12, 64, 128) step (1, 8, 8)
// CHECK: vector.transfer_read {{.*}} : tensor<1x8x1x8xf32>, vector<1x1x8x8xf32>
// AVX512-LABEL: func.func @keys_transposed
// AVX512: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (12, 64, 128) step (1, 16, 16)
// AVX512: vector.transfer_read {{.*}} : tensor<1x16x1x16xf32>, vector<1x1x16x16xf32>
func.func @keys_transposed(%x: tensor<1x128x12x64xf32>) -> tensor<1x12x64x128xf32> {
  %e = tensor.empty() : tensor<1x12x64x128xf32>
  %t = linalg.transpose ins(%x : tensor<1x128x12x64xf32>) outs(%e : tensor<1x12x64x128xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x12x64x128xf32>
}

// A small transpose of odd sizes (no square of 4 x 4, too few elements for
// threads) stays one scalar generic.
// CHECK-LABEL: func.func @small_odd
// CHECK-NOT: scf.forall
// CHECK-NOT: vector.
// CHECK: linalg.generic
func.func @small_odd(%x: tensor<3x5xf32>) -> tensor<5x3xf32> {
  %e = tensor.empty() : tensor<5x3xf32>
  %t = linalg.transpose ins(%x : tensor<3x5xf32>) outs(%e : tensor<5x3xf32>) permutation = [1, 0]
  return %t : tensor<5x3xf32>
}

// RUN: transformer-opt %s --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=znver3 tiling=register-rows=6,register-cols=16" --tfm-cpu-pack-weights --split-input-file | FileCheck %s
// RUN: transformer-opt %s --tfm-to-linalg --canonicalize --tfm-cpu-configure=cpu=skylake-avx512 --tfm-cpu-pack-weights --split-input-file | FileCheck %s --check-prefix=AVX512

// An in_out weight [K, N] = [64, 96] with a 16-column register tile (AVX2's
// 6 x 16, set by options; the plan's own is 4 x 24):
// the argument becomes 6 panels of [64 x 16], in place of the original
// (argument #1 stays #1), recording how to pack it; the matmul reads it over
// (m, j, r, k) and writes C as [M, 6, 16].
// CHECK-LABEL: func.func @in_out
// CHECK-SAME: %{{.*}}: tensor<1x8x64xf32> {tfm.input = "x"}
// CHECK-SAME: %[[P:.*]]: tensor<6x64x16xf32> {tfm.param = "w", tfm.param_pack = {layout = "in_out", panel = 16 : i64, shape = array<i64: 64, 96>}})
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [8, 6, 16]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[P]] : tensor<8x64xf32>, tensor<6x64x16xf32>) outs(%{{.*}} : tensor<8x6x16xf32>)
// CHECK-SAME: tfm.cpu_tiling
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<8x6x16xf32> into tensor<8x96xf32>
// AVX512-LABEL: func.func @in_out
// AVX512-SAME: tensor<2x64x64xf32> {tfm.param = "w", tfm.param_pack = {layout = "in_out", panel = 64 : i64, shape = array<i64: 64, 96>}}
func.func @in_out(%x: tensor<1x8x64xf32> {tfm.input = "x"}, %w: tensor<64x96xf32> {tfm.param = "w"}) -> tensor<1x8x96xf32> {
  %y = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<64x96xf32>) -> tensor<1x8x96xf32>
  return %y : tensor<1x8x96xf32>
}

// -----

// An out_in weight [N, K] = [37, 24] (nn.Linear) whose N is no multiple of
// 16: three panels, the last padded with zero columns once, at bind time. No
// transpose of the weight is left. With a consumer that runs on the GEMM's
// blocks (the bias add), the output is computed 48 wide and sliced back to
// 37.
// CHECK-LABEL: func.func @out_in_padded
// CHECK-SAME: tensor<3x24x16xf32> {tfm.param = "w", tfm.param_pack = {layout = "out_in", panel = 16 : i64, shape = array<i64: 37, 24>}}
// CHECK-NOT: linalg.transpose
// CHECK: tensor.pad %{{.*}} low[0, 0] high[0, 11]
// CHECK: linalg.generic
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [5, 37] [1, 1] : tensor<5x48xf32> to tensor<5x37xf32>
func.func @out_in_padded(%x: tensor<1x5x24xf32> {tfm.input = "x"}, %w: tensor<37x24xf32> {tfm.param = "w"}, %b: tensor<37xf32> {tfm.param = "b"}) -> tensor<1x5x37xf32> {
  %y = tfm.linear %x, %w, %b {layout = #tfm.layout<out_in>} : (tensor<1x5x24xf32>, tensor<37x24xf32>, tensor<37xf32>) -> tensor<1x5x37xf32>
  return %y : tensor<1x5x37xf32>
}

// -----

// Without such a consumer (logits), C is written in place: the two full
// panels into its first 32 columns, viewed as [5, 2, 16], the last panel's 5
// real columns by a [5 x 24] x [24 x 5] matmul into the rest; each part
// zeroed on its own, no padded buffer, nothing sliced.
// CHECK-LABEL: func.func @out_in_unpadded_result
// CHECK-SAME: %[[P:[a-z0-9]+]]: tensor<3x24x16xf32> {tfm.param = "w", tfm.param_pack
// CHECK: %[[C:.*]] = tensor.empty() : tensor<5x37xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[C]][0, 0] [5, 32] [1, 1]
// CHECK: %[[Z0:.*]] = linalg.fill ins(%{{.*}}) outs(%[[S0]] : tensor<5x32xf32>)
// CHECK: %[[E0:.*]] = tensor.expand_shape %[[Z0]] {{\[}}[0], [1, 2]] output_shape [5, 2, 16]
// CHECK: %[[P0:.*]] = tensor.extract_slice %[[P]][0, 0, 0] [2, 24, 16] [1, 1, 1]
// CHECK: %[[G0:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[P0]] : tensor<5x24xf32>, tensor<2x24x16xf32>) outs(%[[E0]] : tensor<5x2x16xf32>)
// CHECK: %[[B0:.*]] = tensor.collapse_shape %[[G0]]
// CHECK: %[[C1:.*]] = tensor.insert_slice %[[B0]] into %[[C]][0, 0] [5, 32] [1, 1]
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[C1]][0, 32] [5, 5] [1, 1]
// CHECK: %[[Z1:.*]] = linalg.fill ins(%{{.*}}) outs(%[[S1]] : tensor<5x5xf32>)
// CHECK: %[[P1:.*]] = tensor.extract_slice %[[P]][2, 0, 0] [1, 24, 5] [1, 1, 1] : tensor<3x24x16xf32> to tensor<24x5xf32>
// CHECK: %[[G1:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[P1]] : tensor<5x24xf32>, tensor<24x5xf32>) outs(%[[Z1]] : tensor<5x5xf32>)
// CHECK-SAME: tfm.cpu_tiling
// CHECK: tensor.insert_slice %[[G1]] into %[[C1]][0, 32] [5, 5] [1, 1]
// CHECK-NOT: tensor.pad
func.func @out_in_unpadded_result(%x: tensor<1x5x24xf32> {tfm.input = "x"}, %w: tensor<37x24xf32> {tfm.param = "w"}) -> tensor<1x5x37xf32> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x5x24xf32>, tensor<37x24xf32>) -> tensor<1x5x37xf32>
  return %y : tensor<1x5x37xf32>
}

// -----

// A tied embedding: the table is gathered by the embedding and read by the
// LM head. Both read the packed copy (the gather at [id / 16, k, id mod 16]),
// so the original argument is dropped and the table is held once.
// CHECK-LABEL: func.func @tied
// CHECK-SAME: (%{{[^:]*}}: tensor<1x4xi64> {tfm.input = "ids"}, %[[P:[^:]*]]: tensor<3x16x16xf32> {tfm.param = "wte", tfm.param_pack = {layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 16>}})
// CHECK: %[[ROW:.*]] = arith.minsi
// CHECK: %[[K:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = arith.divui %[[ROW]], %[[NR:.*]] : index
// CHECK: %[[R:.*]] = arith.remui %[[ROW]], %[[NR]] : index
// CHECK: tensor.extract %[[P]][%[[J]], %[[K]], %[[R]]] : tensor<3x16x16xf32>
func.func @tied(%ids: tensor<1x4xi64> {tfm.input = "ids"}, %wte: tensor<40x16xf32> {tfm.param = "wte"}) -> tensor<1x4x40xf32> {
  %h = tfm.embedding %ids, %wte : (tensor<1x4xi64>, tensor<40x16xf32>) -> tensor<1x4x16xf32>
  %y = tfm.lm_head %h, %wte {layout = #tfm.layout<out_in>} : (tensor<1x4x16xf32>, tensor<40x16xf32>) -> tensor<1x4x40xf32>
  return %y : tensor<1x4x40xf32>
}

// -----

// Only parameters are packed: a weight computed in the function (here an
// input) keeps its layout.
// CHECK-LABEL: func.func @not_a_param
// CHECK-NOT: tfm.param_pack
// CHECK: linalg.matmul
func.func @not_a_param(%x: tensor<1x8x64xf32> {tfm.input = "x"}, %w: tensor<64x96xf32> {tfm.input = "w"}) -> tensor<1x8x96xf32> {
  %y = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<64x96xf32>) -> tensor<1x8x96xf32>
  return %y : tensor<1x8x96xf32>
}

// -----

// A bf16 model: the weight is packed in bf16 (half the bytes), and the
// matmul extends both operands to its f32 accumulator.
// CHECK-LABEL: func.func @bf16
// CHECK-SAME: %[[P:[^:]*]]: tensor<2x64x16xbf16> {tfm.param = "w", tfm.param_pack = {layout = "out_in", panel = 16 : i64, shape = array<i64: 32, 64>}}
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<8x64xbf16>, tensor<2x64x16xbf16>) outs(%{{.*}} : tensor<8x2x16xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[C:.*]]: f32):
// CHECK-NEXT: %[[EA:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT: %[[EB:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[EA]], %[[EB]] : f32
// CHECK-NEXT: arith.addf %[[C]], %[[M]] : f32
func.func @bf16(%x: tensor<1x8x64xbf16> {tfm.input = "x"}, %w: tensor<32x64xbf16> {tfm.param = "w"}) -> tensor<1x8x32xbf16> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x8x64xbf16>, tensor<32x64xbf16>) -> tensor<1x8x32xbf16>
  return %y : tensor<1x8x32xbf16>
}


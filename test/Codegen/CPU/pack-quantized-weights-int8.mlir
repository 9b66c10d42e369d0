// RUN: transformer-opt %s --tfm-quantize-weights=scheme=q4_0 --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=znver3 int8-dot=1" --tfm-cpu-pack-weights | FileCheck %s --check-prefix=Q4
// RUN: transformer-opt %s --tfm-quantize-weights=scheme=q4_0 --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=cascadelake int8-dot=1" --tfm-cpu-pack-weights | FileCheck %s --check-prefix=Q4-VNNI
// RUN: transformer-opt %s --tfm-quantize-weights --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=cascadelake int8-dot=1" --tfm-cpu-pack-weights | FileCheck %s --check-prefix=Q8
// RUN: transformer-opt %s --tfm-quantize-weights --tfm-to-linalg --canonicalize --tfm-cpu-configure="cpu=x86-64 int8-dot=1" --tfm-cpu-pack-weights | FileCheck %s --check-prefix=SSE

// On int8 activations (`int8_dot` planned: AVX2 here) a Q4_0 weight's
// values keep four K steps of a column together, [J, K/32, 4, P, 4]
// (`group = 4`), its scales as on f32 activations; A's blocks' largest
// magnitudes are a reduction over each block of 32, and the GEMM a generic
// over (m, j, r, b, h, u, i), K step 32 b + 16 h + 4 u + i, whose body
// quantizes the activation with that magnitude (d = amax / 127, its
// inverse 0 for d = 0, roundeven) before multiplying it, dequantized, by
// the dequantized weight: nibble h of the byte, minus 8, times its scale.
// Q4-LABEL: func.func @in_out
// Q4-SAME: %[[V:arg[0-9]+]]: tensor<3x2x4x32x4xi8> {tfm.param = "w", tfm.param_pack = {format = "q4_0_values", group = 4 : i64, layout = "in_out", panel = 32 : i64, shape = array<i64: 64, 96>}}
// Q4-SAME: %[[S:arg[0-9]+]]: tensor<3x2x32xf16> {tfm.param = "w", tfm.param_pack = {format = "q4_0_scales", layout = "in_out", panel = 32 : i64, shape = array<i64: 64, 96>}}
// Q4: %[[BLOCKS:.*]] = tensor.expand_shape %[[A:.*]] {{\[}}[0], [1, 2]] output_shape [8, 2, 32]
// Q4: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<8x2xf32>
// Q4: %[[AMAX:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[BLOCKS]] : tensor<8x2x32xf32>) outs(%[[ZERO]] : tensor<8x2xf32>)
// Q4: math.absf
// Q4: arith.maximumf
// Q4: %[[STEPS:.*]] = tensor.expand_shape %[[A]] {{\[}}[0], [1, 2, 3, 4]] output_shape [8, 2, 2, 4, 4]
// Q4: linalg.generic {{{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%[[STEPS]], %[[AMAX]], %[[V]], %[[S]] : tensor<8x2x2x4x4xf32>, tensor<8x2xf32>, tensor<3x2x4x32x4xi8>, tensor<3x2x32xf16>) outs(%{{.*}} : tensor<8x3x32xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q4_0"}
// Q4: ^bb0(%[[X:.*]]: f32, %[[M:.*]]: f32, %[[Q:.*]]: i8, %[[D:.*]]: f16, %[[ACC:.*]]: f32):
// Q4: %[[SCALE:.*]] = arith.divf %[[M]], %{{.*}} : f32
// Q4: %[[ISZERO:.*]] = arith.cmpf oeq, %[[SCALE]]
// Q4: %[[INV:.*]] = arith.divf %{{.*}}, %[[SCALE]]
// Q4: %[[SEL:.*]] = arith.select %[[ISZERO]], %{{.*}}, %[[INV]]
// Q4: %[[XS:.*]] = arith.mulf %[[X]], %[[SEL]]
// Q4: %[[XQ:.*]] = math.roundeven %[[XS]]
// Q4: %[[XD:.*]] = arith.mulf %[[XQ]], %[[SCALE]]
// Q4: linalg.index 4
// Q4: arith.shrui %[[Q]]
// Q4: arith.andi
// Q4: arith.subi
// Q4: %[[WQ:.*]] = arith.sitofp
// Q4: %[[WD:.*]] = arith.extf %[[D]]
// Q4: %[[W:.*]] = arith.mulf %[[WQ]], %[[WD]]
// Q4: %[[P:.*]] = arith.mulf %[[XD]], %[[W]]
// Q4: arith.addf %[[ACC]], %[[P]]

// Q8_0 likewise, [J, K/32, 8, P, 4], the generic over (m, j, r, b, u, i);
// AVX-512 with VNNI (Cascade Lake) takes panels of 32.
// Q8-LABEL: func.func @in_out
// Q8-SAME: tensor<3x2x8x32x4xi8> {tfm.param = "w", tfm.param_pack = {format = "q8_0_values", group = 4 : i64, layout = "in_out", panel = 32 : i64, shape = array<i64: 64, 96>}}
// Q8: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2, 3]] output_shape [8, 2, 8, 4]
// Q8: linalg.generic {{{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins({{.*}} : tensor<8x2x8x4xf32>, tensor<8x2xf32>, tensor<3x2x8x32x4xi8>, tensor<3x2x32xf16>) {{.*}} attrs = {tfm.int8_activations, tfm.quantized_matmul = "q8_0"}

// On AVX-512 VNNI a Q4_0 weight's panels are twice Q8_0's, 64 columns, so
// that a panel's block is 1 KiB of values either way (decode streams two
// such panels at once rather than four).
// Q4-VNNI-LABEL: func.func @in_out
// Q4-VNNI-SAME: tensor<2x2x4x64x4xi8> {tfm.param = "w", tfm.param_pack = {format = "q4_0_values", group = 4 : i64, layout = "in_out", panel = 64 : i64, shape = array<i64: 64, 96>}}
// Q4-VNNI-SAME: tensor<2x2x64xf16> {tfm.param = "w", tfm.param_pack = {format = "q4_0_scales", layout = "in_out", panel = 64 : i64, shape = array<i64: 64, 96>}}
// Q4-VNNI: linalg.generic {{.*}} outs(%{{.*}} : tensor<8x2x64xf32>) attrs = {tfm.int8_activations, tfm.quantized_matmul = "q4_0"}

// A baseline x86-64 target has no int8 dot products: f32 activations.
// SSE-LABEL: func.func @in_out
// SSE-SAME: tensor<12x2x32x8xi8> {tfm.param = "w", tfm.param_pack = {format = "q8_0_values", layout = "in_out", panel = 8 : i64, shape = array<i64: 64, 96>}}
// SSE-NOT: tfm.int8_activations
func.func @in_out(%x: tensor<1x8x64xf32> {tfm.input = "x"}, %w: tensor<64x96xf32> {tfm.param = "w"}) -> tensor<1x8x96xf32> {
  %y = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<64x96xf32>) -> tensor<1x8x96xf32>
  return %y : tensor<1x8x96xf32>
}

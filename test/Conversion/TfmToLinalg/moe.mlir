// RUN: transformer-opt %s --tfm-to-linalg --split-input-file | FileCheck %s

// Routed MoE, n = 80 tokens, d = 4, m = 6, E = 3, top_k = 2. Per token:
// router softmax (max-subtracted), top-k by rank (a reduction counting the
// experts that beat each one: higher probability, or equal at a lower index),
// renormalised weights.
// CHECK-LABEL: func.func @moe
// CHECK: %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x40x4xf32> into tensor<80x4xf32>
// CHECK: linalg.matmul {{.*}} ins(%[[X]], %{{.*}} : tensor<80x4xf32>, tensor<3x4xf32>)
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: %[[RANK:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpi ult
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[RANK]] : tensor<80x3xf32>, tensor<80x3xf32>)
// CHECK: arith.cmpf olt, %{{.*}}, %cst{{.*}} : f32
// CHECK: %[[ROUTING:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<80x3xf32>, tensor<80xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.divf
// The output accumulates over a loop over the 3 experts.
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %[[C3]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<80x4xf32>)
// Scan: the tokens whose rank for expert e is < top_k, compacted.
// CHECK: %[[LIST:.*]]:3 = scf.for %[[T:.*]] = {{.*}} iter_args({{.*}}) -> (index, tensor<80xindex>, tensor<80xf32>)
// CHECK: tensor.extract %[[RANK]][%[[T]], %[[E]]]
// CHECK: arith.cmpf olt
// CHECK: tensor.extract %[[ROUTING]][%[[T]], %[[E]]]
// CHECK: tensor.insert %[[T]] into
// The expert's weights, picked by index and used as they are (no transpose).
// CHECK: %[[W:.*]]:3 = scf.index_switch %[[E]] -> tensor<6x4xf32>, tensor<6x4xf32>, tensor<4x6xf32>
// CHECK: case 0 {
// CHECK: case 1 {
// CHECK: default {
// CHECK-NOT: linalg.transpose
// Full chunks of 64 of the expert's count_e tokens, token-major (the form
// tfm-cpu-pack-weights packs, as a linear's): the tokens gathered as rows,
// X W_gate^T, X W_up^T, SwiGLU, H W_down^T, each weight the B operand in
// its [out, in] layout.
// CHECK: %[[REM:.*]] = arith.remsi %[[LIST]]#0, %[[C64:.*]] : index
// CHECK: %[[FULL:.*]] = arith.subi %[[LIST]]#0, %[[REM]]
// CHECK: %[[C64B:.*]] = arith.constant 64 : index
// CHECK: %[[ACC:.*]] = scf.for %[[C0:.*]] = %{{.*}} to %[[FULL]] step %[[C64B]]
// CHECK: %[[ROWS:.*]] = arith.minsi %{{.*}}, %[[C64B]]
// CHECK: %[[XS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<64x4xf32>)
// CHECK: tensor.extract %[[LIST]]#1
// CHECK: tensor.extract %[[X]]
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[XS]], %[[W]]#0 : tensor<64x4xf32>, tensor<6x4xf32>) outs(%{{.*}} : tensor<64x6xf32>)
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[XS]], %[[W]]#1 : tensor<64x4xf32>, tensor<6x4xf32>) outs(%{{.*}} : tensor<64x6xf32>)
// CHECK: math.exp
// CHECK: %[[Y:.*]] = linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %[[W]]#2 : tensor<64x6xf32>, tensor<4x6xf32>) outs(%{{.*}} : tensor<64x4xf32>)
// Scatter-add weight * row into the token's output row, valid slots only.
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[ROWS]]
// CHECK: tensor.extract_slice %[[Y]][%{{.*}}, 0] [1, 4] [1, 1] : tensor<64x4xf32> to tensor<4xf32>
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0] [1, 4] [1, 1] : tensor<80x4xf32> to tensor<4xf32>
// CHECK: arith.mulf
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<80x4xf32>
// The remainder in chunks of 16.
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %{{.*}} = %[[FULL]] to %[[LIST]]#0 step %[[C16]] iter_args(%{{.*}} = %[[ACC]])
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %[[W]]#0 : tensor<16x4xf32>, tensor<6x4xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 40, 4]
// No expert runs on all 80 tokens, nothing is [E, n, m]-sized.
// CHECK-NOT: 6x80xf32
// CHECK-NOT: 80x6xf32
// CHECK-NOT: tfm.
func.func @moe(%x: tensor<2x40x4xf32>, %r: tensor<3x4xf32>,
               %g0: tensor<6x4xf32>, %u0: tensor<6x4xf32>, %d0: tensor<4x6xf32>,
               %g1: tensor<6x4xf32>, %u1: tensor<6x4xf32>, %d1: tensor<4x6xf32>,
               %g2: tensor<6x4xf32>, %u2: tensor<6x4xf32>, %d2: tensor<4x6xf32>) -> tensor<2x40x4xf32> {
  %y = tfm.moe %x, %r, %g0, %u0, %d0, %g1, %u1, %d1, %g2, %u2, %d2 {top_k = 2 : i64} : (tensor<2x40x4xf32>, tensor<3x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<4x6xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<4x6xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<4x6xf32>) -> tensor<2x40x4xf32>
  return %y : tensor<2x40x4xf32>
}

// -----

// bf16 experts run token-major too, on the tokens gathered in bf16 (the
// weights' type: a bf16 x bf16 GEMM that tfm-cpu-pack-weights packs as a
// linear's), accumulating in f32; silu(gate) * up is rounded to bf16 before
// the down projection, as a bf16 MLP holds it, and the sum once at the end.
// CHECK-LABEL: func.func @moe_bf16
// CHECK: %[[W:.*]]:3 = scf.index_switch %{{.*}} -> tensor<6x4xbf16>, tensor<6x4xbf16>, tensor<4x6xbf16>
// CHECK: %[[XS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<64x4xbf16>)
// CHECK-NOT: arith.extf
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[XS]], %[[W]]#0 : tensor<64x4xbf16>, tensor<6x4xbf16>) outs(%{{.*}} : tensor<64x6xf32>)
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[XS]], %[[W]]#1 : tensor<64x4xbf16>, tensor<6x4xbf16>) outs(%{{.*}} : tensor<64x6xf32>)
// CHECK: %[[H:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<64x6xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[Y:.*]] = linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[H]], %[[W]]#2 : tensor<64x6xbf16>, tensor<4x6xbf16>) outs(%{{.*}} : tensor<64x4xf32>)
// CHECK: tensor.extract_slice %[[Y]][%{{.*}}, 0] [1, 4] [1, 1] : tensor<64x4xf32> to tensor<4xf32>
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %[[W]]#0 : tensor<16x4xbf16>, tensor<6x4xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @moe_bf16(%x: tensor<2x40x4xbf16>, %r: tensor<3x4xbf16>,
               %g0: tensor<6x4xbf16>, %u0: tensor<6x4xbf16>, %d0: tensor<4x6xbf16>,
               %g1: tensor<6x4xbf16>, %u1: tensor<6x4xbf16>, %d1: tensor<4x6xbf16>,
               %g2: tensor<6x4xbf16>, %u2: tensor<6x4xbf16>, %d2: tensor<4x6xbf16>) -> tensor<2x40x4xbf16> {
  %y = tfm.moe %x, %r, %g0, %u0, %d0, %g1, %u1, %d1, %g2, %u2, %d2 {top_k = 2 : i64} : (tensor<2x40x4xbf16>, tensor<3x4xbf16>, tensor<6x4xbf16>, tensor<6x4xbf16>, tensor<4x6xbf16>, tensor<6x4xbf16>, tensor<6x4xbf16>, tensor<4x6xbf16>, tensor<6x4xbf16>, tensor<6x4xbf16>, tensor<4x6xbf16>) -> tensor<2x40x4xbf16>
  return %y : tensor<2x40x4xbf16>
}

// -----

// Fewer tokens than a chunk (n = 3): one chunk size, n; f16 tokens are
// gathered as they are, the GEMMs accumulate in f32, and the result is
// rounded once at the end. With two experts the switch has one case.
// CHECK-LABEL: func.func @moe_small
// CHECK: %[[W:.*]]:3 = scf.index_switch %{{.*}} -> tensor<5x4xf16>, tensor<5x4xf16>, tensor<4x5xf16>
// CHECK-NEXT: case 0 {
// CHECK: default {
// CHECK-NOT: arith.remsi
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C3]]
// CHECK: %[[XS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x4xf16>)
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[XS]], %[[W]]#0 : tensor<3x4xf16>, tensor<5x4xf16>) outs(%{{.*}} : tensor<3x5xf32>)
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[XS]], %[[W]]#1 : tensor<3x4xf16>, tensor<5x4xf16>) outs(%{{.*}} : tensor<3x5xf32>)
// CHECK: %[[Y:.*]] = linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %[[W]]#2 : tensor<3x5xf16>, tensor<4x5xf16>) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK: tensor.extract_slice %[[Y]][%{{.*}}, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<4xf32>
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: tfm.
func.func @moe_small(%x: tensor<1x3x4xf16>, %r: tensor<2x4xf16>,
               %g0: tensor<5x4xf16>, %u0: tensor<5x4xf16>, %d0: tensor<4x5xf16>,
               %g1: tensor<5x4xf16>, %u1: tensor<5x4xf16>, %d1: tensor<4x5xf16>) -> tensor<1x3x4xf16> {
  %y = tfm.moe %x, %r, %g0, %u0, %d0, %g1, %u1, %d1 {top_k = 1 : i64} : (tensor<1x3x4xf16>, tensor<2x4xf16>, tensor<5x4xf16>, tensor<5x4xf16>, tensor<4x5xf16>, tensor<5x4xf16>, tensor<5x4xf16>, tensor<4x5xf16>) -> tensor<1x3x4xf16>
  return %y : tensor<1x3x4xf16>
}

// -----

// A rank's experts (expert parallelism): routing over the router's 4
// experts, the loop over the 2 held, expert e reading the routing column
// first_expert + e; the weights picked by the held index.
// CHECK-LABEL: func.func @held
// CHECK-SAME: %[[FIRST:[^:]*]]: index
// CHECK: linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<4x4xf32>)
// CHECK: %[[RANK:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %[[C2]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<8x4xf32>)
// CHECK: %[[COLUMN:.*]] = arith.addi %[[FIRST]], %[[E]] : index
// CHECK: scf.for %[[T:[^ ]*]] = {{.*}} -> (index, tensor<8xindex>, tensor<8xf32>)
// CHECK: tensor.extract %[[RANK]][%[[T]], %[[COLUMN]]]
// CHECK: scf.index_switch %[[E]]
func.func @held(%x: tensor<1x8x4xf32>, %r: tensor<4x4xf32>,
                %g0: tensor<6x4xf32>, %u0: tensor<6x4xf32>, %d0: tensor<4x6xf32>,
                %g1: tensor<6x4xf32>, %u1: tensor<6x4xf32>, %d1: tensor<4x6xf32>,
                %first: index) -> tensor<1x8x4xf32> {
  %y = tfm.moe %x, %r, %g0, %u0, %d0, %g1, %u1, %d1 first_expert(%first) {top_k = 2 : i64} : (tensor<1x8x4xf32>, tensor<4x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<4x6xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<4x6xf32>, index) -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}

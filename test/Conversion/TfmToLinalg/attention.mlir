// RUN: transformer-opt %s --tfm-to-linalg | FileCheck %s

// GQA (Hq=4, Hkv=2) in f16, causal, default offset Skv - S = 1. Q is reshaped
// (no copy) so each kv head serves its 2 query heads in one batch_matmul;
// K and V are never replicated per query head.
// CHECK-LABEL: func.func @attention_gqa_f16
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x4x2x8xf16>, %[[K:[^:]*]]: tensor<1x2x3x8xf16>, %[[V:[^:]*]]: tensor<1x2x3x8xf16>
// CHECK: %[[Q5:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 2, 2, 8]
// CHECK: %[[QR:.*]] = tensor.collapse_shape %[[Q5]] {{\[\[}}0, 1], [2, 3], [4]] : tensor<1x2x2x2x8xf16> into tensor<2x4x8xf16>
// CHECK: %[[KR:.*]] = tensor.collapse_shape %[[K]] {{\[\[}}0, 1], [2], [3]] : tensor<1x2x3x8xf16> into tensor<2x3x8xf16>
// CHECK: %[[VR:.*]] = tensor.collapse_shape %[[V]]
// CHECK-NOT: linalg.transpose
// QK^T with f32 accumulation, K through a transposed map.
// CHECK: %[[S:.*]] = linalg.batch_matmul indexing_maps = [{{.*}}] ins(%[[QR]], %[[KR]] : tensor<2x4x8xf16>, tensor<2x3x8xf16>) outs(%{{.*}} : tensor<2x4x3xf32>)
// Scale 1/sqrt(8), then the causal mask: row r is position 1 + r mod 2.
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<2x4x3xf32>)
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[R:.*]] = linalg.index 1
// CHECK: %[[J:.*]] = linalg.index 2
// CHECK: %[[RM:.*]] = arith.remui %[[R]], %c2
// CHECK: %[[P:.*]] = arith.addi %{{.*}}, %[[RM]]
// CHECK: %[[FUT:.*]] = arith.cmpi sgt, %[[J]], %[[P]]
// CHECK: arith.select %[[FUT]], %cst{{.*}}, %{{.*}} : f32
// Max-subtracted softmax: maximumf reduction, exp(x - max), sum, divide.
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[MAX]] : tensor<2x4x3xf32>, tensor<2x4xf32>)
// CHECK: %[[D:.*]] = arith.subf
// CHECK: math.exp %[[D]] : f32
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.addf
// CHECK: arith.divf
// P V: f32 probabilities times f16 V into f32, rounded to f16 once.
// CHECK: %[[O:.*]] = linalg.batch_matmul ins(%{{.*}}, %[[VR]] : tensor<2x4x3xf32>, tensor<2x3x8xf16>) outs(%{{.*}} : tensor<2x4x8xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3], [4]] output_shape [1, 2, 2, 2, 8]
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x2x2x2x8xf16> into tensor<1x4x2x8xf16>
// CHECK-NOT: tfm.
func.func @attention_gqa_f16(%q: tensor<1x4x2x8xf16>, %k: tensor<1x2x3x8xf16>, %v: tensor<1x2x3x8xf16>) -> tensor<1x4x2x8xf16> {
  %y = tfm.attention %q, %k, %v : (tensor<1x4x2x8xf16>, tensor<1x2x3x8xf16>, tensor<1x2x3x8xf16>) -> tensor<1x4x2x8xf16>
  return %y : tensor<1x4x2x8xf16>
}

// A decode step passes its position: row r is at %pos + r mod 1.
// CHECK-LABEL: func.func @attention_decode_offset
// CHECK-SAME: %[[POS:[^:]*]]: index
// CHECK: linalg.generic
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: %[[RM:.*]] = arith.remui
// CHECK: arith.addi %[[POS]], %[[RM]]
func.func @attention_decode_offset(%q: tensor<1x2x1x4xf32>, %k: tensor<1x1x8x4xf32>, %v: tensor<1x1x8x4xf32>, %pos: index) -> tensor<1x2x1x4xf32> {
  %y = tfm.attention %q, %k, %v, %pos : (tensor<1x2x1x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, index) -> tensor<1x2x1x4xf32>
  return %y : tensor<1x2x1x4xf32>
}

// Non-causal: no mask, only the scale.
// CHECK-LABEL: func.func @attention_noncausal
// CHECK: linalg.batch_matmul
// CHECK: linalg.generic
// CHECK-NOT: linalg.index
// CHECK: arith.maximumf
func.func @attention_noncausal(%q: tensor<1x1x2x4xf32>, %k: tensor<1x1x2x4xf32>, %v: tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32> {
  %y = tfm.attention %q, %k, %v {causal = false} : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  return %y : tensor<1x1x2x4xf32>
}

// Sliding window of 3 over a cache at %pos: a key j is masked when it is in
// the future (j > p) or at least 3 positions back (p - j >= 3).
// CHECK-LABEL: func.func @attention_sliding_window
// CHECK-SAME: %[[POS:[^:]*]]: index
// CHECK: linalg.generic
// CHECK: %[[J:.*]] = linalg.index 2
// CHECK: %[[P:.*]] = arith.addi %[[POS]], %{{.*}}
// CHECK: %[[FUT:.*]] = arith.cmpi sgt, %[[J]], %[[P]]
// CHECK: %[[AGE:.*]] = arith.subi %[[P]], %[[J]]
// CHECK: %[[OLD:.*]] = arith.cmpi sge, %[[AGE]], %c3
// CHECK: %[[MASKED:.*]] = arith.ori %[[FUT]], %[[OLD]]
// CHECK: arith.select %[[MASKED]]
func.func @attention_sliding_window(%q: tensor<1x2x1x4xf32>, %k: tensor<1x1x8x4xf32>, %v: tensor<1x1x8x4xf32>, %pos: index) -> tensor<1x2x1x4xf32> {
  %y = tfm.attention %q, %k, %v, %pos {sliding_window = 3 : i64} : (tensor<1x2x1x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, index) -> tensor<1x2x1x4xf32>
  return %y : tensor<1x2x1x4xf32>
}

// Over a ring of 5 slots, 2 queries from %pos: slot j holds position
// L - ((L - j) mod 5) with L = pos + 1 the last query's (the mod made
// non-negative); a negative position (slot not yet written) is masked, then
// the window's future and age tests as above.
// CHECK-LABEL: func.func @attention_ring_cache
// CHECK-SAME: %[[POS:[^:]*]]: index
// CHECK: linalg.generic
// CHECK: %[[J:.*]] = linalg.index 2
// CHECK: %[[P:.*]] = arith.addi %[[POS]], %{{.*}}
// CHECK: %[[L:.*]] = arith.addi %[[POS]], %c1
// CHECK: %[[D:.*]] = arith.subi %[[L]], %[[J]]
// CHECK: %[[M:.*]] = arith.remsi %[[D]], %c5
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[M]], %c0
// CHECK: %[[UP:.*]] = arith.addi %[[M]], %c5
// CHECK: %[[BACK:.*]] = arith.select %[[NEG]], %[[UP]], %[[M]]
// CHECK: %[[KEY:.*]] = arith.subi %[[L]], %[[BACK]]
// CHECK: %[[UNWRITTEN:.*]] = arith.cmpi slt, %[[KEY]], %c0
// CHECK: %[[FUT:.*]] = arith.cmpi sgt, %[[KEY]], %[[P]]
// CHECK: %[[HID:.*]] = arith.ori %[[FUT]], %[[UNWRITTEN]]
// CHECK: %[[AGE:.*]] = arith.subi %[[P]], %[[KEY]]
// CHECK: %[[OLD:.*]] = arith.cmpi sge, %[[AGE]], %c4
// CHECK: %[[MASKED:.*]] = arith.ori %[[HID]], %[[OLD]]
// CHECK: arith.select %[[MASKED]]
func.func @attention_ring_cache(%q: tensor<1x2x2x4xf32>, %k: tensor<1x1x5x4xf32>, %v: tensor<1x1x5x4xf32>, %pos: index) -> tensor<1x2x2x4xf32> {
  %y = tfm.attention %q, %k, %v, %pos {ring_cache, sliding_window = 4 : i64} : (tensor<1x2x2x4xf32>, tensor<1x1x5x4xf32>, tensor<1x1x5x4xf32>, index) -> tensor<1x2x2x4xf32>
  return %y : tensor<1x2x2x4xf32>
}

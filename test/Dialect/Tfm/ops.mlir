// Round trip of every tfm op, in the custom form and through the generic
// form, covering each optional operand and attribute in both its present and
// absent (default) state.
// RUN: transformer-opt %s | transformer-opt | FileCheck %s
// RUN: transformer-opt %s --mlir-print-op-generic | transformer-opt | FileCheck %s

// CHECK-LABEL: func.func @embeddings
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<2x8xi64> {tfm.input = "input_ids"}, %[[WTE:[^:]+]]: tensor<64x16xf32> {tfm.param = "wte.weight"}, %[[WPE:[^:]+]]: tensor<32x16xf32> {tfm.param = "wpe.weight"}, %[[POS:[^:]+]]: index {tfm.input = "position"})
func.func @embeddings(%ids: tensor<2x8xi64> {tfm.input = "input_ids"},
                      %wte: tensor<64x16xf32> {tfm.param = "wte.weight"},
                      %wpe: tensor<32x16xf32> {tfm.param = "wpe.weight"},
                      %pos: index {tfm.input = "position"})
    -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  // CHECK: %[[TOK:.+]] = tfm.embedding %[[IDS]], %[[WTE]] : (tensor<2x8xi64>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  %tok = tfm.embedding %ids, %wte : (tensor<2x8xi64>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  // CHECK: %[[H0:.+]] = tfm.position_embedding %[[TOK]], %[[WPE]] : (tensor<2x8x16xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
  %h0 = tfm.position_embedding %tok, %wpe : (tensor<2x8x16xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
  // CHECK: %[[H1:.+]] = tfm.position_embedding %[[TOK]], %[[WPE]], %[[POS]] : (tensor<2x8x16xf32>, tensor<32x16xf32>, index) -> tensor<2x8x16xf32>
  %h1 = tfm.position_embedding %tok, %wpe, %pos : (tensor<2x8x16xf32>, tensor<32x16xf32>, index) -> tensor<2x8x16xf32>
  // CHECK: return %[[H0]], %[[H1]]
  return %h0, %h1 : tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// i32 token ids.
// CHECK-LABEL: func.func @embedding_i32
// CHECK: tfm.embedding %{{.+}}, %{{.+}} : (tensor<1x4xi32>, tensor<64x16xbf16>) -> tensor<1x4x16xbf16>
func.func @embedding_i32(%ids: tensor<1x4xi32>, %wte: tensor<64x16xbf16>) -> tensor<1x4x16xbf16> {
  %0 = tfm.embedding %ids, %wte : (tensor<1x4xi32>, tensor<64x16xbf16>) -> tensor<1x4x16xbf16>
  return %0 : tensor<1x4x16xbf16>
}

// Gemma's scaled embedding.
// CHECK-LABEL: func.func @embedding_scale
// CHECK: tfm.embedding %{{.+}}, %{{.+}} {scale = 8.000000e+00 : f32} : (tensor<1x4xi64>, tensor<64x64xf32>) -> tensor<1x4x64xf32>
func.func @embedding_scale(%ids: tensor<1x4xi64>, %e: tensor<64x64xf32>) -> tensor<1x4x64xf32> {
  %0 = tfm.embedding %ids, %e {scale = 8.0 : f32} : (tensor<1x4xi64>, tensor<64x64xf32>) -> tensor<1x4x64xf32>
  return %0 : tensor<1x4x64xf32>
}

// CHECK-LABEL: func.func @norms
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x16xf32>, %[[G:[^:]+]]: tensor<16xf32>, %[[B:[^:]+]]: tensor<16xf32>)
func.func @norms(%x: tensor<2x8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>)
    -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  // The default epsilon is elided; a custom one is kept.
  // CHECK: tfm.layer_norm %[[X]], %[[G]], %[[B]] : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %0 = tfm.layer_norm %x, %g, %b : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  // CHECK: tfm.layer_norm %[[X]], %[[G]], %[[B]] {epsilon = 9.99999997E-7 : f32}
  %1 = tfm.layer_norm %x, %g, %b {epsilon = 1.0e-6 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  // CHECK: tfm.rms_norm %[[X]], %[[G]] : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %2 = tfm.rms_norm %x, %g : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  // CHECK: tfm.rms_norm %[[X]], %[[G]] {epsilon = 9.99999974E-6 : f32}
  %3 = tfm.rms_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  // Gemma's (1 + w) scale.
  // CHECK: tfm.rms_norm %[[X]], %[[G]] {unit_offset} : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %4 = tfm.rms_norm %x, %g {unit_offset} : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %0, %1, %2, %3 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x16xf32>, %[[W:[^:]+]]: tensor<16x48xf32>, %[[B:[^:]+]]: tensor<48xf32>, %[[WT:[^:]+]]: tensor<48x16xf32>, %[[X2:[^:]+]]: tensor<8x16xf32>)
func.func @linear(%x: tensor<2x8x16xf32>, %w: tensor<16x48xf32>, %b: tensor<48xf32>,
                  %wt: tensor<48x16xf32>, %x2: tensor<8x16xf32>)
    -> (tensor<2x8x48xf32>, tensor<2x8x48xf32>, tensor<2x8x48xf32>, tensor<2x8x48xf32>, tensor<8x48xf32>) {
  // in_out (the default) is elided, with and without bias.
  // CHECK: tfm.linear %[[X]], %[[W]], %[[B]] : (tensor<2x8x16xf32>, tensor<16x48xf32>, tensor<48xf32>) -> tensor<2x8x48xf32>
  %0 = tfm.linear %x, %w, %b : (tensor<2x8x16xf32>, tensor<16x48xf32>, tensor<48xf32>) -> tensor<2x8x48xf32>
  // CHECK: tfm.linear %[[X]], %[[W]] : (tensor<2x8x16xf32>, tensor<16x48xf32>) -> tensor<2x8x48xf32>
  %1 = tfm.linear %x, %w {layout = #tfm.layout<in_out>} : (tensor<2x8x16xf32>, tensor<16x48xf32>) -> tensor<2x8x48xf32>
  // CHECK: tfm.linear %[[X]], %[[WT]], %[[B]] {layout = #tfm.layout<out_in>} : (tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<48xf32>) -> tensor<2x8x48xf32>
  %2 = tfm.linear %x, %wt, %b {layout = #tfm.layout<out_in>} : (tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<48xf32>) -> tensor<2x8x48xf32>
  // CHECK: tfm.linear %[[X]], %[[WT]] {layout = #tfm.layout<out_in>} : (tensor<2x8x16xf32>, tensor<48x16xf32>) -> tensor<2x8x48xf32>
  %3 = tfm.linear %x, %wt {layout = #tfm.layout<out_in>} : (tensor<2x8x16xf32>, tensor<48x16xf32>) -> tensor<2x8x48xf32>
  // Rank 2 inputs are fine too.
  // CHECK: tfm.linear %[[X2]], %[[W]] : (tensor<8x16xf32>, tensor<16x48xf32>) -> tensor<8x48xf32>
  %4 = tfm.linear %x2, %w : (tensor<8x16xf32>, tensor<16x48xf32>) -> tensor<8x48xf32>
  return %0, %1, %2, %3, %4 : tensor<2x8x48xf32>, tensor<2x8x48xf32>, tensor<2x8x48xf32>, tensor<2x8x48xf32>, tensor<8x48xf32>
}

// CHECK-LABEL: func.func @permute_features
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x16xbf16>, %[[O:[^:]+]]: tensor<16xi32>, %[[O64:[^:]+]]: tensor<16xi64>)
func.func @permute_features(%x: tensor<2x8x16xbf16>, %o: tensor<16xi32>, %o64: tensor<16xi64>)
    -> (tensor<2x8x16xbf16>, tensor<2x8x16xbf16>) {
  // CHECK: tfm.permute_features %[[X]], %[[O]] : (tensor<2x8x16xbf16>, tensor<16xi32>) -> tensor<2x8x16xbf16>
  %0 = tfm.permute_features %x, %o : (tensor<2x8x16xbf16>, tensor<16xi32>) -> tensor<2x8x16xbf16>
  // CHECK: tfm.permute_features %[[X]], %[[O64]] : (tensor<2x8x16xbf16>, tensor<16xi64>) -> tensor<2x8x16xbf16>
  %1 = tfm.permute_features %x, %o64 : (tensor<2x8x16xbf16>, tensor<16xi64>) -> tensor<2x8x16xbf16>
  return %0, %1 : tensor<2x8x16xbf16>, tensor<2x8x16xbf16>
}

// CHECK-LABEL: func.func @lm_head
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x16xf32>, %[[WTE:[^:]+]]: tensor<64x16xf32>, %[[W:[^:]+]]: tensor<16x64xf32>)
func.func @lm_head(%x: tensor<2x8x16xf32>, %wte: tensor<64x16xf32>, %w: tensor<16x64xf32>)
    -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>) {
  // out_in is lm_head's default and is elided.
  // CHECK: tfm.lm_head %[[X]], %[[WTE]] : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
  %0 = tfm.lm_head %x, %wte : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
  // CHECK: tfm.lm_head %[[X]], %[[W]] {layout = #tfm.layout<in_out>} : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32>
  %1 = tfm.lm_head %x, %w {layout = #tfm.layout<in_out>} : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32>
  return %0, %1 : tensor<2x8x64xf32>, tensor<2x8x64xf32>
}

// GPT-2 style attention: fused QKV split into equal thirds, MHA, merge.
// CHECK-LABEL: func.func @mha
// CHECK-SAME: (%[[QKV:[^:]+]]: tensor<2x8x48xf32>)
func.func @mha(%qkv: tensor<2x8x48xf32>) -> tensor<2x8x16xf32> {
  // CHECK: %[[S:.+]]:3 = tfm.split %[[QKV]] : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>)
  %q, %k, %v = tfm.split %qkv : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>)
  // CHECK: %[[Q:.+]] = tfm.split_heads %[[S]]#0 {num_heads = 4 : i64} : (tensor<2x8x16xf32>) -> tensor<2x4x8x4xf32>
  // CHECK: %[[K:.+]] = tfm.split_heads %[[S]]#1 {num_heads = 4 : i64}
  // CHECK: %[[V:.+]] = tfm.split_heads %[[S]]#2 {num_heads = 4 : i64}
  %qh = tfm.split_heads %q {num_heads = 4} : (tensor<2x8x16xf32>) -> tensor<2x4x8x4xf32>
  %kh = tfm.split_heads %k {num_heads = 4} : (tensor<2x8x16xf32>) -> tensor<2x4x8x4xf32>
  %vh = tfm.split_heads %v {num_heads = 4} : (tensor<2x8x16xf32>) -> tensor<2x4x8x4xf32>
  // causal = true and the 1/sqrt(dh) scale are defaults and are elided.
  // CHECK: %[[A:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  // CHECK: %[[M:.+]] = tfm.merge_heads %[[A]] : (tensor<2x4x8x4xf32>) -> tensor<2x8x16xf32>
  %m = tfm.merge_heads %a : (tensor<2x4x8x4xf32>) -> tensor<2x8x16xf32>
  // CHECK: return %[[M]]
  return %m : tensor<2x8x16xf32>
}

// One position per sequence (a generation prefill's last rows), i64 and i32.
// CHECK-LABEL: func.func @gather_positions
// CHECK-SAME: (%[[H:[^:]+]]: tensor<2x8x16xf32>, %[[R:[^:]+]]: tensor<2xi64>, %[[R32:[^:]+]]: tensor<2xi32>)
func.func @gather_positions(%h: tensor<2x8x16xf32>, %rows: tensor<2xi64>,
                            %rows32: tensor<2xi32>)
    -> (tensor<2x1x16xf32>, tensor<2x1x16xf32>) {
  // CHECK: %[[G:.+]] = tfm.gather_positions %[[H]], %[[R]] : (tensor<2x8x16xf32>, tensor<2xi64>) -> tensor<2x1x16xf32>
  %g = tfm.gather_positions %h, %rows : (tensor<2x8x16xf32>, tensor<2xi64>) -> tensor<2x1x16xf32>
  // CHECK: %[[G32:.+]] = tfm.gather_positions %[[H]], %[[R32]] : (tensor<2x8x16xf32>, tensor<2xi32>) -> tensor<2x1x16xf32>
  %g32 = tfm.gather_positions %h, %rows32 : (tensor<2x8x16xf32>, tensor<2xi32>) -> tensor<2x1x16xf32>
  // CHECK: return %[[G]], %[[G32]]
  return %g, %g32 : tensor<2x1x16xf32>, tensor<2x1x16xf32>
}

// Uneven split pieces (a GQA fused projection).
// CHECK-LABEL: func.func @split_uneven
// CHECK: tfm.split %{{.+}} : (tensor<1x4x32xf32>) -> (tensor<1x4x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
// CHECK-LABEL: func.func @split_single
// CHECK: tfm.split %{{.+}} : (tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
func.func @split_uneven(%x: tensor<1x4x32xf32>) -> tensor<1x4x8xf32> {
  %q, %k, %v = tfm.split %x : (tensor<1x4x32xf32>) -> (tensor<1x4x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
  return %k : tensor<1x4x8xf32>
}
func.func @split_single(%x: tensor<1x4x32xf32>) -> tensor<1x4x32xf32> {
  %0 = tfm.split %x : (tensor<1x4x32xf32>) -> (tensor<1x4x32xf32>)
  return %0 : tensor<1x4x32xf32>
}

// GPT-NeoX's per-head interleaved QKV: 4 groups of [q, k, v] (dh = 4).
// CHECK-LABEL: func.func @split_groups
// CHECK: tfm.split %{{.+}} {groups = 4 : i64} : (tensor<1x4x48xf32>) -> (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>)
func.func @split_groups(%x: tensor<1x4x48xf32>) -> tensor<1x4x16xf32> {
  %q, %k, %v = tfm.split %x {groups = 4 : i64} : (tensor<1x4x48xf32>) -> (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>)
  return %k : tensor<1x4x16xf32>
}

// Llama style: GQA (8 query heads over 2 kv heads), RoPE with and without
// offset, a custom theta, a decode step with an offset into a cache.
// CHECK-LABEL: func.func @gqa_rope
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x8x4x16xf16>, %[[K:[^:]+]]: tensor<1x2x4x16xf16>, %[[V:[^:]+]]: tensor<1x2x4x16xf16>, %[[KC:[^:]+]]: tensor<1x2x32x16xf16>, %[[VC:[^:]+]]: tensor<1x2x32x16xf16>, %[[POS:[^:]+]]: index)
func.func @gqa_rope(%q: tensor<1x8x4x16xf16>, %k: tensor<1x2x4x16xf16>, %v: tensor<1x2x4x16xf16>,
                    %kc: tensor<1x2x32x16xf16>, %vc: tensor<1x2x32x16xf16>, %pos: index)
    -> (tensor<1x8x4x16xf16>, tensor<1x8x4x16xf16>) {
  // CHECK: %[[QR:.+]] = tfm.rope %[[Q]] : (tensor<1x8x4x16xf16>) -> tensor<1x8x4x16xf16>
  %qr = tfm.rope %q : (tensor<1x8x4x16xf16>) -> tensor<1x8x4x16xf16>
  // CHECK: %[[KR:.+]] = tfm.rope %[[K]] {theta = 5.000000e+05 : f32} : (tensor<1x2x4x16xf16>) -> tensor<1x2x4x16xf16>
  %kr = tfm.rope %k {theta = 500000.0 : f32} : (tensor<1x2x4x16xf16>) -> tensor<1x2x4x16xf16>
  // CHECK: %[[QD:.+]] = tfm.rope %[[Q]], %[[POS]] : (tensor<1x8x4x16xf16>, index) -> tensor<1x8x4x16xf16>
  %qd = tfm.rope %q, %pos : (tensor<1x8x4x16xf16>, index) -> tensor<1x8x4x16xf16>
  // Partial rotary (GPT-NeoX): the first 8 of 16 elements rotate.
  // CHECK: tfm.rope %[[Q]], %[[POS]] {rotary_dims = 8 : i64} : (tensor<1x8x4x16xf16>, index) -> tensor<1x8x4x16xf16>
  %qp = tfm.rope %q, %pos {rotary_dims = 8} : (tensor<1x8x4x16xf16>, index) -> tensor<1x8x4x16xf16>
  // CHECK: tfm.attention %[[QR]], %[[KR]], %[[V]] : (tensor<1x8x4x16xf16>, tensor<1x2x4x16xf16>, tensor<1x2x4x16xf16>) -> tensor<1x8x4x16xf16>
  %a = tfm.attention %qr, %kr, %v : (tensor<1x8x4x16xf16>, tensor<1x2x4x16xf16>, tensor<1x2x4x16xf16>) -> tensor<1x8x4x16xf16>
  // The cache is longer than the query; the offset says where the queries are.
  // CHECK: tfm.attention %[[QD]], %[[KC]], %[[VC]], %[[POS]] : (tensor<1x8x4x16xf16>, tensor<1x2x32x16xf16>, tensor<1x2x32x16xf16>, index) -> tensor<1x8x4x16xf16>
  %d = tfm.attention %qd, %kc, %vc, %pos : (tensor<1x8x4x16xf16>, tensor<1x2x32x16xf16>, tensor<1x2x32x16xf16>, index) -> tensor<1x8x4x16xf16>
  return %a, %d : tensor<1x8x4x16xf16>, tensor<1x8x4x16xf16>
}

// Scaled RoPE (explicit inverse frequencies) and a sliding-window attention
// over a cache (Llama 3.1 / Mistral style).
// CHECK-LABEL: func.func @scaled_rope_window
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x4x4xf32>, %[[KC:[^:]+]]: tensor<1x2x32x4xf32>, %[[POS:[^:]+]]: index)
func.func @scaled_rope_window(%q: tensor<1x2x4x4xf32>, %kc: tensor<1x2x32x4xf32>, %pos: index)
    -> tensor<1x2x4x4xf32> {
  // CHECK: %[[QR:.+]] = tfm.rope %[[Q]], %[[POS]] {inv_freq = array<f32: 1.000000e+00, 1.250000e-03>, theta = 5.000000e+05 : f32} : (tensor<1x2x4x4xf32>, index) -> tensor<1x2x4x4xf32>
  %qr = tfm.rope %q, %pos {inv_freq = array<f32: 1.0, 0.00125>, theta = 500000.0 : f32} : (tensor<1x2x4x4xf32>, index) -> tensor<1x2x4x4xf32>
  // The yarn/longrope attention factor round-trips.
  // CHECK: tfm.rope %[[Q]], %[[POS]] {attention_factor = 1.250000e+00 : f32, inv_freq = array<f32: 1.000000e+00, 1.250000e-03>, theta = 5.000000e+05 : f32}
  %qy = tfm.rope %q, %pos {attention_factor = 1.25 : f32, inv_freq = array<f32: 1.0, 0.00125>, theta = 500000.0 : f32} : (tensor<1x2x4x4xf32>, index) -> tensor<1x2x4x4xf32>
  // CHECK: tfm.attention %[[QR]], %[[KC]], %[[KC]], %[[POS]] {sliding_window = 8 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x32x4xf32>, tensor<1x2x32x4xf32>, index) -> tensor<1x2x4x4xf32>
  %a = tfm.attention %qr, %kc, %kc, %pos {sliding_window = 8 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x32x4xf32>, tensor<1x2x32x4xf32>, index) -> tensor<1x2x4x4xf32>
  return %a : tensor<1x2x4x4xf32>
}

// MQA (one kv head) in bf16, non-causal with an explicit scale, and a head
// dim (dh = 32) that is not d/H of the model (d = 64, H = 4), with dv != dh.
// CHECK-LABEL: func.func @mqa_bf16
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x128xbf16>, %[[K:[^:]+]]: tensor<2x1x8x32xbf16>, %[[V:[^:]+]]: tensor<2x1x8x24xbf16>)
func.func @mqa_bf16(%x: tensor<2x8x128xbf16>, %k: tensor<2x1x8x32xbf16>, %v: tensor<2x1x8x24xbf16>)
    -> tensor<2x8x96xbf16> {
  // CHECK: %[[Q:.+]] = tfm.split_heads %[[X]] {num_heads = 4 : i64} : (tensor<2x8x128xbf16>) -> tensor<2x4x8x32xbf16>
  %q = tfm.split_heads %x {num_heads = 4} : (tensor<2x8x128xbf16>) -> tensor<2x4x8x32xbf16>
  // CHECK: %[[A:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] {causal = false, scale = 1.250000e-01 : f32} : (tensor<2x4x8x32xbf16>, tensor<2x1x8x32xbf16>, tensor<2x1x8x24xbf16>) -> tensor<2x4x8x24xbf16>
  %a = tfm.attention %q, %k, %v {causal = false, scale = 0.125 : f32} : (tensor<2x4x8x32xbf16>, tensor<2x1x8x32xbf16>, tensor<2x1x8x24xbf16>) -> tensor<2x4x8x24xbf16>
  // CHECK: tfm.merge_heads %[[A]] : (tensor<2x4x8x24xbf16>) -> tensor<2x8x96xbf16>
  %m = tfm.merge_heads %a : (tensor<2x4x8x24xbf16>) -> tensor<2x8x96xbf16>
  return %m : tensor<2x8x96xbf16>
}

// CHECK-LABEL: func.func @activations
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x64xf32>, %[[Y:[^:]+]]: tensor<2x8x64xf32>)
func.func @activations(%x: tensor<2x8x64xf32>, %y: tensor<2x8x64xf32>)
    -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) {
  // CHECK: tfm.gelu %[[X]] : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %0 = tfm.gelu %x : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: tfm.gelu %[[X]] {approximate = #tfm.gelu<tanh>} : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %1 = tfm.gelu %x {approximate = #tfm.gelu<tanh>} : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: tfm.silu %[[X]] : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %2 = tfm.silu %x : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: tfm.swiglu %[[X]], %[[Y]] : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %3 = tfm.swiglu %x, %y : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: tfm.geglu %[[X]], %[[Y]] : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %4 = tfm.geglu %x, %y : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: tfm.geglu %[[X]], %[[Y]] {approximate = #tfm.gelu<tanh>} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %5 = tfm.geglu %x, %y {approximate = #tfm.gelu<tanh>} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: tfm.relu %[[X]] : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %6 = tfm.relu %x : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return %0, %1, %2, %3 : tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>
}

// CHECK-LABEL: func.func @residual_f16
// CHECK: tfm.residual_add %{{.+}}, %{{.+}} : (tensor<2x8x16xf16>, tensor<2x8x16xf16>) -> tensor<2x8x16xf16>
func.func @residual_f16(%h: tensor<2x8x16xf16>, %b: tensor<2x8x16xf16>) -> tensor<2x8x16xf16> {
  %0 = tfm.residual_add %h, %b : (tensor<2x8x16xf16>, tensor<2x8x16xf16>) -> tensor<2x8x16xf16>
  return %0 : tensor<2x8x16xf16>
}

// Mixtral style MoE: 2 experts, top-2, d = 16, m = 32.
// CHECK-LABEL: func.func @moe
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x16xf32>, %[[R:[^:]+]]: tensor<2x16xf32>, %[[G0:[^:]+]]: tensor<32x16xf32>, %[[U0:[^:]+]]: tensor<32x16xf32>, %[[D0:[^:]+]]: tensor<16x32xf32>, %[[G1:[^:]+]]: tensor<32x16xf32>, %[[U1:[^:]+]]: tensor<32x16xf32>, %[[D1:[^:]+]]: tensor<16x32xf32>)
func.func @moe(%x: tensor<1x4x16xf32>, %router: tensor<2x16xf32>,
               %g0: tensor<32x16xf32>, %u0: tensor<32x16xf32>, %d0: tensor<16x32xf32>,
               %g1: tensor<32x16xf32>, %u1: tensor<32x16xf32>, %d1: tensor<16x32xf32>)
    -> tensor<1x4x16xf32> {
  // CHECK: tfm.moe %[[X]], %[[R]], %[[G0]], %[[U0]], %[[D0]], %[[G1]], %[[U1]], %[[D1]] {top_k = 2 : i64} : (tensor<1x4x16xf32>, tensor<2x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x4x16xf32>
  %0 = tfm.moe %x, %router, %g0, %u0, %d0, %g1, %u1, %d1 {top_k = 2}
      : (tensor<1x4x16xf32>, tensor<2x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>,
         tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// Ragged batches: each of the 3 sequences at its own position (a [B] tensor
// of i64 or i32 in place of the index), for every position-dependent op.
// CHECK-LABEL: func.func @per_sequence_positions
// CHECK-SAME: (%[[H:[^:]+]]: tensor<3x1x16xf32>, %[[WPE:[^:]+]]: tensor<32x16xf32>, %[[Q:[^:]+]]: tensor<3x4x1x8xf32>, %[[K:[^:]+]]: tensor<3x2x1x8xf32>, %[[KC:[^:]+]]: tensor<3x2x32x8xf32>, %[[POS:[^:]+]]: tensor<3xi64>, %[[POS32:[^:]+]]: tensor<3xi32>)
func.func @per_sequence_positions(%h: tensor<3x1x16xf32>, %wpe: tensor<32x16xf32>,
                                  %q: tensor<3x4x1x8xf32>, %k: tensor<3x2x1x8xf32>,
                                  %kc: tensor<3x2x32x8xf32>, %pos: tensor<3xi64>,
                                  %pos32: tensor<3xi32>)
    -> (tensor<3x1x16xf32>, tensor<3x4x1x8xf32>) {
  // CHECK: tfm.position_embedding %[[H]], %[[WPE]], %[[POS]] : (tensor<3x1x16xf32>, tensor<32x16xf32>, tensor<3xi64>) -> tensor<3x1x16xf32>
  %e = tfm.position_embedding %h, %wpe, %pos : (tensor<3x1x16xf32>, tensor<32x16xf32>, tensor<3xi64>) -> tensor<3x1x16xf32>
  // CHECK: %[[QR:.+]] = tfm.rope %[[Q]], %[[POS32]] : (tensor<3x4x1x8xf32>, tensor<3xi32>) -> tensor<3x4x1x8xf32>
  %qr = tfm.rope %q, %pos32 : (tensor<3x4x1x8xf32>, tensor<3xi32>) -> tensor<3x4x1x8xf32>
  // CHECK: %[[KW:.+]] = tfm.kv_cache_write %[[KC]], %[[K]], %[[POS]] : (tensor<3x2x32x8xf32>, tensor<3x2x1x8xf32>, tensor<3xi64>) -> tensor<3x2x32x8xf32>
  %kw = tfm.kv_cache_write %kc, %k, %pos : (tensor<3x2x32x8xf32>, tensor<3x2x1x8xf32>, tensor<3xi64>) -> tensor<3x2x32x8xf32>
  // CHECK: tfm.attention %[[QR]], %[[KW]], %[[KW]], %[[POS]] : (tensor<3x4x1x8xf32>, tensor<3x2x32x8xf32>, tensor<3x2x32x8xf32>, tensor<3xi64>) -> tensor<3x4x1x8xf32>
  %a = tfm.attention %qr, %kw, %kw, %pos : (tensor<3x4x1x8xf32>, tensor<3x2x32x8xf32>, tensor<3x2x32x8xf32>, tensor<3xi64>) -> tensor<3x4x1x8xf32>
  return %e, %a : tensor<3x1x16xf32>, tensor<3x4x1x8xf32>
}

// Float conversions: a half-precision model's logits widened to f32, and
// narrowing.
// CHECK-LABEL: func.func @convert
// CHECK-SAME: (%[[L:[^:]+]]: tensor<1x4x96xbf16>, %[[X:[^:]+]]: tensor<2x8xf32>)
func.func @convert(%logits: tensor<1x4x96xbf16>, %x: tensor<2x8xf32>)
    -> (tensor<1x4x96xf32>, tensor<2x8xf16>) {
  // CHECK: tfm.convert %[[L]] : (tensor<1x4x96xbf16>) -> tensor<1x4x96xf32>
  %0 = tfm.convert %logits : (tensor<1x4x96xbf16>) -> tensor<1x4x96xf32>
  // CHECK: tfm.convert %[[X]] : (tensor<2x8xf32>) -> tensor<2x8xf16>
  %1 = tfm.convert %x : (tensor<2x8xf32>) -> tensor<2x8xf16>
  return %0, %1 : tensor<1x4x96xf32>, tensor<2x8xf16>
}

// A sliding layer's bounded cache: the write and the attention over a ring of
// W + S - 1 = 8 + 4 - 1 = 11 slots.
// CHECK-LABEL: func.func @ring_cache
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x4x4xf32>, %[[K:[^:]+]]: tensor<1x2x4x4xf32>, %[[KC:[^:]+]]: tensor<1x2x11x4xf32>, %[[POS:[^:]+]]: index)
func.func @ring_cache(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %kc: tensor<1x2x11x4xf32>, %pos: index) -> tensor<1x2x4x4xf32> {
  // CHECK: %[[KW:.+]] = tfm.kv_cache_write %[[KC]], %[[K]], %[[POS]] {ring} : (tensor<1x2x11x4xf32>, tensor<1x2x4x4xf32>, index) -> tensor<1x2x11x4xf32>
  %kw = tfm.kv_cache_write %kc, %k, %pos {ring} : (tensor<1x2x11x4xf32>, tensor<1x2x4x4xf32>, index) -> tensor<1x2x11x4xf32>
  // CHECK: tfm.attention %[[Q]], %[[KW]], %[[KW]], %[[POS]] {ring_cache, sliding_window = 8 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x11x4xf32>, tensor<1x2x11x4xf32>, index) -> tensor<1x2x4x4xf32>
  %a = tfm.attention %q, %kw, %kw, %pos {ring_cache, sliding_window = 8 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x11x4xf32>, tensor<1x2x11x4xf32>, index) -> tensor<1x2x4x4xf32>
  return %a : tensor<1x2x4x4xf32>
}

// One case per error path of the tfm op verifiers (lib/Dialect/Tfm/IR/TfmOps.cpp),
// in the order they appear there, plus the ODS type constraints and traits.
// RUN: transformer-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Type constraints (ODS)
//===----------------------------------------------------------------------===//

func.func @int_hidden(%x: tensor<2x8x16xi32>, %w: tensor<16x16xi32>) -> tensor<2x8x16xi32> {
  // expected-error @below {{operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = tfm.linear %x, %w : (tensor<2x8x16xi32>, tensor<16x16xi32>) -> tensor<2x8x16xi32>
  return %0 : tensor<2x8x16xi32>
}

// -----

func.func @dynamic_shape(%x: tensor<?x8x16xf32>, %g: tensor<16xf32>) -> tensor<?x8x16xf32> {
  // expected-error @below {{operand #0 must be statically shaped tensor}}
  %0 = tfm.rms_norm %x, %g : (tensor<?x8x16xf32>, tensor<16xf32>) -> tensor<?x8x16xf32>
  return %0 : tensor<?x8x16xf32>
}

// -----

func.func @float_ids(%ids: tensor<2x8xf32>, %wte: tensor<64x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{operand #0 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = tfm.embedding %ids, %wte : (tensor<2x8xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// tfm.embedding
//===----------------------------------------------------------------------===//

// -----

func.func @embedding_ids_rank(%ids: tensor<8xi64>, %wte: tensor<64x16xf32>) -> tensor<1x8x16xf32> {
  // expected-error @below {{'tfm.embedding' op ids must have rank 2, got 'tensor<8xi64>'}}
  %0 = tfm.embedding %ids, %wte : (tensor<8xi64>, tensor<64x16xf32>) -> tensor<1x8x16xf32>
  return %0 : tensor<1x8x16xf32>
}

// -----

func.func @embedding_table_rank(%ids: tensor<2x8xi64>, %wte: tensor<1024xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.embedding' op table must have rank 2, got 'tensor<1024xf32>'}}
  %0 = tfm.embedding %ids, %wte : (tensor<2x8xi64>, tensor<1024xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @embedding_result_width(%ids: tensor<2x8xi64>, %wte: tensor<64x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @below {{'tfm.embedding' op result type 'tensor<2x8x64xf32>' should be 'tensor<2x8x16xf32>'}}
  %0 = tfm.embedding %ids, %wte : (tensor<2x8xi64>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @embedding_result_dtype(%ids: tensor<2x8xi64>, %wte: tensor<64x16xbf16>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.embedding' op result type 'tensor<2x8x16xf32>' should be 'tensor<2x8x16xbf16>'}}
  %0 = tfm.embedding %ids, %wte : (tensor<2x8xi64>, tensor<64x16xbf16>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @embedding_zero_scale(%ids: tensor<2x8xi64>, %wte: tensor<64x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.embedding' op scale must be finite and positive, got 0}}
  %0 = tfm.embedding %ids, %wte {scale = 0.0 : f32} : (tensor<2x8xi64>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @embedding_inf_scale(%ids: tensor<2x8xi64>, %wte: tensor<64x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.embedding' op scale must be finite and positive, got INF}}
  %0 = tfm.embedding %ids, %wte {scale = 0x7F800000 : f32} : (tensor<2x8xi64>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// tfm.position_embedding
//===----------------------------------------------------------------------===//

// -----

func.func @pos_input_rank(%x: tensor<8x16xf32>, %wpe: tensor<32x16xf32>) -> tensor<8x16xf32> {
  // expected-error @below {{'tfm.position_embedding' op input must have rank 3, got 'tensor<8x16xf32>'}}
  %0 = tfm.position_embedding %x, %wpe : (tensor<8x16xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @pos_table_rank(%x: tensor<2x8x16xf32>, %wpe: tensor<1x32x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.position_embedding' op table must have rank 2, got 'tensor<1x32x16xf32>'}}
  %0 = tfm.position_embedding %x, %wpe : (tensor<2x8x16xf32>, tensor<1x32x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @pos_dtype(%x: tensor<2x8x16xf32>, %wpe: tensor<32x16xf16>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.position_embedding' op input element type 'f32' differs from table element type 'f16'}}
  %0 = tfm.position_embedding %x, %wpe : (tensor<2x8x16xf32>, tensor<32x16xf16>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @pos_width(%x: tensor<2x8x16xf32>, %wpe: tensor<32x24xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.position_embedding' op table width 24 differs from the hidden size d=16}}
  %0 = tfm.position_embedding %x, %wpe : (tensor<2x8x16xf32>, tensor<32x24xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @pos_too_long(%x: tensor<2x64x16xf32>, %wpe: tensor<32x16xf32>) -> tensor<2x64x16xf32> {
  // expected-error @below {{'tfm.position_embedding' op sequence length 64 exceeds the 32 positions of the table}}
  %0 = tfm.position_embedding %x, %wpe : (tensor<2x64x16xf32>, tensor<32x16xf32>) -> tensor<2x64x16xf32>
  return %0 : tensor<2x64x16xf32>
}

// -----

func.func @pos_result(%x: tensor<2x8x16xf32>, %wpe: tensor<32x16xf32>, %p: index) -> tensor<2x1x16xf32> {
  // expected-error @below {{'tfm.position_embedding' op result type 'tensor<2x1x16xf32>' should be 'tensor<2x8x16xf32>'}}
  %0 = tfm.position_embedding %x, %wpe, %p : (tensor<2x8x16xf32>, tensor<32x16xf32>, index) -> tensor<2x1x16xf32>
  return %0 : tensor<2x1x16xf32>
}

//===----------------------------------------------------------------------===//
// tfm.layer_norm / tfm.rms_norm
//===----------------------------------------------------------------------===//

// -----

func.func @norm_rank0(%x: tensor<f32>, %g: tensor<1xf32>) -> tensor<f32> {
  // expected-error @below {{'tfm.rms_norm' op input must have rank >= 1, got 'tensor<f32>'}}
  %0 = tfm.rms_norm %x, %g : (tensor<f32>, tensor<1xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @layer_norm_scale_length(%x: tensor<2x8x16xf32>, %g: tensor<32xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.layer_norm' op scale must be [16] (the normalised dimension d), got 'tensor<32xf32>'}}
  %0 = tfm.layer_norm %x, %g, %b : (tensor<2x8x16xf32>, tensor<32xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @layer_norm_scale_rank(%x: tensor<2x8x16xf32>, %g: tensor<1x16xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.layer_norm' op scale must be [16] (the normalised dimension d), got 'tensor<1x16xf32>'}}
  %0 = tfm.layer_norm %x, %g, %b : (tensor<2x8x16xf32>, tensor<1x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @layer_norm_bias_length(%x: tensor<2x8x16xf32>, %g: tensor<16xf32>, %b: tensor<8xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.layer_norm' op bias must be [16] (the normalised dimension d), got 'tensor<8xf32>'}}
  %0 = tfm.layer_norm %x, %g, %b : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<8xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @layer_norm_bias_dtype(%x: tensor<2x8x16xf16>, %g: tensor<16xf16>, %b: tensor<16xf32>) -> tensor<2x8x16xf16> {
  // expected-error @below {{'tfm.layer_norm' op input element type 'f16' differs from bias element type 'f32'}}
  %0 = tfm.layer_norm %x, %g, %b : (tensor<2x8x16xf16>, tensor<16xf16>, tensor<16xf32>) -> tensor<2x8x16xf16>
  return %0 : tensor<2x8x16xf16>
}

// -----

func.func @rms_norm_scale_length(%x: tensor<2x8x16xf32>, %g: tensor<15xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.rms_norm' op scale must be [16] (the normalised dimension d), got 'tensor<15xf32>'}}
  %0 = tfm.rms_norm %x, %g : (tensor<2x8x16xf32>, tensor<15xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @rms_norm_scale_dtype(%x: tensor<2x8x16xbf16>, %g: tensor<16xf32>) -> tensor<2x8x16xbf16> {
  // expected-error @below {{'tfm.rms_norm' op input element type 'bf16' differs from scale element type 'f32'}}
  %0 = tfm.rms_norm %x, %g : (tensor<2x8x16xbf16>, tensor<16xf32>) -> tensor<2x8x16xbf16>
  return %0 : tensor<2x8x16xbf16>
}

// -----

func.func @layer_norm_epsilon(%x: tensor<2x8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.layer_norm' op epsilon must be positive, got 0}}
  %0 = tfm.layer_norm %x, %g, %b {epsilon = 0.0 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @rms_norm_epsilon(%x: tensor<2x8x16xf32>, %g: tensor<16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.rms_norm' op epsilon must be positive, got -1}}
  %0 = tfm.rms_norm %x, %g {epsilon = -1.0 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @norm_result(%x: tensor<2x8x16xf32>, %g: tensor<16xf32>) -> tensor<2x8x16xf16> {
  // expected-error @below {{'tfm.rms_norm' op result type 'tensor<2x8x16xf16>' should be 'tensor<2x8x16xf32>'}}
  %0 = tfm.rms_norm %x, %g : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf16>
  return %0 : tensor<2x8x16xf16>
}

//===----------------------------------------------------------------------===//
// tfm.linear
//===----------------------------------------------------------------------===//

// -----

func.func @linear_input_rank(%x: tensor<16xf32>, %w: tensor<16x48xf32>) -> tensor<48xf32> {
  // expected-error @below {{'tfm.linear' op input must have rank >= 2, got 'tensor<16xf32>'}}
  %0 = tfm.linear %x, %w : (tensor<16xf32>, tensor<16x48xf32>) -> tensor<48xf32>
  return %0 : tensor<48xf32>
}

// -----

func.func @linear_weight_rank(%x: tensor<2x8x16xf32>, %w: tensor<2x16x48xf32>) -> tensor<2x8x48xf32> {
  // expected-error @below {{'tfm.linear' op weight must have rank 2, got 'tensor<2x16x48xf32>'}}
  %0 = tfm.linear %x, %w : (tensor<2x8x16xf32>, tensor<2x16x48xf32>) -> tensor<2x8x48xf32>
  return %0 : tensor<2x8x48xf32>
}

// -----

func.func @linear_weight_dtype(%x: tensor<2x8x16xf32>, %w: tensor<16x48xbf16>) -> tensor<2x8x48xf32> {
  // expected-error @below {{'tfm.linear' op input element type 'f32' differs from weight element type 'bf16'}}
  %0 = tfm.linear %x, %w : (tensor<2x8x16xf32>, tensor<16x48xbf16>) -> tensor<2x8x48xf32>
  return %0 : tensor<2x8x48xf32>
}

// -----

// A GPT-2 Conv1D weight [in, out] whose in does not match.
func.func @linear_in_mismatch_in_out(%x: tensor<2x8x16xf32>, %w: tensor<48x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.linear' op input's last dimension 16 does not match the weight's in=48 (weight 'tensor<48x16xf32>', layout in_out)}}
  %0 = tfm.linear %x, %w : (tensor<2x8x16xf32>, tensor<48x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// An nn.Linear weight [out, in] given without layout = out_in reads as in_out;
// with it, in is the second dimension.
func.func @linear_in_mismatch_out_in(%x: tensor<2x8x16xf32>, %w: tensor<16x48xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.linear' op input's last dimension 16 does not match the weight's in=48 (weight 'tensor<16x48xf32>', layout out_in)}}
  %0 = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<2x8x16xf32>, tensor<16x48xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @linear_bias_length(%x: tensor<2x8x16xf32>, %w: tensor<48x16xf32>, %b: tensor<16xf32>) -> tensor<2x8x48xf32> {
  // expected-error @below {{'tfm.linear' op bias must be [48] (the weight's out), got 'tensor<16xf32>'}}
  %0 = tfm.linear %x, %w, %b {layout = #tfm.layout<out_in>} : (tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<16xf32>) -> tensor<2x8x48xf32>
  return %0 : tensor<2x8x48xf32>
}

// -----

func.func @linear_bias_dtype(%x: tensor<2x8x16xf16>, %w: tensor<16x48xf16>, %b: tensor<48xf32>) -> tensor<2x8x48xf16> {
  // expected-error @below {{'tfm.linear' op input element type 'f16' differs from bias element type 'f32'}}
  %0 = tfm.linear %x, %w, %b : (tensor<2x8x16xf16>, tensor<16x48xf16>, tensor<48xf32>) -> tensor<2x8x48xf16>
  return %0 : tensor<2x8x48xf16>
}

// -----

func.func @linear_result(%x: tensor<2x8x16xf32>, %w: tensor<16x48xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.linear' op result type 'tensor<2x8x16xf32>' should be 'tensor<2x8x48xf32>'}}
  %0 = tfm.linear %x, %w : (tensor<2x8x16xf32>, tensor<16x48xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// tfm.permute_features
//===----------------------------------------------------------------------===//

// -----

func.func @permute_order_length(%x: tensor<2x8x16xf32>, %o: tensor<12xi32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.permute_features' op order must be [16] (the input's last dimension), got 'tensor<12xi32>'}}
  %0 = tfm.permute_features %x, %o : (tensor<2x8x16xf32>, tensor<12xi32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @permute_order_rank(%x: tensor<2x8x16xf32>, %o: tensor<1x16xi32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.permute_features' op order must be [16] (the input's last dimension), got 'tensor<1x16xi32>'}}
  %0 = tfm.permute_features %x, %o : (tensor<2x8x16xf32>, tensor<1x16xi32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @permute_order_type(%x: tensor<2x8x16xf32>, %o: tensor<16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = tfm.permute_features %x, %o : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @permute_result(%x: tensor<2x8x16xf32>, %o: tensor<16xi32>) -> tensor<2x8x16xbf16> {
  // expected-error @below {{'tfm.permute_features' op result type 'tensor<2x8x16xbf16>' should be 'tensor<2x8x16xf32>'}}
  %0 = tfm.permute_features %x, %o : (tensor<2x8x16xf32>, tensor<16xi32>) -> tensor<2x8x16xbf16>
  return %0 : tensor<2x8x16xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.lm_head
//===----------------------------------------------------------------------===//

// -----

func.func @lm_head_input_rank(%x: tensor<8x16xf32>, %w: tensor<64x16xf32>) -> tensor<8x64xf32> {
  // expected-error @below {{'tfm.lm_head' op input must have rank 3, got 'tensor<8x16xf32>'}}
  %0 = tfm.lm_head %x, %w : (tensor<8x16xf32>, tensor<64x16xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @lm_head_weight_rank(%x: tensor<2x8x16xf32>, %w: tensor<1024xf32>) -> tensor<2x8x64xf32> {
  // expected-error @below {{'tfm.lm_head' op weight must have rank 2, got 'tensor<1024xf32>'}}
  %0 = tfm.lm_head %x, %w : (tensor<2x8x16xf32>, tensor<1024xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @lm_head_dtype(%x: tensor<2x8x16xf32>, %w: tensor<64x16xf16>) -> tensor<2x8x64xf32> {
  // expected-error @below {{'tfm.lm_head' op input element type 'f32' differs from weight element type 'f16'}}
  %0 = tfm.lm_head %x, %w : (tensor<2x8x16xf32>, tensor<64x16xf16>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

// A tied wte [V, d] used with layout in_out reads as [d, V].
func.func @lm_head_hidden_in_out(%x: tensor<2x8x16xf32>, %w: tensor<64x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.lm_head' op weight 'tensor<64x16xf32>' (layout in_out) expects hidden size 64, input has 16}}
  %0 = tfm.lm_head %x, %w {layout = #tfm.layout<in_out>} : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @lm_head_hidden_out_in(%x: tensor<2x8x16xf32>, %w: tensor<64x32xf32>) -> tensor<2x8x64xf32> {
  // expected-error @below {{'tfm.lm_head' op weight 'tensor<64x32xf32>' (layout out_in) expects hidden size 32, input has 16}}
  %0 = tfm.lm_head %x, %w : (tensor<2x8x16xf32>, tensor<64x32xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @lm_head_result(%x: tensor<2x8x16xf32>, %w: tensor<64x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.lm_head' op result type 'tensor<2x8x16xf32>' should be 'tensor<2x8x64xf32>'}}
  %0 = tfm.lm_head %x, %w : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// tfm.split
//===----------------------------------------------------------------------===//

// -----

func.func @split_rank0(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @below {{'tfm.split' op input must have rank >= 1, got 'tensor<f32>'}}
  %0 = tfm.split %x : (tensor<f32>) -> (tensor<f32>)
  return %0 : tensor<f32>
}

// -----

func.func @split_no_results(%x: tensor<2x8x48xf32>) {
  // expected-error @below {{'tfm.split' op needs at least one result}}
  tfm.split %x : (tensor<2x8x48xf32>) -> ()
  return
}

// -----

func.func @split_leading_dims(%x: tensor<2x8x48xf32>) -> tensor<2x4x16xf32> {
  // expected-error @below {{'tfm.split' op result #1 'tensor<2x4x16xf32>' must match the input 'tensor<2x8x48xf32>' in all but the last dimension}}
  %q, %k, %v = tfm.split %x : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x4x16xf32>, tensor<2x8x16xf32>)
  return %k : tensor<2x4x16xf32>
}

// -----

func.func @split_dtype(%x: tensor<2x8x48xf32>) -> tensor<2x8x16xf16> {
  // expected-error @below {{'tfm.split' op result #2 'tensor<2x8x16xf16>' must match the input 'tensor<2x8x48xf32>' in all but the last dimension}}
  %q, %k, %v = tfm.split %x : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf16>)
  return %v : tensor<2x8x16xf16>
}

// -----

func.func @split_sum(%x: tensor<2x8x48xf32>) -> tensor<2x8x8xf32> {
  // expected-error @below {{'tfm.split' op pieces add up to 40, but the last dimension of the input is 48}}
  %q, %k, %v = tfm.split %x : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x8xf32>)
  return %v : tensor<2x8x8xf32>
}

// -----

func.func @split_groups_multiple(%x: tensor<2x8x48xf32>) -> tensor<2x8x12xf32> {
  // expected-error @below {{'tfm.split' op result #1 has 12 elements in its last dimension, not a multiple of groups=8}}
  %q, %k, %v = tfm.split %x {groups = 8 : i64} : (tensor<2x8x48xf32>) -> (tensor<2x8x24xf32>, tensor<2x8x12xf32>, tensor<2x8x12xf32>)
  return %k : tensor<2x8x12xf32>
}

// -----

func.func @split_groups_zero(%x: tensor<2x8x48xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.split' op attribute 'groups' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %q, %k, %v = tfm.split %x {groups = 0 : i64} : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>)
  return %k : tensor<2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// tfm.split_heads / tfm.merge_heads
//===----------------------------------------------------------------------===//

// -----

func.func @split_heads_rank(%x: tensor<8x16xf32>) -> tensor<4x8x4xf32> {
  // expected-error @below {{'tfm.split_heads' op input must have rank 3, got 'tensor<8x16xf32>'}}
  %0 = tfm.split_heads %x {num_heads = 4} : (tensor<8x16xf32>) -> tensor<4x8x4xf32>
  return %0 : tensor<4x8x4xf32>
}

// -----

func.func @split_heads_zero(%x: tensor<2x8x16xf32>) -> tensor<2x0x8x16xf32> {
  // expected-error @below {{'tfm.split_heads' op num_heads must be positive, got 0}}
  %0 = tfm.split_heads %x {num_heads = 0} : (tensor<2x8x16xf32>) -> tensor<2x0x8x16xf32>
  return %0 : tensor<2x0x8x16xf32>
}

// -----

func.func @split_heads_divisible(%x: tensor<2x8x16xf32>) -> tensor<2x3x8x5xf32> {
  // expected-error @below {{'tfm.split_heads' op width 16 is not divisible by num_heads=3}}
  %0 = tfm.split_heads %x {num_heads = 3} : (tensor<2x8x16xf32>) -> tensor<2x3x8x5xf32>
  return %0 : tensor<2x3x8x5xf32>
}

// -----

// The result must be [B, H, S, dh], not [B, S, H, dh].
func.func @split_heads_result(%x: tensor<2x8x16xf32>) -> tensor<2x8x4x4xf32> {
  // expected-error @below {{'tfm.split_heads' op result type 'tensor<2x8x4x4xf32>' should be 'tensor<2x4x8x4xf32>'}}
  %0 = tfm.split_heads %x {num_heads = 4} : (tensor<2x8x16xf32>) -> tensor<2x8x4x4xf32>
  return %0 : tensor<2x8x4x4xf32>
}

// -----

func.func @merge_heads_rank(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.merge_heads' op input must have rank 4, got 'tensor<2x8x16xf32>'}}
  %0 = tfm.merge_heads %x : (tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @merge_heads_result(%x: tensor<2x4x8x4xf32>) -> tensor<2x4x32xf32> {
  // expected-error @below {{'tfm.merge_heads' op result type 'tensor<2x4x32xf32>' should be 'tensor<2x8x16xf32>'}}
  %0 = tfm.merge_heads %x : (tensor<2x4x8x4xf32>) -> tensor<2x4x32xf32>
  return %0 : tensor<2x4x32xf32>
}

//===----------------------------------------------------------------------===//
// tfm.gather_positions
//===----------------------------------------------------------------------===//

// -----

func.func @gather_positions_rank(%x: tensor<8x16xf32>, %p: tensor<2xi64>) -> tensor<2x1x16xf32> {
  // expected-error @below {{'tfm.gather_positions' op input must have rank 3, got 'tensor<8x16xf32>'}}
  %0 = tfm.gather_positions %x, %p : (tensor<8x16xf32>, tensor<2xi64>) -> tensor<2x1x16xf32>
  return %0 : tensor<2x1x16xf32>
}

// -----

func.func @gather_positions_batch(%x: tensor<2x8x16xf32>, %p: tensor<3xi64>) -> tensor<2x1x16xf32> {
  // expected-error @below {{'tfm.gather_positions' op positions 'tensor<3xi64>' must hold one position per sequence of the batch (B=2)}}
  %0 = tfm.gather_positions %x, %p : (tensor<2x8x16xf32>, tensor<3xi64>) -> tensor<2x1x16xf32>
  return %0 : tensor<2x1x16xf32>
}

// -----

func.func @gather_positions_result(%x: tensor<2x8x16xf32>, %p: tensor<2xi64>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.gather_positions' op result type 'tensor<2x8x16xf32>' should be 'tensor<2x1x16xf32>'}}
  %0 = tfm.gather_positions %x, %p : (tensor<2x8x16xf32>, tensor<2xi64>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @gather_positions_element_type(%x: tensor<2x8x16xf32>, %p: tensor<2xi64>) -> tensor<2x1x16xbf16> {
  // expected-error @below {{'tfm.gather_positions' op result type 'tensor<2x1x16xbf16>' should be 'tensor<2x1x16xf32>'}}
  %0 = tfm.gather_positions %x, %p : (tensor<2x8x16xf32>, tensor<2xi64>) -> tensor<2x1x16xbf16>
  return %0 : tensor<2x1x16xbf16>
}

// -----

func.func @gather_positions_index_type(%x: tensor<2x8x16xf32>, %p: tensor<2xf32>) -> tensor<2x1x16xf32> {
  // expected-error @below {{'tfm.gather_positions' op operand #1 must be 1D tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = tfm.gather_positions %x, %p : (tensor<2x8x16xf32>, tensor<2xf32>) -> tensor<2x1x16xf32>
  return %0 : tensor<2x1x16xf32>
}

//===----------------------------------------------------------------------===//
// tfm.rope
//===----------------------------------------------------------------------===//

// -----

func.func @rope_rank(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.rope' op input must have rank 4, got 'tensor<2x8x16xf32>'}}
  %0 = tfm.rope %x : (tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @rope_odd_dh(%x: tensor<1x4x8x5xf32>) -> tensor<1x4x8x5xf32> {
  // expected-error @below {{'tfm.rope' op head dimension dh=5 must be even to rotate halves}}
  %0 = tfm.rope %x : (tensor<1x4x8x5xf32>) -> tensor<1x4x8x5xf32>
  return %0 : tensor<1x4x8x5xf32>
}

// -----

func.func @rope_rotary_dims_odd(%x: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @below {{'tfm.rope' op rotary_dims=5 must be even and in [2, dh=16]}}
  %0 = tfm.rope %x {rotary_dims = 5 : i64} : (tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @rope_rotary_dims_wide(%x: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @below {{'tfm.rope' op rotary_dims=18 must be even and in [2, dh=16]}}
  %0 = tfm.rope %x {rotary_dims = 18 : i64} : (tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @rope_rotary_dims_negative(%x: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @below {{'tfm.rope' op rotary_dims=-2 must be even and in [2, dh=16]}}
  %0 = tfm.rope %x {rotary_dims = -2 : i64} : (tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @rope_theta(%x: tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32> {
  // expected-error @below {{'tfm.rope' op theta must be positive, got 0}}
  %0 = tfm.rope %x {theta = 0.0 : f32} : (tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32>
  return %0 : tensor<1x4x8x4xf32>
}

// -----

func.func @rope_result(%x: tensor<1x4x8x4xf32>, %p: index) -> tensor<1x4x8x4xf16> {
  // expected-error @below {{'tfm.rope' op result type 'tensor<1x4x8x4xf16>' should be 'tensor<1x4x8x4xf32>'}}
  %0 = tfm.rope %x, %p : (tensor<1x4x8x4xf32>, index) -> tensor<1x4x8x4xf16>
  return %0 : tensor<1x4x8x4xf16>
}

// -----

func.func @rope_inv_freq_count(%x: tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32> {
  // expected-error @below {{'tfm.rope' op inv_freq must hold dh/2 = 2 frequencies, got 3}}
  %0 = tfm.rope %x {inv_freq = array<f32: 1.0, 0.1, 0.01>} : (tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32>
  return %0 : tensor<1x4x8x4xf32>
}

// -----

func.func @rope_inv_freq_value(%x: tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32> {
  // expected-error @below {{'tfm.rope' op inv_freq[1] must be finite and positive, got 0}}
  %0 = tfm.rope %x {inv_freq = array<f32: 1.0, 0.0>} : (tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32>
  return %0 : tensor<1x4x8x4xf32>
}

// -----

func.func @rope_inv_freq_inf(%x: tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32> {
  // expected-error @below {{'tfm.rope' op inv_freq[0] must be finite and positive, got INF}}
  %0 = tfm.rope %x {inv_freq = array<f32: 0x7F800000, 0.5>} : (tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32>
  return %0 : tensor<1x4x8x4xf32>
}

// -----

func.func @rope_attention_factor_zero(%x: tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32> {
  // expected-error @below {{'tfm.rope' op attention_factor must be finite and positive, got 0}}
  %0 = tfm.rope %x {attention_factor = 0.0 : f32} : (tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32>
  return %0 : tensor<1x4x8x4xf32>
}

// -----

func.func @rope_attention_factor_nan(%x: tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32> {
  // expected-error @below {{'tfm.rope' op attention_factor must be finite and positive, got nan}}
  %0 = tfm.rope %x {attention_factor = 0x7FC00000 : f32} : (tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32>
  return %0 : tensor<1x4x8x4xf32>
}

//===----------------------------------------------------------------------===//
// tfm.attention
//===----------------------------------------------------------------------===//

// -----

func.func @attention_query_rank(%q: tensor<2x8x16xf32>, %k: tensor<2x4x8x4xf32>, %v: tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32> {
  // expected-error @below {{'tfm.attention' op query must have rank 4, got 'tensor<2x8x16xf32>'}}
  %0 = tfm.attention %q, %k, %v : (tensor<2x8x16xf32>, tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  return %0 : tensor<2x4x8x4xf32>
}

// -----

func.func @attention_key_rank(%q: tensor<2x4x8x4xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32> {
  // expected-error @below {{'tfm.attention' op key must have rank 4, got 'tensor<2x8x16xf32>'}}
  %0 = tfm.attention %q, %k, %v : (tensor<2x4x8x4xf32>, tensor<2x8x16xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  return %0 : tensor<2x4x8x4xf32>
}

// -----

func.func @attention_value_rank(%q: tensor<2x4x8x4xf32>, %k: tensor<2x4x8x4xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x4x8x4xf32> {
  // expected-error @below {{'tfm.attention' op value must have rank 4, got 'tensor<2x8x16xf32>'}}
  %0 = tfm.attention %q, %k, %v : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>, tensor<2x8x16xf32>) -> tensor<2x4x8x4xf32>
  return %0 : tensor<2x4x8x4xf32>
}

// -----

func.func @attention_key_dtype(%q: tensor<2x4x8x4xf32>, %k: tensor<2x4x8x4xf16>, %v: tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32> {
  // expected-error @below {{'tfm.attention' op query element type 'f32' differs from key element type 'f16'}}
  %0 = tfm.attention %q, %k, %v : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf16>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  return %0 : tensor<2x4x8x4xf32>
}

// -----

func.func @attention_value_dtype(%q: tensor<2x4x8x4xf32>, %k: tensor<2x4x8x4xf32>, %v: tensor<2x4x8x4xbf16>) -> tensor<2x4x8x4xf32> {
  // expected-error @below {{'tfm.attention' op query element type 'f32' differs from value element type 'bf16'}}
  %0 = tfm.attention %q, %k, %v : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>, tensor<2x4x8x4xbf16>) -> tensor<2x4x8x4xf32>
  return %0 : tensor<2x4x8x4xf32>
}

// -----

func.func @attention_batch(%q: tensor<2x4x8x4xf32>, %k: tensor<1x4x8x4xf32>, %v: tensor<1x4x8x4xf32>) -> tensor<2x4x8x4xf32> {
  // expected-error @below {{'tfm.attention' op batch sizes differ: query 'tensor<2x4x8x4xf32>', key 'tensor<1x4x8x4xf32>', value 'tensor<1x4x8x4xf32>'}}
  %0 = tfm.attention %q, %k, %v : (tensor<2x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  return %0 : tensor<2x4x8x4xf32>
}

// -----

func.func @attention_kv_heads(%q: tensor<2x4x8x4xf32>, %k: tensor<2x2x8x4xf32>, %v: tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32> {
  // expected-error @below {{'tfm.attention' op key 'tensor<2x2x8x4xf32>' and value 'tensor<2x4x8x4xf32>' must agree in heads and length}}
  %0 = tfm.attention %q, %k, %v : (tensor<2x4x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  return %0 : tensor<2x4x8x4xf32>
}

// -----

func.func @attention_kv_length(%q: tensor<2x4x8x4xf32>, %k: tensor<2x4x8x4xf32>, %v: tensor<2x4x16x4xf32>) -> tensor<2x4x8x4xf32> {
  // expected-error @below {{'tfm.attention' op key 'tensor<2x4x8x4xf32>' and value 'tensor<2x4x16x4xf32>' must agree in heads and length}}
  %0 = tfm.attention %q, %k, %v : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>, tensor<2x4x16x4xf32>) -> tensor<2x4x8x4xf32>
  return %0 : tensor<2x4x8x4xf32>
}

// -----

// GQA needs Hq % Hkv == 0: 6 query heads cannot share 4 kv heads.
func.func @attention_gqa_divisible(%q: tensor<1x6x8x4xf32>, %k: tensor<1x4x8x4xf32>, %v: tensor<1x4x8x4xf32>) -> tensor<1x6x8x4xf32> {
  // expected-error @below {{'tfm.attention' op query heads Hq=6 must be a multiple of key/value heads Hkv=4}}
  %0 = tfm.attention %q, %k, %v : (tensor<1x6x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) -> tensor<1x6x8x4xf32>
  return %0 : tensor<1x6x8x4xf32>
}

// -----

func.func @attention_zero_kv_heads(%q: tensor<1x4x8x4xf32>, %k: tensor<1x0x8x4xf32>, %v: tensor<1x0x8x4xf32>) -> tensor<1x4x8x4xf32> {
  // expected-error @below {{'tfm.attention' op query heads Hq=4 must be a multiple of key/value heads Hkv=0}}
  %0 = tfm.attention %q, %k, %v : (tensor<1x4x8x4xf32>, tensor<1x0x8x4xf32>, tensor<1x0x8x4xf32>) -> tensor<1x4x8x4xf32>
  return %0 : tensor<1x4x8x4xf32>
}

// -----

func.func @attention_head_dim(%q: tensor<1x4x8x8xf32>, %k: tensor<1x4x8x4xf32>, %v: tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32> {
  // expected-error @below {{'tfm.attention' op query head dim 8 differs from key head dim 4}}
  %0 = tfm.attention %q, %k, %v : (tensor<1x4x8x8xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32>
  return %0 : tensor<1x4x8x4xf32>
}

// -----

func.func @attention_window_not_causal(%q: tensor<1x4x8x4xf32>, %k: tensor<1x4x8x4xf32>, %v: tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32> {
  // expected-error @below {{'tfm.attention' op sliding_window requires a causal mask: the window is the last W positions up to the query}}
  %0 = tfm.attention %q, %k, %v {causal = false, sliding_window = 4 : i64} : (tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32>
  return %0 : tensor<1x4x8x4xf32>
}

// -----

func.func @attention_window_zero(%q: tensor<1x4x8x4xf32>, %k: tensor<1x4x8x4xf32>, %v: tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32> {
  // expected-error @below {{'tfm.attention' op attribute 'sliding_window' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %0 = tfm.attention %q, %k, %v {sliding_window = 0 : i64} : (tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32>
  return %0 : tensor<1x4x8x4xf32>
}

// -----

func.func @attention_query_longer(%q: tensor<1x4x16x4xf32>, %k: tensor<1x4x8x4xf32>, %v: tensor<1x4x8x4xf32>) -> tensor<1x4x16x4xf32> {
  // expected-error @below {{'tfm.attention' op query length 16 exceeds key length 8 with no offset}}
  %0 = tfm.attention %q, %k, %v : (tensor<1x4x16x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x16x4xf32>
  return %0 : tensor<1x4x16x4xf32>
}

// -----

// The result has the value's head dim dv and the query's heads (GQA does not
// shrink the output).
func.func @attention_result(%q: tensor<1x8x4x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32> {
  // expected-error @below {{'tfm.attention' op result type 'tensor<1x2x4x16xf32>' should be 'tensor<1x8x4x16xf32>'}}
  %0 = tfm.attention %q, %k, %v : (tensor<1x8x4x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
  return %0 : tensor<1x2x4x16xf32>
}

// -----

// Per-sequence offsets (ragged batches): one per sequence of the batch.
func.func @attention_offsets_batch(%q: tensor<2x4x1x4xf32>, %k: tensor<2x4x8x4xf32>, %v: tensor<2x4x8x4xf32>, %pos: tensor<3xi64>) -> tensor<2x4x1x4xf32> {
  // expected-error @below {{'tfm.attention' op offset 'tensor<3xi64>' must hold one position per sequence of the batch (B=2)}}
  %0 = tfm.attention %q, %k, %v, %pos : (tensor<2x4x1x4xf32>, tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>, tensor<3xi64>) -> tensor<2x4x1x4xf32>
  return %0 : tensor<2x4x1x4xf32>
}

// -----

func.func @attention_offsets_not_causal(%q: tensor<2x4x1x4xf32>, %k: tensor<2x4x8x4xf32>, %v: tensor<2x4x8x4xf32>, %pos: tensor<2xi64>) -> tensor<2x4x1x4xf32> {
  // expected-error @below {{'tfm.attention' op per-sequence offsets need causal attention: they mark where each sequence's keys end}}
  %0 = tfm.attention %q, %k, %v, %pos {causal = false} : (tensor<2x4x1x4xf32>, tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>, tensor<2xi64>) -> tensor<2x4x1x4xf32>
  return %0 : tensor<2x4x1x4xf32>
}

// -----

func.func @attention_offsets_float(%q: tensor<2x4x1x4xf32>, %k: tensor<2x4x8x4xf32>, %v: tensor<2x4x8x4xf32>, %pos: tensor<2xf32>) -> tensor<2x4x1x4xf32> {
  // expected-error @below {{'tfm.attention' op operand #3 must be index or [B] tensor of per-sequence positions, but got 'tensor<2xf32>'}}
  %0 = tfm.attention %q, %k, %v, %pos : (tensor<2x4x1x4xf32>, tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>, tensor<2xf32>) -> tensor<2x4x1x4xf32>
  return %0 : tensor<2x4x1x4xf32>
}

// -----

func.func @kv_cache_write_positions(%c: tensor<2x4x8x4xf32>, %u: tensor<2x4x1x4xf32>, %pos: tensor<1xi32>) -> tensor<2x4x8x4xf32> {
  // expected-error @below {{'tfm.kv_cache_write' op position 'tensor<1xi32>' must hold one position per sequence of the batch (B=2)}}
  %0 = tfm.kv_cache_write %c, %u, %pos : (tensor<2x4x8x4xf32>, tensor<2x4x1x4xf32>, tensor<1xi32>) -> tensor<2x4x8x4xf32>
  return %0 : tensor<2x4x8x4xf32>
}

// -----

func.func @kv_cache_write_positions_rank(%c: tensor<2x4x8x4xf32>, %u: tensor<2x4x1x4xf32>, %pos: tensor<2x1xi64>) -> tensor<2x4x8x4xf32> {
  // expected-error @below {{'tfm.kv_cache_write' op operand #2 must be index or [B] tensor of per-sequence positions, but got 'tensor<2x1xi64>'}}
  %0 = tfm.kv_cache_write %c, %u, %pos : (tensor<2x4x8x4xf32>, tensor<2x4x1x4xf32>, tensor<2x1xi64>) -> tensor<2x4x8x4xf32>
  return %0 : tensor<2x4x8x4xf32>
}

// -----

func.func @rope_offsets(%x: tensor<2x4x1x8xf32>, %pos: tensor<4xi64>) -> tensor<2x4x1x8xf32> {
  // expected-error @below {{'tfm.rope' op offset 'tensor<4xi64>' must hold one position per sequence of the batch (B=2)}}
  %0 = tfm.rope %x, %pos : (tensor<2x4x1x8xf32>, tensor<4xi64>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

func.func @position_embedding_offsets(%x: tensor<2x1x16xf32>, %wpe: tensor<32x16xf32>, %pos: tensor<1xi64>) -> tensor<2x1x16xf32> {
  // expected-error @below {{'tfm.position_embedding' op offset 'tensor<1xi64>' must hold one position per sequence of the batch (B=2)}}
  %0 = tfm.position_embedding %x, %wpe, %pos : (tensor<2x1x16xf32>, tensor<32x16xf32>, tensor<1xi64>) -> tensor<2x1x16xf32>
  return %0 : tensor<2x1x16xf32>
}

//===----------------------------------------------------------------------===//
// Activations (SameOperandsAndResultType)
//===----------------------------------------------------------------------===//

// -----

func.func @gelu_type(%x: tensor<2x8x64xf32>) -> tensor<2x8x64xf16> {
  // expected-error @below {{'tfm.gelu' op requires the same type for all operands and results}}
  %0 = tfm.gelu %x : (tensor<2x8x64xf32>) -> tensor<2x8x64xf16>
  return %0 : tensor<2x8x64xf16>
}

// -----

func.func @silu_type(%x: tensor<2x8x64xf32>) -> tensor<2x8x32xf32> {
  // expected-error @below {{'tfm.silu' op requires the same type for all operands and results}}
  %0 = tfm.silu %x : (tensor<2x8x64xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @swiglu_type(%g: tensor<2x8x64xf32>, %u: tensor<2x8x32xf32>) -> tensor<2x8x64xf32> {
  // expected-error @below {{'tfm.swiglu' op requires the same type for all operands and results}}
  %0 = tfm.swiglu %g, %u : (tensor<2x8x64xf32>, tensor<2x8x32xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @geglu_type(%g: tensor<2x8x64xf32>, %u: tensor<2x8x64xf16>) -> tensor<2x8x64xf32> {
  // expected-error @below {{'tfm.geglu' op requires the same type for all operands and results}}
  %0 = tfm.geglu %g, %u : (tensor<2x8x64xf32>, tensor<2x8x64xf16>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @relu_type(%x: tensor<2x8x64xf32>) -> tensor<2x8x64xbf16> {
  // expected-error @below {{'tfm.relu' op requires the same type for all operands and results}}
  %0 = tfm.relu %x : (tensor<2x8x64xf32>) -> tensor<2x8x64xbf16>
  return %0 : tensor<2x8x64xbf16>
}

//===----------------------------------------------------------------------===//
// tfm.residual_add
//===----------------------------------------------------------------------===//

// -----

func.func @residual_rank(%h: tensor<2x8x16xf32>, %b: tensor<16x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.residual_add' op residual 'tensor<2x8x16xf32>' and branch 'tensor<16x16xf32>' differ in rank}}
  %0 = tfm.residual_add %h, %b : (tensor<2x8x16xf32>, tensor<16x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @residual_dtype(%h: tensor<2x8x16xf32>, %b: tensor<2x8x16xf16>) -> tensor<2x8x16xf32> {
  // expected-error @below {{'tfm.residual_add' op residual element type 'f32' differs from branch element type 'f16'}}
  %0 = tfm.residual_add %h, %b : (tensor<2x8x16xf32>, tensor<2x8x16xf16>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// The result is the residual stream's type, not the branch's.
func.func @residual_result(%h: tensor<2x8x16xf32>, %b: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  // expected-error @below {{'tfm.residual_add' op result type 'tensor<2x8x64xf32>' should be 'tensor<2x8x16xf32>'}}
  %0 = tfm.residual_add %h, %b : (tensor<2x8x16xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

//===----------------------------------------------------------------------===//
// tfm.moe
//===----------------------------------------------------------------------===//

// -----

func.func @moe_input_rank(%x: tensor<4x16xf32>, %r: tensor<1x16xf32>, %g: tensor<32x16xf32>, %u: tensor<32x16xf32>, %d: tensor<16x32xf32>) -> tensor<4x16xf32> {
  // expected-error @below {{'tfm.moe' op input must have rank 3, got 'tensor<4x16xf32>'}}
  %0 = tfm.moe %x, %r, %g, %u, %d {top_k = 1} : (tensor<4x16xf32>, tensor<1x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @moe_router_rank(%x: tensor<1x4x16xf32>, %r: tensor<16xf32>, %g: tensor<32x16xf32>, %u: tensor<32x16xf32>, %d: tensor<16x32xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op router must have rank 2, got 'tensor<16xf32>'}}
  %0 = tfm.moe %x, %r, %g, %u, %d {top_k = 1} : (tensor<1x4x16xf32>, tensor<16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

func.func @moe_no_experts(%x: tensor<1x4x16xf32>, %r: tensor<1x16xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op expects 3 weights (gate, up, down) per expert, got 0}}
  %0 = tfm.moe %x, %r {top_k = 1} : (tensor<1x4x16xf32>, tensor<1x16xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

func.func @moe_weight_count(%x: tensor<1x4x16xf32>, %r: tensor<1x16xf32>, %g: tensor<32x16xf32>, %u: tensor<32x16xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op expects 3 weights (gate, up, down) per expert, got 2}}
  %0 = tfm.moe %x, %r, %g, %u {top_k = 1} : (tensor<1x4x16xf32>, tensor<1x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

// One expert's weights, but a router for two experts.
func.func @moe_router_experts(%x: tensor<1x4x16xf32>, %r: tensor<2x16xf32>, %g: tensor<32x16xf32>, %u: tensor<32x16xf32>, %d: tensor<16x32xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op router must be [1, 16] (experts x d), got 'tensor<2x16xf32>'}}
  %0 = tfm.moe %x, %r, %g, %u, %d {top_k = 1} : (tensor<1x4x16xf32>, tensor<2x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

func.func @moe_router_width(%x: tensor<1x4x16xf32>, %r: tensor<1x8xf32>, %g: tensor<32x16xf32>, %u: tensor<32x16xf32>, %d: tensor<16x32xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op router must be [1, 16] (experts x d), got 'tensor<1x8xf32>'}}
  %0 = tfm.moe %x, %r, %g, %u, %d {top_k = 1} : (tensor<1x4x16xf32>, tensor<1x8xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

func.func @moe_top_k_zero(%x: tensor<1x4x16xf32>, %r: tensor<1x16xf32>, %g: tensor<32x16xf32>, %u: tensor<32x16xf32>, %d: tensor<16x32xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op top_k=0 must be in [1, 1]}}
  %0 = tfm.moe %x, %r, %g, %u, %d {top_k = 0} : (tensor<1x4x16xf32>, tensor<1x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

func.func @moe_top_k_negative(%x: tensor<1x4x16xf32>, %r: tensor<1x16xf32>, %g: tensor<32x16xf32>, %u: tensor<32x16xf32>, %d: tensor<16x32xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op top_k=-1 must be in [1, 1]}}
  %0 = tfm.moe %x, %r, %g, %u, %d {top_k = -1} : (tensor<1x4x16xf32>, tensor<1x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

func.func @moe_top_k_too_large(%x: tensor<1x4x16xf32>, %r: tensor<1x16xf32>, %g: tensor<32x16xf32>, %u: tensor<32x16xf32>, %d: tensor<16x32xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op top_k=2 must be in [1, 1]}}
  %0 = tfm.moe %x, %r, %g, %u, %d {top_k = 2} : (tensor<1x4x16xf32>, tensor<1x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

func.func @moe_gate_rank(%x: tensor<1x4x16xf32>, %r: tensor<1x16xf32>, %g: tensor<f32>, %u: tensor<32x16xf32>, %d: tensor<16x32xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op expert 0 gate weight must have rank 2, got 'tensor<f32>'}}
  %0 = tfm.moe %x, %r, %g, %u, %d {top_k = 1} : (tensor<1x4x16xf32>, tensor<1x16xf32>, tensor<f32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

// Gate in in_out layout: Mixtral's experts are nn.Linear, [m, d].
func.func @moe_gate_layout(%x: tensor<1x4x16xf32>, %r: tensor<1x16xf32>, %g: tensor<16x32xf32>, %u: tensor<32x16xf32>, %d: tensor<16x32xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op expert 0 gate weight must be 'tensor<16x16xf32>', got 'tensor<16x32xf32>'}}
  %0 = tfm.moe %x, %r, %g, %u, %d {top_k = 1} : (tensor<1x4x16xf32>, tensor<1x16xf32>, tensor<16x32xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

func.func @moe_up(%x: tensor<1x4x16xf32>, %r: tensor<1x16xf32>, %g: tensor<32x16xf32>, %u: tensor<24x16xf32>, %d: tensor<16x32xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op expert 0 up weight must be 'tensor<32x16xf32>', got 'tensor<24x16xf32>'}}
  %0 = tfm.moe %x, %r, %g, %u, %d {top_k = 1} : (tensor<1x4x16xf32>, tensor<1x16xf32>, tensor<32x16xf32>, tensor<24x16xf32>, tensor<16x32xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

// Expert 1's down projection is transposed.
func.func @moe_down(%x: tensor<1x4x16xf32>, %r: tensor<2x16xf32>,
                    %g0: tensor<32x16xf32>, %u0: tensor<32x16xf32>, %d0: tensor<16x32xf32>,
                    %g1: tensor<32x16xf32>, %u1: tensor<32x16xf32>, %d1: tensor<32x16xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op expert 1 down weight must be 'tensor<16x32xf32>', got 'tensor<32x16xf32>'}}
  %0 = tfm.moe %x, %r, %g0, %u0, %d0, %g1, %u1, %d1 {top_k = 2}
      : (tensor<1x4x16xf32>, tensor<2x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>,
         tensor<32x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

func.func @moe_weight_dtype(%x: tensor<1x4x16xf32>, %r: tensor<1x16xf32>, %g: tensor<32x16xf32>, %u: tensor<32x16xf32>, %d: tensor<16x32xbf16>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.moe' op expert 0 down weight must be 'tensor<16x32xf32>', got 'tensor<16x32xbf16>'}}
  %0 = tfm.moe %x, %r, %g, %u, %d {top_k = 1} : (tensor<1x4x16xf32>, tensor<1x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xbf16>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

func.func @moe_result(%x: tensor<1x4x16xf32>, %r: tensor<1x16xf32>, %g: tensor<32x16xf32>, %u: tensor<32x16xf32>, %d: tensor<16x32xf32>) -> tensor<1x4x32xf32> {
  // expected-error @below {{'tfm.moe' op result type 'tensor<1x4x32xf32>' should be 'tensor<1x4x16xf32>'}}
  %0 = tfm.moe %x, %r, %g, %u, %d {top_k = 1} : (tensor<1x4x16xf32>, tensor<1x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x4x32xf32>
  return %0 : tensor<1x4x32xf32>
}

// -----

// expected-error @below {{'func.func' op argument #0: 'tfm.param_dtype' must be a float type (the element type of the parameter's tensor in the weight file)}}
func.func @param_dtype_not_float(%w: tensor<4xf32> {tfm.param = "w", tfm.param_dtype = i8}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// expected-error @below {{'func.func' op argument #0: 'tfm.param_dtype' applies to function arguments annotated with 'tfm.param'}}
func.func @param_dtype_not_param(%w: tensor<4xf32> {tfm.input = "w", tfm.param_dtype = bf16}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.convert
//===----------------------------------------------------------------------===//

func.func @convert_shape(%x: tensor<2x8xbf16>) -> tensor<2x4xf32> {
  // expected-error @below {{'tfm.convert' op requires the same shape for all operands and results}}
  %y = tfm.convert %x : (tensor<2x8xbf16>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @convert_integer(%x: tensor<2x8xi64>) -> tensor<2x8xf32> {
  // expected-error @below {{'tfm.convert' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2x8xi64>'}}
  %y = tfm.convert %x : (tensor<2x8xi64>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @attention_softcap_zero(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @below {{'tfm.attention' op logit_softcap must be finite and positive, got 0}}
  %0 = tfm.attention %q, %k, %k {logit_softcap = 0.0 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

func.func @lm_head_softcap_negative(%x: tensor<1x4x8xf32>, %w: tensor<16x8xf32>) -> tensor<1x4x16xf32> {
  // expected-error @below {{'tfm.lm_head' op logit_softcap must be finite and positive, got -3}}
  %0 = tfm.lm_head %x, %w {logit_softcap = -3.0 : f32} : (tensor<1x4x8xf32>, tensor<16x8xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

func.func @attention_ring_without_window(%q: tensor<1x4x1x4xf32>, %k: tensor<1x4x8x4xf32>, %pos: index) -> tensor<1x4x1x4xf32> {
  // expected-error @below {{'tfm.attention' op ring_cache needs a sliding_window and an offset: the ring holds the window's keys behind the queries' positions}}
  %0 = tfm.attention %q, %k, %k, %pos {ring_cache} : (tensor<1x4x1x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, index) -> tensor<1x4x1x4xf32>
  return %0 : tensor<1x4x1x4xf32>
}

// -----

func.func @attention_ring_without_offset(%q: tensor<1x4x1x4xf32>, %k: tensor<1x4x8x4xf32>) -> tensor<1x4x1x4xf32> {
  // expected-error @below {{'tfm.attention' op ring_cache needs a sliding_window and an offset}}
  %0 = tfm.attention %q, %k, %k {ring_cache, sliding_window = 4 : i64} : (tensor<1x4x1x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x1x4xf32>
  return %0 : tensor<1x4x1x4xf32>
}

// -----

func.func @attention_ring_too_short(%q: tensor<1x4x4x4xf32>, %k: tensor<1x4x8x4xf32>, %pos: index) -> tensor<1x4x4x4xf32> {
  // expected-error @below {{'tfm.attention' op ring_cache of 8 slots is shorter than the window 6 plus the 3 queries after the first (9): later queries' keys would overwrite keys the first still sees}}
  %0 = tfm.attention %q, %k, %k, %pos {ring_cache, sliding_window = 6 : i64} : (tensor<1x4x4x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, index) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

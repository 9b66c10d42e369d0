// The model ledger on the examples (exact numbers of GPT-2 small and a GQA
// Llama block, a tied embedding) and on small cases inline below.
//
// RUN: transformer-opt --tfm-print-ledger %tfm_src/examples/gpt2-small-block.mlir -o /dev/null \
// RUN:   | FileCheck %s --check-prefix=GPT2
// RUN: transformer-opt --tfm-print-ledger="format=json" %tfm_src/examples/gpt2-small-block.mlir -o /dev/null \
// RUN:   | /usr/bin/python3 -m json.tool | FileCheck %s --check-prefix=JSON
// RUN: transformer-opt --tfm-print-ledger %tfm_src/examples/llama-gqa-block.mlir -o /dev/null \
// RUN:   | FileCheck %s --check-prefix=GQA
// RUN: transformer-opt --tfm-print-ledger %tfm_src/examples/tiny-gpt2.mlir -o /dev/null \
// RUN:   | FileCheck %s --check-prefix=TIED
// RUN: transformer-opt --tfm-print-ledger %s -o /dev/null | FileCheck %s
// RUN: transformer-opt --pass-pipeline='builtin.module(tfm-print-ledger{format=json})' %s -o /dev/null \
// RUN:   | /usr/bin/python3 -m json.tool | FileCheck %s --check-prefix=MULTI
//
// The ledger only prints: the IR it passes on is the IR it got.
// RUN: transformer-opt %s -o %t.ref.mlir
// RUN: transformer-opt --tfm-print-ledger %s -o %t.out.mlir > /dev/null
// RUN: diff %t.ref.mlir %t.out.mlir
//
// RUN: not transformer-opt --tfm-print-ledger="format=xml" %s -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADFORMAT

// BADFORMAT: error: tfm-print-ledger: unknown format 'xml' (expected 'text' or 'json')

//===----------------------------------------------------------------------===//
// GPT-2 small, one block (examples/gpt2-small-block.mlir): d=768, m=3072, S=8.
//===----------------------------------------------------------------------===//

// GPT2-LABEL: tfm ledger for @gpt2_block (tfm.block)
// GPT2:      label op category output params FLOPs weight bytes activation bytes KV bytes/token
// GPT2-NEXT: h.0.ln_1 tfm.layer_norm norm 1x8x768 f32 1,536 0 6,144 24,576 0
// GPT2-NEXT:   param h.0.ln_1.weight: 768
// GPT2-NEXT:   param h.0.ln_1.bias: 768
// Fused QKV: 768*2304 + 2304 parameters; FLOPs 2*n*a*b = 2*8*768*2304.
// GPT2-NEXT: h.0.attn.c_attn tfm.linear attention 1x8x2304 f32 1,771,776 28,311,552 7,087,104 73,728 0
// GPT2-NEXT:   param h.0.attn.c_attn.weight: 768x2304 (in 768 -> out 2304)
// GPT2-NEXT:   param h.0.attn.c_attn.bias: 2304
// GPT2-NEXT: h.0.attn.split_qkv tfm.split attention 1x8x768 f32, 1x8x768 f32, 1x8x768 f32 0 0 0 73,728 0
// GPT2:      h.0.attn.split_heads_v tfm.split_heads attention 1x12x8x64 f32 0 0 0 24,576 0
// 12 heads * (2*8*8*64 for Q K^T + 2*8*8*64 for P V); K and V: 2*12*64 f32 per token.
// GPT2-NEXT: h.0.attn.attention tfm.attention attention 1x12x8x64 f32 0 196,608 0 24,576 6,144
// Scratch: naive 2*12*8*8*4; flash one 8x8 tile: (2*8*8 + 4*8 + 2*8*64)*4.
// GPT2-NEXT:   scratch: naive 6,144 bytes (f32 scores + probabilities, S x S_kv each), flash 4,736 bytes (64x64 tiles)
// GPT2-NEXT: h.0.attn.merge_heads tfm.merge_heads attention 1x8x768 f32 0 0 0 24,576 0
// GPT2-NEXT: h.0.attn.c_proj tfm.linear attention 1x8x768 f32 590,592 9,437,184 2,362,368 24,576 0
// GPT2-NEXT:   param h.0.attn.c_proj.weight: 768x768 (in 768 -> out 768)
// GPT2-NEXT:   param h.0.attn.c_proj.bias: 768
// GPT2-NEXT: h.0.attn.residual tfm.residual_add other 1x8x768 f32 0 0 0 24,576 0
// GPT2-NEXT: h.0.ln_2 tfm.layer_norm norm 1x8x768 f32 1,536 0 6,144 24,576 0
// GPT2:      h.0.mlp.c_fc tfm.linear mlp 1x8x3072 f32 2,362,368 37,748,736 9,449,472 98,304 0
// GPT2-NEXT:   param h.0.mlp.c_fc.weight: 768x3072 (in 768 -> out 3072)
// GPT2-NEXT:   param h.0.mlp.c_fc.bias: 3072
// GPT2-NEXT: h.0.mlp.act tfm.gelu mlp 1x8x3072 f32 0 0 0 98,304 0
// GPT2-NEXT: h.0.mlp.c_proj tfm.linear mlp 1x8x768 f32 2,360,064 37,748,736 9,440,256 24,576 0
// GPT2-NEXT:   param h.0.mlp.c_proj.weight: 3072x768 (in 3072 -> out 768)
// GPT2-NEXT:   param h.0.mlp.c_proj.bias: 768
// GPT2-NEXT: h.0.mlp.residual tfm.residual_add other 1x8x768 f32 0 0 0 24,576 0
// GPT2:      totals:
// GPT2-NEXT: category ops params FLOPs weight bytes activation bytes KV bytes/token
// GPT2-NEXT: norm 2 3,072 0 12,288 49,152 0
// GPT2-NEXT: attention 8 2,362,368 37,945,344 9,449,472 294,912 6,144
// GPT2-NEXT: mlp 3 4,722,432 75,497,472 18,889,728 221,184 0
// GPT2-NEXT: other 2 0 0 0 49,152 0
// GPT2-NEXT: function 15 7,087,872 113,442,816 28,351,488 614,400 6,144
// GPT2:      parameters: 7,087,872 (28,351,488 bytes)
// GPT2-NEXT: activation bytes: 614,400 (sum of all tfm op results)
// GPT2-NEXT: KV cache: 6,144 bytes per token per sequence
// GPT2-NOT:  note: parameter

// JSON:      "function": "gpt2_block",
// JSON-NEXT: "block": true,
// JSON-NEXT: "ops": [
// JSON:      "label": "h.0.attn.c_attn",
// JSON-NEXT: "op": "tfm.linear",
// JSON-NEXT: "category": "attention",
// JSON:      "params": 1771776,
// JSON-NEXT: "weights": [
// JSON:      "name": "h.0.attn.c_attn.weight",
// JSON-NEXT: "shape": [
// JSON-NEXT:   768,
// JSON-NEXT:   2304
// JSON-NEXT: ],
// JSON-NEXT: "params": 1769472,
// JSON-NEXT: "in": 768,
// JSON-NEXT: "out": 2304
// JSON:      "flops": 28311552,
// JSON-NEXT: "weight_bytes": 7087104,
// JSON-NEXT: "activation_bytes": 73728,
// JSON-NEXT: "kv_cache_bytes_per_token": 0
// JSON:      "label": "h.0.attn.attention",
// JSON:      "flops": 196608,
// JSON:      "kv_cache_bytes_per_token": 6144
// JSON:      "totals": {
// JSON-NEXT:   "ops": 15,
// JSON-NEXT:   "params": 7087872,
// JSON-NEXT:   "flops": 113442816,
// JSON-NEXT:   "weight_bytes": 28351488,
// JSON-NEXT:   "activation_bytes": 614400,
// JSON-NEXT:   "kv_cache_bytes_per_token": 6144,
// JSON-NEXT:   "communication_bytes": 0,
// JSON-NEXT:   "communication_bytes_per_token": 0,
// JSON-NEXT:   "categories": {
// JSON-NEXT:     "norm": {
// JSON-NEXT:       "ops": 2,
// JSON-NEXT:       "params": 3072,
// JSON:          "attention": {
// JSON-NEXT:       "ops": 8,
// JSON-NEXT:       "params": 2362368,
// JSON:          "mlp": {
// JSON-NEXT:       "ops": 3,
// JSON-NEXT:       "params": 4722432,
// JSON:      "shared_params": []

//===----------------------------------------------------------------------===//
// Llama-style GQA block (examples/llama-gqa-block.mlir): d=4096, Hq=32, Hkv=8,
// dh=128, m=11008, S=4, weights stored [out, in].
//===----------------------------------------------------------------------===//

// GQA-LABEL: tfm ledger for @llama_gqa_block (tfm.block)
// GQA:      model.layers.0.self_attn.q_proj tfm.linear attention 1x4x4096 f32 16,777,216 134,217,728
// GQA-NEXT:   param model.layers.0.self_attn.q_proj.weight: 4096x4096 (in 4096 -> out 4096)
// K and V project 4096 -> 1024 (8 heads of 128); stored as [1024, 4096].
// GQA-NEXT: model.layers.0.self_attn.k_proj tfm.linear attention 1x4x1024 f32 4,194,304 33,554,432
// GQA-NEXT:   param model.layers.0.self_attn.k_proj.weight: 1024x4096 (in 4096 -> out 1024)
// GQA-NEXT: model.layers.0.self_attn.v_proj tfm.linear attention 1x4x1024 f32 4,194,304 33,554,432
// GQA-NEXT:   param model.layers.0.self_attn.v_proj.weight: 1024x4096 (in 4096 -> out 1024)
// Attention FLOPs are counted per query head, GQA sharing K/V does not shrink
// them: per head 2*S*Skv*dh + 2*S*Skv*dv = 2*4*4*128 * 2 = 8,192, times 32
// heads = 262,144. KV cache per token: 2 (K and V) * 8 heads * 128 * 4 bytes.
// GQA:      model.layers.0.self_attn.attention tfm.attention attention 1x32x4x128 f32 0 262,144 0 65,536 8,192
// GQA:      model.layers.0.self_attn.o_proj tfm.linear attention 1x4x4096 f32 16,777,216
// GQA-NEXT:   param model.layers.0.self_attn.o_proj.weight: 4096x4096 (in 4096 -> out 4096)
// GQA:      model.layers.0.mlp.gate_proj tfm.linear mlp 1x4x11008 f32 45,088,768 360,710,144
// GQA-NEXT:   param model.layers.0.mlp.gate_proj.weight: 11008x4096 (in 4096 -> out 11008)
// GQA:      model.layers.0.mlp.down_proj tfm.linear mlp 1x4x4096 f32 45,088,768 360,710,144
// GQA-NEXT:   param model.layers.0.mlp.down_proj.weight: 4096x11008 (in 11008 -> out 4096)
// GQA:      totals:
// GQA-NEXT: category ops params FLOPs weight bytes activation bytes KV bytes/token
// RMSNorm: d each.
// GQA-NEXT: norm 2 8,192 0
// 2*4096*4096 + 2*4096*1024 parameters.
// GQA-NEXT: attention 11 41,943,040 335,806,464
// SwiGLU: 3*d*m = 3*4096*11008.
// GQA-NEXT: mlp 4 135,266,304 1,082,130,432
// GQA-NEXT: other 2 0 0
// GQA-NEXT: function 19 177,217,536 1,417,936,896 708,870,144 1,331,200 8,192
// GQA:      KV cache: 8,192 bytes per token per sequence

//===----------------------------------------------------------------------===//
// Tiny GPT-2 with lm_head tied to wte (examples/tiny-gpt2.mlir): V=256, P=64,
// d=64, two layers, m=256.
//===----------------------------------------------------------------------===//

// TIED-LABEL: tfm ledger for @forward
// TIED-EMPTY:
// TIED-NEXT: label op category
// TIED-NEXT: wte tfm.embedding embedding 1x8x64 f32 16,384 0 65,536 2,048 0
// TIED-NEXT:   param wte.weight: 256x64
// TIED-NEXT: wpe tfm.position_embedding embedding 1x8x64 f32 4,096 0 16,384 2,048 0
// TIED-NEXT:   param wpe.weight: 64x64
// TIED:      h.1.mlp.residual tfm.residual_add other
// TIED-NEXT: ln_f tfm.layer_norm norm 1x8x64 f32 128
// The row shows the weight it reads; the totals book it under embedding only.
// TIED:      lm_head tfm.lm_head lm_head 1x8x256 f32 16,384 262,144 65,536 8,192 0
// TIED-NEXT:   param wte.weight: 256x64 (in 64 -> out 256)
// TIED:      embedding 2 20,480 0 81,920
// TIED:      lm_head 1 0 262,144 0 8,192
// 16,384 + 4,096 + 2 * 49,984 + 128: HF's GPT2LMHeadModel parameter count.
// TIED:      function 34 120,576 1,867,776 482,304 116,736 1,024
// TIED:      parameters: 120,576 (482,304 bytes)
// At most 18,432 bytes of results are alive at once (the logits are the
// caller's); the CPU pipeline's workspace plan for this model is within it
// (test/Pipelines/plan-workspace.mlir).
// TIED-NEXT: activation bytes: 116,736 (sum of all tfm op results); peak live 18,432 (results alive at once, returned ones excluded)
// TIED:      note: parameter wte.weight (16,384 params) is shared (tied) by 'wte' and 'lm_head'; counted once in the totals, under embedding

//===----------------------------------------------------------------------===//
// Inline cases.
//===----------------------------------------------------------------------===//

// A function without tfm ops gets no table.
// CHECK-NOT: @no_tfm_ops
func.func @no_tfm_ops(%a: i32) -> i32 {
  return %a : i32
}

// Labels: a name location, a name inside a fused location, else the op name.
// Non-tfm ops are skipped, and operands that are not tfm.param arguments are
// not parameters. A linear outside any residual sublayer is "other".
// CHECK-LABEL: tfm ledger for @labels_and_foreign_ops
// CHECK-NOT:   tfm.block
// CHECK:       label op category output params FLOPs weight bytes activation bytes KV bytes/token
// CHECK-NEXT:  norm tfm.layer_norm norm 1x2x4 f32 4 0 16 32 0
// CHECK-NEXT:    param ln.bias: 4
// CHECK-NEXT:  fused.proj tfm.linear other 1x2x8 bf16 32 128 64 32 0
// CHECK-NEXT:    param proj.weight: 4x8 (in 4 -> out 8)
// CHECK-NEXT:  tfm.gelu tfm.gelu other 1x2x8 bf16 0 0 0 32 0
// CHECK-EMPTY:
// CHECK-NEXT:  totals:
// CHECK-NEXT:  category ops params
// CHECK-NEXT:  norm 1 4 0 16 32 0
// CHECK-NEXT:  other 2 32 128 64 64 0
// CHECK-NEXT:  function 3 36 128 80 96 0
func.func @labels_and_foreign_ops(
    %x: tensor<1x2x4xf32> {tfm.input = "hidden"},
    %b: tensor<4xf32> {tfm.param = "ln.bias"},
    %w: tensor<4x8xbf16> {tfm.param = "proj.weight"})
    -> (tensor<1x2x8xbf16> {tfm.output = "out"}) {
  %scale = arith.constant dense<1.0> : tensor<4xf32>
  %n = tfm.layer_norm %x, %scale, %b
      : (tensor<1x2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x2x4xf32> loc("norm")
  %nb = arith.truncf %n : tensor<1x2x4xf32> to tensor<1x2x4xbf16>
  %y = tfm.linear %nb, %w
      : (tensor<1x2x4xbf16>, tensor<4x8xbf16>) -> tensor<1x2x8xbf16> loc(fused["fused.proj", "model.py":3:4])
  %g = tfm.gelu %y : (tensor<1x2x8xbf16>) -> tensor<1x2x8xbf16>
  return %g : tensor<1x2x8xbf16>
}

// A sublayer holding tfm.moe is "moe"; its norm stays "norm". Router 2x8,
// two experts of 3 * 16x8 weights: 16 + 768 parameters. FLOPs for n=2
// tokens: router 2*n*d*E = 64, one expert per token 6*n*d*m = 1,536.
// CHECK-LABEL: tfm ledger for @moe_sublayer (tfm.block)
// CHECK:       tfm.rms_norm tfm.rms_norm norm 1x2x8 f32 8 0 32 64 0
// CHECK:       moe tfm.moe moe 1x2x8 f32 784 1,600 3,136 64 0
// CHECK-NEXT:    param moe.gate.weight: 2x8
// CHECK-NEXT:    param moe.experts.0.w1.weight: 16x8
// CHECK:       tfm.residual_add tfm.residual_add other
// CHECK:       moe 1 784 1,600 3,136 64 0
// CHECK-NEXT:  other 1 0 0 0 64 0
// CHECK-NEXT:  function 3 792 1,600 3,168 192 0
func.func @moe_sublayer(
    %x: tensor<1x2x8xf32> {tfm.input = "hidden"},
    %norm: tensor<8xf32> {tfm.param = "post_attention_layernorm.weight"},
    %router: tensor<2x8xf32> {tfm.param = "moe.gate.weight"},
    %g0: tensor<16x8xf32> {tfm.param = "moe.experts.0.w1.weight"},
    %u0: tensor<16x8xf32> {tfm.param = "moe.experts.0.w3.weight"},
    %d0: tensor<8x16xf32> {tfm.param = "moe.experts.0.w2.weight"},
    %g1: tensor<16x8xf32> {tfm.param = "moe.experts.1.w1.weight"},
    %u1: tensor<16x8xf32> {tfm.param = "moe.experts.1.w3.weight"},
    %d1: tensor<8x16xf32> {tfm.param = "moe.experts.1.w2.weight"})
    -> (tensor<1x2x8xf32> {tfm.output = "hidden"}) attributes {tfm.block} {
  %n = tfm.rms_norm %x, %norm : (tensor<1x2x8xf32>, tensor<8xf32>) -> tensor<1x2x8xf32>
  %m = tfm.moe %n, %router, %g0, %u0, %d0, %g1, %u1, %d1 {top_k = 1 : i64}
      : (tensor<1x2x8xf32>, tensor<2x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>,
         tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<1x2x8xf32> loc("moe")
  %y = tfm.residual_add %x, %m : (tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  return %y : tensor<1x2x8xf32>
}

// The JSON output is one array with an object per function holding tfm ops.
// MULTI:      [
// MULTI-NEXT:   {
// MULTI-NEXT:     "function": "labels_and_foreign_ops",
// MULTI-NEXT:     "block": false,
// MULTI:          "label": "fused.proj",
// MULTI:          "element_type": "bf16"
// MULTI:          "weight_bytes": 64,
// MULTI:          "function": "moe_sublayer",
// MULTI-NEXT:     "block": true,
// MULTI:          "totals": {
// MULTI-NEXT:       "ops": 3,
// MULTI-NEXT:       "params": 792,
// MULTI-NEXT:       "flops": 1600,
// MULTI:          "function": "same_param_twice",
// MULTI:          "shared_params": []
// MULTI-NEXT:   }
// MULTI-NEXT: ]

// One op reading the same parameter twice: the row lists both operands, the
// totals count the tensor once, and nothing is reported as shared.
// CHECK-LABEL: tfm ledger for @same_param_twice
// CHECK:       tfm.layer_norm tfm.layer_norm norm 2x4 f32 8 0 32 32 0
// CHECK:       function 1 4 0 16 32 0
// CHECK-NOT:   note: parameter
func.func @same_param_twice(%x: tensor<2x4xf32> {tfm.input = "hidden"},
                            %p: tensor<4xf32> {tfm.param = "ln.weight"})
    -> (tensor<2x4xf32> {tfm.output = "hidden"}) {
  %n = tfm.layer_norm %x, %p, %p : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %n : tensor<2x4xf32>
}

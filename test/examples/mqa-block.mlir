// The MQA block example parses, verifies, round-trips through the
// custom and the generic assembly, passes the cross-op contracts, and
// keeps its Hugging Face parameter names and interface annotations.
//
// RUN: transformer-opt %tfm_src/examples/mqa-block.mlir -o %t.mlir
// RUN: transformer-opt %t.mlir -o %t.again.mlir
// RUN: diff %t.mlir %t.again.mlir
// RUN: transformer-opt --mlir-print-op-generic %t.mlir | transformer-opt -o %t.generic.mlir
// RUN: diff %t.mlir %t.generic.mlir
// RUN: transformer-opt --tfm-verify-contracts %tfm_src/examples/mqa-block.mlir | FileCheck %s
// RUN: transformer-opt --tfm-print-ledger %tfm_src/examples/mqa-block.mlir -o /dev/null | FileCheck %s --check-prefix=LEDGER

// CHECK-LABEL: func.func @mqa_block(
// CHECK-SAME:    {tfm.input = "hidden"}
// CHECK-SAME:    {tfm.param = "model.layers.0.input_layernorm.weight"}
// CHECK-SAME:    {tfm.param = "model.layers.0.self_attn.q_proj.weight"}
// CHECK-SAME:    {tfm.param = "model.layers.0.self_attn.k_proj.weight"}
// CHECK-SAME:    {tfm.param = "model.layers.0.self_attn.v_proj.weight"}
// CHECK-SAME:    {tfm.param = "model.layers.0.self_attn.o_proj.weight"}
// CHECK-SAME:    {tfm.param = "model.layers.0.post_attention_layernorm.weight"}
// CHECK-SAME:    {tfm.param = "model.layers.0.mlp.gate_proj.weight"}
// CHECK-SAME:    {tfm.param = "model.layers.0.mlp.up_proj.weight"}
// CHECK-SAME:    {tfm.param = "model.layers.0.mlp.down_proj.weight"}
// CHECK-SAME:    -> (tensor<{{.*}}> {tfm.output = "hidden"})
// CHECK-SAME:    attributes {tfm.block}
// CHECK-NOT:     func.func

// LEDGER-LABEL: tfm ledger for @mqa_block
// d_q = 8 * 64 = 512 != d: q_proj widens, o_proj narrows back to d.
// LEDGER:       param model.layers.0.self_attn.q_proj.weight: 512x256 (in 256 -> out 512)
// LEDGER:       param model.layers.0.self_attn.k_proj.weight: 64x256 (in 256 -> out 64)
// LEDGER:       param model.layers.0.self_attn.v_proj.weight: 64x256 (in 256 -> out 64)
// 8 query heads * 2 * (2*4*4*64) FLOPs; one K/V head: 2*64*4 bytes per token.
// LEDGER:       model.layers.0.self_attn.attention tfm.attention attention 1x8x4x64 f32 0 32,768 0 8,192 512
// LEDGER:       param model.layers.0.self_attn.o_proj.weight: 256x512 (in 512 -> out 256)
// LEDGER:       KV cache: 512 bytes per token per sequence

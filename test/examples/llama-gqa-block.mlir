// The Llama GQA block example parses, verifies, round-trips through the
// custom and the generic assembly, passes the cross-op contracts, and
// keeps its Hugging Face parameter names and interface annotations.
//
// RUN: transformer-opt %tfm_src/examples/llama-gqa-block.mlir -o %t.mlir
// RUN: transformer-opt %t.mlir -o %t.again.mlir
// RUN: diff %t.mlir %t.again.mlir
// RUN: transformer-opt --mlir-print-op-generic %t.mlir | transformer-opt -o %t.generic.mlir
// RUN: diff %t.mlir %t.generic.mlir
// RUN: transformer-opt --tfm-verify-contracts %tfm_src/examples/llama-gqa-block.mlir | FileCheck %s
// RUN: transformer-opt --tfm-print-ledger %tfm_src/examples/llama-gqa-block.mlir -o /dev/null | FileCheck %s --check-prefix=LEDGER

// CHECK-LABEL: func.func @llama_gqa_block(
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

// LEDGER-LABEL: tfm ledger for @llama_gqa_block
// LEDGER:       param model.layers.0.self_attn.k_proj.weight: 1024x4096 (in 4096 -> out 1024)
// LEDGER:       function 19 177,217,536 1,417,936,896
// LEDGER:       KV cache: 8,192 bytes per token per sequence

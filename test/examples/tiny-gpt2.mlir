// The two-layer tiny GPT-2 example parses, verifies, round-trips through the
// custom and the generic assembly, passes the cross-op contracts, and
// keeps its Hugging Face parameter names and interface annotations.
//
// RUN: transformer-opt %tfm_src/examples/tiny-gpt2.mlir -o %t.mlir
// RUN: transformer-opt %t.mlir -o %t.again.mlir
// RUN: diff %t.mlir %t.again.mlir
// RUN: transformer-opt --mlir-print-op-generic %t.mlir | transformer-opt -o %t.generic.mlir
// RUN: diff %t.mlir %t.generic.mlir
// RUN: transformer-opt --tfm-verify-contracts %tfm_src/examples/tiny-gpt2.mlir | FileCheck %s
// RUN: transformer-opt --tfm-print-ledger %tfm_src/examples/tiny-gpt2.mlir -o /dev/null | FileCheck %s --check-prefix=LEDGER

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    {tfm.input = "input_ids"}
// CHECK-SAME:    {tfm.param = "wte.weight"}
// CHECK-SAME:    {tfm.param = "wpe.weight"}
// CHECK-SAME:    {tfm.param = "h.0.ln_1.weight"}
// CHECK-SAME:    {tfm.param = "h.0.ln_1.bias"}
// CHECK-SAME:    {tfm.param = "h.0.attn.c_attn.weight"}
// CHECK-SAME:    {tfm.param = "h.0.attn.c_attn.bias"}
// CHECK-SAME:    {tfm.param = "h.0.attn.c_proj.weight"}
// CHECK-SAME:    {tfm.param = "h.0.attn.c_proj.bias"}
// CHECK-SAME:    {tfm.param = "h.0.ln_2.weight"}
// CHECK-SAME:    {tfm.param = "h.0.ln_2.bias"}
// CHECK-SAME:    {tfm.param = "h.0.mlp.c_fc.weight"}
// CHECK-SAME:    {tfm.param = "h.0.mlp.c_fc.bias"}
// CHECK-SAME:    {tfm.param = "h.0.mlp.c_proj.weight"}
// CHECK-SAME:    {tfm.param = "h.0.mlp.c_proj.bias"}
// CHECK-SAME:    {tfm.param = "h.1.ln_1.weight"}
// CHECK-SAME:    {tfm.param = "h.1.ln_1.bias"}
// CHECK-SAME:    {tfm.param = "h.1.attn.c_attn.weight"}
// CHECK-SAME:    {tfm.param = "h.1.attn.c_attn.bias"}
// CHECK-SAME:    {tfm.param = "h.1.attn.c_proj.weight"}
// CHECK-SAME:    {tfm.param = "h.1.attn.c_proj.bias"}
// CHECK-SAME:    {tfm.param = "h.1.ln_2.weight"}
// CHECK-SAME:    {tfm.param = "h.1.ln_2.bias"}
// CHECK-SAME:    {tfm.param = "h.1.mlp.c_fc.weight"}
// CHECK-SAME:    {tfm.param = "h.1.mlp.c_fc.bias"}
// CHECK-SAME:    {tfm.param = "h.1.mlp.c_proj.weight"}
// CHECK-SAME:    {tfm.param = "h.1.mlp.c_proj.bias"}
// CHECK-SAME:    {tfm.param = "ln_f.weight"}
// CHECK-SAME:    {tfm.param = "ln_f.bias"}
// CHECK-SAME:    -> (tensor<{{.*}}> {tfm.output = "logits"})
// CHECK-NOT:     func.func

// LEDGER-LABEL: tfm ledger for @forward
// LEDGER:       lm_head tfm.lm_head lm_head 1x8x256 f32
// LEDGER-NEXT:    param wte.weight: 256x64 (in 64 -> out 256)
// LEDGER:       function 34 120,576
// LEDGER:       note: parameter wte.weight {{.*}} shared (tied) by 'wte' and 'lm_head'

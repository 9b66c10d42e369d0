// The GPT-2 small block example parses, verifies, round-trips through the
// custom and the generic assembly, passes the cross-op contracts, and
// keeps its Hugging Face parameter names and interface annotations.
//
// RUN: transformer-opt %tfm_src/examples/gpt2-small-block.mlir -o %t.mlir
// RUN: transformer-opt %t.mlir -o %t.again.mlir
// RUN: diff %t.mlir %t.again.mlir
// RUN: transformer-opt --mlir-print-op-generic %t.mlir | transformer-opt -o %t.generic.mlir
// RUN: diff %t.mlir %t.generic.mlir
// RUN: transformer-opt --tfm-verify-contracts %tfm_src/examples/gpt2-small-block.mlir | FileCheck %s
// RUN: transformer-opt --tfm-print-ledger %tfm_src/examples/gpt2-small-block.mlir -o /dev/null | FileCheck %s --check-prefix=LEDGER

// CHECK-LABEL: func.func @gpt2_block(
// CHECK-SAME:    {tfm.input = "hidden"}
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
// CHECK-SAME:    -> (tensor<{{.*}}> {tfm.output = "hidden"})
// CHECK-SAME:    attributes {tfm.block}
// CHECK-NOT:     func.func

// LEDGER-LABEL: tfm ledger for @gpt2_block
// LEDGER:       function 15 7,087,872 113,442,816

// The ledger of the Llama GQA example before and after --tfm-fuse-qkv: the
// same parameters (177,217,536, attention 41,943,040) and FLOPs, and one
// projection GEMM of 4096 -> 4096 + 2*1024 where there were three.
// RUN: transformer-opt %tfm_src/examples/llama-gqa-block.mlir --tfm-print-ledger -o /dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: transformer-opt %tfm_src/examples/llama-gqa-block.mlir --tfm-fuse-qkv --tfm-print-ledger -o /dev/null | FileCheck %s --check-prefix=AFTER

// BEFORE-COUNT-3: model.layers.0.self_attn.{{[qkv]}}_proj tfm.linear
// BEFORE: model.layers.0.self_attn.o_proj tfm.linear
// BEFORE: attention {{ *}}11 {{ *}}41,943,040 {{ *}}335,806,464
// BEFORE: function {{ *}}19 {{ *}}177,217,536 {{ *}}1,417,936,896

// AFTER-NOT: self_attn.q_proj tfm.linear
// AFTER: model.layers.0.self_attn.{q_proj,k_proj,v_proj} tfm.linear attention 1x4x6144 f32 25,165,824
// AFTER-NEXT: param concat(model.layers.0.self_attn.q_proj.weight, model.layers.0.self_attn.k_proj.weight, model.layers.0.self_attn.v_proj.weight): 6144x4096 (in 4096 -> out 6144)
// AFTER-NEXT: tfm.split
// AFTER-NOT: self_attn.{{[kv]}}_proj tfm.linear
// AFTER: model.layers.0.self_attn.o_proj tfm.linear
// AFTER: attention {{ *}}10 {{ *}}41,943,040 {{ *}}335,806,464
// AFTER: function {{ *}}18 {{ *}}177,217,536 {{ *}}1,417,936,896

//===- TfmDialect.td - the tfm dialect ---------------------*- tablegen -*-===//
#ifndef TFM_DIALECT_TD
#define TFM_DIALECT_TD

include "mlir/IR/OpBase.td"

def Tfm_Dialect : Dialect {
  let name = "tfm";
  let summary = "Decoder-only transformer building blocks on shape-typed tensors.";
  let description = [{
    The `tfm` dialect describes decoder-only transformer models (GPT-2, Llama,
    Mixtral style) at the granularity at which people reason about them:
    embeddings, norms, linear projections, head split/merge, RoPE, causal
    attention (MHA, GQA, MQA), activations, residual adds, mixture of experts
    and the LM head. All values are statically shaped tensors of f32, f16 or
    bf16 (token ids are i32/i64), so every op knows its parameter count, FLOPs
    and memory traffic: the model ledger is computed from the ops alone.

    Parameters are function arguments annotated with `tfm.param = "name"`,
    the name of the tensor in a Hugging Face `.safetensors` file; the runner
    binds them by that name.

    Shape conventions: hidden states are `[B, S, d]`, per-head tensors are
    `[B, H, S, d_h]`, keys and values `[B, H_kv, S_kv, d_h]`.
  }];
  let cppNamespace = "::mlir::tfm";
  let useDefaultAttributePrinterParser = 1;
  // `tfm.param_dtype` on function arguments (verifyRegionArgAttribute).
  let hasRegionArgAttrVerify = 1;
  // `tfm.cpu_tiling` on operations (verifyOperationAttribute).
  let hasOperationAttrVerify = 1;
}

class Tfm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tfm_Dialect, mnemonic, traits>;

#endif // TFM_DIALECT_TD

//===- Passes.td - tfm transformation passes ---------------*- tablegen -*-===//
#ifndef TFM_TRANSFORMS_PASSES_TD
#define TFM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmVerifyContracts : Pass<"tfm-verify-contracts", "ModuleOp"> {
  let summary = "Checks the cross-op shape contracts of decoder blocks";
  let description = [{
    Enforces the rules that no single op can see:

    - both sides of every `tfm.residual_add` have identical shape and dtype;
      the diagnostic names the sublayer whose output broke it (attention,
      MLP, MoE) with a note at the value's producer;
    - every attention and MLP sublayer returns to the residual stream's
      `[B, S, d]`;
    - a function marked `tfm.block` returns the type of its first argument
      (a block maps `[B, S, d]` to `[B, S, d]`).

    Every pipeline runs this pass first.
  }];
}

def TfmPrintLedger : Pass<"tfm-print-ledger", "ModuleOp"> {
  let summary = "Prints the model ledger: parameters, FLOPs, memory per op";
  let description = [{
    For every function, one row per tfm op with its output shape, trainable
    parameters (operands that are `tfm.param` arguments), FLOPs (`2nab` per
    `[n,a]x[a,b]` matmul; attention per query head), weight bytes,
    activation bytes and KV-cache bytes per token; then totals per
    category (embedding, norm, attention, mlp, moe, lm_head) and for the
    function. A parameter used by two ops (tied embeddings) is counted once
    in the totals. Output goes to stdout; the IR is left unchanged.
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "Output format: text or json">,
  ];
}

#endif // TFM_TRANSFORMS_PASSES_TD

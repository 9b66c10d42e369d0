//===- TfmAttrs.td - tfm enums and attributes --------------*- tablegen -*-===//
#ifndef TFM_ATTRS_TD
#define TFM_ATTRS_TD

include "tfm/Dialect/Tfm/IR/TfmDialect.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/AttrTypeBase.td"

def Tfm_WeightLayout : I32EnumAttr<"WeightLayout",
    "memory layout of a projection weight", [
      I32EnumAttrCase<"in_out", 0>,
      I32EnumAttrCase<"out_in", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tfm";
  let description = [{
    `in_out` stores the weight as `[in, out]` (GPT-2's `Conv1D`): `y = x W`.
    `out_in` stores it as `[out, in]` (PyTorch `nn.Linear`, Llama, Mixtral):
    `y = x W^T`. The layout is an attribute so that published weights bind
    without a transposing copy.
  }];
}

def Tfm_WeightLayoutAttr : EnumAttr<Tfm_Dialect, Tfm_WeightLayout, "layout"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tfm_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "approximation used by GELU", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"tanh", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tfm";
}

def Tfm_GeluApproximationAttr
    : EnumAttr<Tfm_Dialect, Tfm_GeluApproximation, "gelu"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // TFM_ATTRS_TD

//===- TfmInterfaces.td - tfm op interfaces ----------------*- tablegen -*-===//
#ifndef TFM_INTERFACES_TD
#define TFM_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Tfm_LedgerOpInterface : OpInterface<"LedgerOpInterface"> {
  let cppNamespace = "::mlir::tfm";
  let description = [{
    What an op contributes to the model ledger beyond what its types say:
    its floating-point operations and the KV-cache it implies. Parameter
    and activation bytes are derived from operand and result types by the
    ledger pass itself.
  }];
  let methods = [
    InterfaceMethod<[{
        Floating-point operations of one forward evaluation. A matmul of
        `[n,a] x [a,b]` counts `2*n*a*b`; elementwise work is not counted, so
        the total matches the usual `2 * params * tokens` rule.
      }], "int64_t", "getFlopCount", (ins)>,
    InterfaceMethod<[{
        Bytes of KV cache one additional token position needs for this op
        (per sequence in the batch). Zero for everything but attention.
      }], "int64_t", "getKVCacheBytesPerToken", (ins), [{}], [{ return 0; }]>,
    InterfaceMethod<[{
        Bytes each rank sends to the others for one evaluation of this op
        (collectives of a tensor-parallel model); zero for everything else.
      }], "int64_t", "getCommunicationBytes", (ins), [{}], [{ return 0; }]>,
  ];
}

#endif // TFM_INTERFACES_TD

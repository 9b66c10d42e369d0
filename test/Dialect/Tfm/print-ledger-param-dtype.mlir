// A parameter computed in f32 but stored in the weight file as bf16 or f16
// (tfm.param_dtype, set by the importer from the checkpoint) is booked at the
// stored size: 2 bytes per element here, 4 for the plain f32 bias.
// RUN: transformer-opt --tfm-print-ledger="format=json" %s -o /dev/null \
// RUN:   | /usr/bin/python3 -m json.tool | FileCheck %s
// The attribute survives a round trip.
// RUN: transformer-opt %s | FileCheck %s --check-prefix=ROUNDTRIP

// ROUNDTRIP: tensor<16x48xf32> {tfm.param = "w", tfm.param_dtype = bf16}
// ROUNDTRIP-SAME: tensor<48x16xf32> {tfm.param = "w2", tfm.param_dtype = f16}
func.func @stored_bf16(%x: tensor<2x8x16xf32>,
                       %w: tensor<16x48xf32> {tfm.param = "w", tfm.param_dtype = bf16},
                       %b: tensor<48xf32> {tfm.param = "b"},
                       %w2: tensor<48x16xf32> {tfm.param = "w2", tfm.param_dtype = f16})
    -> tensor<2x8x16xf32> {
  %0 = tfm.linear %x, %w, %b : (tensor<2x8x16xf32>, tensor<16x48xf32>, tensor<48xf32>) -> tensor<2x8x48xf32>
  %1 = tfm.linear %0, %w2 : (tensor<2x8x48xf32>, tensor<48x16xf32>) -> tensor<2x8x16xf32>
  return %1 : tensor<2x8x16xf32>
}
// CHECK:      "params": 816,
// CHECK:      "weight_bytes": 1728,
// CHECK:      "params": 768,
// CHECK:      "weight_bytes": 1536,
// CHECK:      "totals": {
// CHECK-NEXT:   "ops": 2,
// CHECK-NEXT:   "params": 1584,
// CHECK-NEXT:   "flops":
// CHECK-NEXT:   "weight_bytes": 3264,

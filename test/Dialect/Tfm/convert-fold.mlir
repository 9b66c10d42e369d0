// RUN: transformer-opt %s --canonicalize | FileCheck %s

// A conversion to the input's own type folds away; the others stay.
// CHECK-LABEL: func.func @convert_fold
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8xbf16>)
// CHECK-NEXT: %[[W:.+]] = tfm.convert %[[X]] : (tensor<2x8xbf16>) -> tensor<2x8xf32>
// CHECK-NEXT: return %[[X]], %[[W]]
func.func @convert_fold(%x: tensor<2x8xbf16>) -> (tensor<2x8xbf16>, tensor<2x8xf32>) {
  %same = tfm.convert %x : (tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %wide = tfm.convert %x : (tensor<2x8xbf16>) -> tensor<2x8xf32>
  return %same, %wide : tensor<2x8xbf16>, tensor<2x8xf32>
}

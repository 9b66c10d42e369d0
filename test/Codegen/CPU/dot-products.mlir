// RUN: transformer-opt %s --tfm-to-linalg --canonicalize --tfm-cpu-configure=cpu=znver3 --tfm-tile-and-vectorize-contractions --canonicalize --split-input-file | FileCheck %s

// One row against an out_in weight [N, K]: no transposing copy of the weight;
// N in tiles of 3 (the largest divisor of 6 up to dot-cols = 4), K = 100 as
// partial sums of vector<32> over 96 (a loop carrying the accumulator in
// registers), then vector<4> for the last 4, each output reduced once.
// CHECK-LABEL: func.func @decode
// CHECK-NOT: linalg.transpose
// Far too little work for threads: a sequential loop over N.
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %c3
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c96 step %c32 iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<1x3x32xf32>)
// CHECK: vector.transfer_read %{{.*}}[%c0, %[[K]]]{{.*}} vector<1x32xf32>
// CHECK: vector.transfer_read %{{.*}}[%[[N]], %[[K]]]{{.*}} vector<3x32xf32>
// CHECK: arith.mulf
// CHECK: arith.addf %[[ACC]]
// CHECK: vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<32xf32> into f32
// CHECK: vector.transfer_read %{{.*}}[%[[N]], %c96]{{.*}} vector<3x4xf32>
// CHECK: vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<4xf32> into f32
// CHECK-NOT: linalg.generic
func.func @decode(%x: tensor<1x1x100xf32>, %w: tensor<6x100xf32>) -> tensor<1x1x6xf32> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x1x100xf32>, tensor<6x100xf32>) -> tensor<1x1x6xf32>
  return %y : tensor<1x1x6xf32>
}

// -----

// K = 3 is too shallow for a vector: the contraction stays a scalar generic.
// CHECK-LABEL: func.func @shallow
// CHECK-NOT: vector.
// CHECK: linalg.matmul
func.func @shallow(%x: tensor<1x1x3xf32>, %w: tensor<6x3xf32>) -> tensor<1x1x6xf32> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x1x3xf32>, tensor<6x3xf32>) -> tensor<1x1x6xf32>
  return %y : tensor<1x1x6xf32>
}

// -----

// 16 rows and more take the transposing register-tile path instead.
// CHECK-LABEL: func.func @prefill
// CHECK: linalg.transpose
// CHECK-NOT: vector.reduction
func.func @prefill(%x: tensor<1x16x100xf32>, %w: tensor<6x100xf32>) -> tensor<1x16x6xf32> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x16x100xf32>, tensor<6x100xf32>) -> tensor<1x16x6xf32>
  return %y : tensor<1x16x6xf32>
}

// -----

// A bf16 model's decode step: the same partial sums, each bf16 load extended
// to f32 in registers (the accumulator and the reduction stay f32).
// CHECK-LABEL: func.func @decode_bf16
// CHECK-NOT: linalg.transpose
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<1x3x32xf32>)
// CHECK: %[[X:.*]] = vector.transfer_read {{.*}} vector<1x32xbf16>
// CHECK: %[[W:.*]] = vector.transfer_read {{.*}} vector<3x32xbf16>
// CHECK-DAG: arith.extf %[[X]] {{.*}} to vector<1x32xf32>
// CHECK-DAG: arith.extf %[[W]] {{.*}} to vector<3x32xf32>
// CHECK: arith.mulf
// CHECK: arith.addf %[[ACC]]
// CHECK: vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<32xf32> into f32
func.func @decode_bf16(%x: tensor<1x1x96xbf16>, %w: tensor<6x96xbf16>) -> tensor<1x1x6xbf16> {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x1x96xbf16>, tensor<6x96xbf16>) -> tensor<1x1x6xbf16>
  return %y : tensor<1x1x6xbf16>
}

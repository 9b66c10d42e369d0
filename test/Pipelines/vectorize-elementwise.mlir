// RUN: transformer-opt %s --tfm-to-linalg --canonicalize --tfm-cpu-configure=cpu=znver3 --tfm-vectorize-elementwise --canonicalize | FileCheck %s
// RUN: transformer-opt %s --tfm-to-linalg --canonicalize --tfm-cpu-configure=cpu=skylake-avx512 --tfm-vectorize-elementwise --canonicalize | FileCheck %s --check-prefix=AVX512

// GELU over rows of 37: two AVX2 registers (16 lanes) at a time over the
// first 32, the last 5 as one vector<5>; tanh stays math.tanh here (the
// polynomial replaces it later, in tfm-approximate-math).
// CHECK-LABEL: func.func @gelu
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c16
// CHECK: math.tanh %{{.*}} : vector<1x1x16xf32>
// CHECK: math.tanh %{{.*}} : vector<1x1x5xf32>
// CHECK-NOT: linalg.generic
// AVX512-LABEL: func.func @gelu
// AVX512: math.tanh %{{.*}} : vector<1x1x32xf32>
// AVX512: math.tanh %{{.*}} : vector<1x1x5xf32>
func.func @gelu(%x: tensor<1x5x37xf32>) -> tensor<1x5x37xf32> {
  %y = tfm.gelu %x {approximate = #tfm.gelu<tanh>} : (tensor<1x5x37xf32>) -> tensor<1x5x37xf32>
  return %y : tensor<1x5x37xf32>
}

// RMSNorm over rows of 100: the sum of squares as partial sums 16 wide over
// 96, 4 wide over the rest, each reduced once; the scaling elementwise.
// CHECK-LABEL: func.func @rms
// CHECK: scf.for %{{.*}} = %c0 to %c96 step %c16 iter_args(%{{.*}}) -> (tensor<1x1x16xf32>)
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [2] : vector<1x1x16xf32> to vector<1x1xf32>
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [2] : vector<1x1x4xf32> to vector<1x1xf32>
// CHECK: math.rsqrt %{{.*}} : vector<1x1x16xf32>
// CHECK: math.rsqrt %{{.*}} : vector<1x1x4xf32>
// CHECK-NOT: linalg.generic
func.func @rms(%x: tensor<1x3x100xf32>, %w: tensor<100xf32>) -> tensor<1x3x100xf32> {
  %y = tfm.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<1x3x100xf32>, tensor<100xf32>) -> tensor<1x3x100xf32>
  return %y : tensor<1x3x100xf32>
}

// A short row (at most 4 vectors: 40 <= 4 x 16) is reduced as one vector.
// CHECK-LABEL: func.func @short_rows
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [2] : vector<1x1x40xf32> to vector<1x1xf32>
func.func @short_rows(%x: tensor<1x3x40xf32>, %w: tensor<40xf32>) -> tensor<1x3x40xf32> {
  %y = tfm.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<1x3x40xf32>, tensor<40xf32>) -> tensor<1x3x40xf32>
  return %y : tensor<1x3x40xf32>
}

// A gather (the embedding) is left as a scalar loop nest.
// CHECK-LABEL: func.func @embedding
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @embedding(%ids: tensor<1x4xi64>, %table: tensor<10x16xf32>) -> tensor<1x4x16xf32> {
  %h = tfm.embedding %ids, %table : (tensor<1x4xi64>, tensor<10x16xf32>) -> tensor<1x4x16xf32>
  return %h : tensor<1x4x16xf32>
}

// RUN: transformer-opt %s --tfm-to-linalg --canonicalize --tfm-fuse-elementwise | FileCheck %s
// RUN: transformer-opt %s --tfm-cpu-pipeline --mlir-print-ir-after=tfm-fuse-elementwise -o /dev/null 2>&1 | FileCheck %s

// Producers are fused only where each produced element is read once. The
// layer norm must not be fused into the up projection, nor the GELU into the
// down projection: inside a contraction they would be recomputed once per
// output column (d or m times) and the contraction would lose its
// vectorised code. Both projections stay linalg.matmul, the normalisation
// and the tanh stay in all-parallel generics.
// CHECK-LABEL: func.func @mlp
// CHECK: math.rsqrt
// CHECK: linalg.matmul
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-NOT: reduction
// CHECK: math.tanh
// CHECK: linalg.matmul
// CHECK-NOT: math.tanh
func.func @mlp(%x: tensor<1x8x64xf32>, %ln_w: tensor<64xf32>, %ln_b: tensor<64xf32>, %w1: tensor<64x256xf32>, %b1: tensor<256xf32>, %w2: tensor<256x64xf32>, %b2: tensor<64xf32>) -> tensor<1x8x64xf32> {
  %n = tfm.layer_norm %x, %ln_w, %ln_b : (tensor<1x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  %h = tfm.linear %n, %w1, %b1 : (tensor<1x8x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<1x8x256xf32>
  %g = tfm.gelu %h {approximate = #tfm.gelu<tanh>} : (tensor<1x8x256xf32>) -> tensor<1x8x256xf32>
  %y = tfm.linear %g, %w2, %b2 : (tensor<1x8x256xf32>, tensor<256x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

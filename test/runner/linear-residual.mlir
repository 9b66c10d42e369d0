// REQUIRES: torch
// A linear with bias plus a residual, on weights written by Python and
// checked against numpy (Inputs/make_case.py computes the reference).
// RUN: rm -rf %t && %python %S/Inputs/make_case.py good %t
// RUN: transformer-runner %s --weights %t/w.safetensors --input hidden=%t/x.npy \
// RUN:   --output out=%t/out.npy | FileCheck %s
// RUN: %python %S/Inputs/compare.py %t/out.npy %t/expected.npy 1e-5
//
// The same without vectorisation (scalar loops take another path through the
// pipeline) and with a misaligned data area, which the runner must copy.
// RUN: transformer-runner %s --weights %t/w.safetensors --input hidden=%t/x.npy \
// RUN:   --output out=%t/scalar.npy --pipeline-options="debug=vectorize=0"
// RUN: %python %S/Inputs/compare.py %t/scalar.npy %t/expected.npy 1e-5
// RUN: rm -rf %t.mis && %python %S/Inputs/make_case.py misaligned %t.mis
// RUN: transformer-runner %s --weights %t.mis/w.safetensors \
// RUN:   --input hidden=%t.mis/x.npy --output out=%t.mis/out.npy
// RUN: %python %S/Inputs/compare.py %t.mis/out.npy %t.mis/expected.npy 1e-5
//
// --repeat reports timings.
// RUN: transformer-runner %s --weights %t/w.safetensors --input hidden=%t/x.npy \
// RUN:   --repeat 3 | FileCheck %s --check-prefix=REPEAT

// CHECK: out: 2x4x8 f32 [{{-?[0-9.e+-]+}}, {{-?[0-9.e+-]+}}, {{-?[0-9.e+-]+}}, {{-?[0-9.e+-]+}}, ...]
// REPEAT: compile: {{[0-9.]+}} ms; run (3 times): median {{[0-9.e+-]+}} ms, min {{[0-9.e+-]+}} ms, max {{[0-9.e+-]+}} ms

func.func @forward(%x: tensor<2x4x8xf32> {tfm.input = "hidden"},
                   %w: tensor<8x8xf32> {tfm.param = "h.0.mlp.c_proj.weight"},
                   %b: tensor<8xf32> {tfm.param = "h.0.mlp.c_proj.bias"})
    -> (tensor<2x4x8xf32> {tfm.output = "out"}) {
  %y = tfm.linear %x, %w, %b : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %r = tfm.residual_add %x, %y : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

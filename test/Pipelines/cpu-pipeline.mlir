// RUN: transformer-opt %s --tfm-cpu-pipeline | FileCheck %s
// RUN: transformer-opt %s --tfm-cpu-pipeline="verify-contracts=false" | FileCheck %s

// The whole pipeline leaves only the LLVM dialect. The public function keeps
// its name, gets the C interface wrapper, and its tensor result becomes a
// trailing out-parameter (so the wrapper takes 4 memref descriptors and
// returns nothing). tfm attributes survive on the arguments for the runner.
// CHECK-NOT: = tfm.
// CHECK-NOT: func.func
// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK-NOT: tensor.
// CHECK-NOT: unrealized_conversion_cast
// CHECK: llvm.func @block(
// CHECK-SAME: ) attributes {llvm.emit_c_interface
// CHECK: llvm.func @_mlir_ciface_block(%{{[^:]*}}: !llvm.ptr {tfm.input = "hidden"}, %{{[^:]*}}: !llvm.ptr {tfm.param = "ln.weight"}, %{{[^:]*}}: !llvm.ptr {tfm.param = "fc.weight", tfm.param_pack = {layout = "{{in_out|out_in}}", panel = {{[0-9]+}} : i64, shape = array<i64: {{[0-9]+}}, {{[0-9]+}}>}}, %{{[^:]*}}: !llvm.ptr {tfm.output = "hidden"}
// CHECK-SAME: ) attributes {llvm.emit_c_interface
// CHECK-NOT: = tfm.
// CHECK-NOT: linalg.
// CHECK-NOT: scf.
// CHECK-NOT: cf.
// CHECK-NOT: arith.
// CHECK-NOT: math.
module {
  func.func @block(%h: tensor<1x4x8xf32> {tfm.input = "hidden"},
                   %g: tensor<8xf32> {tfm.param = "ln.weight"},
                   %w: tensor<8x8xf32> {tfm.param = "fc.weight"})
      -> (tensor<1x4x8xf32> {tfm.output = "hidden"}) attributes {tfm.block} {
    %n = tfm.rms_norm %h, %g : (tensor<1x4x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
    %y = tfm.linear %n, %w {layout = #tfm.layout<out_in>} : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = tfm.gelu %y : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %r = tfm.residual_add %h, %a : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    return %r : tensor<1x4x8xf32>
  }
}

// RUN: transformer-opt %s --tfm-gpu-pipeline="chip=sm_90 format=isa" | FileCheck %s
// RUN: transformer-opt %s --tfm-gpu-pipeline="chip=sm_80 format=isa verify-contracts=false" | FileCheck %s --check-prefix=SM80
// RUN: transformer-opt %s --tfm-gpu-pipeline="chip=sm_90 format=isa" -o %t.mlir
// RUN: %python %tfm_src/scripts/extract-ptx.py %t.mlir %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: transformer-opt %tfm_src/examples/tiny-gpt2.mlir --tfm-gpu-pipeline="chip=sm_90 format=isa async=0" | FileCheck %s --check-prefix=SYNC

// Without the stream-ordered chain (async=0), a kernel's host function stays
// a function and synchronises itself, the split-K matvec's scratch buffer
// too; tiny GPT-2's 8-token projections take both matvec layouts.
// SYNC-DAG: llvm.func @tfm_matvec_8x256x64_nt(
// SYNC-DAG: llvm.func @tfm_matvec_8x64x256_nn(
// SYNC-DAG: llvm.call @mgpuStreamSynchronize(

// The RMS norm's statistic is a row reduction: a warp a row, combined with
// butterfly shuffles; nothing spills to local memory.
// PTX-NOT: ld.local
// PTX: shfl.sync.bfly.b32
// PTX-NOT: ld.local

// The whole GPU pipeline: host code in the LLVM dialect with the CPU calling
// convention (C interface, the result a trailing out-parameter, tfm
// attributes kept for the runner), every buffer access in a kernel, the
// kernels in one gpu.binary of PTX for the chip. Intermediates are allocated
// and freed on the device. The matmul weight is an f16 parameter, bound
// rounded (tfm.param_rounded), not rounded on every call.
// CHECK-NOT: func.func
// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK-NOT: tensor.
// CHECK-NOT: scf.
// CHECK-NOT: unrealized_conversion_cast
// CHECK: llvm.func @block(
// CHECK: llvm.call @mgpuMemAlloc(
// CHECK: gpu.launch_func {{.*}}@tfm_kernels::@block_kernel blocks
// CHECK: llvm.call @mgpuMemFree(
// CHECK: llvm.func @_mlir_ciface_block(%{{[^:]*}}: !llvm.ptr {tfm.input = "hidden"}, %{{[^:]*}}: !llvm.ptr {tfm.param = "ln.weight"}, %{{[^:]*}}: !llvm.ptr {tfm.param = "fc.weight", tfm.param_rounded}, %{{[^:]*}}: !llvm.ptr {tfm.output = "hidden"}
// CHECK-SAME: ) attributes {llvm.emit_c_interface
// CHECK: gpu.binary @tfm_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.visible .entry block_kernel(
// CHECK-NOT: gpu.binary
// SM80: gpu.binary @tfm_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">, {{.*}}.target sm_80
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

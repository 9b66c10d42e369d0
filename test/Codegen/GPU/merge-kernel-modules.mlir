// RUN: transformer-opt %s --tfm-gpu-merge-kernel-modules | FileCheck %s

// Every kernel moves into one module, renamed after the module it came from;
// the launches follow. Non-kernel symbols move along.
// CHECK: gpu.module @tfm_kernels [#nvvm.target<chip = "sm_90">] {
// CHECK-DAG: gpu.func @f_kernel(%{{.*}}: memref<4xf32>) kernel
// CHECK-DAG: gpu.func @f_kernel_0(%{{.*}}: memref<4xf32>) kernel
// CHECK-DAG: func.func private @helper()
// CHECK-NOT: gpu.module
// CHECK: func.func @f(
// CHECK: gpu.launch_func @tfm_kernels::@f_kernel blocks
// CHECK: gpu.launch_func @tfm_kernels::@f_kernel_0 blocks
module attributes {gpu.container_module} {
  gpu.module @f_kernel [#nvvm.target<chip = "sm_90">] {
    gpu.func @f_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @f_kernel_0 [#nvvm.target<chip = "sm_90">] {
    func.func private @helper()
    gpu.func @f_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @f(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
}

// The host code MLIR 22 emits for the GPU features tfm uses resolves against
// libtfm_cuda_runtime.so alone, and with the toolkit's stub library in place
// of a driver it stops at the first driver call with one clear line.
//
// REQUIRES: ptxas, mlir-runner, cuda-stub
// RUN: mlir-opt %s --gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=bin" -o %t.bin.mlir
// RUN: mlir-opt %s --gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" -o %t.isa.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.bin.mlir | FileCheck %s --check-prefix=DECL
// RUN: mlir-translate --mlir-to-llvmir %t.isa.mlir | FileCheck %s --check-prefix=JIT
// RUN: llvm-nm -D --defined-only %tfm_cuda_runtime | FileCheck %s --check-prefix=EXPORT
// RUN: llvm-readelf -d %tfm_cuda_runtime | FileCheck %s --check-prefix=NEEDED
// RUN: rm -rf %t.stub && mkdir %t.stub && ln -s %cuda_stub %t.stub/libcuda.so.1
// RUN: env LD_LIBRARY_PATH=%t.stub mlir-runner %t.bin.mlir -e main -entry-point-result=void --shared-libs=%tfm_cuda_runtime 2>&1 | FileCheck %s --check-prefix=STUB
// RUN: env LD_LIBRARY_PATH=%t.stub mlir-runner %t.isa.mlir -e main -entry-point-result=void --shared-libs=%tfm_cuda_runtime 2>&1 | FileCheck %s --check-prefix=STUB

// DECL-DAG: declare ptr @mgpuModuleLoad(ptr, i64)
// DECL-DAG: declare void @mgpuModuleUnload(ptr)
// DECL-DAG: declare ptr @mgpuModuleGetFunction(ptr, ptr)
// DECL-DAG: declare void @mgpuLaunchKernel(ptr, i64, i64, i64, i64, i64, i64, i32, ptr, ptr, ptr, i64)
// DECL-DAG: declare void @mgpuLaunchClusterKernel(ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i32, ptr, ptr, ptr)
// DECL-DAG: declare ptr @mgpuStreamCreate()
// DECL-DAG: declare void @mgpuStreamDestroy(ptr)
// DECL-DAG: declare void @mgpuStreamSynchronize(ptr)
// DECL-DAG: declare void @mgpuStreamWaitEvent(ptr, ptr)
// DECL-DAG: declare ptr @mgpuEventCreate()
// DECL-DAG: declare void @mgpuEventDestroy(ptr)
// DECL-DAG: declare void @mgpuEventRecord(ptr, ptr)
// DECL-DAG: declare ptr @mgpuMemAlloc(i64, ptr, i8)
// DECL-DAG: declare void @mgpuMemFree(ptr, ptr)
// DECL-DAG: declare void @mgpuMemcpy(ptr, ptr, i64, ptr)
// DECL-DAG: declare void @mgpuMemset32(ptr, i32, i64, ptr)
// DECL-DAG: declare void @mgpuMemset16(ptr, i16, i64, ptr)
// DECL-DAG: declare void @mgpuMemHostRegisterMemRef(i64, ptr, i64)
// DECL-DAG: declare void @mgpuMemHostUnregisterMemRef(i64, ptr, i64)
// DECL-DAG: declare ptr @mgpuTensorMapEncodeTiledMemref(i64, ptr, i64, i64, i64, i64, i64, ptr)
// JIT: declare ptr @mgpuModuleLoadJIT(ptr, i32)

// EXPORT-DAG: T mgpuEventCreate
// EXPORT-DAG: T mgpuEventDestroy
// EXPORT-DAG: T mgpuEventRecord
// EXPORT-DAG: T mgpuEventSynchronize
// EXPORT-DAG: T mgpuLaunchClusterKernel
// EXPORT-DAG: T mgpuLaunchKernel
// EXPORT-DAG: T mgpuMemAlloc
// EXPORT-DAG: T mgpuMemFree
// EXPORT-DAG: T mgpuMemHostRegisterMemRef
// EXPORT-DAG: T mgpuMemHostUnregisterMemRef
// EXPORT-DAG: T mgpuMemcpy
// EXPORT-DAG: T mgpuMemset16
// EXPORT-DAG: T mgpuMemset32
// EXPORT-DAG: T mgpuModuleGetFunction
// EXPORT-DAG: T mgpuModuleLoad
// EXPORT-DAG: T mgpuModuleLoadJIT
// EXPORT-DAG: T mgpuModuleUnload
// EXPORT-DAG: T mgpuSetDefaultDevice
// EXPORT-DAG: T mgpuStreamCreate
// EXPORT-DAG: T mgpuStreamDestroy
// EXPORT-DAG: T mgpuStreamSynchronize
// EXPORT-DAG: T mgpuStreamWaitEvent
// EXPORT-DAG: T mgpuTensorMapEncodeTiledMemref
// EXPORT-DAG: T tfmCudaInitialize
// EXPORT-DAG: T tfmCudaGetLastError

// The driver is loaded at run time only.
// NEEDED-NOT: libcuda

// STUB: tfm-cuda: error: no CUDA driver: libcuda.so.1 is the CUDA toolkit's stub library ({{.*}}libcuda.so{{.*}}), not a driver (cuInit: CUDA_ERROR_STUB_LIBRARY (34)
// STUB-NOT: tfm-cuda: error

!desc = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%a: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %v = arith.constant 1.0 : f32
      memref.store %v, %a[%i] : memref<16xf32>
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %zero32 = arith.constant 0 : i32
    %zero16 = arith.constant 0.0 : f16
    %smem = arith.constant 65536 : i32
    %h = memref.alloc() : memref<16xf32>
    %h16 = memref.alloc() : memref<128x128xf16>
    %u = memref.cast %h : memref<16xf32> to memref<*xf32>
    gpu.host_register %u : memref<*xf32>
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %i32, %t2 = gpu.alloc async [%t1] () : memref<16xi32>
    %f16, %t3 = gpu.alloc async [%t2] () : memref<128x128xf16>
    %t4 = gpu.memset async [%t3] %i32, %zero32 : memref<16xi32>, i32
    %t5 = gpu.memset async [%t3] %f16, %zero16 : memref<128x128xf16>, f16
    %t6 = gpu.wait async [%t4, %t5]
    %t7 = gpu.memcpy async [%t6] %d, %h : memref<16xf32>, memref<16xf32>
    %t8 = gpu.launch_func async [%t7] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) dynamic_shared_memory_size %smem args(%d : memref<16xf32>)
    %t9 = gpu.launch_func async [%t8] @kernels::@fill clusters in (%c1, %c1, %c1) blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%d : memref<16xf32>)
    %t10 = gpu.memcpy async [%t9] %h, %d : memref<16xf32>, memref<16xf32>
    %t11 = gpu.dealloc async [%t10] %d : memref<16xf32>
    %t12 = gpu.dealloc async [%t10] %i32 : memref<16xi32>
    %t13 = gpu.dealloc async [%t10] %f16 : memref<128x128xf16>
    gpu.wait [%t11, %t12, %t13]
    %u16 = memref.cast %h16 : memref<128x128xf16> to memref<*xf16>
    %map = nvgpu.tma.create.descriptor %u16 box[%c64, %c64] : memref<*xf16> -> !desc
    gpu.host_unregister %u : memref<*xf32>
    memref.dealloc %h : memref<16xf32>
    memref.dealloc %h16 : memref<128x128xf16>
    return
  }
}

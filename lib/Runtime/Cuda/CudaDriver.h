//===- CudaDriver.h - the CUDA driver API subset tfm uses -------*- C++ -*-===//
//
// Types, constants and prototypes of the CUDA driver API entry points that
// libtfm_cuda_runtime.so resolves with dlsym, declared here so that it builds
// without the CUDA toolkit. CudaDriverCheck.cpp checks them against cuda.h
// where the toolkit is installed.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_RUNTIME_CUDADRIVER_H
#define TFM_LIB_RUNTIME_CUDADRIVER_H

#include <cstddef>

namespace drv {
using Result = int;
using Device = int;
using DevicePtr = unsigned long long;
using Context = struct CtxOpaque *;
using Module = struct ModOpaque *;
using Function = struct FuncOpaque *;
using Stream = struct StreamOpaque *;
using Event = struct EventOpaque *;
using MemPool = struct MemPoolOpaque *;

constexpr Result kSuccess = 0;
constexpr Result kErrorDeinitialized = 4;
constexpr Result kErrorStubLibrary = 34;
constexpr Result kErrorNoDevice = 100;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMemoryPoolsSupported = 115;
constexpr int kMemPoolAttrReleaseThreshold = 4;
constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
constexpr unsigned kStreamNonBlocking = 1;
constexpr unsigned kEventDisableTiming = 2;
constexpr unsigned kMemAttachGlobal = 1;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;
constexpr int kJitOptimizationLevel = 7;
constexpr int kLaunchAttributeClusterDimension = 4;
/// Dynamic shared memory a kernel may use without opting in.
constexpr int kDefaultSharedMemoryLimit = 48 * 1024;

struct LaunchAttribute {
  int id;
  char pad[8 - sizeof(int)];
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } clusterDim;
  } value;
};

struct LaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  Stream stream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
};

struct alignas(128) TensorMap {
  unsigned long long opaque[16];
};

/// Every driver entry point used, with the exported (versioned) symbol name.
#define TFM_CUDA_DRIVER_FUNCTIONS(X)                                           \
  X(cuInit, "cuInit", Result, unsigned)                                        \
  X(cuGetErrorName, "cuGetErrorName", Result, Result, const char **)          \
  X(cuGetErrorString, "cuGetErrorString", Result, Result, const char **)      \
  X(cuDeviceGetCount, "cuDeviceGetCount", Result, int *)                      \
  X(cuDeviceGet, "cuDeviceGet", Result, Device *, int)                        \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", Result, int *, int, Device) \
  X(cuDeviceGetName, "cuDeviceGetName", Result, char *, int, Device)          \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", Result, Context *,  \
    Device)                                                                    \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", Result, Context)                      \
  X(cuCtxSynchronize, "cuCtxSynchronize", Result)                             \
  X(cuModuleLoadData, "cuModuleLoadData", Result, Module *, const void *)     \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", Result, Module *, const void *, \
    unsigned, int *, void **)                                                  \
  X(cuModuleUnload, "cuModuleUnload", Result, Module)                         \
  X(cuModuleGetFunction, "cuModuleGetFunction", Result, Function *, Module,   \
    const char *)                                                              \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", Result, Function, int, int)     \
  X(cuLaunchKernel, "cuLaunchKernel", Result, Function, unsigned, unsigned,   \
    unsigned, unsigned, unsigned, unsigned, unsigned, Stream, void **,         \
    void **)                                                                   \
  X(cuLaunchKernelEx, "cuLaunchKernelEx", Result, const LaunchConfig *,       \
    Function, void **, void **)                                                \
  X(cuStreamCreate, "cuStreamCreate", Result, Stream *, unsigned)             \
  X(cuStreamDestroy, "cuStreamDestroy_v2", Result, Stream)                    \
  X(cuStreamSynchronize, "cuStreamSynchronize", Result, Stream)               \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", Result, Stream, Event, unsigned)  \
  X(cuEventCreate, "cuEventCreate", Result, Event *, unsigned)                \
  X(cuEventDestroy, "cuEventDestroy_v2", Result, Event)                       \
  X(cuEventRecord, "cuEventRecord", Result, Event, Stream)                    \
  X(cuEventSynchronize, "cuEventSynchronize", Result, Event)                  \
  X(cuEventElapsedTime, "cuEventElapsedTime", Result, float *, Event, Event)  \
  X(cuMemAlloc, "cuMemAlloc_v2", Result, DevicePtr *, size_t)                 \
  X(cuMemAllocManaged, "cuMemAllocManaged", Result, DevicePtr *, size_t,      \
    unsigned)                                                                  \
  X(cuMemFree, "cuMemFree_v2", Result, DevicePtr)                             \
  X(cuMemAllocAsync, "cuMemAllocAsync", Result, DevicePtr *, size_t, Stream)  \
  X(cuMemFreeAsync, "cuMemFreeAsync", Result, DevicePtr, Stream)              \
  X(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", Result,           \
    MemPool *, Device)                                                         \
  X(cuMemPoolSetAttribute, "cuMemPoolSetAttribute", Result, MemPool, int,     \
    void *)                                                                    \
  X(cuMemcpyAsync, "cuMemcpyAsync", Result, DevicePtr, DevicePtr, size_t,     \
    Stream)                                                                    \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", Result, DevicePtr, const void *, size_t) \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", Result, void *, DevicePtr, size_t)       \
  X(cuMemsetD32Async, "cuMemsetD32Async", Result, DevicePtr, unsigned,        \
    size_t, Stream)                                                            \
  X(cuMemsetD16Async, "cuMemsetD16Async", Result, DevicePtr, unsigned short,  \
    size_t, Stream)                                                            \
  X(cuMemHostRegister, "cuMemHostRegister_v2", Result, void *, size_t,        \
    unsigned)                                                                  \
  X(cuMemHostUnregister, "cuMemHostUnregister", Result, void *)               \
  X(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", Result, TensorMap *,    \
    int, unsigned, void *, const unsigned long long *,                         \
    const unsigned long long *, const unsigned *, const unsigned *, int, int,  \
    int, int)

struct Api {
#define TFM_DECLARE(name, symbol, ret, ...) ret (*name)(__VA_ARGS__) = nullptr;
  TFM_CUDA_DRIVER_FUNCTIONS(TFM_DECLARE)
#undef TFM_DECLARE
};
} // namespace drv


#endif // TFM_LIB_RUNTIME_CUDADRIVER_H

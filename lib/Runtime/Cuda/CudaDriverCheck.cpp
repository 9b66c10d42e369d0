//===- CudaDriverCheck.cpp - CudaDriver.h against the toolkit's cuda.h ----===//
//
// Compiled only where cuda.h is found: the constants and struct layouts
// declared in CudaDriver.h must be the toolkit's.
//
//===----------------------------------------------------------------------===//
#include "CudaDriver.h"

#include <cuda.h>

#include <cstddef>

static_assert(drv::kErrorDeinitialized == CUDA_ERROR_DEINITIALIZED);
static_assert(drv::kErrorStubLibrary == CUDA_ERROR_STUB_LIBRARY);
static_assert(drv::kErrorNoDevice == CUDA_ERROR_NO_DEVICE);
static_assert(drv::kAttrComputeCapabilityMajor ==
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(drv::kAttrComputeCapabilityMinor ==
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(drv::kAttrMemoryPoolsSupported ==
              CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
static_assert(drv::kMemPoolAttrReleaseThreshold ==
              CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
static_assert(drv::kFuncAttrMaxDynamicSharedSizeBytes ==
              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
static_assert(drv::kStreamNonBlocking == CU_STREAM_NON_BLOCKING);
static_assert(drv::kEventDisableTiming == CU_EVENT_DISABLE_TIMING);
static_assert(drv::kMemAttachGlobal == CU_MEM_ATTACH_GLOBAL);
static_assert(drv::kJitErrorLogBuffer == CU_JIT_ERROR_LOG_BUFFER);
static_assert(drv::kJitErrorLogBufferSizeBytes ==
              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
static_assert(drv::kJitOptimizationLevel == CU_JIT_OPTIMIZATION_LEVEL);
static_assert(drv::kLaunchAttributeClusterDimension ==
              CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
static_assert(sizeof(drv::LaunchAttribute) == sizeof(CUlaunchAttribute));
static_assert(offsetof(drv::LaunchAttribute, value) ==
              offsetof(CUlaunchAttribute, value));
static_assert(sizeof(drv::LaunchConfig) == sizeof(CUlaunchConfig));
static_assert(offsetof(drv::LaunchConfig, stream) ==
              offsetof(CUlaunchConfig, hStream));
static_assert(offsetof(drv::LaunchConfig, numAttrs) ==
              offsetof(CUlaunchConfig, numAttrs));
static_assert(sizeof(drv::TensorMap) == sizeof(CUtensorMap) &&
              alignof(drv::TensorMap) >= alignof(CUtensorMap));
// mgpuTensorMapEncodeTiledMemref's element-size table is indexed by these.
static_assert(CU_TENSOR_MAP_DATA_TYPE_FLOAT16 == 6 &&
              CU_TENSOR_MAP_DATA_TYPE_FLOAT32 == 7 &&
              CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 == 9 &&
              CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ == 12);

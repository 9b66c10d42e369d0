//===- CudaRuntimeInternal.h - shared by the runtime's files ----*- C++ -*-===//
//
// What the other files of libtfm_cuda_runtime.so (NcclRuntime.cpp) use of
// CudaRuntime.cpp's state: its sticky error and its lazy initialisation.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_RUNTIME_CUDA_CUDARUNTIMEINTERNAL_H
#define TFM_LIB_RUNTIME_CUDA_CUDARUNTIMEINTERNAL_H

#include <string>

namespace tfm_cuda {

/// Records `message` as the sticky error unless one is recorded, and prints
/// it ("tfm-cuda: error: <message>").
void recordError(const std::string &message);

/// Initialises the driver on first use and makes the context current on the
/// calling thread; false when there is an error, recorded or new.
bool makeReady();

} // namespace tfm_cuda

#endif // TFM_LIB_RUNTIME_CUDA_CUDARUNTIMEINTERNAL_H

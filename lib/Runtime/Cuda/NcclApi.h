//===- NcclApi.h - the part of NCCL 2's ABI tfm calls -----------*- C++ -*-===//
//
// Declared here rather than taken from nccl.h so that libtfm_cuda_runtime.so
// builds without the CUDA toolkit; NcclCheck.cpp checks them against the
// toolkit's nccl.h where it is found.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_RUNTIME_CUDA_NCCLAPI_H
#define TFM_LIB_RUNTIME_CUDA_NCCLAPI_H

#include <cstddef>

namespace nccl {
using Result = int;  // ncclResult_t; 0 is ncclSuccess
using Comm = void *; // ncclComm_t
constexpr int kSuccess = 0;
constexpr int kFloat32 = 7;            // ncclFloat32
constexpr int kSum = 0;                // ncclSum
constexpr size_t kUniqueIdBytes = 128; // NCCL_UNIQUE_ID_BYTES
struct UniqueId {
  char internal[kUniqueIdBytes];
};
/// The functions tfm resolves with dlsym.
struct Api {
  Result (*getUniqueId)(UniqueId *) = nullptr;
  Result (*commInitRank)(Comm *, int, UniqueId, int) = nullptr;
  Result (*allReduce)(const void *, void *, size_t, int, int, Comm,
                      void *) = nullptr;
  const char *(*getErrorString)(Result) = nullptr;
};
} // namespace nccl

#endif // TFM_LIB_RUNTIME_CUDA_NCCLAPI_H

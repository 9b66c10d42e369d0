//===- NcclRuntime.cpp - NCCL collectives of GPU-compiled code ------------===//
//
// tfm/Runtime/Nccl.h. NCCL is loaded with dlopen on first use; the few
// types, constants and prototypes used are declared in NcclApi.h, so that
// the library builds without the toolkit.
//
//===----------------------------------------------------------------------===//
#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Runtime/Nccl.h"

#include "CudaRuntimeInternal.h"
#include "NcclApi.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#define TFM_CUDA_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

/// A 1-D memref descriptor (memref<?xf32>) as compiled code passes it.
struct FlatMemRef {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
};

struct State {
  std::mutex mutex;
  bool loaded = false;
  std::string loadError;
  nccl::Api api;
  nccl::Comm comm = nullptr;
  int rank = 0, ranks = 1;
  uint64_t calls = 0, bytes = 0;
  double milliseconds = 0;
};

State &state() {
  static State *s = new State; // Never destroyed: calls may come at exit.
  return *s;
}

/// Loads NCCL once; the error message, or empty.
const std::string &load() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.loaded)
    return s.loadError;
  s.loaded = true;
  // $TFM_NCCL_LIBRARY names another build of NCCL (a path or a soname).
  const char *library = std::getenv("TFM_NCCL_LIBRARY");
  if (!library || !*library)
    library = mlir::tfm::runtime::kNcclLibrary;
  void *handle = dlopen(library, RTLD_NOW);
  if (!handle) {
    s.loadError = std::string("cannot load NCCL (") + dlerror() +
                  "; it ships with the CUDA toolkit: put its lib directory "
                  "on LD_LIBRARY_PATH, or name the library in "
                  "TFM_NCCL_LIBRARY)";
    return s.loadError;
  }
  auto resolve = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(handle, name));
    if (!fn && s.loadError.empty())
      s.loadError = std::string(library) + " has no " + name;
  };
  resolve(s.api.getUniqueId, "ncclGetUniqueId");
  resolve(s.api.commInitRank, "ncclCommInitRank");
  resolve(s.api.allReduce, "ncclAllReduce");
  resolve(s.api.getErrorString, "ncclGetErrorString");
  return s.loadError;
}

/// "<call>: <NCCL's text> (<code>)".
std::string describe(const char *call, nccl::Result result) {
  const char *text = state().api.getErrorString
                         ? state().api.getErrorString(result)
                         : "unknown error";
  return std::string(call) + ": " + text + " (" + std::to_string(result) + ")";
}

/// A message kept for the life of the process (the C API's returns).
const char *keep(std::string message) {
  static std::mutex mutex;
  static std::string *kept = new std::string;
  std::lock_guard<std::mutex> lock(mutex);
  *kept = std::move(message);
  return kept->c_str();
}
} // namespace

TFM_CUDA_EXPORT const char *tfmNcclGetUniqueId(void *id, size_t size) {
  if (size < mlir::tfm::runtime::kNcclIdBytes)
    return "tfmNcclGetUniqueId: the id needs 128 bytes";
  if (const std::string &error = load(); !error.empty())
    return error.c_str();
  nccl::UniqueId unique;
  if (nccl::Result result = state().api.getUniqueId(&unique))
    return keep(describe("ncclGetUniqueId", result));
  std::memcpy(id, unique.internal, sizeof(unique.internal));
  return nullptr;
}

TFM_CUDA_EXPORT const char *tfmNcclInitialize(int rank, int ranks,
                                              const void *id, size_t size) {
  if (size < mlir::tfm::runtime::kNcclIdBytes)
    return "tfmNcclInitialize: the id needs 128 bytes";
  if (const std::string &error = load(); !error.empty())
    return error.c_str();
  // NCCL works on the current device's context.
  if (!tfm_cuda::makeReady()) {
    const char *error = tfmCudaGetLastError();
    return error ? error : "the CUDA device is not ready";
  }
  State &s = state();
  nccl::UniqueId unique;
  std::memcpy(unique.internal, id, sizeof(unique.internal));
  if (nccl::Result result = s.api.commInitRank(&s.comm, ranks, unique, rank))
    return keep(describe("ncclCommInitRank", result));
  s.rank = rank;
  s.ranks = ranks;
  return nullptr;
}

TFM_CUDA_EXPORT void tfmNcclGetStats(uint64_t *calls, uint64_t *bytes,
                                     double *milliseconds) {
  State &s = state();
  *calls = s.calls;
  *bytes = s.bytes;
  *milliseconds = s.milliseconds;
}

TFM_CUDA_EXPORT int64_t _mlir_ciface_tfm_nccl_rank() { return state().rank; }

TFM_CUDA_EXPORT void _mlir_ciface_tfm_nccl_all_reduce_f32(FlatMemRef *source,
                                                          FlatMemRef *target) {
  State &s = state();
  if (!s.comm) {
    tfm_cuda::recordError("tfm_nccl_all_reduce_f32: no NCCL communicator "
                          "(run the model with --tensor-parallel under "
                          "mpirun)");
    return;
  }
  if (!tfm_cuda::makeReady())
    return;
  auto start = std::chrono::steady_clock::now();
  // The device's earlier work (on any stream) produced the source; the
  // later work reads the target once this returns.
  if (tfmCudaSynchronize())
    return;
  size_t count = size_t(source->size);
  if (nccl::Result result = s.api.allReduce(
          source->aligned + source->offset, target->aligned + target->offset,
          count, nccl::kFloat32, nccl::kSum, s.comm, /*stream=*/nullptr)) {
    tfm_cuda::recordError(describe("ncclAllReduce", result));
    return;
  }
  if (tfmCudaSynchronize())
    return;
  s.milliseconds += std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  s.calls += 1;
  s.bytes += count * sizeof(float);
}

/*===- Nccl.h - NCCL collectives of GPU-compiled code -------------*- C -*-===//
//
// A tensor-parallel model compiled for GPUs sums its ranks' partial results
// with NCCL (the library the CUDA toolkit ships, libnccl.so.2, or the one
// $TFM_NCCL_LIBRARY names), which libtfm_cuda_runtime.so loads with dlopen
// on first use, like the driver: tfm builds, links and runs without it
// until a GPU run asks for ranks. One
// process per rank (mpirun); the ranks agree on their communicator through
// MPI (rank 0 makes the id, MPI_Bcast hands it to the others), then every
// collective is NCCL's.
//
// The compiled code calls two functions (tfm-collectives-to-nccl): the sum
// of an f32 buffer over the ranks and this process's rank. Each sum waits
// for the device's earlier work, runs ncclAllReduce on the legacy default
// stream and waits for it: simple ordering against the compiled code's
// stream-ordered launches, at the cost of a host round trip per sum. Errors
// are the runtime's sticky error (tfm/Runtime/CudaRuntime.h).
//
//===----------------------------------------------------------------------===*/
#ifndef TFM_RUNTIME_NCCL_H
#define TFM_RUNTIME_NCCL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
namespace mlir::tfm::runtime {
/// The library loaded, and the runtime functions compiled code calls (as
/// `_mlir_ciface_<name>`: memrefs by descriptor).
inline constexpr const char *kNcclLibrary = "libnccl.so.2";
inline constexpr const char *kNcclAllReduceFunction = "tfm_nccl_all_reduce_f32";
inline constexpr const char *kNcclRankFunction = "tfm_nccl_rank";
/// Bytes of an NCCL communicator id (NCCL_UNIQUE_ID_BYTES).
inline constexpr size_t kNcclIdBytes = 128;
} // namespace mlir::tfm::runtime
extern "C" {
#endif

/// A new communicator id (rank 0's, to broadcast), into `id` (`size` bytes,
/// at least 128). Returns NULL, or a one-line message saying why not (no
/// libnccl.so.2, ...).
const char *tfmNcclGetUniqueId(void *id, size_t size);

/// Joins rank `rank` of `ranks` to the communicator `id` on the device
/// tfmCudaInitialize made current. Returns NULL or a one-line message.
const char *tfmNcclInitialize(int rank, int ranks, const void *id, size_t size);

/// What the compiled code's sums cost this process so far: calls, bytes
/// each rank contributed, and milliseconds in the calls (device waits
/// included).
void tfmNcclGetStats(uint64_t *calls, uint64_t *bytes, double *milliseconds);

#ifdef __cplusplus
} // extern "C"
#endif

#endif /* TFM_RUNTIME_NCCL_H */

//===- Mpi.h - the MPI world of a tensor-parallel run -----------*- C++ -*-===//
//
// A tensor-parallel model (tfm-tensor-parallel) runs as one process per rank
// under `mpirun`; its compiled code calls MPI (mpi.allreduce lowered by
// upstream MLIR for Open MPI's ABI). Open MPI is loaded here, at run time,
// like the CUDA driver: a build of tfm runs without it until a user asks for
// ranks. The library is loaded RTLD_GLOBAL, so the JIT resolves the
// compiled code's MPI symbols from the process.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_MPI_H
#define TFM_RUNTIME_MPI_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::tfm::runtime {

/// The Open MPI library tfm loads (Debian's libopenmpi3: the ABI the
/// compiled code's symbols follow).
inline constexpr const char *kMpiLibrary = "libmpi.so.40";

struct MpiWorld {
  int rank = 0;
  int size = 1;
  /// MPI_Get_library_version's first line ("Open MPI v4.1.4, ..."): part of
  /// the compiled-code cache key of a model that calls MPI.
  std::string libraryVersion;
};

/// Joins the MPI world of this process as one of `ranks` (once; later calls
/// return the same world): loads Open MPI, initialises it (MPI_Finalize runs
/// at exit) and checks that the world has `ranks` processes. Fails with an
/// error saying what to do when the process was not started by `mpirun`,
/// the library is missing, or the world size differs.
llvm::Expected<const MpiWorld &> initMpiWorld(int64_t ranks);

/// The world joined by initMpiWorld, or null.
const MpiWorld *getMpiWorld();

/// Ends every rank of the job with `code` (MPI_Abort): a rank that fails
/// must not leave the others waiting in a collective. Returns only when no
/// world was joined.
void abortMpiWorld(int code);

/// Copies rank 0's `bytes` at `data` into every rank's `data` (MPI_Bcast):
/// how the ranks of a GPU run agree on their NCCL communicator's id.
llvm::Error broadcastFromRank0(void *data, int bytes);

/// The address of an Open MPI symbol once the world is joined, else null.
void *lookupMpiSymbol(const char *name);

/// What the compiled code's all-reduces cost this process: it calls
/// MPI_Allreduce through getTimedAllreduce, which counts and times each
/// call (the wait for the slowest rank included).
struct CollectiveStats {
  uint64_t calls = 0;
  uint64_t bytes = 0;
  double milliseconds = 0;
};
CollectiveStats getCollectiveStats();
/// MPI_Allreduce, counted and timed; null before the world is joined.
void *getTimedAllreduce();

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_MPI_H

//===- Mpi.cpp - joining the MPI world at run time ------------------------===//
#include "tfm/Runtime/Mpi.h"

#include "tfm/Runtime/Error.h"

#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <memory>

using namespace mlir::tfm;
using namespace mlir::tfm::runtime;

namespace {
/// Open MPI's C API, as far as tfm calls it; MPI_Comm is a pointer.
using InitFn = int (*)(int *, char ***);
using CommFn = int (*)(void *, int *);
using AbortFn = int (*)(void *, int);
using FinalizeFn = int (*)();
using VersionFn = int (*)(char *, int *);

struct LoadedMpi {
  void *handle = nullptr;
  void *commWorld = nullptr;
  AbortFn abort = nullptr;
  FinalizeFn finalize = nullptr;
  MpiWorld world;
};

LoadedMpi *loaded = nullptr;

using AllreduceFn = int (*)(const void *, void *, int, void *, void *, void *);
AllreduceFn realAllreduce = nullptr;
CollectiveStats stats;

/// MPI_Allreduce as the compiled code calls it (sendbuf, recvbuf, count,
/// datatype, op, comm), counted and timed. tfm's sums are f32.
int timedAllreduce(const void *send, void *recv, int count, void *type,
                   void *op, void *comm) {
  auto start = std::chrono::steady_clock::now();
  int result = realAllreduce(send, recv, count, type, op, comm);
  stats.milliseconds += std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count();
  stats.calls += 1;
  stats.bytes += uint64_t(count) * sizeof(float);
  return result;
}

void finalizeAtExit() {
  if (loaded && loaded->finalize)
    loaded->finalize();
}
} // namespace

llvm::Expected<const MpiWorld &> runtime::initMpiWorld(int64_t ranks) {
  if (loaded) {
    if (loaded->world.size != ranks)
      return makeError(llvm::formatv(
          "--tensor-parallel {0}, but the MPI world has {1} processes", ranks,
          loaded->world.size));
    return loaded->world;
  }
  // mpirun (Open MPI's launcher) sets this for each process it starts; a
  // process started otherwise would initialise a world of its own.
  const char *launched = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!launched)
    return makeError(llvm::formatv(
        "--tensor-parallel {0} runs one process per rank: start it with "
        "`mpirun -np {0} ...` (Open MPI)",
        ranks));
  if (std::atoll(launched) != ranks)
    return makeError(llvm::formatv(
        "--tensor-parallel {0}, but mpirun started {1} processes (mpirun -np "
        "{0})",
        ranks, launched));
  void *handle = dlopen(kMpiLibrary, RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    return makeError(llvm::formatv(
        "cannot load Open MPI ({0}: {1}); install libopenmpi-dev openmpi-bin",
        kMpiLibrary, dlerror()));
  auto init = reinterpret_cast<InitFn>(dlsym(handle, "MPI_Init"));
  auto rankOf = reinterpret_cast<CommFn>(dlsym(handle, "MPI_Comm_rank"));
  auto sizeOf = reinterpret_cast<CommFn>(dlsym(handle, "MPI_Comm_size"));
  auto version =
      reinterpret_cast<VersionFn>(dlsym(handle, "MPI_Get_library_version"));
  auto state = std::make_unique<LoadedMpi>();
  state->handle = handle;
  state->commWorld = dlsym(handle, "ompi_mpi_comm_world");
  state->abort = reinterpret_cast<AbortFn>(dlsym(handle, "MPI_Abort"));
  state->finalize = reinterpret_cast<FinalizeFn>(dlsym(handle, "MPI_Finalize"));
  if (!init || !rankOf || !sizeOf || !version || !state->commWorld ||
      !state->abort || !state->finalize)
    return makeError(llvm::formatv(
        "{0} lacks the Open MPI symbols tfm calls (another MPI?)",
        kMpiLibrary));
  if (init(nullptr, nullptr) != 0)
    return makeError("MPI_Init failed");
  MpiWorld &world = state->world;
  rankOf(state->commWorld, &world.rank);
  sizeOf(state->commWorld, &world.size);
  // MPI_MAX_LIBRARY_VERSION_STRING is 256 in Open MPI.
  char text[8192] = {0};
  int length = 0;
  version(text, &length);
  world.libraryVersion = std::string(text, length);
  world.libraryVersion = world.libraryVersion.substr(
      0, world.libraryVersion.find_first_of(",\n"));
  loaded = state.release();
  std::atexit(finalizeAtExit);
  if (loaded->world.size != ranks)
    return makeError(llvm::formatv(
        "--tensor-parallel {0}, but the MPI world has {1} processes", ranks,
        loaded->world.size));
  return loaded->world;
}

const MpiWorld *runtime::getMpiWorld() {
  return loaded ? &loaded->world : nullptr;
}

void runtime::abortMpiWorld(int code) {
  if (!loaded || loaded->world.size == 1)
    return;
  loaded->abort(loaded->commWorld, code);
}

CollectiveStats runtime::getCollectiveStats() { return stats; }

void *runtime::getTimedAllreduce() {
  if (!loaded)
    return nullptr;
  if (!realAllreduce)
    realAllreduce =
        reinterpret_cast<AllreduceFn>(dlsym(loaded->handle, "MPI_Allreduce"));
  return realAllreduce ? reinterpret_cast<void *>(&timedAllreduce) : nullptr;
}

llvm::Error runtime::broadcastFromRank0(void *data, int bytes) {
  using BcastFn = int (*)(void *, int, void *, int, void *);
  auto bcast = reinterpret_cast<BcastFn>(lookupMpiSymbol("MPI_Bcast"));
  void *byteType = lookupMpiSymbol("ompi_mpi_byte");
  if (!bcast || !byteType)
    return makeError("MPI_Bcast: not available (join the MPI world first)");
  if (int code = bcast(data, bytes, byteType, /*root=*/0, loaded->commWorld))
    return makeError(llvm::formatv("MPI_Bcast failed with code {0}", code));
  return llvm::Error::success();
}

void *runtime::lookupMpiSymbol(const char *name) {
  return loaded ? dlsym(loaded->handle, name) : nullptr;
}

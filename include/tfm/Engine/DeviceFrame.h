//===- DeviceFrame.h - calling GPU-compiled entries -------------*- C++ -*-===//
//
// `--device cuda`: the code of `--tfm-gpu-pipeline` takes the CPU calling
// convention with every memref in GPU memory. A DeviceFrame mirrors a host
// CallFrame on the device (libtfm_cuda_runtime.so): the same packed argument
// array, with descriptors pointing at device buffers. Parameters and KV
// caches are uploaded once and shared between frames through a DevicePool
// (prefill and decode hold one copy of each weight and cache); inputs are
// uploaded before every call and results downloaded after it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_ENGINE_DEVICEFRAME_H
#define TFM_ENGINE_DEVICEFRAME_H

#include "tfm/Engine/Binding.h"

#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace mlir::tfm::engine {

/// Loads the CUDA driver and picks device `ordinal`; fails with one line when
/// there is no driver or no GPU. Returns the chip to compile for: `chip`
/// when given, else the device's (sm_XY).
llvm::Expected<std::string> initializeCudaDevice(llvm::StringRef chip,
                                                 int ordinal = 0);

/// The device a rank of a tensor-parallel GPU run uses: its rank among the
/// processes mpirun started on this machine (Open MPI's
/// OMPI_COMM_WORLD_LOCAL_RANK), one GPU each; 0 for a single process.
int getLocalDeviceOrdinal();

/// Joins this rank of the MPI world (initMpiWorld, joined before) to an
/// NCCL communicator of all ranks, on the device initializeCudaDevice made
/// current: rank 0 makes its id, MPI broadcasts it (tfm/Runtime/Nccl.h).
llvm::Error initializeNccl();

/// Device buffers keyed by the host buffer they mirror; freed with the pool.
class DevicePool {
public:
  DevicePool() = default;
  DevicePool(const DevicePool &) = delete;
  DevicePool &operator=(const DevicePool &) = delete;
  ~DevicePool();
  /// The device copy of `host` (`bytes` long), uploaded when first asked for.
  llvm::Expected<void *> getUploaded(const void *host, uint64_t bytes);
  /// A fresh device buffer of `bytes`.
  llvm::Expected<void *> allocate(uint64_t bytes);

private:
  llvm::DenseMap<const void *, void *> mirrors;
  std::vector<void *> owned;
};

class DeviceFrame {
public:
  /// Fails with the driver's error when the buffers cannot be had.
  static llvm::Expected<std::unique_ptr<DeviceFrame>> create(CallFrame &host,
                                                             DevicePool &pool);
  DeviceFrame(const DeviceFrame &) = delete;
  DeviceFrame &operator=(const DeviceFrame &) = delete;

  /// Uploads the `tfm.input` tensors (they may change between calls), runs
  /// `call` on the device arguments, waits for the GPU, and downloads the
  /// non-cache results into the host frame. Fails with the driver's error.
  llvm::Error call(void (*call)(void **));
  /// Downloads KV cache `argument` into the host frame.
  llvm::Error downloadArgument(size_t argument);

private:
  explicit DeviceFrame(CallFrame &host) : host(host) {}

  CallFrame &host;
  std::vector<void *> arguments; // device data per argument (null: index)
  std::vector<void *> results;   // device data per result
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void *> descriptorPointers;
  std::vector<void *> packed;
};

} // namespace mlir::tfm::engine

#endif // TFM_ENGINE_DEVICEFRAME_H

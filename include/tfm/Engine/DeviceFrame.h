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
#ifndef TFM_TOOLS_TRANSFORMER_RUNNER_DEVICEFRAME_H
#define TFM_TOOLS_TRANSFORMER_RUNNER_DEVICEFRAME_H

#include "RunnerSupport.h"

#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace mlir::tfm::runner {

/// Loads the CUDA driver and picks device 0; fails with one line when there
/// is no driver or no GPU. Returns the chip to compile for: `chip` when
/// given, else the device's (sm_XY).
std::string initializeCudaDevice(llvm::StringRef chip);

/// Device buffers keyed by the host buffer they mirror; freed with the pool.
class DevicePool {
public:
  DevicePool() = default;
  DevicePool(const DevicePool &) = delete;
  DevicePool &operator=(const DevicePool &) = delete;
  ~DevicePool();
  /// The device copy of `host` (`bytes` long), uploaded when first asked for.
  void *getUploaded(const void *host, uint64_t bytes);
  /// A fresh device buffer of `bytes`.
  void *allocate(uint64_t bytes);

private:
  llvm::DenseMap<const void *, void *> mirrors;
  std::vector<void *> owned;
};

class DeviceFrame {
public:
  DeviceFrame(CallFrame &host, DevicePool &pool);
  DeviceFrame(const DeviceFrame &) = delete;
  DeviceFrame &operator=(const DeviceFrame &) = delete;

  /// Uploads the `tfm.input` tensors (they may change between calls), runs
  /// `call` on the device arguments, waits for the GPU, and downloads the
  /// non-cache results into the host frame. Fails with the driver's error.
  void call(void (*call)(void **));
  /// Downloads KV cache `argument` into the host frame.
  void downloadArgument(size_t argument);

private:
  CallFrame &host;
  std::vector<void *> arguments; // device data per argument (null: index)
  std::vector<void *> results;   // device data per result
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void *> descriptorPointers;
  std::vector<void *> packed;
};

} // namespace mlir::tfm::runner

#endif // TFM_TOOLS_TRANSFORMER_RUNNER_DEVICEFRAME_H

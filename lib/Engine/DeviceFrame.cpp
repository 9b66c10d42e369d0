//===- DeviceFrame.cpp - calling GPU-compiled entries ---------------------===//
#include "tfm/Engine/DeviceFrame.h"

#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Runtime/DType.h"
#include "tfm/Runtime/Mpi.h"
#include "tfm/Runtime/Nccl.h"

#include <algorithm>
#include <cstdlib>

#include "llvm/Support/FormatVariadic.h"

using namespace mlir::tfm;
using namespace mlir::tfm::engine;
using namespace mlir::tfm::runtime;

/// The runtime's sticky error, if any.
static llvm::Error checkCuda(const char *error) {
  if (!error)
    return llvm::Error::success();
  return makeError(llvm::StringRef(error).starts_with("tfm-cuda: error: ")
                       ? llvm::StringRef(error).drop_front(17)
                       : llvm::StringRef(error));
}

llvm::Expected<std::string> engine::initializeCudaDevice(llvm::StringRef chip,
                                                         int ordinal) {
  if (const char *error = tfmCudaInitialize(ordinal))
    return makeError(llvm::formatv("--device cuda: {0}", error));
  if (!chip.empty())
    return chip.str();
  int major = 0, minor = 0;
  char name[256] = {0};
  if (tfmCudaGetDeviceInfo(&major, &minor, name, sizeof(name)))
    return makeError(
        "--device cuda: cannot read the device's compute capability; pass "
        "--chip");
  if (major < 8)
    return makeError(
        llvm::formatv("--device cuda: {0} is sm_{1}{2}; tfm needs sm_80 or "
                      "newer",
                      name, major, minor));
  return llvm::formatv("sm_{0}{1}", major, minor).str();
}

int engine::getLocalDeviceOrdinal() {
  const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  return local ? std::max(0, std::atoi(local)) : 0;
}

llvm::Error engine::initializeNccl() {
  const MpiWorld *world = getMpiWorld();
  if (!world)
    return makeError("NCCL: the MPI world is not joined");
  char id[kNcclIdBytes] = {0};
  // Rank 0's id for all: a rank that cannot make one says so here, the
  // others stop in the broadcast when it aborts the job.
  if (world->rank == 0)
    if (const char *error = tfmNcclGetUniqueId(id, sizeof(id)))
      return makeError(
          llvm::formatv("--tensor-parallel on the GPU: {0}", error));
  if (llvm::Error error = broadcastFromRank0(id, sizeof(id)))
    return error;
  if (const char *error =
          tfmNcclInitialize(world->rank, world->size, id, sizeof(id)))
    return makeError(llvm::formatv("--tensor-parallel on the GPU: {0}", error));
  return llvm::Error::success();
}

DevicePool::~DevicePool() {
  for (void *buffer : owned)
    tfmCudaFree(buffer);
}

llvm::Expected<void *> DevicePool::allocate(uint64_t bytes) {
  void *buffer = tfmCudaAlloc(bytes ? bytes : 1);
  if (!buffer) {
    const char *error = tfmCudaGetLastError();
    return checkCuda(error ? error : "cannot allocate device memory");
  }
  owned.push_back(buffer);
  return buffer;
}

llvm::Expected<void *> DevicePool::getUploaded(const void *host,
                                               uint64_t bytes) {
  auto it = mirrors.find(host);
  if (it != mirrors.end())
    return it->second;
  llvm::Expected<void *> buffer = allocate(bytes);
  if (!buffer)
    return buffer.takeError();
  if (llvm::Error err = checkCuda(tfmCudaCopyToDevice(*buffer, host, bytes)))
    return std::move(err);
  mirrors[host] = *buffer;
  return *buffer;
}

static uint64_t getBytes(DType dtype, llvm::ArrayRef<int64_t> shape) {
  return *getNumBytes(shape, getDTypeSize(dtype));
}

llvm::Expected<std::unique_ptr<DeviceFrame>>
DeviceFrame::create(CallFrame &host, DevicePool &pool) {
  std::unique_ptr<DeviceFrame> frame(new DeviceFrame(host));
  auto &arguments = frame->arguments;
  auto &results = frame->results;
  auto &descriptors = frame->descriptors;
  auto &descriptorPointers = frame->descriptorPointers;
  auto &packed = frame->packed;
  const EntrySignature &sig = host.getSignature();
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    void *device = nullptr;
    if (arg.kind != EntryArgument::Kind::Index) {
      llvm::Expected<void *> uploaded = pool.getUploaded(
          host.getArgumentData(i), getBytes(arg.dtype, arg.shape));
      if (!uploaded)
        return uploaded.takeError();
      device = *uploaded;
    }
    arguments.push_back(device);
  }
  for (const EntryResult &r : sig.results) {
    if (r.isKVCache) {
      results.push_back(arguments[r.cacheArgument]);
      continue;
    }
    llvm::Expected<void *> buffer = pool.allocate(getBytes(r.dtype, r.shape));
    if (!buffer)
      return buffer.takeError();
    results.push_back(*buffer);
  }
  // The layout of CallFrame's packed array (RunnerSupport.cpp).
  for (auto [i, arg] : llvm::enumerate(sig.arguments))
    if (arg.kind != EntryArgument::Kind::Index)
      descriptors.push_back(makeDescriptor(arguments[i], arg.shape));
  for (auto [i, r] : llvm::enumerate(sig.results))
    if (!r.isKVCache)
      descriptors.push_back(makeDescriptor(results[i], r.shape));
  for (std::vector<int64_t> &d : descriptors)
    descriptorPointers.push_back(d.data());
  size_t next = 0;
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    if (arg.kind == EntryArgument::Kind::Index)
      packed.push_back(&host.getIndex(i));
    else
      packed.push_back(&descriptorPointers[next++]);
  }
  while (next < descriptorPointers.size())
    packed.push_back(&descriptorPointers[next++]);
  return frame;
}

llvm::Error DeviceFrame::call(void (*function)(void **)) {
  const EntrySignature &sig = host.getSignature();
  for (auto [i, arg] : llvm::enumerate(sig.arguments))
    if (arg.kind == EntryArgument::Kind::Input)
      if (llvm::Error err = checkCuda(
              tfmCudaCopyToDevice(arguments[i], host.getArgumentData(i),
                                  getBytes(arg.dtype, arg.shape))))
        return err;
  function(packed.data());
  if (llvm::Error err = checkCuda(tfmCudaSynchronize()))
    return err;
  for (auto [i, r] : llvm::enumerate(sig.results))
    if (!r.isKVCache)
      if (llvm::Error err = checkCuda(tfmCudaCopyToHost(
              host.getResultData(i), results[i], getBytes(r.dtype, r.shape))))
        return err;
  return llvm::Error::success();
}

llvm::Error DeviceFrame::downloadArgument(size_t i) {
  const EntryArgument &arg = host.getSignature().arguments[i];
  return checkCuda(tfmCudaCopyToHost(host.getArgumentData(i), arguments[i],
                                     getBytes(arg.dtype, arg.shape)));
}

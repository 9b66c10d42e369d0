//===- DeviceFrame.cpp - calling GPU-compiled entries ---------------------===//
#include "DeviceFrame.h"

#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Runtime/DType.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir::tfm;
using namespace mlir::tfm::runner;
using namespace mlir::tfm::runtime;

/// Fails with the runtime's sticky error, if any.
static void checkCuda(const char *error) {
  if (error)
    fail(llvm::StringRef(error).starts_with("tfm-cuda: error: ")
             ? llvm::StringRef(error).drop_front(17)
             : llvm::StringRef(error));
}

std::string runner::initializeCudaDevice(llvm::StringRef chip) {
  if (const char *error = tfmCudaInitialize(/*ordinal=*/0))
    fail(llvm::formatv("--device cuda: {0}", error));
  if (!chip.empty())
    return chip.str();
  int major = 0, minor = 0;
  char name[256] = {0};
  if (tfmCudaGetDeviceInfo(&major, &minor, name, sizeof(name)))
    fail("--device cuda: cannot read the device's compute capability; pass "
         "--chip");
  if (major < 8)
    fail(llvm::formatv("--device cuda: {0} is sm_{1}{2}; tfm needs sm_80 or "
                       "newer",
                       name, major, minor));
  return llvm::formatv("sm_{0}{1}", major, minor).str();
}

DevicePool::~DevicePool() {
  for (void *buffer : owned)
    tfmCudaFree(buffer);
}

void *DevicePool::allocate(uint64_t bytes) {
  void *buffer = tfmCudaAlloc(bytes ? bytes : 1);
  if (!buffer)
    checkCuda(tfmCudaGetLastError());
  owned.push_back(buffer);
  return buffer;
}

void *DevicePool::getUploaded(const void *host, uint64_t bytes) {
  auto [it, inserted] = mirrors.try_emplace(host, nullptr);
  if (inserted) {
    it->second = allocate(bytes);
    checkCuda(tfmCudaCopyToDevice(it->second, host, bytes));
  }
  return it->second;
}

static uint64_t getBytes(DType dtype, llvm::ArrayRef<int64_t> shape) {
  return *getNumBytes(shape, getDTypeSize(dtype));
}

DeviceFrame::DeviceFrame(CallFrame &host, DevicePool &pool) : host(host) {
  const EntrySignature &sig = host.getSignature();
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    void *device = nullptr;
    if (arg.kind != EntryArgument::Kind::Index)
      device = pool.getUploaded(host.getArgumentData(i),
                                getBytes(arg.dtype, arg.shape));
    arguments.push_back(device);
  }
  for (const EntryResult &r : sig.results)
    results.push_back(r.isKVCache ? arguments[r.cacheArgument]
                                  : pool.allocate(getBytes(r.dtype, r.shape)));
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
}

void DeviceFrame::call(void (*function)(void **)) {
  const EntrySignature &sig = host.getSignature();
  for (auto [i, arg] : llvm::enumerate(sig.arguments))
    if (arg.kind == EntryArgument::Kind::Input)
      checkCuda(tfmCudaCopyToDevice(arguments[i], host.getArgumentData(i),
                                    getBytes(arg.dtype, arg.shape)));
  function(packed.data());
  checkCuda(tfmCudaSynchronize());
  for (auto [i, r] : llvm::enumerate(sig.results))
    if (!r.isKVCache)
      checkCuda(tfmCudaCopyToHost(host.getResultData(i), results[i],
                                  getBytes(r.dtype, r.shape)));
}

void DeviceFrame::downloadArgument(size_t i) {
  const EntryArgument &arg = host.getSignature().arguments[i];
  checkCuda(tfmCudaCopyToHost(host.getArgumentData(i), arguments[i],
                              getBytes(arg.dtype, arg.shape)));
}

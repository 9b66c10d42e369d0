//===- CudaRuntime.cpp - mgpu* host functions over the CUDA driver --------===//
//
// The functions the host code of `--tfm-gpu-pipeline` calls (the list is the
// one MLIR 22's gpu-to-llvm and gpu.binary translation emit), implemented on
// the CUDA driver API loaded with dlopen. See tfm/Runtime/CudaRuntime.h for
// the error and resource policy.
//
// The few driver types, constants and prototypes used are declared in
// CudaDriver.h, so that the library builds without the CUDA toolkit.
//
//===----------------------------------------------------------------------===//
#include "tfm/Runtime/CudaRuntime.h"

#include "CudaDriver.h"
#include "CudaRuntimeInternal.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#define TFM_CUDA_EXPORT extern "C" __attribute__((visibility("default")))


//===----------------------------------------------------------------------===//
// State: the loaded driver, the context, the sticky error, the caches
//===----------------------------------------------------------------------===//

namespace {
struct State {
  std::mutex mutex;
  bool initialized = false;
  std::string initError; // Empty on success.
  int ordinal = 0;
  drv::Api api;
  drv::Device device = 0;
  drv::Context context = nullptr;
  std::string lastError; // Sticky; empty if none.
  std::vector<drv::Stream> streamPool;
  std::unordered_map<drv::Function, int> sharedMemoryOptIn;
  /// Device copies of encoded tensor maps, keyed by their bytes.
  std::unordered_map<std::string, drv::DevicePtr> tensorMaps;
  int64_t liveAllocations = 0;
  /// Allocations on a stream come from the device's default memory pool
  /// (cuMemAllocAsync), which keeps freed memory for reuse: an entry's
  /// temporaries cost no driver allocation after the first call and no
  /// device-wide synchronisation (cuMemFree has one).
  bool streamOrderedAllocations = false;
};

/// The profiler of tfmCudaProfileStart/Report: each launch between them is
/// bracketed by two timing events on its stream, and the host time of the
/// calls that may block (allocation, free, stream synchronisation) is summed.
struct Profile {
  bool enabled = false;
  struct Launch {
    drv::Function function;
    drv::Event start, end;
  };
  std::vector<Launch> launches;
  std::vector<drv::Event> spareEvents;
  std::unordered_map<drv::Function, std::string> kernelNames;
  struct HostCalls {
    int64_t calls = 0;
    double ms = 0;
  };
  std::map<std::string, HostCalls> hostCalls;
};
} // namespace

static State &state() {
  static State *s = new State; // Never destroyed: calls may come from atexit.
  return *s;
}

static Profile &profile() {
  static Profile *p = new Profile;
  return *p;
}

static thread_local bool contextIsCurrent = false;

/// The driver's name for `result`, or a few names known without a driver.
static std::string describe(drv::Result result) {
  State &s = state();
  const char *name = nullptr, *text = nullptr;
  if (s.api.cuGetErrorName && s.api.cuGetErrorName(result, &name) != 0)
    name = nullptr;
  if (s.api.cuGetErrorString && s.api.cuGetErrorString(result, &text) != 0)
    text = nullptr;
  if (!name) {
    switch (result) {
    case drv::kErrorStubLibrary:
      name = "CUDA_ERROR_STUB_LIBRARY";
      text = "the CUDA driver is the toolkit's stub library";
      break;
    case drv::kErrorNoDevice:
      name = "CUDA_ERROR_NO_DEVICE";
      text = "no CUDA-capable device is detected";
      break;
    default:
      name = "CUDA_ERROR";
    }
  }
  std::string out = std::string(name) + " (" + std::to_string(result) + ")";
  if (text)
    out += std::string(": ") + text;
  return out;
}

/// Records the first error and prints it. Caller holds no lock.
static void setError(const std::string &message) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.lastError.empty())
    return;
  s.lastError = "tfm-cuda: error: " + message;
  std::fprintf(stderr, "%s\n", s.lastError.c_str());
}

static bool hasError() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return !s.lastError.empty();
}

/// Checks a driver call; false (after recording the error) if it failed.
static bool check(drv::Result result, const char *call) {
  if (result == drv::kSuccess)
    return true;
  setError(std::string(call) + ": " + describe(result));
  return false;
}
#define TFM_CUDA_CHECK(call) check(call, #call)

static std::string loadDriver(drv::Api &api) {
  const char *library = "libcuda.so.1";
  void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return std::string("no CUDA driver: cannot load ") + library + " (" +
           (why ? why : "unknown reason") +
           "); running on the GPU needs an NVIDIA driver";
  }
  std::string missing;
#define TFM_RESOLVE(name, symbol, ret, ...)                                    \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, symbol));      \
  if (!api.name)                                                               \
    missing += std::string(missing.empty() ? "" : ", ") + symbol;
  TFM_CUDA_DRIVER_FUNCTIONS(TFM_RESOLVE)
#undef TFM_RESOLVE
  if (!missing.empty())
    return std::string("the CUDA driver ") + library +
           " is too old (lacks " + missing + "); CUDA 12 or newer is needed";
  return {};
}

static std::string initializeLocked(State &s) {
  if (std::string error = loadDriver(s.api); !error.empty())
    return error;
  drv::Result result = s.api.cuInit(0);
  if (result == drv::kErrorStubLibrary) {
    Dl_info info{};
    const char *where = "";
    if (dladdr(reinterpret_cast<void *>(s.api.cuInit), &info) &&
        info.dli_fname)
      where = info.dli_fname;
    return std::string("no CUDA driver: libcuda.so.1 is the CUDA toolkit's "
                       "stub library (") +
           where + "), not a driver (cuInit: " + describe(result) + ")";
  }
  if (result != drv::kSuccess)
    return "cannot initialise the CUDA driver: cuInit: " + describe(result);
  int count = 0;
  if ((result = s.api.cuDeviceGetCount(&count)) != drv::kSuccess)
    return "cuDeviceGetCount: " + describe(result);
  if (count == 0)
    return "no CUDA device: the driver reports no GPU";
  if (s.ordinal < 0 || s.ordinal >= count)
    return "no CUDA device " + std::to_string(s.ordinal) + " (the driver "
           "reports " + std::to_string(count) + ")";
  if ((result = s.api.cuDeviceGet(&s.device, s.ordinal)) != drv::kSuccess)
    return "cuDeviceGet: " + describe(result);
  if ((result = s.api.cuDevicePrimaryCtxRetain(&s.context, s.device)) !=
      drv::kSuccess)
    return "cuDevicePrimaryCtxRetain: " + describe(result);
  // Keep what the default pool holds across synchronisations (by default it
  // returns freed memory to the driver at each one, and the next call of an
  // entry would allocate again).
  int pools = 0;
  drv::MemPool pool = nullptr;
  unsigned long long keepAll = ~0ull;
  if (s.api.cuDeviceGetAttribute(&pools, drv::kAttrMemoryPoolsSupported,
                                 s.device) == drv::kSuccess &&
      pools && s.api.cuDeviceGetDefaultMemPool(&pool, s.device) ==
                   drv::kSuccess &&
      s.api.cuMemPoolSetAttribute(pool, drv::kMemPoolAttrReleaseThreshold,
                                  &keepAll) == drv::kSuccess)
    s.streamOrderedAllocations = true;
  return {};
}

static const char *initialize(int ordinal) {
  State &s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.initialized) {
      s.ordinal = ordinal;
      s.initError = initializeLocked(s);
      s.initialized = true;
    }
  }
  return s.initError.empty() ? nullptr : s.initError.c_str();
}

/// Initialises on first use (generated code loads its modules from a global
/// constructor) and makes the context current on the calling thread. False
/// when there is an error, recorded or new.
static bool ready() {
  State &s = state();
  if (const char *error = initialize(s.ordinal)) {
    setError(error);
    return false;
  }
  if (hasError())
    return false;
  if (!contextIsCurrent) {
    if (!TFM_CUDA_CHECK(s.api.cuCtxSetCurrent(s.context)))
      return false;
    contextIsCurrent = true;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// tfm entry points
//===----------------------------------------------------------------------===//

void tfm_cuda::recordError(const std::string &message) { setError(message); }

bool tfm_cuda::makeReady() { return ready(); }

TFM_CUDA_EXPORT const char *tfmCudaInitialize(int ordinal) {
  return initialize(ordinal);
}

TFM_CUDA_EXPORT int tfmCudaGetDeviceInfo(int *major, int *minor, char *name,
                                         size_t nameSize) {
  if (tfmCudaInitialize(state().ordinal))
    return 1;
  State &s = state();
  int ma = 0, mi = 0;
  if (s.api.cuDeviceGetAttribute(&ma, drv::kAttrComputeCapabilityMajor,
                                 s.device) ||
      s.api.cuDeviceGetAttribute(&mi, drv::kAttrComputeCapabilityMinor,
                                 s.device))
    return 1;
  if (name && nameSize &&
      s.api.cuDeviceGetName(name, static_cast<int>(nameSize), s.device))
    name[0] = 0;
  *major = ma;
  *minor = mi;
  return 0;
}

TFM_CUDA_EXPORT const char *tfmCudaGetLastError(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.lastError.empty() ? nullptr : s.lastError.c_str();
}

TFM_CUDA_EXPORT void tfmCudaClearError(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.lastError.clear();
}

TFM_CUDA_EXPORT const char *tfmCudaSynchronize(void) {
  if (ready())
    TFM_CUDA_CHECK(state().api.cuCtxSynchronize());
  return tfmCudaGetLastError();
}

TFM_CUDA_EXPORT int64_t tfmCudaLiveAllocations(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.liveAllocations;
}

TFM_CUDA_EXPORT void *tfmCudaAlloc(size_t bytes) {
  drv::DevicePtr ptr = 0;
  if (!ready() || bytes == 0)
    return nullptr;
  State &s = state();
  if (!TFM_CUDA_CHECK(s.api.cuMemAlloc(&ptr, bytes)))
    return nullptr;
  std::lock_guard<std::mutex> lock(s.mutex);
  ++s.liveAllocations;
  return reinterpret_cast<void *>(ptr);
}

TFM_CUDA_EXPORT void tfmCudaFree(void *device) {
  if (!device || !ready())
    return;
  State &s = state();
  if (TFM_CUDA_CHECK(s.api.cuMemFree(reinterpret_cast<drv::DevicePtr>(device)))) {
    std::lock_guard<std::mutex> lock(s.mutex);
    --s.liveAllocations;
  }
}

TFM_CUDA_EXPORT const char *tfmCudaCopyToDevice(void *device,
                                                const void *host,
                                                size_t bytes) {
  if (tfmCudaSynchronize())
    return tfmCudaGetLastError();
  TFM_CUDA_CHECK(state().api.cuMemcpyHtoD(
      reinterpret_cast<drv::DevicePtr>(device), host, bytes));
  return tfmCudaGetLastError();
}

TFM_CUDA_EXPORT const char *tfmCudaCopyToHost(void *host, const void *device,
                                              size_t bytes) {
  if (tfmCudaSynchronize())
    return tfmCudaGetLastError();
  TFM_CUDA_CHECK(state().api.cuMemcpyDtoH(
      host, reinterpret_cast<drv::DevicePtr>(device), bytes));
  return tfmCudaGetLastError();
}

//===----------------------------------------------------------------------===//
// mgpu* functions (the signatures gpu-to-llvm emits)
//===----------------------------------------------------------------------===//

TFM_CUDA_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.initialized)
    s.ordinal = device;
  else if (device != s.ordinal)
    std::fprintf(stderr, "tfm-cuda: warning: device %d requested after "
                         "device %d was initialised; staying on %d\n",
                 device, s.ordinal, s.ordinal);
}

/// A cubin or fatbin (`format=bin|fatbin`).
TFM_CUDA_EXPORT void *mgpuModuleLoad(void *data, size_t /*size*/) {
  drv::Module module = nullptr;
  if (ready())
    TFM_CUDA_CHECK(state().api.cuModuleLoadData(&module, data));
  return module;
}

/// PTX (`format=isa`), compiled by the driver at `optLevel`.
TFM_CUDA_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  drv::Module module = nullptr;
  if (!ready())
    return nullptr;
  char log[4096] = {0};
  int options[] = {drv::kJitErrorLogBuffer, drv::kJitErrorLogBufferSizeBytes,
                   drv::kJitOptimizationLevel};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                    reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  drv::Result result = state().api.cuModuleLoadDataEx(&module, data, 3,
                                                      options, values);
  if (result != drv::kSuccess)
    setError("cuModuleLoadDataEx (PTX JIT): " + describe(result) +
             (log[0] ? std::string("; ") + log : std::string()));
  return module;
}

TFM_CUDA_EXPORT void mgpuModuleUnload(void *module) {
  if (!module || !ready())
    return;
  // Generated code unloads its module from a global destructor; at process
  // exit the driver may have torn its state down already, and then there is
  // nothing left to release.
  drv::Result result =
      state().api.cuModuleUnload(static_cast<drv::Module>(module));
  if (result != drv::kErrorDeinitialized)
    check(result, "cuModuleUnload");
}

TFM_CUDA_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  drv::Function function = nullptr;
  if (module && ready() &&
      state().api.cuModuleGetFunction(&function,
                                      static_cast<drv::Module>(module),
                                      name) != drv::kSuccess)
    setError(std::string("cuModuleGetFunction: no kernel '") + name + "'");
  Profile &p = profile();
  if (function && p.enabled) {
    std::lock_guard<std::mutex> lock(state().mutex);
    p.kernelNames.try_emplace(function, name);
  }
  return function;
}

//===----------------------------------------------------------------------===//
// Profiler (tfmCudaProfileStart / tfmCudaProfileReport)
//===----------------------------------------------------------------------===//

static drv::Event takeTimingEvent() {
  Profile &p = profile();
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (!p.spareEvents.empty()) {
      drv::Event event = p.spareEvents.back();
      p.spareEvents.pop_back();
      return event;
    }
  }
  drv::Event event = nullptr;
  TFM_CUDA_CHECK(state().api.cuEventCreate(&event, 0));
  return event;
}

/// Records the start event of a profiled launch on `stream`; null when not
/// profiling.
static drv::Event profileLaunchStart(drv::Stream stream) {
  if (!profile().enabled)
    return nullptr;
  drv::Event start = takeTimingEvent();
  if (start)
    TFM_CUDA_CHECK(state().api.cuEventRecord(start, stream));
  return start;
}

static void profileLaunchEnd(drv::Function function, drv::Stream stream,
                             drv::Event start) {
  if (!start)
    return;
  drv::Event end = takeTimingEvent();
  if (!end)
    return;
  TFM_CUDA_CHECK(state().api.cuEventRecord(end, stream));
  std::lock_guard<std::mutex> lock(state().mutex);
  profile().launches.push_back({function, start, end});
}

/// Sums the host time of a call that may block, while profiling.
namespace {
class HostCallTimer {
public:
  // Reads the clock only while profiling: these calls are on every entry
  // call's path.
  explicit HostCallTimer(const char *name)
      : name(profile().enabled ? name : nullptr) {
    if (this->name)
      start = std::chrono::steady_clock::now();
  }
  ~HostCallTimer() {
    if (!name)
      return;
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    std::lock_guard<std::mutex> lock(state().mutex);
    Profile::HostCalls &calls = profile().hostCalls[name];
    ++calls.calls;
    calls.ms += ms;
  }

private:
  const char *name;
  std::chrono::steady_clock::time_point start;
};
} // namespace

/// Drops what was recorded (events go back to the spare list).
static void clearProfileLocked(Profile &p) {
  for (const Profile::Launch &launch : p.launches) {
    p.spareEvents.push_back(launch.start);
    p.spareEvents.push_back(launch.end);
  }
  p.launches.clear();
  p.hostCalls.clear();
}

TFM_CUDA_EXPORT void tfmCudaProfileStart(void) {
  if (!ready())
    return;
  TFM_CUDA_CHECK(state().api.cuCtxSynchronize());
  std::lock_guard<std::mutex> lock(state().mutex);
  Profile &p = profile();
  clearProfileLocked(p);
  p.enabled = true;
}

TFM_CUDA_EXPORT void tfmCudaProfileReport(int calls) {
  if (!ready())
    return;
  State &s = state();
  TFM_CUDA_CHECK(s.api.cuCtxSynchronize());
  std::lock_guard<std::mutex> lock(s.mutex);
  Profile &p = profile();
  p.enabled = false;
  struct Kernel {
    std::string name;
    int64_t launches = 0;
    double ms = 0;
  };
  std::map<std::string, Kernel> kernels;
  double totalMs = 0;
  for (const Profile::Launch &launch : p.launches) {
    float ms = 0;
    if (s.api.cuEventElapsedTime(&ms, launch.start, launch.end) !=
        drv::kSuccess)
      continue;
    auto it = p.kernelNames.find(launch.function);
    std::string name = it == p.kernelNames.end() ? "?" : it->second;
    Kernel &k = kernels[name];
    k.name = name;
    ++k.launches;
    k.ms += ms;
    totalMs += ms;
  }
  std::vector<Kernel> sorted;
  for (auto &entry : kernels)
    sorted.push_back(entry.second);
  std::sort(sorted.begin(), sorted.end(),
            [](const Kernel &a, const Kernel &b) { return a.ms > b.ms; });
  double perCall = calls > 0 ? calls : 1;
  std::printf("profile: %zu launches of %zu kernels per %d call(s); kernel "
              "time per call %.4f ms (sum of launch-to-end events)\n",
              p.launches.size(), sorted.size(), calls, totalMs / perCall);
  std::printf("  %10s %7s %9s %6s  %s\n", "ms/call", "launch", "us/launch",
              "share", "kernel");
  // The largest kernels one by one, the rest summed (a model has hundreds).
  constexpr size_t kListed = 30;
  Kernel rest;
  rest.name = "(the other kernels)";
  for (size_t i = 0; i < sorted.size(); ++i) {
    const Kernel &k = sorted[i];
    if (i >= kListed) {
      rest.launches += k.launches;
      rest.ms += k.ms;
      continue;
    }
    std::printf("  %10.4f %7.1f %9.2f %5.1f%%  %s\n", k.ms / perCall,
                k.launches / perCall, 1000 * k.ms / k.launches,
                totalMs > 0 ? 100 * k.ms / totalMs : 0, k.name.c_str());
  }
  if (rest.launches)
    std::printf("  %10.4f %7.1f %9.2f %5.1f%%  %s\n", rest.ms / perCall,
                rest.launches / perCall, 1000 * rest.ms / rest.launches,
                totalMs > 0 ? 100 * rest.ms / totalMs : 0, rest.name.c_str());
  for (auto &[name, host] : p.hostCalls)
    std::printf("  host %s: %.1f calls, %.4f ms per call\n", name.c_str(),
                host.calls / perCall, host.ms / perCall);
  clearProfileLocked(p);
}

/// Opts `function` in to `bytes` of dynamic shared memory when that is above
/// the default limit; once per function and size.
static bool optInSharedMemory(drv::Function function, int32_t bytes) {
  if (bytes <= drv::kDefaultSharedMemoryLimit)
    return true;
  State &s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.sharedMemoryOptIn.find(function);
    if (it != s.sharedMemoryOptIn.end() && it->second >= bytes)
      return true;
  }
  if (!TFM_CUDA_CHECK(s.api.cuFuncSetAttribute(
          function, drv::kFuncAttrMaxDynamicSharedSizeBytes, bytes)))
    return false;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.sharedMemoryOptIn[function] = bytes;
  return true;
}

TFM_CUDA_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                      intptr_t gridY, intptr_t gridZ,
                                      intptr_t blockX, intptr_t blockY,
                                      intptr_t blockZ, int32_t smem,
                                      void *stream, void **params,
                                      void **extra, size_t /*paramsCount*/) {
  if (!function || !ready())
    return;
  auto f = static_cast<drv::Function>(function);
  if (!optInSharedMemory(f, smem))
    return;
  auto s = static_cast<drv::Stream>(stream);
  drv::Event start = profileLaunchStart(s);
  TFM_CUDA_CHECK(state().api.cuLaunchKernel(f, gridX, gridY, gridZ, blockX,
                                            blockY, blockZ, smem, s, params,
                                            extra));
  profileLaunchEnd(f, s, start);
}

TFM_CUDA_EXPORT void
mgpuLaunchClusterKernel(void *function, intptr_t clusterX, intptr_t clusterY,
                        intptr_t clusterZ, intptr_t gridX, intptr_t gridY,
                        intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                        intptr_t blockZ, int32_t smem, void *stream,
                        void **params, void **extra) {
  if (!function || !ready())
    return;
  auto f = static_cast<drv::Function>(function);
  if (!optInSharedMemory(f, smem))
    return;
  drv::LaunchAttribute cluster{};
  cluster.id = drv::kLaunchAttributeClusterDimension;
  cluster.value.clusterDim = {unsigned(clusterX), unsigned(clusterY),
                              unsigned(clusterZ)};
  drv::LaunchConfig config{};
  config.gridDimX = gridX;
  config.gridDimY = gridY;
  config.gridDimZ = gridZ;
  config.blockDimX = blockX;
  config.blockDimY = blockY;
  config.blockDimZ = blockZ;
  config.sharedMemBytes = smem;
  config.stream = static_cast<drv::Stream>(stream);
  config.attrs = &cluster;
  config.numAttrs = 1;
  drv::Event start = profileLaunchStart(config.stream);
  TFM_CUDA_CHECK(state().api.cuLaunchKernelEx(&config, f, params, extra));
  profileLaunchEnd(f, config.stream, start);
}

TFM_CUDA_EXPORT void *mgpuStreamCreate() {
  if (!ready())
    return nullptr;
  State &s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.streamPool.empty()) {
      drv::Stream stream = s.streamPool.back();
      s.streamPool.pop_back();
      return stream;
    }
  }
  drv::Stream stream = nullptr;
  TFM_CUDA_CHECK(s.api.cuStreamCreate(&stream, drv::kStreamNonBlocking));
  return stream;
}

/// Returns the stream to the pool: generated code creates and destroys one
/// per call of an entry function.
TFM_CUDA_EXPORT void mgpuStreamDestroy(void *stream) {
  if (!stream)
    return;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.streamPool.push_back(static_cast<drv::Stream>(stream));
}

TFM_CUDA_EXPORT void mgpuStreamSynchronize(void *stream) {
  HostCallTimer timer("mgpuStreamSynchronize");
  if (ready())
    TFM_CUDA_CHECK(
        state().api.cuStreamSynchronize(static_cast<drv::Stream>(stream)));
}

TFM_CUDA_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  if (ready())
    TFM_CUDA_CHECK(state().api.cuStreamWaitEvent(
        static_cast<drv::Stream>(stream), static_cast<drv::Event>(event), 0));
}

TFM_CUDA_EXPORT void *mgpuEventCreate() {
  drv::Event event = nullptr;
  if (ready())
    TFM_CUDA_CHECK(state().api.cuEventCreate(&event, drv::kEventDisableTiming));
  return event;
}

TFM_CUDA_EXPORT void mgpuEventDestroy(void *event) {
  if (event && ready())
    TFM_CUDA_CHECK(
        state().api.cuEventDestroy(static_cast<drv::Event>(event)));
}

TFM_CUDA_EXPORT void mgpuEventSynchronize(void *event) {
  if (ready())
    TFM_CUDA_CHECK(
        state().api.cuEventSynchronize(static_cast<drv::Event>(event)));
}

TFM_CUDA_EXPORT void mgpuEventRecord(void *event, void *stream) {
  if (ready())
    TFM_CUDA_CHECK(state().api.cuEventRecord(
        static_cast<drv::Event>(event), static_cast<drv::Stream>(stream)));
}

TFM_CUDA_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                                   bool isHostShared) {
  HostCallTimer timer("mgpuMemAlloc");
  drv::DevicePtr ptr = 0;
  if (!ready() || sizeBytes == 0)
    return nullptr;
  State &s = state();
  bool ok;
  if (isHostShared)
    ok = TFM_CUDA_CHECK(
        s.api.cuMemAllocManaged(&ptr, sizeBytes, drv::kMemAttachGlobal));
  else if (stream && s.streamOrderedAllocations)
    ok = TFM_CUDA_CHECK(s.api.cuMemAllocAsync(
        &ptr, sizeBytes, static_cast<drv::Stream>(stream)));
  else
    ok = TFM_CUDA_CHECK(s.api.cuMemAlloc(&ptr, sizeBytes));
  if (ok) {
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.liveAllocations;
  }
  return reinterpret_cast<void *>(ptr);
}

/// Stream-ordered when given a stream: the memory returns to the pool once
/// the work queued before on that stream is done, with no host
/// synchronisation.
TFM_CUDA_EXPORT void mgpuMemFree(void *ptr, void *stream) {
  HostCallTimer timer("mgpuMemFree");
  if (!ptr || !ready())
    return;
  State &s = state();
  auto device = reinterpret_cast<drv::DevicePtr>(ptr);
  bool ok = stream && s.streamOrderedAllocations
                ? TFM_CUDA_CHECK(s.api.cuMemFreeAsync(
                      device, static_cast<drv::Stream>(stream)))
                : TFM_CUDA_CHECK(s.api.cuMemFree(device));
  if (ok) {
    std::lock_guard<std::mutex> lock(s.mutex);
    --s.liveAllocations;
  }
}

TFM_CUDA_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                                void *stream) {
  if (ready())
    TFM_CUDA_CHECK(state().api.cuMemcpyAsync(
        reinterpret_cast<drv::DevicePtr>(dst),
        reinterpret_cast<drv::DevicePtr>(src), sizeBytes,
        static_cast<drv::Stream>(stream)));
}

TFM_CUDA_EXPORT void mgpuMemset32(void *dst, unsigned value, size_t count,
                                  void *stream) {
  if (ready())
    TFM_CUDA_CHECK(state().api.cuMemsetD32Async(
        reinterpret_cast<drv::DevicePtr>(dst), value, count,
        static_cast<drv::Stream>(stream)));
}

TFM_CUDA_EXPORT void mgpuMemset16(void *dst, unsigned short value,
                                  size_t count, void *stream) {
  if (ready())
    TFM_CUDA_CHECK(state().api.cuMemsetD16Async(
        reinterpret_cast<drv::DevicePtr>(dst), value, count,
        static_cast<drv::Stream>(stream)));
}

/// A ranked memref descriptor: allocated and aligned pointers, offset, then
/// `rank` sizes and `rank` strides.
struct MemRefDescriptor {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[1];
};

static std::pair<char *, uint64_t>
getMemRefBytes(int64_t rank, const MemRefDescriptor *desc, int64_t elementSize) {
  uint64_t count = 1;
  for (int64_t i = 0; i < rank; ++i)
    count *= desc->sizesAndStrides[i];
  return {desc->aligned + desc->offset * elementSize, count * elementSize};
}

TFM_CUDA_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  if (ready())
    TFM_CUDA_CHECK(state().api.cuMemHostRegister(ptr, sizeBytes, 0));
}

TFM_CUDA_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                               int64_t elementSizeBytes) {
  auto [ptr, bytes] = getMemRefBytes(
      rank, static_cast<MemRefDescriptor *>(descriptor), elementSizeBytes);
  mgpuMemHostRegister(ptr, bytes);
}

TFM_CUDA_EXPORT void mgpuMemHostUnregister(void *ptr) {
  if (ready())
    TFM_CUDA_CHECK(state().api.cuMemHostUnregister(ptr));
}

TFM_CUDA_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank,
                                                 void *descriptor,
                                                 int64_t elementSizeBytes) {
  mgpuMemHostUnregister(getMemRefBytes(rank,
                                       static_cast<MemRefDescriptor *>(
                                           descriptor),
                                       elementSizeBytes)
                            .first);
}

/// Bytes per element of CUtensorMapDataType 0..12 (uint8, uint16, uint32,
/// int32, uint64, int64, float16, float32, float64, bfloat16, float32_ftz,
/// tfloat32, tfloat32_ftz).
static const int kTensorMapElementBytes[] = {1, 2, 4, 4, 8, 8, 2,
                                             4, 8, 2, 4, 4, 4};

/// Encodes a TMA descriptor for a ranked memref (outermost dimension first,
/// as MLIR writes it; the driver wants innermost first) and copies it to
/// device memory, where the kernel reads it. Generated code encodes its maps
/// on every call of its host function: device copies are cached by content,
/// so a repeated call reuses them instead of allocating again.
TFM_CUDA_EXPORT void *mgpuTensorMapEncodeTiledMemref(
    int64_t rank, void *descriptor, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t l2Promotion, int64_t oobFill, int64_t *boxDims) {
  if (rank < 1 || rank > 5 || dataType < 0 || dataType > 12) {
    setError("mgpuTensorMapEncodeTiledMemref: unsupported rank " +
             std::to_string(rank) + " or data type " +
             std::to_string(dataType));
    return nullptr;
  }
  if (!ready())
    return nullptr;
  auto *desc = static_cast<MemRefDescriptor *>(descriptor);
  const int64_t *sizes = desc->sizesAndStrides;
  const int64_t *strides = desc->sizesAndStrides + rank;
  int64_t elementBytes = kTensorMapElementBytes[dataType];
  unsigned long long globalDim[5] = {1, 1, 1, 1, 1}, globalStrides[5] = {0};
  unsigned box[5] = {1, 1, 1, 1, 1}, elementStrides[5] = {1, 1, 1, 1, 1};
  for (int64_t i = 0; i < rank; ++i) {
    globalDim[i] = sizes[rank - 1 - i];
    box[i] = static_cast<unsigned>(boxDims[rank - 1 - i]);
  }
  for (int64_t i = 0; i + 1 < rank; ++i)
    globalStrides[i] = strides[rank - 2 - i] * elementBytes;
  drv::TensorMap map;
  State &s = state();
  if (!TFM_CUDA_CHECK(s.api.cuTensorMapEncodeTiled(
          &map, static_cast<int>(dataType), static_cast<unsigned>(rank),
          desc->aligned + desc->offset * elementBytes, globalDim,
          globalStrides, box, elementStrides, static_cast<int>(interleave),
          static_cast<int>(swizzle), static_cast<int>(l2Promotion),
          static_cast<int>(oobFill))))
    return nullptr;
  std::string key(reinterpret_cast<const char *>(&map), sizeof(map));
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.tensorMaps.find(key);
    if (it != s.tensorMaps.end())
      return reinterpret_cast<void *>(it->second);
  }
  drv::DevicePtr device = 0;
  if (!TFM_CUDA_CHECK(s.api.cuMemAlloc(&device, sizeof(map))) ||
      !TFM_CUDA_CHECK(s.api.cuMemcpyHtoD(device, &map, sizeof(map))))
    return nullptr;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.tensorMaps.emplace(std::move(key), device);
  return reinterpret_cast<void *>(device);
}

//===- tfm-artifact-run.cpp - run a saved GPU artifact --------------------===//
//
//   tfm-artifact-run DIR [--entry NAME] [--random] [--repeat N]
//       [--check NAME=REF.bin] [--atol A] [--rtol R] [--flops F] [--profile]
//
// Loads DIR/model.so (transformer-runner --emit-artifact, then
// scripts/gpu-artifact.sh), binds each argument of the entry from
// DIR/data/<i>.bin (or, for tensors with --random or when absent, values:
// uniform [-0.05, 0.05) for floats, 1 for integers, zero KV caches),
// uploads them to the GPU, calls the entry once to warm up and N more times
// timed, downloads the f32 results and compares them with references
// (|x - r| <= atol + rtol |r| everywhere). Prints one line per result and a
// timing line; with --profile, N more calls are made under the runtime's
// profiler and each kernel's time per call is printed (tfmCudaProfileReport); exits 1 on a mismatch or a CUDA error. Needs no MLIR or LLVM:
// only libtfm_cuda_runtime.so, found next to model.so or the tool.
//
//===----------------------------------------------------------------------===//
#include "tfm/Runtime/CudaRuntime.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {
[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "tfm-artifact-run: error: %s\n", message.c_str());
  std::exit(1);
}

void checkCuda(const char *error) {
  if (error)
    fail(error);
}

struct Tensor {
  std::string kind, name, dtype;
  std::vector<int64_t> shape;
  bool isResult = false;

  size_t elementSize() const {
    if (dtype == "f64" || dtype == "i64")
      return 8;
    if (dtype == "f32" || dtype == "i32")
      return 4;
    if (dtype == "f16" || dtype == "bf16" || dtype == "i16")
      return 2;
    return 1;
  }
  size_t count() const {
    size_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t bytes() const { return kind == "index" ? 8 : count() * elementSize(); }
};

std::vector<int64_t> parseShape(const std::string &text) {
  std::vector<int64_t> shape;
  if (text == "scalar")
    return shape;
  std::stringstream ss(text);
  std::string dim;
  while (std::getline(ss, dim, 'x'))
    shape.push_back(std::stoll(dim));
  return shape;
}

/// The arguments and results of `entry` in DIR/manifest.txt (the first
/// entry when `entry` is empty).
std::vector<Tensor> readManifest(const std::string &path, std::string &entry) {
  std::ifstream in(path);
  if (!in)
    fail("cannot read " + path);
  std::vector<Tensor> tensors;
  std::string line, current;
  bool found = false;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string word;
    ss >> word;
    if (word == "entry") {
      ss >> current;
      if (entry.empty())
        entry = current;
      found |= current == entry;
      continue;
    }
    if (current != entry)
      continue;
    Tensor t;
    std::string shape;
    if (word == "arg") {
      ss >> t.kind >> t.dtype >> shape;
    } else if (word == "result") {
      t.kind = "result";
      t.isResult = true;
      ss >> t.dtype >> shape;
    } else {
      fail(path + ": unexpected line '" + line + "'");
    }
    // The name is the rest of the line (it may contain spaces).
    std::getline(ss >> std::ws, t.name);
    if (t.kind != "index")
      t.shape = parseShape(shape);
    tensors.push_back(t);
  }
  if (!found)
    fail(path + ": no entry '" + entry + "'");
  return tensors;
}

bool readFile(const std::string &path, std::vector<char> &out, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  out.resize(bytes);
  in.read(out.data(), bytes);
  if (size_t(in.gcount()) != bytes)
    fail(path + ": expected " + std::to_string(bytes) + " bytes");
  return true;
}

uint16_t floatToHalf(float f) {
  // Round-to-nearest-even f32 -> f16 for the small values used here.
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (exp <= 0)
    return uint16_t(sign);
  if (exp >= 31)
    return uint16_t(sign | 0x7c00);
  uint32_t h = sign | (uint32_t(exp) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h;
  return uint16_t(h);
}

/// Deterministic fill: floats uniform in [-0.05, 0.05) (1-D "*weight"
/// scales around 1), integers 1, KV caches 0.
void fillDefault(const Tensor &t, std::vector<char> &out, uint64_t seed) {
  out.assign(t.bytes(), 0);
  if (t.kind == "kv_cache" || t.kind == "result")
    return;
  if (t.kind == "index")
    return;
  bool isScale = t.shape.size() == 1 && t.name.size() >= 6 &&
                 t.name.compare(t.name.size() - 6, 6, "weight") == 0;
  uint64_t state = seed;
  for (char c : t.name)
    state = (state ^ uint8_t(c)) * 0x100000001b3ull;
  for (size_t i = 0; i < t.count(); ++i) {
    state += 0x9e3779b97f4a7c15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    float value = (float(z >> 40) * 0x1p-24f - 0.5f) * 0.1f +
                  (isScale ? 1.0f : 0.0f);
    char *dst = out.data() + i * t.elementSize();
    if (t.dtype == "f32") {
      std::memcpy(dst, &value, 4);
    } else if (t.dtype == "f16") {
      uint16_t h = floatToHalf(value);
      std::memcpy(dst, &h, 2);
    } else if (t.dtype == "bf16") {
      uint32_t bits;
      std::memcpy(&bits, &value, 4);
      uint16_t b = uint16_t(bits >> 16);
      std::memcpy(dst, &b, 2);
    } else if (t.dtype == "i64") {
      int64_t one = 1;
      std::memcpy(dst, &one, 8);
    } else if (t.dtype == "i32") {
      int32_t one = 1;
      std::memcpy(dst, &one, 4);
    }
  }
}

std::vector<int64_t> makeDescriptor(void *data, const std::vector<int64_t> &shape) {
  size_t rank = shape.size();
  std::vector<int64_t> words(3 + 2 * rank);
  words[0] = words[1] = int64_t(reinterpret_cast<intptr_t>(data));
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    words[3 + i] = shape[i];
    words[3 + rank + i] = stride;
    stride *= shape[i];
  }
  return words;
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    fail("usage: tfm-artifact-run DIR [--entry NAME] [--random] [--repeat N] "
         "[--check NAME=REF.bin] [--atol A] [--rtol R] [--flops F] "
         "[--profile]");
  std::string dir = argv[1], entry;
  bool random = false;
  int repeat = 10;
  bool profileCalls = false;
  double atol = 1e-4, rtol = 1e-3, flops = 0;
  std::map<std::string, std::string> checks;
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        fail(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--entry")
      entry = value();
    else if (flag == "--random")
      random = true;
    else if (flag == "--profile")
      profileCalls = true;
    else if (flag == "--repeat")
      repeat = std::stoi(value());
    else if (flag == "--atol")
      atol = std::stod(value());
    else if (flag == "--rtol")
      rtol = std::stod(value());
    else if (flag == "--flops")
      flops = std::stod(value());
    else if (flag == "--check") {
      std::string spec = value();
      size_t eq = spec.find('=');
      if (eq == std::string::npos)
        fail("--check " + spec + ": expected NAME=REF.bin");
      checks[spec.substr(0, eq)] = spec.substr(eq + 1);
    } else
      fail("unknown option " + flag);
  }

  std::vector<Tensor> tensors = readManifest(dir + "/manifest.txt", entry);
  if (const char *error = tfmCudaInitialize(0))
    fail(std::string("no usable GPU: ") + error);
  int major = 0, minor = 0;
  char name[256] = {0};
  tfmCudaGetDeviceInfo(&major, &minor, name, sizeof(name));

  void *library = dlopen((dir + "/model.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library)
    fail(std::string("cannot load the artifact: ") + dlerror());
  auto call = reinterpret_cast<void (*)(void **)>(
      dlsym(library, ("tfm_packed_" + entry).c_str()));
  if (!call)
    fail(dir + "/model.so has no tfm_packed_" + entry);
  checkCuda(tfmCudaGetLastError()); // Loading the kernels.

  // Host values, device buffers, descriptors, the packed array.
  size_t n = tensors.size();
  std::vector<std::vector<char>> host(n);
  std::vector<void *> device(n, nullptr);
  std::vector<int64_t> indices(n, 0);
  std::vector<std::vector<int64_t>> descriptors(n);
  std::vector<void *> descriptorPointers(n, nullptr);
  std::vector<void *> packed(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const Tensor &t = tensors[i];
    // --random replaces tensors only: index arguments (a decode position)
    // keep their saved values.
    bool fromFile = (!random || t.kind == "index") && !t.isResult &&
                    readFile(dir + "/data/" + std::to_string(i) + ".bin",
                             host[i], t.bytes());
    if (!fromFile)
      fillDefault(t, host[i], 1);
    if (t.kind == "index") {
      std::memcpy(&indices[i], host[i].data(), 8);
      packed[i] = &indices[i];
      continue;
    }
    device[i] = tfmCudaAlloc(t.bytes());
    checkCuda(tfmCudaGetLastError());
    if (!t.isResult)
      checkCuda(tfmCudaCopyToDevice(device[i], host[i].data(), t.bytes()));
    descriptors[i] = makeDescriptor(device[i], t.shape);
    descriptorPointers[i] = descriptors[i].data();
    packed[i] = &descriptorPointers[i];
  }
  int64_t liveBefore = tfmCudaLiveAllocations();

  using Clock = std::chrono::steady_clock;
  call(packed.data());
  checkCuda(tfmCudaSynchronize());
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    Clock::time_point start = Clock::now();
    call(packed.data());
    checkCuda(tfmCudaSynchronize());
    times.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - start)
            .count());
  }
  // Profiled separately: the events around each launch cost time too.
  if (profileCalls && repeat > 0) {
    tfmCudaProfileStart();
    for (int r = 0; r < repeat; ++r)
      call(packed.data());
    tfmCudaProfileReport(repeat);
    checkCuda(tfmCudaGetLastError());
  }
  int64_t leaked = tfmCudaLiveAllocations() - liveBefore;

  bool ok = true;
  for (size_t i = 0; i < n; ++i) {
    const Tensor &t = tensors[i];
    if (!t.isResult)
      continue;
    checkCuda(tfmCudaCopyToHost(host[i].data(), device[i], t.bytes()));
    auto it = checks.find(t.name);
    if (it == checks.end() || t.dtype != "f32") {
      float first = 0;
      if (t.dtype == "f32" && t.count())
        std::memcpy(&first, host[i].data(), 4);
      std::printf("result %s: %s, first value %g\n", t.name.c_str(),
                  t.dtype.c_str(), first);
      continue;
    }
    std::vector<char> reference;
    if (!readFile(it->second, reference, t.bytes()))
      fail("cannot read " + it->second);
    const float *got = reinterpret_cast<const float *>(host[i].data());
    const float *want = reinterpret_cast<const float *>(reference.data());
    double maxAbs = 0, maxRel = 0;
    size_t bad = 0;
    for (size_t k = 0; k < t.count(); ++k) {
      double diff = std::fabs(double(got[k]) - double(want[k]));
      if (!(diff <= atol + rtol * std::fabs(double(want[k]))))
        ++bad;
      maxAbs = std::max(maxAbs, std::isnan(diff) ? INFINITY : diff);
      if (want[k] != 0)
        maxRel = std::max(maxRel, diff / std::fabs(double(want[k])));
    }
    std::printf("result %s: max abs err %.3g, max rel err %.3g, %zu of %zu "
                "outside atol %g + rtol %g: %s\n",
                t.name.c_str(), maxAbs, maxRel, bad, t.count(), atol, rtol,
                bad ? "FAIL" : "PASS");
    ok &= bad == 0;
  }
  std::sort(times.begin(), times.end());
  double median = times.empty() ? 0 : times[times.size() / 2];
  std::printf("device: %s (sm_%d%d); @%s: median %.4f ms, min %.4f ms over "
              "%d runs",
              name, major, minor, entry.c_str(), median,
              times.empty() ? 0 : times.front(), repeat);
  if (flops > 0 && median > 0)
    std::printf(", %.1f TFLOP/s", flops / (median * 1e-3) / 1e12);
  std::printf("; device allocations left by the entry: %lld\n",
              (long long)leaked);
  for (void *buffer : device)
    tfmCudaFree(buffer);
  checkCuda(tfmCudaGetLastError());
  return ok && leaked == 0 ? 0 : 1;
}

//===- transformer-runner.cpp - JIT-run a tfm model on real weights -------===//
//
//   transformer-runner MODEL.mlir --weights W.safetensors
//       --input input_ids=ids.npy --input pos=0 --output logits=out.npy
//       [--entry FN] [--repeat N] [--random-weights SEED]
//
// Reads the entry function's signature before lowering, binds every
// `tfm.param` argument to the tensor of that name in the .safetensors file
// (checked for presence, dtype and shape; passed without a copy when aligned)
// and every `tfm.input` to an .npy array or an integer, then lowers the module
// with the tfm CPU pipeline, JIT-compiles it and calls `_mlir_ciface_<entry>`
// following the calling convention in tfm/Pipelines/Pipelines.h.
//
// The contract check and the Q/K/V fusion of the pipeline run first, on their
// own: fusion changes the signature (one concatenated weight argument listing
// its `tfm.param_parts`), and binding must see the signature that is compiled.
// KV caches (`tfm.kv_cache`) are zero unless an --input preloads them; their
// updated contents can be written with --output like any result. Bad input
// ends with one `transformer-runner: error: ...` line and exit code 1.
//
//===----------------------------------------------------------------------===//
#include "RunnerRegistration.h"

#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Runtime/EntrySignature.h"
#include "tfm/Runtime/Npy.h"
#include "tfm/Runtime/SafeTensors.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::runtime;
namespace cl = llvm::cl;

static cl::opt<std::string> modelFile(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir>"));
static cl::opt<std::string>
    weightsFile("weights", cl::value_desc("file.safetensors"),
                cl::desc("Weights, bound to tfm.param arguments by name"));
static cl::list<std::string>
    inputSpecs("input", cl::value_desc("NAME=FILE.npy|NAME=INTEGER"),
               cl::desc("Value of a tfm.input argument (an .npy array for a "
                        "tensor, an integer for an index)"));
static cl::list<std::string>
    outputSpecs("output", cl::value_desc("NAME=FILE.npy"),
                cl::desc("Write the tfm.output result NAME (f16/bf16 as f32)"));
static cl::opt<std::string>
    entryName("entry", cl::value_desc("function"),
              cl::desc("Entry function (default: @forward, or the only "
                       "public function)"));
static cl::opt<unsigned>
    repeat("repeat", cl::init(0), cl::value_desc("N"),
           cl::desc("Time N runs and report compile time and the median, "
                    "min and max run time"));
static cl::opt<uint64_t> randomWeights(
    "random-weights", cl::value_desc("SEED"),
    cl::desc("Fill parameters with deterministic uniform values in "
             "[-0.05, 0.05) (1-D '*weight' norm scales around 1) instead of "
             "reading --weights"));
static cl::opt<std::string> pipelineOptions(
    "pipeline-options", cl::value_desc("options"),
    cl::desc("Options of --tfm-cpu-pipeline, e.g. 'vectorize=0 "
             "fuse-qkv=0'"));
static cl::list<std::string> sharedLibs(
    "shared-libs", cl::CommaSeparated, cl::value_desc("lib.so"),
    cl::desc("Libraries to resolve symbols from (default: MLIR's "
             "c_runner_utils when it is installed)"));
static cl::opt<unsigned>
    printCount("print-values", cl::init(4), cl::value_desc("N"),
               cl::desc("Leading values of each result to print"));

/// Reports one error line and exits: bad input never crashes the runner.
[[noreturn]] static void fail(const llvm::Twine &message) {
  llvm::errs() << "transformer-runner: error: " << message << "\n";
  std::exit(1);
}

template <typename T> static T check(llvm::Expected<T> value) {
  if (!value)
    fail(llvm::toString(value.takeError()));
  return std::move(*value);
}

namespace {
/// A zero-initialised, 64-byte aligned host buffer.
class AlignedBuffer {
public:
  explicit AlignedBuffer(uint64_t numBytes) {
    uint64_t rounded = llvm::alignTo(std::max<uint64_t>(numBytes, 1), 64);
    data.reset(static_cast<char *>(std::aligned_alloc(64, rounded)));
    if (!data)
      fail(llvm::formatv("cannot allocate {0} bytes", numBytes));
    std::memset(data.get(), 0, rounded);
  }
  char *get() const { return data.get(); }

private:
  struct Free {
    void operator()(char *p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data;
};

/// A memref descriptor of any rank, laid out as StridedMemRefType<T, Rank>:
/// {allocated, aligned, offset, sizes[Rank], strides[Rank]}, identity layout.
/// The element type does not change the layout, so one builder serves every
/// tensor argument.
class MemRefDescriptor {
public:
  MemRefDescriptor(void *data, llvm::ArrayRef<int64_t> shape) {
    size_t rank = shape.size();
    words.resize(3 + 2 * rank);
    intptr_t address = reinterpret_cast<intptr_t>(data);
    words[0] = address;
    words[1] = address;
    words[2] = 0;
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      words[3 + i] = shape[i];
      words[3 + rank + i] = stride;
      stride *= shape[i];
    }
  }
  void *get() { return words.data(); }

private:
  std::vector<int64_t> words;
};

template <int Rank> constexpr bool hasDescriptorLayout() {
  using Ref = StridedMemRefType<float, Rank>;
  return sizeof(Ref) == sizeof(int64_t) * (3 + 2 * Rank) &&
         offsetof(Ref, offset) == 2 * sizeof(int64_t) &&
         offsetof(Ref, sizes) == 3 * sizeof(int64_t) &&
         offsetof(Ref, strides) == (3 + Rank) * sizeof(int64_t);
}
static_assert(hasDescriptorLayout<1>() && hasDescriptorLayout<2>() &&
                  hasDescriptorLayout<3>() && hasDescriptorLayout<4>(),
              "MemRefDescriptor must match StridedMemRefType");
static_assert(sizeof(StridedMemRefType<float, 0>) == 3 * sizeof(int64_t),
              "MemRefDescriptor must match StridedMemRefType");

/// Where one argument's value lives.
struct BoundArgument {
  void *data = nullptr;                    // tensors
  std::unique_ptr<AlignedBuffer> storage; // when the data had to be copied
  int64_t index = 0;                       // index arguments
  bool bound = false;
};

struct OutputRequest {
  std::string path;
  bool written = false;
};
} // namespace

static std::string describe(DType dtype, llvm::ArrayRef<int64_t> shape) {
  return (getDTypeName(dtype) + " " + formatShape(shape)).str();
}

static std::string describeArgument(const EntrySignature &sig, size_t i) {
  const EntryArgument &arg = sig.arguments[i];
  std::string what =
      llvm::formatv("argument #{0} of @{1}", i, sig.function).str();
  if (arg.kind == EntryArgument::Kind::Index)
    return what + ", index";
  return what + ", " + describe(arg.dtype, arg.shape);
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

/// SplitMix64: tiny, and deterministic across platforms.
static uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Values depend on the seed and the parameter's name only, so reordering
/// arguments keeps them. Norm scales (1-D "...weight") sit around 1 so that
/// activations keep their size through the blocks.
static void fillRandom(const EntryArgument &arg, uint64_t seed, char *out) {
  uint64_t state = seed ^ llvm::xxh3_64bits(arg.name);
  bool isScale = arg.shape.size() == 1 && llvm::StringRef(arg.name).ends_with("weight");
  uint64_t count = *getNumBytes(arg.shape, 1);
  size_t size = getDTypeSize(arg.dtype);
  for (uint64_t i = 0; i < count; ++i) {
    // 24 random bits -> [0, 1) exactly representable in f32.
    float u = float(nextRandom(state) >> 40) * 0x1p-24f;
    float value = (u - 0.5f) * 0.1f + (isScale ? 1.0f : 0.0f);
    char *dst = out + i * size;
    switch (arg.dtype) {
    case DType::F32:
      std::memcpy(dst, &value, 4);
      break;
    case DType::F64: {
      double d = value;
      std::memcpy(dst, &d, 8);
      break;
    }
    case DType::F16: {
      uint16_t h = floatToHalf(value);
      std::memcpy(dst, &h, 2);
      break;
    }
    case DType::BF16: {
      uint16_t h = floatToBFloat16(value);
      std::memcpy(dst, &h, 2);
      break;
    }
    default:
      break; // Integer parameters stay zero.
    }
  }
}

/// Binds a parameter that --tfm-fuse-qkv concatenated from several tensors:
/// every part must have the argument's dtype and its dims except along the
/// axis, and the parts' extents along the axis must add up.
static void concatenateParts(const EntrySignature &sig, size_t i,
                             const SafeTensorsFile &weights, char *out) {
  const EntryArgument &arg = sig.arguments[i];
  size_t axis = arg.concatAxis;
  std::vector<const TensorView *> views;
  int64_t extent = 0;
  for (const std::string &part : arg.parts) {
    const TensorView *view = weights.lookup(part);
    if (!view)
      fail(llvm::formatv("{0}: no tensor '{1}' (a part of the fused parameter "
                         "'{2}', {3})",
                         weights.getPath(), part, arg.name,
                         describeArgument(sig, i)));
    bool fits = view->dtype == arg.dtype &&
                view->shape.size() == arg.shape.size();
    for (size_t d = 0; fits && d < arg.shape.size(); ++d)
      fits = d == axis || view->shape[d] == arg.shape[d];
    if (!fits)
      fail(llvm::formatv("{0}: tensor '{1}' is {2} {3}, which cannot be "
                         "concatenated along axis {4} into the fused "
                         "parameter '{5}' ({6})",
                         weights.getPath(), part,
                         getSafeTensorsDTypeName(view->dtype),
                         formatShape(view->shape), axis, arg.name,
                         describeArgument(sig, i)));
    extent += view->shape[axis];
    views.push_back(view);
  }
  if (extent != arg.shape[axis])
    fail(llvm::formatv("{0}: the parts of the fused parameter '{1}' add up to "
                       "{2} along axis {3}, but @{4} expects {5}",
                       weights.getPath(), arg.name, extent, axis, sig.function,
                       describe(arg.dtype, arg.shape)));
  // Row-major: for each index of the leading dims, copy each part's slab.
  uint64_t outer = *getNumBytes(llvm::ArrayRef(arg.shape).take_front(axis), 1);
  uint64_t inner = *getNumBytes(llvm::ArrayRef(arg.shape).drop_front(axis + 1),
                                getDTypeSize(arg.dtype));
  for (uint64_t o = 0; o < outer; ++o)
    for (const TensorView *view : views) {
      uint64_t slab = inner * view->shape[axis];
      std::memcpy(out, view->data + o * slab, slab);
      out += slab;
    }
}

static void bindParameters(const EntrySignature &sig,
                           const SafeTensorsFile *weights,
                           std::vector<BoundArgument> &bound) {
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    if (arg.kind != EntryArgument::Kind::Param)
      continue;
    uint64_t numBytes = *getNumBytes(arg.shape, getDTypeSize(arg.dtype));
    if (randomWeights.getNumOccurrences() == 0 && !weights)
      fail(llvm::formatv("parameter '{0}' ({1}) needs a value: pass --weights "
                         "FILE.safetensors or --random-weights SEED",
                         arg.name, describeArgument(sig, i)));
    if (!weights) {
      bound[i].storage = std::make_unique<AlignedBuffer>(numBytes);
      fillRandom(arg, randomWeights, bound[i].storage->get());
      bound[i].data = bound[i].storage->get();
      bound[i].bound = true;
      continue;
    }
    if (!arg.parts.empty()) {
      bound[i].storage = std::make_unique<AlignedBuffer>(numBytes);
      concatenateParts(sig, i, *weights, bound[i].storage->get());
      bound[i].data = bound[i].storage->get();
      bound[i].bound = true;
      continue;
    }
    const TensorView *view = weights->lookup(arg.name);
    if (!view)
      fail(llvm::formatv("{0}: no tensor '{1}' ({2})",
                         weights->getPath(), arg.name,
                         describeArgument(sig, i)));
    if (view->dtype != arg.dtype || view->shape != arg.shape)
      fail(llvm::formatv("{0}: tensor '{1}' is {2} {3}, but @{4} expects {5}",
                         weights->getPath(), arg.name,
                         getSafeTensorsDTypeName(view->dtype),
                         formatShape(view->shape), sig.function,
                         describe(arg.dtype, arg.shape)));
    // Generated code assumes natural alignment; safetensors only aligns the
    // data area as its writer chose, so copy the rare misaligned tensor.
    // The mapping is private and writable, hence the const_cast is safe.
    if (reinterpret_cast<uintptr_t>(view->data) % getDTypeSize(view->dtype)) {
      bound[i].storage = std::make_unique<AlignedBuffer>(numBytes);
      std::memcpy(bound[i].storage->get(), view->data, numBytes);
      bound[i].data = bound[i].storage->get();
    } else {
      bound[i].data = const_cast<char *>(view->data);
    }
    bound[i].bound = true;
  }
}

//===----------------------------------------------------------------------===//
// Inputs and outputs
//===----------------------------------------------------------------------===//

static std::pair<llvm::StringRef, llvm::StringRef>
splitSpec(llvm::StringRef flag, llvm::StringRef spec) {
  auto [name, value] = spec.split('=');
  if (name.empty() || value.empty() || !spec.contains('='))
    fail(llvm::formatv("--{0} '{1}': expected NAME=VALUE", flag, spec));
  return {name, value};
}

static std::string listNames(const EntrySignature &sig, bool results) {
  std::string names;
  auto add = [&](llvm::StringRef name) {
    names += (names.empty() ? "'" : ", '") + name.str() + "'";
  };
  if (results) {
    for (const EntryResult &r : sig.results)
      add(r.name);
  } else {
    for (const EntryArgument &a : sig.arguments)
      if (a.kind != EntryArgument::Kind::Param)
        add(a.name);
  }
  return names.empty() ? "none" : names;
}

static void bindInput(const EntrySignature &sig, size_t i,
                      llvm::StringRef value, BoundArgument &bound) {
  const EntryArgument &arg = sig.arguments[i];
  if (arg.kind == EntryArgument::Kind::Index) {
    if (value.getAsInteger(0, bound.index))
      fail(llvm::formatv("input '{0}' ({1}): expected an integer, got '{2}'",
                         arg.name, describeArgument(sig, i), value));
    bound.bound = true;
    return;
  }
  NpyArray array = check(readNpy(value));
  bool intToInt = isIntegerDType(arg.dtype) && isIntegerDType(array.dtype) &&
                  isSupportedConversion(array.dtype, arg.dtype);
  if ((array.dtype != arg.dtype && !intToInt) || array.shape != arg.shape)
    fail(llvm::formatv("input '{0}' ({1}): expected {2}, got {3}", arg.name,
                       value, describe(arg.dtype, arg.shape),
                       describe(array.dtype, array.shape)));
  uint64_t count = array.getNumElements();
  bound.storage =
      std::make_unique<AlignedBuffer>(count * getDTypeSize(arg.dtype));
  int64_t bad = convertElements(array.data, array.dtype, bound.storage->get(),
                                arg.dtype, count);
  if (bad >= 0)
    fail(llvm::formatv("input '{0}' ({1}): element {2} does not fit {3}",
                       arg.name, value, bad, getDTypeName(arg.dtype)));
  bound.data = bound.storage->get();
  bound.bound = true;
}

static void bindInputs(const EntrySignature &sig,
                       std::vector<BoundArgument> &bound) {
  for (llvm::StringRef spec : inputSpecs) {
    auto [nameRef, value] = splitSpec("input", spec);
    llvm::StringRef name = nameRef;
    auto it = llvm::find_if(sig.arguments, [&](const EntryArgument &a) {
      return a.kind != EntryArgument::Kind::Param && a.name == name;
    });
    if (it == sig.arguments.end())
      fail(llvm::formatv("--input '{0}': @{1} has no input '{0}' (inputs: "
                         "{2})",
                         name, sig.function, listNames(sig, false)));
    size_t i = it - sig.arguments.begin();
    if (bound[i].bound)
      fail(llvm::formatv("--input '{0}' is given more than once", name));
    bindInput(sig, i, value, bound[i]);
  }
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    if (bound[i].bound)
      continue;
    if (arg.kind == EntryArgument::Kind::KVCache) {
      // A fresh generation: the cache starts out zero.
      bound[i].storage = std::make_unique<AlignedBuffer>(
          *getNumBytes(arg.shape, getDTypeSize(arg.dtype)));
      bound[i].data = bound[i].storage->get();
      bound[i].bound = true;
      continue;
    }
    fail(llvm::formatv("missing input '{0}' ({1}): pass --input {0}={2}",
                         arg.name, describeArgument(sig, i),
                         arg.kind == EntryArgument::Kind::Index
                             ? "INTEGER"
                             : "FILE.npy"));
  }
}

static std::vector<OutputRequest> parseOutputs(const EntrySignature &sig) {
  std::vector<OutputRequest> requests(sig.results.size());
  for (llvm::StringRef spec : outputSpecs) {
    auto [nameRef, path] = splitSpec("output", spec);
    llvm::StringRef name = nameRef;
    auto it = llvm::find_if(
        sig.results, [&](const EntryResult &r) { return r.name == name; });
    if (it == sig.results.end())
      fail(llvm::formatv("--output '{0}': @{1} has no result '{0}' (results: "
                         "{2})",
                         name, sig.function, listNames(sig, true)));
    OutputRequest &request = requests[it - sig.results.begin()];
    if (!request.path.empty())
      fail(llvm::formatv("--output '{0}' is given more than once", name));
    request.path = path.str();
  }
  return requests;
}

/// Element `i` of a result as a double (for printing and conversion).
static double loadAsDouble(const char *data, DType dtype, uint64_t i) {
  auto load = [&](auto zero) {
    decltype(zero) value;
    std::memcpy(&value, data + i * sizeof(value), sizeof(value));
    return value;
  };
  switch (dtype) {
  case DType::F64: return load(double());
  case DType::F32: return load(float());
  case DType::F16: return halfToFloat(load(uint16_t()));
  case DType::BF16: return bfloat16ToFloat(load(uint16_t()));
  case DType::I64: return double(load(int64_t()));
  case DType::I32: return load(int32_t());
  case DType::I16: return load(int16_t());
  case DType::I8: return load(int8_t());
  case DType::U8: return load(uint8_t());
  case DType::Bool: return load(uint8_t()) != 0;
  }
  return 0;
}

static void reportResult(const EntryResult &result, const char *data) {
  uint64_t count = *getNumBytes(result.shape, 1);
  llvm::outs() << result.name << (result.isKVCache ? " (kv cache)" : "")
               << ": " << formatShape(result.shape) << " "
               << getDTypeName(result.dtype) << " [";
  for (uint64_t i = 0, e = std::min<uint64_t>(count, printCount); i < e; ++i)
    llvm::outs() << (i ? ", " : "")
                 << llvm::format("%.6g", loadAsDouble(data, result.dtype, i));
  llvm::outs() << (count > printCount ? ", ...]" : "]") << "\n";
}

static void writeResult(const EntryResult &result, const char *data,
                        llvm::StringRef path) {
  if (result.dtype != DType::F16 && result.dtype != DType::BF16) {
    if (llvm::Error err = writeNpy(path, result.dtype, result.shape, data))
      fail(llvm::toString(std::move(err)));
    return;
  }
  uint64_t count = *getNumBytes(result.shape, 1);
  std::vector<float> widened(count);
  convertElements(data, result.dtype, widened.data(), DType::F32, count);
  if (llvm::Error err =
          writeNpy(path, DType::F32, result.shape, widened.data()))
    fail(llvm::toString(std::move(err)));
}

//===----------------------------------------------------------------------===//
// Compilation and execution
//===----------------------------------------------------------------------===//

using Clock = std::chrono::steady_clock;

static double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// Guards the calling convention of tfm/Pipelines/Pipelines.h: calling a
/// wrapper with the wrong number of pointers would corrupt memory instead of
/// failing.
static void checkCInterface(ModuleOp module, const EntrySignature &sig) {
  std::string symbol = "_mlir_ciface_" + sig.function;
  auto wrapper = module.lookupSymbol<LLVM::LLVMFuncOp>(symbol);
  if (!wrapper)
    fail(llvm::formatv("the lowered module has no {0}; the CPU pipeline must "
                       "emit C interfaces",
                       symbol));
  size_t expected = sig.arguments.size() +
                    llvm::count_if(sig.results, [](const EntryResult &r) {
                      return !r.isKVCache;
                    });
  LLVM::LLVMFunctionType type = wrapper.getFunctionType();
  if (type.getNumParams() != expected ||
      !isa<LLVM::LLVMVoidType>(type.getReturnType()))
    fail(llvm::formatv("{0} has type {1}; expected {2} parameters (arguments, "
                       "then one out-parameter per non-cache result) "
                       "returning void",
                       symbol, type, expected));
}

static std::unique_ptr<CpuPipelineOptions> parsePipelineOptions() {
  std::unique_ptr<CpuPipelineOptions> options =
      CpuPipelineOptions::createFromString(pipelineOptions);
  if (!options)
    fail(llvm::formatv("--pipeline-options '{0}': not valid options of "
                       "--tfm-cpu-pipeline",
                       pipelineOptions));
  return options;
}

/// The pipeline's first, signature-changing steps (see the file comment).
static void runSignaturePasses(ModuleOp module, CpuPipelineOptions &options) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    fail("invalid pass manager options");
  if (options.verifyContracts)
    pm.addPass(createTfmVerifyContracts());
  if (options.fuseQKV)
    pm.addPass(createTfmFuseQKV());
  if (failed(pm.run(module)))
    fail(llvm::formatv("{0} does not pass the tfm contract checks (see the "
                       "diagnostics above)",
                       modelFile));
  options.verifyContracts = false;
  options.fuseQKV = false;
}

static std::unique_ptr<ExecutionEngine>
compile(ModuleOp module, const EntrySignature &sig,
        const CpuPipelineOptions &options) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    fail("invalid pass manager options");
  buildTfmCpuPipeline(pm, options);
  if (failed(pm.run(module)))
    fail(llvm::formatv("lowering {0} with the tfm CPU pipeline failed (see "
                       "the diagnostics above)",
                       modelFile));
  checkCInterface(module, sig);

  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    fail("cannot detect the host: " + llvm::toString(builder.takeError()));
  auto machine = builder->createTargetMachine();
  if (!machine)
    fail("cannot create a target machine: " +
         llvm::toString(machine.takeError()));
  auto transformer = makeOptimizingTransformer(3, /*sizeLevel=*/0,
                                               machine->get());

  std::vector<llvm::StringRef> libs(sharedLibs.begin(), sharedLibs.end());
  if (sharedLibs.getNumOccurrences() == 0 &&
      llvm::sys::fs::exists(TFM_C_RUNNER_UTILS))
    libs.push_back(TFM_C_RUNNER_UTILS); // Resolves memrefCopy and friends.
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  engineOptions.sharedLibPaths = libs;
  auto engine =
      ExecutionEngine::create(module, engineOptions, std::move(*machine));
  if (!engine)
    fail("JIT compilation failed: " + llvm::toString(engine.takeError()));
  (*engine)->initialize();
  return std::move(*engine);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  cl::ParseCommandLineOptions(
      argc, argv, "transformer-runner: JIT-run a tfm model on real weights\n");

  DialectRegistry registry;
  registerRunnerDialects(registry);
  MLIRContext context(registry);

  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(modelFile, &message);
  if (!file)
    fail(message);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module;
  {
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (!module)
    fail(llvm::formatv("cannot parse {0}", modelFile));

  std::unique_ptr<CpuPipelineOptions> options = parsePipelineOptions();
  runSignaturePasses(*module, *options);
  EntrySignature sig = check(getEntrySignature(*module, entryName));

  // Bind and check everything before the (slow) compilation.
  if (!weightsFile.empty() && randomWeights.getNumOccurrences())
    fail("--weights and --random-weights are mutually exclusive");
  std::unique_ptr<SafeTensorsFile> weights;
  if (!weightsFile.empty())
    weights = check(SafeTensorsFile::open(weightsFile));
  std::vector<BoundArgument> bound(sig.arguments.size());
  bindParameters(sig, weights.get(), bound);
  bindInputs(sig, bound);
  std::vector<OutputRequest> requests = parseOutputs(sig);

  std::vector<std::unique_ptr<AlignedBuffer>> resultStorage;
  std::vector<char *> results;
  for (const EntryResult &r : sig.results) {
    if (r.isKVCache) {
      results.push_back(static_cast<char *>(bound[r.cacheArgument].data));
      continue;
    }
    resultStorage.push_back(std::make_unique<AlignedBuffer>(
        *getNumBytes(r.shape, getDTypeSize(r.dtype))));
    results.push_back(resultStorage.back()->get());
  }

  // The packed wrapper takes a pointer to each C-interface argument: a
  // descriptor pointer per tensor, the i64 itself per index, then one
  // descriptor pointer per non-cache result (trailing out-parameters).
  std::vector<MemRefDescriptor> descriptors;
  descriptors.reserve(sig.arguments.size() + sig.results.size());
  for (auto [i, arg] : llvm::enumerate(sig.arguments))
    if (arg.kind != EntryArgument::Kind::Index)
      descriptors.emplace_back(bound[i].data, arg.shape);
  for (auto [i, r] : llvm::enumerate(sig.results))
    if (!r.isKVCache)
      descriptors.emplace_back(results[i], r.shape);
  std::vector<void *> descriptorPointers;
  for (MemRefDescriptor &d : descriptors)
    descriptorPointers.push_back(d.get());
  llvm::SmallVector<void *> packedArgs;
  size_t nextDescriptor = 0;
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    if (arg.kind == EntryArgument::Kind::Index)
      packedArgs.push_back(&bound[i].index);
    else
      packedArgs.push_back(&descriptorPointers[nextDescriptor++]);
  }
  while (nextDescriptor < descriptorPointers.size())
    packedArgs.push_back(&descriptorPointers[nextDescriptor++]);

  Clock::time_point compileStart = Clock::now();
  std::unique_ptr<ExecutionEngine> engine = compile(*module, sig, *options);
  std::string symbol = "_mlir_ciface_" + sig.function;
  auto packed = engine->lookupPacked(symbol);
  if (!packed)
    fail(llvm::formatv("the lowered module has no {0} ({1}); the CPU "
                       "pipeline must emit C interfaces",
                       symbol, llvm::toString(packed.takeError())));
  double compileMs = millisecondsSince(compileStart);

  (*packed)(packedArgs.data());
  std::vector<double> times;
  for (unsigned r = 0; r < repeat; ++r) {
    Clock::time_point start = Clock::now();
    (*packed)(packedArgs.data());
    times.push_back(millisecondsSince(start));
  }

  for (auto [i, r] : llvm::enumerate(sig.results)) {
    reportResult(r, results[i]);
    if (!requests[i].path.empty())
      writeResult(r, results[i], requests[i].path);
  }
  if (!times.empty()) {
    llvm::sort(times);
    llvm::outs() << llvm::format(
        "compile: %.1f ms; run (%u times): median %.4g ms, min %.4g ms, "
        "max %.4g ms\n",
        compileMs, unsigned(repeat), times[times.size() / 2], times.front(),
        times.back());
  }
  return 0;
}

//===- Compile.cpp - lowering and JIT-compiling tfm modules ---------------===//
#include "tfm/Engine/Compile.h"
#include "tfm/Engine/Binding.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/IR/TfmAttrNames.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Codegen/CPU/CpuTarget.h"
#include "tfm/Codegen/Common/Passes.h"
#include "tfm/Runtime/BufferPool.h"
#include "tfm/Runtime/CodeCache.h"
#include "tfm/Runtime/Kernels.h"
#include "tfm/Runtime/Mpi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/JITEventListener.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::engine;
using namespace mlir::tfm::runtime;

/// --mlir-timing: one report at exit for everything the runner compiled,
/// each pass manager run and the LLVM step as a nested timer.
TimingScope &engine::getCompileTiming() {
  static DefaultTimingManager manager = [] {
    DefaultTimingManager m;
    applyDefaultTimingManagerCLOptions(m);
    return m;
  }();
  static TimingScope root = manager.getRootScope();
  return root;
}

/// Runs `pm` on `module` with its passes timed under `name`.
static LogicalResult runTimed(PassManager &pm, ModuleOp module,
                              llvm::StringRef name) {
  TimingScope scope = getCompileTiming().nest(name);
  pm.enableTiming(scope);
  return pm.run(module);
}

JitModule::JitModule(std::unique_ptr<ExecutionEngine> engine)
    : engine(std::move(engine)) {}
JitModule::JitModule(std::unique_ptr<llvm::orc::LLJIT> jit)
    : jit(std::move(jit)) {}
JitModule::~JitModule() = default;

llvm::Expected<PackedFunction> JitModule::lookup(llvm::StringRef function) {
  std::string symbol = ("_mlir_ciface_" + function).str();
  llvm::Expected<PackedFunction> packed =
      [&]() -> llvm::Expected<PackedFunction> {
    if (engine)
      return engine->lookupPacked(symbol);
    // The ExecutionEngine names the packed wrapper of `f` `_mlir_f`.
    auto address = jit->lookup("_mlir_" + symbol);
    if (!address)
      return address.takeError();
    return address->toPtr<PackedFunction>();
  }();
  if (!packed)
    return makeError(
        llvm::formatv("the lowered module has no {0} ({1}); the CPU "
                      "pipeline must emit C interfaces",
                      symbol, llvm::toString(packed.takeError())));
  return *packed;
}

std::string engine::describeCache(const JitModule &jit) {
  return jit.cacheStatus == "cache off" ? "" : " (" + jit.cacheStatus + ")";
}

llvm::Expected<std::unique_ptr<CpuPipelineOptions>>
engine::parsePipelineOptions(llvm::StringRef text) {
  std::unique_ptr<CpuPipelineOptions> options =
      CpuPipelineOptions::createFromString(text);
  if (!options)
    return makeError(
        llvm::formatv("--pipeline-options '{0}': not valid options of "
                      "--tfm-cpu-pipeline",
                      text));
  return options;
}

llvm::Expected<std::unique_ptr<GpuPipelineOptions>>
engine::parseGpuPipelineOptions(llvm::StringRef text) {
  std::unique_ptr<GpuPipelineOptions> options =
      GpuPipelineOptions::createFromString(text);
  if (!options)
    return makeError(
        llvm::formatv("--pipeline-options '{0}': not valid options of "
                      "--tfm-gpu-pipeline",
                      text));
  return options;
}

llvm::Error engine::runSignaturePasses(ModuleOp module,
                                       const CpuPipelineOptions &options,
                                       llvm::StringRef what) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return makeError("invalid pass manager options");
  buildTfmCpuSignatureStage(pm, options);
  if (failed(runTimed(pm, module, "CPU signature stage")))
    return makeError(
        llvm::formatv("{0} does not pass the tfm contract checks or cannot "
                      "be lowered (see the diagnostics above)",
                      what));
  return llvm::Error::success();
}

llvm::Error engine::runSignaturePasses(ModuleOp module,
                                       const GpuPipelineOptions &options,
                                       llvm::StringRef what) {
  // The GPU pipeline's signature-changing steps (buildTfmGpuSignatureStage);
  // lowerGpuModule runs the rest.
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return makeError("invalid pass manager options");
  buildTfmGpuSignatureStage(pm, options);
  if (failed(runTimed(pm, module, "GPU signature stage")))
    return makeError(
        llvm::formatv("{0} does not pass the tfm contract checks or cannot "
                      "be lowered (see the diagnostics above)",
                      what));
  return llvm::Error::success();
}

/// Guards the calling convention of tfm/Pipelines/Pipelines.h: calling a
/// wrapper with the wrong number of pointers would corrupt memory instead of
/// failing.
static llvm::Error checkCInterface(ModuleOp module, const EntrySignature &sig) {
  std::string symbol = "_mlir_ciface_" + sig.function;
  auto wrapper = module.lookupSymbol<LLVM::LLVMFuncOp>(symbol);
  if (!wrapper)
    return makeError(
        llvm::formatv("the lowered module has no {0}; the CPU pipeline must "
                      "emit C interfaces",
                      symbol));
  size_t expected = sig.arguments.size() +
                    llvm::count_if(sig.results, [](const EntryResult &r) {
                      return !r.isKVCache;
                    });
  LLVM::LLVMFunctionType type = wrapper.getFunctionType();
  if (type.getNumParams() != expected ||
      !isa<LLVM::LLVMVoidType>(type.getReturnType()))
    return makeError(
        llvm::formatv("{0} has type {1}; expected {2} parameters (arguments, "
                      "then one out-parameter per non-cache result) "
                      "returning void",
                      symbol, type, expected));
  return llvm::Error::success();
}

/// The key of `module` (before the codegen stage) compiled with `options`
/// for the host, with these libraries, by this build of tfm and LLVM.
static CodeCacheKey getCacheKey(ModuleOp module,
                                const CpuPipelineOptions &options,
                                llvm::ArrayRef<std::string> libs) {
  std::string ir, pipeline, host, libraries;
  {
    llvm::raw_string_ostream os(ir);
    module.print(os, OpPrintingFlags().printGenericOpForm());
  }
  {
    llvm::raw_string_ostream os(pipeline);
    options.print(os);
  }
  if (auto builder = llvm::orc::JITTargetMachineBuilder::detectHost())
    host = builder->getTargetTriple().str() + " " + builder->getCPU() + " " +
           builder->getFeatures().getString() + " for " +
           resolveCpuName(options.cpu);
  else
    llvm::consumeError(builder.takeError());
  libraries = llvm::join(libs, ";");
  // A tensor-parallel model's code calls MPI by Open MPI's ABI.
  if (const runtime::MpiWorld *world = runtime::getMpiWorld())
    libraries += ";MPI " + world->libraryVersion;
  std::string build = getTfmBuildStamp();
  return computeCodeCacheKey(
      {ir, pipeline, host, libraries, build, "LLVM " LLVM_VERSION_STRING});
}

/// The libraries the compiled code's calls resolve to: `sharedLibs`, or
/// MLIR's c_runner_utils (memrefCopy and friends); the OpenMP runtime for
/// parallel loops (__kmpc_fork_call, ...).
static llvm::Expected<std::vector<std::string>>
getRuntimeLibraries(llvm::ArrayRef<std::string> sharedLibs, bool openmp) {
  std::vector<std::string> libs(sharedLibs.begin(), sharedLibs.end());
  if (sharedLibs.empty() && llvm::sys::fs::exists(TFM_C_RUNNER_UTILS))
    libs.push_back(TFM_C_RUNNER_UTILS);
  if (openmp) {
    if (!llvm::sys::fs::exists(TFM_OPENMP_RUNTIME))
      return makeError(
          llvm::formatv("the OpenMP runtime {0} is missing (install "
                        "libomp-22-dev, or compile with "
                        "--pipeline-options=parallel=0)",
                        TFM_OPENMP_RUNTIME));
    libs.push_back(TFM_OPENMP_RUNTIME);
  }
  return libs;
}

/// What compiled code calls by name besides the libraries: the heap, whose
/// temporaries are reused across calls instead of being page-faulted in
/// again every call (tfm/Runtime/BufferPool.h), and the micro-kernels
/// (tfm/Runtime/Kernels.h).
static llvm::orc::SymbolMap
getRuntimeSymbols(llvm::orc::MangleAndInterner &interner) {
  llvm::orc::SymbolMap symbols;
  auto add = [&](llvm::StringRef name, auto *function) {
    symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                               llvm::JITSymbolFlags::Exported};
  };
  add("malloc", &poolMalloc);
  add("calloc", &poolCalloc);
  add("aligned_alloc", &poolAlignedAlloc);
  add("free", &poolFree);
  // MLIR 22's mpi-to-llvm names Open MPI's MPI_SUM `ompi_mpi_sum`; the
  // library's symbol is `ompi_mpi_op_sum` (docs/design.md, "Tensor
  // parallelism").
  if (void *sum = runtime::lookupMpiSymbol("ompi_mpi_op_sum"))
    symbols[interner("ompi_mpi_sum")] = {llvm::orc::ExecutorAddr::fromPtr(sum),
                                         llvm::JITSymbolFlags::Exported};
  // The sums, counted and timed (the runner reports the time in them).
  if (void *allreduce = runtime::getTimedAllreduce())
    symbols[interner("MPI_Allreduce")] = {
        llvm::orc::ExecutorAddr::fromPtr(allreduce),
        llvm::JITSymbolFlags::Exported};
  for (const runtime::KernelSymbol &kernel : runtime::getKernelSymbols())
    symbols[interner(kernel.name)] = {
        llvm::orc::ExecutorAddr::fromPtr(kernel.address),
        llvm::JITSymbolFlags::Exported};
  return symbols;
}

/// Links compiled objects (generateObjectCode's, or a cached entry's) as
/// the ExecutionEngine would have: the same object layer (RuntimeDyld), the
/// buffer pool's allocation functions, then `libs`, then the process.
static llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>>
loadObjects(std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects,
            llvm::ArrayRef<std::string> libs) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  auto jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(*builder))
          .setObjectLinkingLayerCreator(
              [](llvm::orc::ExecutionSession &session) {
                auto layer =
                    std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                        session, [](const llvm::MemoryBuffer &) {
                          return std::make_unique<llvm::SectionMemoryManager>();
                        });
                // Profiling: `TFM_PERF=1 perf record -k 1 ...` then `perf
                // inject --jit` names the compiled functions (a jitdump in
                // the working directory).
                if (getenv("TFM_PERF"))
                  if (llvm::JITEventListener *perf =
                          llvm::JITEventListener::createPerfJITEventListener())
                    layer->registerJITEventListener(*perf);
                return layer;
              })
          .create();
  if (!jit)
    return jit.takeError();
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  char prefix = (*jit)->getDataLayout().getGlobalPrefix();
  llvm::orc::MangleAndInterner interner((*jit)->getExecutionSession(),
                                        (*jit)->getDataLayout());
  if (llvm::Error err =
          main.define(llvm::orc::absoluteSymbols(getRuntimeSymbols(interner))))
    return std::move(err);
  for (const std::string &lib : libs) {
    auto generator =
        llvm::orc::DynamicLibrarySearchGenerator::Load(lib.c_str(), prefix);
    if (!generator)
      return generator.takeError();
    main.addGenerator(std::move(*generator));
  }
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return process.takeError();
  main.addGenerator(std::move(*process));
  for (std::unique_ptr<llvm::MemoryBuffer> &object : objects)
    if (llvm::Error err = (*jit)->addObjectFile(std::move(object)))
      return std::move(err);
  return std::move(*jit);
}

/// A code cache entry holds the objects of one compile in one blob:
/// "tfm-objects\n", then for each object its size as 8 little-endian bytes
/// and its bytes. (The cache checks the blob's integrity as a whole.)
static constexpr llvm::StringLiteral kObjectsMagic = "tfm-objects\n";

static std::string packObjects(llvm::ArrayRef<std::string> objects) {
  std::string blob = kObjectsMagic.str();
  for (const std::string &object : objects) {
    uint64_t size = object.size();
    for (int byte = 0; byte < 8; ++byte)
      blob.push_back(static_cast<char>((size >> (8 * byte)) & 0xff));
    blob += object;
  }
  return blob;
}

static llvm::Expected<std::vector<std::unique_ptr<llvm::MemoryBuffer>>>
unpackObjects(const llvm::MemoryBuffer &blob) {
  llvm::StringRef rest = blob.getBuffer();
  if (!rest.consume_front(kObjectsMagic))
    return makeError("not a tfm object bundle");
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  while (!rest.empty()) {
    if (rest.size() < 8)
      return makeError("truncated object bundle");
    uint64_t size = 0;
    for (int byte = 0; byte < 8; ++byte)
      size |= uint64_t(static_cast<uint8_t>(rest[byte])) << (8 * byte);
    rest = rest.drop_front(8);
    if (size > rest.size())
      return makeError("truncated object bundle");
    objects.push_back(llvm::MemoryBuffer::getMemBufferCopy(
        rest.take_front(size), "tfm_model_part"));
    rest = rest.drop_front(size);
  }
  if (objects.empty())
    return makeError("empty object bundle");
  return objects;
}

// The tfm.* argument attributes have been read (the entry signature comes
// from the IR before codegen); for a 12-layer model's entries the
// translation's warnings about them were over a third of the compile time.
llvm::Error engine::prepareForTranslation(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(createTfmStripFrontendArgAttributes());
  if (failed(pm.run(module)))
    return makeError("cannot prepare the lowered module for LLVM");
  return llvm::Error::success();
}

/// JIT-compiles a module lowered to the LLVM dialect by the GPU pipeline
/// with `libs`, through mlir::ExecutionEngine (whose initialisers load the
/// kernels when `initialize`). The CPU path uses generateObjectCode.
static llvm::Expected<std::unique_ptr<JitModule>>
jitCompile(ModuleOp module, llvm::ArrayRef<std::string> libs,
           bool initialize);

/// Code planned for a CPU feature the host lacks (`cpu=` naming another CPU)
/// cannot be compiled for, or run on, this machine: LLVM aborts on the
/// first AMX tile intrinsic or AVX512-BF16 `vdpbf16ps` it cannot select.
/// An error saying so instead. (Plain vector code of a wider target
/// legalises for the host and needs no check.)
static llvm::Error checkPlanRunsHere(ModuleOp module, llvm::StringRef what) {
  bool tiles = false, pairDots = false;
  module.walk([&](Operation *op) {
    auto plan = op->getAttrOfType<CpuTilingAttr>(kCpuTilingAttrName);
    if (plan && plan.getAmxBlockCols() > 0)
      tiles = true;
    // Weights packed as bf16 pairs are read by pair dot products only.
    if (auto func = dyn_cast<func::FuncOp>(op))
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (auto pack = func.getArgAttrOfType<DictionaryAttr>(
                i, kParamPackAttrName))
          if (auto format = pack.getAs<StringAttr>("format");
              format && format.getValue() == kBf16PairsWeightFormat)
            pairDots = true;
    return WalkResult::advance();
  });
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (tiles && !(features.lookup("amx-tile") && features.lookup("amx-bf16") &&
                 requestAmxTilePermission()))
    return makeError(llvm::formatv(
        "{0}: its f32 GEMMs are planned for AMX tiles (the pipeline's cpu= "
        "names a CPU with AMX-BF16), which this machine ({1}) cannot run; "
        "compile with cpu=host, or amx=0",
        what, llvm::sys::getHostCPUName()));
  if (pairDots &&
      !(features.lookup("avx512bf16") && features.lookup("avx512vl")))
    return makeError(llvm::formatv(
        "{0}: its bf16 GEMMs are planned as AVX512-BF16 pair dot products "
        "(the pipeline's cpu= names a CPU with AVX512-BF16), which this "
        "machine ({1}) cannot run; compile with cpu=host, or bf16-dot=0",
        what, llvm::sys::getHostCPUName()));
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<JitModule>> engine::compileModule(
    ModuleOp module, llvm::ArrayRef<const EntrySignature *> entries,
    const CpuPipelineOptions &options, llvm::ArrayRef<std::string> sharedLibs,
    llvm::StringRef what, const CacheOptions &cache) {
  if (llvm::Error err = checkPlanRunsHere(module, what))
    return std::move(err);
  auto runtimeLibs =
      getRuntimeLibraries(sharedLibs, /*openmp=*/options.parallel);
  if (!runtimeLibs)
    return runtimeLibs.takeError();
  std::vector<std::string> libs = std::move(*runtimeLibs);
  auto warn = [&](const llvm::Twine &message) {
    if (cache.warn)
      cache.warn(message);
  };
  std::optional<CodeCache> store;
  CodeCacheKey key;
  if (cache.enabled) {
    std::string directory = cache.directory.empty()
                                ? CodeCache::getDefaultDirectory()
                                : cache.directory;
    if (directory.empty())
      warn("compiled-code cache: neither XDG_CACHE_HOME nor HOME is set; "
           "compiling without a cache (pass --cache-dir DIR)");
    else
      store.emplace(directory);
  }
  TimingScope lookupTiming =
      getCompileTiming().nest("compiled-code cache: key, load, link");
  if (store) {
    key = getCacheKey(module, options, libs);
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object =
        store->load(key);
    if (!object) {
      warn("compiled-code cache: " + llvm::toString(object.takeError()) +
           "; rebuilding the entry");
    } else if (*object) {
      auto objects = unpackObjects(**object);
      auto jit = objects ? loadObjects(std::move(*objects), libs)
                         : objects.takeError();
      if (jit) {
        auto result = std::make_unique<JitModule>(std::move(*jit));
        result->cacheStatus = "cache hit";
        return result;
      }
      warn("compiled-code cache: " + store->getPath(key) +
           ": cannot be linked (" + llvm::toString(jit.takeError()) +
           "); rebuilding the entry");
    }
  }
  lookupTiming.stop();
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return makeError("invalid pass manager options");
  buildTfmCpuCodegenStage(pm, options);
  if (failed(runTimed(pm, module, "CPU codegen stage")))
    return makeError(
        llvm::formatv("lowering {0} with the tfm CPU pipeline failed (see "
                      "the diagnostics above)",
                      what));
  for (const EntrySignature *sig : entries)
    if (llvm::Error err = checkCInterface(module, *sig))
      return std::move(err);
  TimingScope llvmTiming =
      getCompileTiming().nest("LLVM: optimise and generate code");
  if (llvm::Error err = prepareForTranslation(module))
    return std::move(err);
  // All cores: the code is compiled once and then cached.
  auto objects = generateObjectCode(module, /*maxThreads=*/4, options.cpu);
  if (!objects)
    return objects.takeError();
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> buffers;
  for (const std::string &object : *objects)
    // The JIT links lazily (at the first lookup): it owns its copies.
    buffers.push_back(
        llvm::MemoryBuffer::getMemBufferCopy(object, "tfm_model_part"));
  auto linked = loadObjects(std::move(buffers), libs);
  if (!linked)
    return makeError("JIT linking failed: " +
                     llvm::toString(linked.takeError()));
  llvmTiming.stop();
  auto jit = std::make_unique<JitModule>(std::move(*linked));
  if (!store)
    return jit;
  jit->cacheStatus = "cache miss";
  if (llvm::Error err = store->store(key, packObjects(*objects)))
    warn("compiled-code cache: cannot write the entry: " +
         llvm::toString(std::move(err)));
  return jit;
}

llvm::Error engine::lowerGpuModule(
    ModuleOp module, llvm::ArrayRef<const EntrySignature *> entries,
    const GpuPipelineOptions &options, llvm::StringRef what) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return makeError("invalid pass manager options");
  buildTfmGpuCodegenStage(pm, options);
  if (failed(runTimed(pm, module, "GPU pipeline")))
    return makeError(
        llvm::formatv("lowering {0} with the tfm GPU pipeline ({1}) failed "
                      "(see the diagnostics above)",
                      what, options.chip.getValue()));
  for (const EntrySignature *sig : entries)
    if (llvm::Error err = checkCInterface(module, *sig))
      return err;
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<JitModule>> engine::compileGpuModule(
    ModuleOp module, llvm::ArrayRef<const EntrySignature *> entries,
    const GpuPipelineOptions &options, llvm::ArrayRef<std::string> sharedLibs,
    llvm::StringRef what, bool loadKernels) {
  if (llvm::Error err = lowerGpuModule(module, entries, options, what))
    return std::move(err);
  auto libs = getRuntimeLibraries(sharedLibs, /*openmp=*/false);
  if (!libs)
    return libs.takeError();
  // The module's initialisers load its kernels onto the device.
  return jitCompile(module, *libs, /*initialize=*/loadKernels);
}

static llvm::Expected<std::unique_ptr<JitModule>>
jitCompile(ModuleOp module, llvm::ArrayRef<std::string> libs,
           bool initialize) {
  TimingScope timing =
      getCompileTiming().nest("LLVM: optimise and generate code");
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return makeError("cannot detect the host: " +
                     llvm::toString(builder.takeError()));
  auto machine = builder->createTargetMachine();
  if (!machine)
    return makeError("cannot create a target machine: " +
                     llvm::toString(machine.takeError()));
  auto transformer =
      makeOptimizingTransformer(3, /*sizeLevel=*/0, machine->get());

  std::vector<llvm::StringRef> libRefs(libs.begin(), libs.end());
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  engineOptions.sharedLibPaths = libRefs;
  // Profiling: `TFM_PERF=1 perf record -k 1 ...` then `perf inject --jit`
  // names the JIT-compiled functions (a jitdump in the working directory).
  engineOptions.enablePerfNotificationListener = getenv("TFM_PERF") != nullptr;
  if (llvm::Error err = prepareForTranslation(module))
    return std::move(err);
  auto engine =
      ExecutionEngine::create(module, engineOptions, std::move(*machine));
  if (!engine)
    return makeError("JIT compilation failed: " +
                     llvm::toString(engine.takeError()));
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    return getRuntimeSymbols(interner);
  });
  if (initialize)
    (*engine)->initialize();
  return std::make_unique<JitModule>(std::move(*engine));
}

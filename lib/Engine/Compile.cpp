//===- Compile.cpp - lowering and JIT-compiling tfm modules ---------------===//
#include "tfm/Engine/Compile.h"
#include "tfm/Engine/Binding.h"

#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Runtime/BufferPool.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::engine;
using namespace mlir::tfm::runtime;

JitModule::JitModule(std::unique_ptr<ExecutionEngine> engine)
    : engine(std::move(engine)) {}
JitModule::~JitModule() = default;

llvm::Expected<PackedFunction>
JitModule::lookup(llvm::StringRef function) {
  std::string symbol = ("_mlir_ciface_" + function).str();
  auto packed = engine->lookupPacked(symbol);
  if (!packed)
    return makeError(llvm::formatv("the lowered module has no {0} ({1}); the CPU "
                       "pipeline must emit C interfaces",
                       symbol, llvm::toString(packed.takeError())));
  return *packed;
}

llvm::Expected<std::unique_ptr<CpuPipelineOptions>>
engine::parsePipelineOptions(llvm::StringRef text) {
  std::unique_ptr<CpuPipelineOptions> options =
      CpuPipelineOptions::createFromString(text);
  if (!options)
    return makeError(llvm::formatv("--pipeline-options '{0}': not valid options of "
                       "--tfm-cpu-pipeline",
                       text));
  return options;
}

llvm::Expected<std::unique_ptr<GpuPipelineOptions>>
engine::parseGpuPipelineOptions(llvm::StringRef text) {
  std::unique_ptr<GpuPipelineOptions> options =
      GpuPipelineOptions::createFromString(text);
  if (!options)
    return makeError(llvm::formatv("--pipeline-options '{0}': not valid options of "
                       "--tfm-gpu-pipeline",
                       text));
  return options;
}

llvm::Error engine::runSignaturePasses(ModuleOp module,
                                       CpuPipelineOptions &options,
                                       llvm::StringRef what) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return makeError("invalid pass manager options");
  buildTfmCpuSignatureStage(pm, options);
  if (failed(pm.run(module)))
    return makeError(llvm::formatv("{0} does not pass the tfm contract checks or cannot "
                       "be lowered (see the diagnostics above)",
                       what));
  return llvm::Error::success();
}

llvm::Error engine::runSignaturePasses(ModuleOp module,
                                       GpuPipelineOptions &options,
                                       llvm::StringRef what) {
  // The GPU pipeline's signature-changing steps: the contract check and the
  // Q/K/V fusion, then turned off for the rest of the pipeline.
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return makeError("invalid pass manager options");
  if (options.verifyContracts)
    pm.addPass(createTfmVerifyContracts());
  if (options.fuseQKV)
    pm.addPass(createTfmFuseQKV());
  if (failed(pm.run(module)))
    return makeError(llvm::formatv("{0} does not pass the tfm contract checks (see the "
                       "diagnostics above)",
                       what));
  options.verifyContracts = false;
  options.fuseQKV = false;
  return llvm::Error::success();
}

/// Guards the calling convention of tfm/Pipelines/Pipelines.h: calling a
/// wrapper with the wrong number of pointers would corrupt memory instead of
/// failing.
static llvm::Error checkCInterface(ModuleOp module,
                                   const EntrySignature &sig) {
  std::string symbol = "_mlir_ciface_" + sig.function;
  auto wrapper = module.lookupSymbol<LLVM::LLVMFuncOp>(symbol);
  if (!wrapper)
    return makeError(llvm::formatv("the lowered module has no {0}; the CPU pipeline must "
                       "emit C interfaces",
                       symbol));
  size_t expected = sig.arguments.size() +
                    llvm::count_if(sig.results, [](const EntryResult &r) {
                      return !r.isKVCache;
                    });
  LLVM::LLVMFunctionType type = wrapper.getFunctionType();
  if (type.getNumParams() != expected ||
      !isa<LLVM::LLVMVoidType>(type.getReturnType()))
    return makeError(llvm::formatv("{0} has type {1}; expected {2} parameters (arguments, "
                       "then one out-parameter per non-cache result) "
                       "returning void",
                       symbol, type, expected));
  return llvm::Error::success();
}

/// JIT-compiles a module lowered to the LLVM dialect; `openmp`: it calls
/// the OpenMP runtime.
static llvm::Expected<std::unique_ptr<JitModule>>
jitCompile(ModuleOp module, llvm::ArrayRef<std::string> sharedLibs,
           bool openmp, bool initialize = true);

llvm::Expected<std::unique_ptr<JitModule>>
engine::compileModule(ModuleOp module,
                      llvm::ArrayRef<const EntrySignature *> entries,
                      const CpuPipelineOptions &options,
                      llvm::ArrayRef<std::string> sharedLibs,
                      llvm::StringRef what) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return makeError("invalid pass manager options");
  buildTfmCpuCodegenStage(pm, options);
  if (failed(pm.run(module)))
    return makeError(llvm::formatv("lowering {0} with the tfm CPU pipeline failed (see "
                       "the diagnostics above)",
                       what));
  for (const EntrySignature *sig : entries)
    if (llvm::Error err = checkCInterface(module, *sig))
      return std::move(err);
  return jitCompile(module, sharedLibs, /*openmp=*/options.parallel);
}

llvm::Error engine::lowerGpuModule(ModuleOp module,
                                   llvm::ArrayRef<const EntrySignature *> entries,
                                   const GpuPipelineOptions &options,
                                   llvm::StringRef what) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return makeError("invalid pass manager options");
  buildTfmGpuPipeline(pm, options);
  if (failed(pm.run(module)))
    return makeError(llvm::formatv("lowering {0} with the tfm GPU pipeline ({1}) failed "
                       "(see the diagnostics above)",
                       what, options.chip.getValue()));
  for (const EntrySignature *sig : entries)
    if (llvm::Error err = checkCInterface(module, *sig))
      return err;
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<JitModule>>
engine::compileGpuModule(ModuleOp module,
                         llvm::ArrayRef<const EntrySignature *> entries,
                         const GpuPipelineOptions &options,
                         llvm::ArrayRef<std::string> sharedLibs,
                         llvm::StringRef what, bool loadKernels) {
  if (llvm::Error err = lowerGpuModule(module, entries, options, what))
    return std::move(err);
  // The module's initialisers load its kernels onto the device.
  return jitCompile(module, sharedLibs, /*openmp=*/false,
                    /*initialize=*/loadKernels);
}

static llvm::Expected<std::unique_ptr<JitModule>>
jitCompile(ModuleOp module, llvm::ArrayRef<std::string> sharedLibs,
           bool openmp, bool initialize) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return makeError("cannot detect the host: " + llvm::toString(builder.takeError()));
  auto machine = builder->createTargetMachine();
  if (!machine)
    return makeError("cannot create a target machine: " +
         llvm::toString(machine.takeError()));
  auto transformer =
      makeOptimizingTransformer(3, /*sizeLevel=*/0, machine->get());

  std::vector<llvm::StringRef> libs(sharedLibs.begin(), sharedLibs.end());
  if (sharedLibs.empty() && llvm::sys::fs::exists(TFM_C_RUNNER_UTILS))
    libs.push_back(TFM_C_RUNNER_UTILS); // Resolves memrefCopy and friends.
  // The parallel loops call the OpenMP runtime (__kmpc_fork_call, ...).
  if (openmp) {
    if (!llvm::sys::fs::exists(TFM_OPENMP_RUNTIME))
      return makeError(llvm::formatv("the OpenMP runtime {0} is missing (install "
                         "libomp-22-dev, or compile with "
                         "--pipeline-options=parallel=0)",
                         TFM_OPENMP_RUNTIME));
    libs.push_back(TFM_OPENMP_RUNTIME);
  }
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  engineOptions.sharedLibPaths = libs;
  // Profiling: `TFM_PERF=1 perf record -k 1 ...` then `perf inject --jit`
  // names the JIT-compiled functions (a jitdump in the working directory).
  engineOptions.enablePerfNotificationListener = getenv("TFM_PERF") != nullptr;
  auto engine =
      ExecutionEngine::create(module, engineOptions, std::move(*machine));
  if (!engine)
    return makeError("JIT compilation failed: " + llvm::toString(engine.takeError()));
  // The compiled code's heap: temporaries reused across calls instead of
  // being page-faulted in again every call (tfm/Runtime/BufferPool.h).
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto add = [&](llvm::StringRef name, auto *function) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                                 llvm::JITSymbolFlags::Exported};
    };
    add("malloc", &poolMalloc);
    add("calloc", &poolCalloc);
    add("aligned_alloc", &poolAlignedAlloc);
    add("free", &poolFree);
    return symbols;
  });
  if (initialize)
    (*engine)->initialize();
  return std::make_unique<JitModule>(std::move(*engine));
}

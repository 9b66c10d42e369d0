//===- Compile.cpp - lowering and JIT-compiling tfm modules ---------------===//
#include "Compile.h"
#include "RunnerSupport.h"

#include "tfm/Dialect/Tfm/Transforms/Passes.h"

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
using namespace mlir::tfm::runner;
using namespace mlir::tfm::runtime;

JitModule::JitModule(std::unique_ptr<ExecutionEngine> engine)
    : engine(std::move(engine)) {}
JitModule::~JitModule() = default;

PackedFunction JitModule::lookup(llvm::StringRef function) {
  std::string symbol = ("_mlir_ciface_" + function).str();
  auto packed = engine->lookupPacked(symbol);
  if (!packed)
    fail(llvm::formatv("the lowered module has no {0} ({1}); the CPU "
                       "pipeline must emit C interfaces",
                       symbol, llvm::toString(packed.takeError())));
  return *packed;
}

std::unique_ptr<CpuPipelineOptions>
runner::parsePipelineOptions(llvm::StringRef text) {
  std::unique_ptr<CpuPipelineOptions> options =
      CpuPipelineOptions::createFromString(text);
  if (!options)
    fail(llvm::formatv("--pipeline-options '{0}': not valid options of "
                       "--tfm-cpu-pipeline",
                       text));
  return options;
}

std::unique_ptr<GpuPipelineOptions>
runner::parseGpuPipelineOptions(llvm::StringRef text) {
  std::unique_ptr<GpuPipelineOptions> options =
      GpuPipelineOptions::createFromString(text);
  if (!options)
    fail(llvm::formatv("--pipeline-options '{0}': not valid options of "
                       "--tfm-gpu-pipeline",
                       text));
  return options;
}

/// Runs the contract check and the Q/K/V fusion when asked to, then turns
/// them off for the rest of the pipeline.
static void runSignaturePassesImpl(ModuleOp module, bool &verifyContracts,
                                   bool &fuseQKV, llvm::StringRef what) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    fail("invalid pass manager options");
  if (verifyContracts)
    pm.addPass(createTfmVerifyContracts());
  if (fuseQKV)
    pm.addPass(createTfmFuseQKV());
  if (failed(pm.run(module)))
    fail(llvm::formatv("{0} does not pass the tfm contract checks (see the "
                       "diagnostics above)",
                       what));
  verifyContracts = false;
  fuseQKV = false;
}

void runner::runSignaturePasses(ModuleOp module, CpuPipelineOptions &options,
                                llvm::StringRef what) {
  bool verify = options.verifyContracts, fuse = options.fuseQKV;
  runSignaturePassesImpl(module, verify, fuse, what);
  options.verifyContracts = verify;
  options.fuseQKV = fuse;
}

void runner::runSignaturePasses(ModuleOp module, GpuPipelineOptions &options,
                                llvm::StringRef what) {
  bool verify = options.verifyContracts, fuse = options.fuseQKV;
  runSignaturePassesImpl(module, verify, fuse, what);
  options.verifyContracts = verify;
  options.fuseQKV = fuse;
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

/// JIT-compiles a module lowered to the LLVM dialect.
static std::unique_ptr<JitModule>
jitCompile(ModuleOp module, llvm::ArrayRef<std::string> sharedLibs,
           bool initialize = true);

std::unique_ptr<JitModule>
runner::compileModule(ModuleOp module,
                      llvm::ArrayRef<const EntrySignature *> entries,
                      const CpuPipelineOptions &options,
                      llvm::ArrayRef<std::string> sharedLibs,
                      llvm::StringRef what) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    fail("invalid pass manager options");
  buildTfmCpuPipeline(pm, options);
  if (failed(pm.run(module)))
    fail(llvm::formatv("lowering {0} with the tfm CPU pipeline failed (see "
                       "the diagnostics above)",
                       what));
  for (const EntrySignature *sig : entries)
    checkCInterface(module, *sig);
  return jitCompile(module, sharedLibs);
}

void runner::lowerGpuModule(ModuleOp module,
                            llvm::ArrayRef<const EntrySignature *> entries,
                            const GpuPipelineOptions &options,
                            llvm::StringRef what) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    fail("invalid pass manager options");
  buildTfmGpuPipeline(pm, options);
  if (failed(pm.run(module)))
    fail(llvm::formatv("lowering {0} with the tfm GPU pipeline ({1}) failed "
                       "(see the diagnostics above)",
                       what, options.chip.getValue()));
  for (const EntrySignature *sig : entries)
    checkCInterface(module, *sig);
}

std::unique_ptr<JitModule>
runner::compileGpuModule(ModuleOp module,
                         llvm::ArrayRef<const EntrySignature *> entries,
                         const GpuPipelineOptions &options,
                         llvm::ArrayRef<std::string> sharedLibs,
                         llvm::StringRef what, bool loadKernels) {
  lowerGpuModule(module, entries, options, what);
  // The module's initialisers load its kernels onto the device.
  return jitCompile(module, sharedLibs, /*initialize=*/loadKernels);
}

static std::unique_ptr<JitModule>
jitCompile(ModuleOp module, llvm::ArrayRef<std::string> sharedLibs,
           bool initialize) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    fail("cannot detect the host: " + llvm::toString(builder.takeError()));
  auto machine = builder->createTargetMachine();
  if (!machine)
    fail("cannot create a target machine: " +
         llvm::toString(machine.takeError()));
  auto transformer =
      makeOptimizingTransformer(3, /*sizeLevel=*/0, machine->get());

  std::vector<llvm::StringRef> libs(sharedLibs.begin(), sharedLibs.end());
  if (sharedLibs.empty() && llvm::sys::fs::exists(TFM_C_RUNNER_UTILS))
    libs.push_back(TFM_C_RUNNER_UTILS); // Resolves memrefCopy and friends.
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  engineOptions.sharedLibPaths = libs;
  auto engine =
      ExecutionEngine::create(module, engineOptions, std::move(*machine));
  if (!engine)
    fail("JIT compilation failed: " + llvm::toString(engine.takeError()));
  if (initialize)
    (*engine)->initialize();
  return std::make_unique<JitModule>(std::move(*engine));
}

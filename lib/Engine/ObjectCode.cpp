//===- ObjectCode.cpp - a lowered module to object code, on all cores ------===//
//
// The CPU path's LLVM step without mlir::ExecutionEngine: translate the
// lowered module, optimise it whole (O3, as the ExecutionEngine does), then
// split it and generate machine code for the parts on several threads.
// Machine code generation is most of the LLVM step (instruction selection and
// register allocation of a 12-layer model's entries and kernels), and it is
// independent per function, so on the 2-core VM two parts take about half
// the time. The objects are linked by an LLJIT (Compile.cpp), the same way a
// cached entry is.
//
//===----------------------------------------------------------------------===//
#include "tfm/Engine/Compile.h"
#include "tfm/Runtime/Error.h"
#include "tfm/Codegen/CPU/CpuTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Threading.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <mutex>
#include <thread>

using namespace mlir;
using namespace mlir::tfm;
using runtime::makeError;

/// Adds `_mlir__mlir_ciface_F(void **args)` for every C interface function:
/// it calls `_mlir_ciface_F(*args[0], *args[1], ...)`. This is the packed
/// form JitModule::lookup calls, named as mlir::ExecutionEngine names it, so
/// objects from either path (and the code cache's) link the same way.
static void addPackedWrappers(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::SmallVector<llvm::Function *> interfaces;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        function.getName().starts_with("_mlir_ciface_"))
      interfaces.push_back(&function);
  auto *ptrType = llvm::PointerType::getUnqual(context);
  auto *wrapperType = llvm::FunctionType::get(llvm::Type::getVoidTy(context),
                                              {ptrType}, /*isVarArg=*/false);
  for (llvm::Function *interface : interfaces) {
    auto *wrapper = llvm::Function::Create(
        wrapperType, llvm::GlobalValue::ExternalLinkage,
        "_mlir_" + interface->getName(), module);
    llvm::IRBuilder<> builder(
        llvm::BasicBlock::Create(context, "entry", wrapper));
    llvm::Value *packed = wrapper->getArg(0);
    llvm::SmallVector<llvm::Value *> args;
    for (auto [i, arg] : llvm::enumerate(interface->args())) {
      llvm::Value *slot = builder.CreateConstGEP1_64(ptrType, packed, i);
      llvm::Value *pointer = builder.CreateLoad(ptrType, slot);
      args.push_back(builder.CreateLoad(arg.getType(), pointer));
    }
    llvm::Value *result = builder.CreateCall(interface, args);
    if (!interface->getReturnType()->isVoidTy()) {
      // The result's slot follows the arguments' (ExecutionEngine's layout).
      llvm::Value *slot =
          builder.CreateConstGEP1_64(ptrType, packed, interface->arg_size());
      builder.CreateStore(result, builder.CreateLoad(ptrType, slot));
    }
    builder.CreateRetVoid();
  }
}

/// Machine code for `module` as an ELF object.
static llvm::Expected<std::string>
emitObject(llvm::Module &module, llvm::orc::JITTargetMachineBuilder builder) {
  auto machine = builder.createTargetMachine();
  if (!machine)
    return machine.takeError();
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  if ((*machine)->addPassesToEmitFile(passes, os, nullptr,
                                      llvm::CodeGenFileType::ObjectFile))
    return makeError("the target cannot emit object code");
  passes.run(module);
  return std::string(buffer.begin(), buffer.end());
}

llvm::Expected<std::vector<std::string>>
engine::generateObjectCode(ModuleOp module, unsigned maxThreads,
                           llvm::StringRef requestedCpu) {
  std::string cpu = resolveCpuName(requestedCpu);
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return makeError("cannot detect the host: " +
                     llvm::toString(builder.takeError()));
  // The code is for the CPU the pipeline planned for (cpu=znver3 on an
  // AVX-512 machine: AVX2 code in 16 registers, as planned), without the
  // features this machine lacks, since it runs here (cpu=skylake-avx512 on
  // an AVX2 machine: Skylake's tuning, AVX2 instructions; a VM that hides
  // pku or rdpru from its guest). detectHost lists every instruction-set
  // feature it probed, "-name" where this machine lacks it: those are kept.
  if (cpu != "host") {
    const std::vector<std::string> &host = builder->getFeatures().getFeatures();
    if (host.empty())
      return makeError(llvm::formatv(
          "cpu '{0}': this machine's CPU features cannot be read, so code "
          "for another CPU might not run here (use cpu=host)",
          cpu));
    llvm::SubtargetFeatures lacking;
    for (const std::string &feature : host)
      if (llvm::StringRef(feature).starts_with("-"))
        lacking.AddFeature(feature);
    builder->setCPU(cpu);
    builder->setFeatures(lacking.getString());
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder->createTargetMachine();
  if (!machine)
    return makeError("cannot create a target machine: " +
                     llvm::toString(machine.takeError()));

  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "tfm_model");
  if (!llvmModule)
    return makeError("cannot translate the lowered module to LLVM IR");
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  addPackedWrappers(*llvmModule);
  auto optimize =
      makeOptimizingTransformer(3, /*sizeLevel=*/0, machine->get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return makeError("LLVM optimisation failed: " +
                     llvm::toString(std::move(err)));

  unsigned threads =
      std::min<unsigned>(maxThreads ? maxThreads : 1,
                         llvm::heavyweight_hardware_concurrency()
                             .compute_thread_count());
  if (threads <= 1 || llvmModule->size() < 2 * threads) {
    auto object = emitObject(*llvmModule, *builder);
    if (!object)
      return object.takeError();
    return std::vector<std::string>{std::move(*object)};
  }

  // Parts share nothing once written as bitcode: each thread reads its own
  // into its own LLVMContext (a context is not thread-safe). Internal
  // symbols referenced across parts are made external by the split.
  std::vector<std::string> bitcode;
  llvm::SplitModule(
      *llvmModule, threads,
      [&](std::unique_ptr<llvm::Module> part) {
        std::string buffer;
        llvm::raw_string_ostream os(buffer);
        llvm::WriteBitcodeToFile(*part, os);
        bitcode.push_back(std::move(buffer));
      },
      /*PreserveLocals=*/false);

  std::vector<std::string> objects(bitcode.size());
  std::mutex errorMutex;
  std::string firstError;
  auto compilePart = [&](size_t i) {
    auto fail = [&](const llvm::Twine &message) {
      std::lock_guard<std::mutex> lock(errorMutex);
      if (firstError.empty())
        firstError = message.str();
    };
    llvm::LLVMContext partContext;
    auto part = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(bitcode[i], "tfm_model_part"), partContext);
    if (!part)
      return fail(llvm::toString(part.takeError()));
    auto object = emitObject(**part, *builder);
    if (!object)
      return fail(llvm::toString(object.takeError()));
    objects[i] = std::move(*object);
  };
  std::vector<std::thread> workers;
  for (size_t i = 1; i < bitcode.size(); ++i)
    workers.emplace_back(compilePart, i);
  compilePart(0);
  for (std::thread &worker : workers)
    worker.join();
  if (!firstError.empty())
    return makeError("code generation failed: " + firstError);
  return objects;
}

//===- Compile.h - lowering and JIT-compiling tfm modules -------*- C++ -*-===//
//
// The engine's use of the tfm pipelines and MLIR's ExecutionEngine, behind a
// small interface so that only one TU pays for the JIT headers. Every
// function returns its error (the runner prints it, the C API returns it).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_ENGINE_COMPILE_H
#define TFM_ENGINE_COMPILE_H

#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Runtime/EntrySignature.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace mlir {
class ExecutionEngine;
class ModuleOp;
class TimingScope;
namespace tfm::engine {

/// The root of --mlir-timing's report (one at exit): the importer, each
/// pipeline stage and the LLVM step nest their timers under it.
TimingScope &getCompileTiming();

/// A `_mlir_ciface_` wrapper called through the ExecutionEngine's packed
/// interface: one pointer per C-interface argument.
using PackedFunction = void (*)(void **);

/// A JIT-compiled module: compiled now by the ExecutionEngine, or linked
/// from an object of the compiled-code cache (tfm/Runtime/CodeCache.h).
class JitModule {
public:
  explicit JitModule(std::unique_ptr<ExecutionEngine> engine);
  explicit JitModule(std::unique_ptr<llvm::orc::LLJIT> jit);
  ~JitModule();
  /// The packed wrapper of `_mlir_ciface_<function>`; fails if absent.
  llvm::Expected<PackedFunction> lookup(llvm::StringRef function);

  /// What the cache did: "cache hit", "cache miss" (the entry now written),
  /// "cache off".
  std::string cacheStatus = "cache off";

private:
  std::unique_ptr<ExecutionEngine> engine;
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

/// " (cache hit)" or " (cache miss)" for a timing line; empty without a
/// cache.
std::string describeCache(const JitModule &jit);

/// The compiled-code cache of the CPU pipeline: on (the default directory
/// CodeCache::getDefaultDirectory() or `directory`) unless `enabled` is
/// false. `warn` receives its warnings (damaged entries, no directory).
struct CacheOptions {
  bool enabled = false;
  std::string directory;
  std::function<void(const llvm::Twine &)> warn;
};

/// The CPU pipeline's --pipeline-options string parsed, or an error naming it.
llvm::Expected<std::unique_ptr<CpuPipelineOptions>>
parsePipelineOptions(llvm::StringRef options);

/// The GPU pipeline's --pipeline-options string parsed (with --device cuda).
llvm::Expected<std::unique_ptr<GpuPipelineOptions>>
parseGpuPipelineOptions(llvm::StringRef options);

/// The pipeline's signature-changing steps run on their own, because binding
/// must see the signature that is compiled: on the CPU the whole signature
/// stage (buildTfmCpuSignatureStage: contracts, Q/K/V fusion, lowering to
/// linalg, weight packing); on the GPU buildTfmGpuSignatureStage (the same
/// up to linalg, then f16 weight parameters). `what` names the model in
/// errors.
llvm::Error runSignaturePasses(ModuleOp module,
                               const CpuPipelineOptions &options,
                               llvm::StringRef what);
llvm::Error runSignaturePasses(ModuleOp module,
                               const GpuPipelineOptions &options,
                               llvm::StringRef what);

/// Lowers `module` with the rest of the CPU pipeline (the codegen stage),
/// checks that each of `entries` has the C interface of
/// tfm/Pipelines/Pipelines.h, and JIT-compiles it (every entry in one engine).
/// `sharedLibs` empty picks MLIR's c_runner_utils when installed.
///
/// With `cache` enabled, the module as given (before the codegen stage) is
/// hashed with the options, the host CPU and the build: a hit links the
/// cached object and skips lowering and LLVM; a miss compiles and stores
/// the object. A corrupt or stale entry is rebuilt after a warning.
llvm::Expected<std::unique_ptr<JitModule>> compileModule(
    ModuleOp module, llvm::ArrayRef<const runtime::EntrySignature *> entries,
    const CpuPipelineOptions &options, llvm::ArrayRef<std::string> sharedLibs,
    llvm::StringRef what, const CacheOptions &cache = {});

/// Object code for a lowered (LLVM dialect) module, prepared by
/// prepareForTranslation: translated, optimised at O3 for `cpu` (as -mcpu:
/// that CPU's instruction set and tuning) less the features this machine
/// lacks, since the code runs here ("host": this machine), split
/// into up to `maxThreads` parts (no more than the host's cores) whose
/// machine code is generated concurrently; one object per part. Each
/// C interface function `_mlir_ciface_F` gets its packed form
/// `_mlir__mlir_ciface_F(void **)`, as mlir::ExecutionEngine makes it.
llvm::Expected<std::vector<std::string>>
generateObjectCode(ModuleOp module, unsigned maxThreads,
                   llvm::StringRef cpu = "host");

/// Prepares a lowered (LLVM dialect) module for its translation to LLVM IR:
/// drops the tfm.* argument attributes, which the translation would warn
/// about one by one, printing the whole function each time.
llvm::Error prepareForTranslation(ModuleOp module);

/// Lowers `module` with the GPU pipeline and checks the C interface of
/// `entries` (what compileGpuModule compiles).
llvm::Error
lowerGpuModule(ModuleOp module,
               llvm::ArrayRef<const runtime::EntrySignature *> entries,
               const GpuPipelineOptions &options, llvm::StringRef what);

/// compileModule for `--device cuda`: lowers with the GPU pipeline (kernels
/// embedded as cubins for `options.chip`) and JIT-compiles the host code,
/// whose mgpu* calls resolve to libtfm_cuda_runtime.so (linked into the
/// runner). The CUDA driver must be initialised first: loading the module
/// loads its kernels. The entries take device memory (DeviceFrame.h).
/// Without `loadKernels`, nothing runs (no driver needed): the entries can
/// be looked up (which compiles them) but not called.
llvm::Expected<std::unique_ptr<JitModule>> compileGpuModule(
    ModuleOp module, llvm::ArrayRef<const runtime::EntrySignature *> entries,
    const GpuPipelineOptions &options, llvm::ArrayRef<std::string> sharedLibs,
    llvm::StringRef what, bool loadKernels = true);

} // namespace tfm::engine
} // namespace mlir

#endif // TFM_ENGINE_COMPILE_H

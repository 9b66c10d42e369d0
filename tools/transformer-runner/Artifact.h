//===- Artifact.h - saved GPU artifacts -------------------------*- C++ -*-===//
//
// `--emit-artifact DIR` saves what `--device cuda` compiles, so that it can
// run later without compiling (and without MLIR: tools/tfm-artifact-run):
//
//   DIR/model.ll      host code in LLVM IR with the kernels embedded (cubin
//                     or PTX, per --pipeline-options format=)
//   DIR/glue.c        `void tfm_packed_<entry>(void **args)` per entry: the
//                     packed-argument form of `_mlir_ciface_<entry>`
//   DIR/manifest.txt  the calling convention: `entry NAME`, then a line per
//                     argument `arg KIND DTYPE SHAPE NAME` (KIND param, input,
//                     index or kv_cache; `- -` for an index) and per
//                     out-parameter `result DTYPE SHAPE NAME`
//   DIR/data/<i>.bin  the bound value of argument i (raw, row-major); with
//                     --emit-artifact-data=0, index arguments only
//
// scripts/gpu-artifact.sh DIR links DIR/model.so (llc + clang, against
// libtfm_cuda_runtime.so); `--artifact DIR/model.so` runs it, after checking
// that its manifest is the model's.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TRANSFORMER_RUNNER_ARTIFACT_H
#define TFM_TOOLS_TRANSFORMER_RUNNER_ARTIFACT_H

#include "RunnerSupport.h"

#include "tfm/Engine/Compile.h"

#include <memory>

namespace mlir::tfm::runner {

/// The manifest text of `entries` (DIR/manifest.txt).
std::string getManifest(llvm::ArrayRef<const runtime::EntrySignature *> entries);

/// Lowers `module` with the GPU pipeline and writes the artifact files of
/// `entries` into `dir`; with `frame`, also the bound index arguments of the
/// (one) entry, and its tensors with `withTensors`.
void writeGpuArtifact(ModuleOp module,
                      llvm::ArrayRef<const runtime::EntrySignature *> entries,
                      const GpuPipelineOptions &options, llvm::StringRef dir,
                      llvm::StringRef what, CallFrame *frame,
                      bool withTensors);

/// A linked artifact (model.so), loaded with dlopen.
class ArtifactLibrary {
public:
  /// Loads `path` and checks that the manifest next to it describes
  /// `entries`; fails with one line otherwise.
  ArtifactLibrary(llvm::StringRef path,
                  llvm::ArrayRef<const runtime::EntrySignature *> entries);
  PackedFunction lookup(llvm::StringRef function);

private:
  void *handle = nullptr;
  std::string path;
};

} // namespace mlir::tfm::runner

#endif // TFM_TOOLS_TRANSFORMER_RUNNER_ARTIFACT_H

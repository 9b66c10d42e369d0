//===- Passes.td - passes of the tfm pipelines -------------*- tablegen -*-===//
//
// Steps of `--tfm-gpu-pipeline` (tfm/Pipelines/Pipelines.h), registered so
// that tests can run them alone.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_PIPELINES_PASSES_TD
#define TFM_PIPELINES_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmGpuDeviceBuffers : Pass<"tfm-gpu-device-buffers", "func::FuncOp"> {
  let summary = "Moves the buffers of bufferized host code to GPU memory";
  let description = [{
    On code bufferized with the calling convention of the tfm pipelines
    (every memref argument and out-parameter holds device memory):

    - `memref.alloc` / `memref.dealloc` become `gpu.alloc` / `gpu.dealloc`,
      each made synchronous with `gpu.wait` (the asynchronous forms are the
      ones gpu-to-llvm lowers);
    - `memref.copy` becomes `linalg.copy`, so that it runs as a kernel like
      every other linalg op;
    - a `memref.get_global` constant is copied to a device buffer that is
      freed before the function returns.

    Ops already inside a `gpu.launch` are left alone. A `memref.alloca` in
    host code is an error (no host code may touch device data).
  }];
  let dependentDialects = ["gpu::GPUDialect", "linalg::LinalgDialect"];
}

def TfmGpuLaunchLoops : Pass<"tfm-gpu-launch-loops", "func::FuncOp"> {
  let summary = "Runs every host loop nest and memory access as a GPU kernel";
  let description = [{
    On bufferized host code whose linalg ops are parallel loops
    (`convert-linalg-to-parallel-loops`):

    - each outermost `scf.parallel` becomes a `gpu.launch` with one thread
      per iteration: the iteration space is linearised (last dimension
      fastest, so consecutive threads touch consecutive elements), split into
      blocks of `block-size` threads, guarded and delinearised;
    - a host region op (`scf.for`, `scf.if`) that contains such loops stays
      on the host and its body is processed in turn (the key-tile loop of
      flash attention launches kernels per tile);
    - any other op that reads or writes memory runs in a one-thread kernel;
      where host code uses its scalar results (the token counts of MoE
      routing size host loops), they are copied back through one-element
      device buffers after the kernel.

    Nested `scf.parallel` ops inside a kernel become `scf.for` loops.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "affine::AffineDialect",
                           "arith::ArithDialect", "scf::SCFDialect"];
}

def TfmGpuMergeKernelModules : Pass<"tfm-gpu-merge-kernel-modules",
                                   "ModuleOp"> {
  let summary = "Moves every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` puts each kernel in a `gpu.module` of its own,
    and each module becomes its own PTX, its own ptxas run and its own
    `cuModuleLoadData` at load time: a whole model has hundreds. This pass
    moves every kernel into the first module (named `<name>`), renaming each
    after the module it came from (unique), and updates every
    `gpu.launch_func`. Symbols other than kernels that clash are an error.
  }];
  let options = [
    Option<"name", "name", "std::string", /*default=*/"\"tfm_kernels\"",
           "Name of the merged module">,
  ];
  let dependentDialects = ["gpu::GPUDialect"];
}

#endif // TFM_PIPELINES_PASSES_TD

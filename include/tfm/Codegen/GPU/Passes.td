//===- Passes.td - Codegen passes of the GPU pipeline ------*- tablegen -*-===//
//
// Steps of `--tfm-gpu-pipeline` (tfm/Pipelines/Pipelines.h): device
// buffers, kernel launches, tensor-core (mma.sync, wgmma) and matvec
// kernels, flash attention, and the kernel modules.
// Registered so that tests can run each alone and
// `--mlir-print-ir-after=<argument>` can name it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_GPU_PASSES_TD
#define TFM_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmGpuConfigure : Pass<"tfm-gpu-configure", "ModuleOp"> {
  let summary = "Chooses each f16 matmul's kernel and tiles from the chip "
                "and records them (tfm.gpu_kernel)";
  let description = [{
    The policy half of GPU code generation, as `tfm-cpu-configure` is on
    the CPU (and IREE's LLVMGPU KernelConfig): for each f16 `linalg.matmul`
    on buffers outside any kernel, takes the first kernel that the options
    allow and the shape suits, and records it with its tiles as
    `#tfm.gpu_kernel`:

    - `wgmma` with `chip=sm_90a`: M a multiple of 64, N of 128, K of 64;
      128-row tiles where M allows, else 64;
    - `mma_sync`: M a multiple of 64, K of 32, and N of 64, or a B stored
      `[N, K]` of at least 64 columns (the last N % 64 go to another
      kernel);
    - `matvec`: at most 8 rows (decode).

    The kernel passes rewrite only the matmuls recorded for them, so which
    kernel a matmul gets is decided here once, for any chip, and tests
    check it without a GPU.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "Target GPU (sm_80, sm_86, sm_89, sm_90, sm_90a)">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "Plan mma.sync kernels (and wgmma on sm_90a)">,
    Option<"warpgroupMma", "warpgroup-mma", "bool", /*default=*/"true",
           "With chip=sm_90a and tensor-cores, plan TMA + wgmma kernels "
           "first">,
    Option<"matvec", "matvec", "bool", /*default=*/"true",
           "Plan split-K kernels for matmuls of at most 8 rows">,
    Option<"wgmmaStages", "wgmma-stages", "int64_t", /*default=*/"3",
           "Depth of the wgmma kernels' TMA pipeline (2 to 8)">,
  ];
  // The plan it writes is a #tfm.gpu_kernel.
  let dependentDialects = ["tfm::TfmDialect"];
}

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

    With `async`, the allocations and deallocations are left synchronous
    in form (no token) instead, for `gpu-async-region` to thread into the
    function's stream-ordered chain: no host synchronisation per buffer, and
    the runtime allocates from the stream's memory pool.

    Ops already inside a `gpu.launch` are left alone. A `memref.alloca` in
    host code is an error (no host code may touch device data).
  }];
  let options = [
    Option<"async", "async", "bool", /*default=*/"false",
           "Leave gpu.alloc/gpu.dealloc for gpu-async-region to chain">,
  ];
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

def TfmGpuRowReductions : Pass<"tfm-gpu-row-reductions", "func::FuncOp"> {
  let summary = "Runs row reductions (norm statistics, softmax) a warp a row";
  let description = [{
    On bufferized host code, before the SIMT path: a `linalg.generic` with
    one output, parallel loops then one innermost reduction loop, whose
    inputs all index every parallel loop (row reductions: the statistics of
    norms, softmax max and sum; not contractions) and whose payload uses the
    accumulator only as an operand of its final associative combiner
    (`arith.addf`, `mulf`, `maximumf`, `minimumf`, `maxnumf`, `minnumf`)
    becomes a kernel with one warp per row: each lane combines every 32nd
    element from the combiner's identity, five `gpu.shuffle xor` steps
    combine the lanes, and lane 0 combines the total into the output.
    Floating-point sums are reassociated (f32 rounding differences).

    `linalg.matmul` with at most `gemv-max-rows` rows against a transposed
    (`[N, K]`, `out_in`) B (decode's projections) is treated the same way,
    one warp per output element: the lanes read consecutive elements of a
    weight row instead of one thread walking a whole row.
  }];
  let options = [
    Option<"warpsPerBlock", "warps-per-block", "int64_t", /*default=*/"4",
           "Rows (warps) per block">,
    Option<"gemvMaxRows", "gemv-max-rows", "int64_t", /*default=*/"8",
           "Matmuls with at most this many rows and an [N, K] B run a warp "
           "per output element">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "scf::SCFDialect",
                           "arith::ArithDialect", "memref::MemRefDialect",
                           "affine::AffineDialect"];
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

def TfmGpuTensorCoreMatmul : Pass<"tfm-gpu-tensor-core-matmul",
                                 "ModuleOp"> {
  let summary = "Runs f16 matmuls as tensor-core kernels (mma.sync)";
  let description = [{
    On bufferized host code (before the SIMT path), every `linalg.matmul`
    `tfm-gpu-configure` planned as `#tfm.gpu_kernel<kind = mma_sync, ...>`
    (f16 operands, an f32 accumulator, identity layouts, static shapes, M
    and N multiples of 64 and K a multiple of 32, with B either `[K, N]` or
    transposed `[N, K]`, the `out_in` weight layout) becomes a call of a
    kernel built for its shape. With an
    `[N, K]` B whose N is no multiple of 64 (a vocabulary of 50257), the
    kernel computes the first 64-multiple columns of C (a strided view) from
    B's first rows, and a `linalg.matmul` on the remaining rows is left for
    the SIMT path. The kernel:

    - a block computes a 64x64 tile of C with 4 warps of 32x32; K advances
      in steps of 32;
    - A and B tiles are staged in two slots of shared memory (workgroup
      attributions) with `cp.async` (`nvgpu.device_async_copy`, 16 bytes a
      thread), two stages deep: the tiles of step i + 1 are in flight while
      step i is computed;
    - each warp keeps 2x4 accumulators of 16x8 f32 in registers across the
      K loop (`vector.contract` on 16x8x16 tiles, which
      `convert-vector-to-gpu{use-nvgpu}` turns into `ldmatrix` +
      `mma.sync.m16n8k16.f32.f16.f16.f32` once the kernel is outlined).

    Other contractions keep the SIMT path; an mma_sync plan the kernel
    cannot run is an error on its matmul. bf16 operands are not converted
    (MLIR 22's vector-to-nvgpu conversion rejects bf16 `ldmatrix` reads).
  }];
  let dependentDialects = ["gpu::GPUDialect", "nvgpu::NVGPUDialect",
                           "vector::VectorDialect", "affine::AffineDialect",
                           "func::FuncDialect"];
}

def TfmGpuMatvec : Pass<"tfm-gpu-matvec", "ModuleOp"> {
  let summary = "Runs f16 matmuls of at most 8 rows as split-K SIMT kernels";
  let description = [{
    On bufferized host code (before the SIMT path): a decode step's
    projections and LM head are `linalg.matmul`s of one row per sequence.
    The SIMT path would give each output a thread and its whole K loop (768
    outputs: 3 blocks on a GPU of 132 SMs) reading the weight K elements
    apart. Every `linalg.matmul` `tfm-gpu-configure` planned as
    `#tfm.gpu_kernel<kind = matvec, ...>` (f16 operands, an f32
    accumulator, identity layouts, static shapes, M <= 8) becomes a call of
    a kernel built for its shape, of 256 threads (`warps` 8) a block:

    - B `[N, K]` (`out_in`, K a multiple of 8): a warp per output column;
      its lanes read the weight row in 16-byte vectors (each step one
      coalesced 512-byte read), keep 8 partial sums per row of A, and end
      with a vector reduction and a butterfly of `gpu.shuffle xor`;
    - B `[K, N]` (`in_out`, N a multiple of 8, K of 32): split-K over
      about 264 blocks (two per SM of an H100/H200): a block covers 256
      columns (`tile_n`; 8 a lane, one 16-byte load per K row) and
      `tile_k` K rows
      (the 8 warps on interleaved rows, 4 loads in flight a step); the
      warps' sums meet in workgroup memory and each block writes its
      partial sums to a scratch buffer, which a second kernel adds up in
      split order (deterministic). The scratch buffer is a token-less
      `gpu.alloc` for gpu-async-region with `async`, else synchronous.

    Each adds its dot products to C, as the matmul does. Other matmuls are
    left alone; a matvec plan the kernel cannot run is an error.
  }];
  let options = [
    Option<"async", "async", "bool", /*default=*/"false",
           "Leave the scratch gpu.alloc/gpu.dealloc for gpu-async-region to "
           "chain">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "affine::AffineDialect",
                           "arith::ArithDialect", "math::MathDialect",
                           "memref::MemRefDialect", "scf::SCFDialect",
                           "vector::VectorDialect", "func::FuncDialect"];
}

def TfmGpuFlashAttention : Pass<"tfm-gpu-flash-attention", "ModuleOp"> {
  let summary = "Runs each tfm.attention as one FA2-style tensor-core kernel";
  let description = [{
    On tfm ops (before `--tfm-flash-attention` and `--convert-tfm-to-linalg`):
    each `tfm.attention` with static f32 shapes, `dh == dv` of 64 or 128, no
    `sliding_window` and an `index` offset (or none) becomes f16 copies of
    q, k and v (`arith.truncf` in a `linalg.generic`, as
    `tfm-gpu-contraction-dtype` does for matmuls) and a call of a private
    function on tensors, one per attention shape, which calls a launcher
    declaration (attribute `tfm.flash_attention_kernel = {causal, scale,
    splits}`) on the buffers of its arguments;
    `--tfm-gpu-flash-attention-kernels` defines the launchers after
    bufferization (buffer deallocation rejects the kernel's ops). The kernel:

    - grid (ceil(S / 64), B * Hq), 4 warps; a block handles 64 query rows of
      one (batch, head), each warp 16 rows for the whole key loop; query head
      `h` reads key/value head `h / (Hq / Hkv)` (MHA, GQA, MQA);
    - Q is loaded once into registers as the A fragments of `mma.sync`
      (head_dim 64) or into shared memory, read with `ldmatrix` every key
      tile (head_dim 128: in registers it spills);
    - K and V tiles of 64 keys (32 for head_dim 128) are staged in two slots of dynamic shared
      memory (rows padded by 16 bytes) with `cp.async`: tile t + 1 is in
      flight while tile t is computed;
    - `S = Q K^T` and `O += P V` with `mma.sync.m16n8k16` (f16 operands,
      f32 accumulation; `ldmatrix`, transposed for V); P stays in registers
      (the f32 score fragments of two n8 tiles, rounded to f16, are the A
      fragment of one k16 step);
    - online softmax in registers: scores prescaled by `scale * log2(e)`,
      `math.exp2` (`ex2.approx`), row max across the quad with
      `gpu.shuffle xor`, row sums per thread reduced once at the end;
    - causal: key tiles past a block's last visible key are never visited;
      tiles wholly visible run an unmasked loop, the rest (the diagonal,
      and a last partial tile) a masked one. Query `s` is at position
      `offset + s` (`offset` defaults to `Skv - S`, as in `tfm.attention`)
      and sees keys `j <= offset + s`, `j < Skv`;
    - any S and Skv: rows past S load row S - 1 and are not stored, keys
      past Skv load key Skv - 1 and are masked; heaviest causal query tiles
      first;
    - split-KV (decode, short chunks): when S fits one query tile, there are
      at least 4 key tiles and fewer than 264 blocks, the key tiles are
      split over the grid's z dimension (enough splits for about 264
      blocks, at least 2 tiles each, at most 32); each split writes its
      unnormalised O, row max and row sum to scratch buffers the function
      on tensors allocates, and a combine kernel (a block per query row, a
      thread per column) merges them.

    Other attentions (per-sequence `[B]` offsets, sliding windows, other
    head sizes, dynamic shapes, f16/bf16 models) keep the generic path.
    Results differ from f32 arithmetic by the f16 rounding of q, k, v and P.
  }];
  let dependentDialects = ["arith::ArithDialect", "bufferization::BufferizationDialect",
                           "func::FuncDialect", "gpu::GPUDialect",
                           "linalg::LinalgDialect", "math::MathDialect",
                           "memref::MemRefDialect", "nvgpu::NVGPUDialect",
                           "scf::SCFDialect", "tensor::TensorDialect",
                           "vector::VectorDialect"];
}

def TfmGpuFlashAttentionKernels : Pass<"tfm-gpu-flash-attention-kernels",
                                      "ModuleOp"> {
  let summary = "Defines the kernel launchers of --tfm-gpu-flash-attention";
  let description = [{
    On bufferized host code: each external function with the attribute
    `tfm.flash_attention_kernel = {causal, scale, splits}` and the signature
    `(q: memref<BxHqxSxdxf16>, k, v: memref<BxHkvxSkvxdxf16>, offset: index,
    out: memref<BxHqxSxdxf32>)` gets a body: the `gpu.launch` of the
    flash-attention kernel described under `--tfm-gpu-flash-attention`.
    With `splits = N > 1` the launcher also takes the scratch buffers
    `memref<NxBxHqxSxdxf32>` (partial O) and `memref<NxBxHqxSx2xf32>` (row
    max and sum) and launches the combine kernel after the split kernel.
  }];
  let dependentDialects = ["arith::ArithDialect", "gpu::GPUDialect",
                           "math::MathDialect", "memref::MemRefDialect",
                           "nvgpu::NVGPUDialect", "scf::SCFDialect",
                           "vector::VectorDialect"];
}

def TfmGpuWarpgroupMatmul : Pass<"tfm-gpu-warpgroup-matmul", "ModuleOp"> {
  let summary = "Runs f16 matmuls as TMA + wgmma kernels (sm_90a)";
  let description = [{
    The Hopper (sm_90a) form of `--tfm-gpu-tensor-core-matmul`. On
    bufferized host code, every `linalg.matmul` `tfm-gpu-configure` planned
    as `#tfm.gpu_kernel<kind = wgmma, ...>` (f16 operands, an f32
    accumulator, identity layouts, static shapes, M a multiple of 64, N of
    128 and K of 64, with B either `[K, N]` or `[N, K]`) becomes a call of a
    host function built for its shape and the plan's block rows and stages:

    - on the host, TMA descriptors of A and B with 128-byte swizzle
      (`nvgpu.tma.create.descriptor`, `mgpuTensorMapEncodeTiledMemref`);
    - a block of one warpgroup (128 threads) computes a 128x128 tile of C
      (64x128 where M is not a multiple of 128) as 64x128 f32 accumulators
      in registers; K advances by 64;
    - A and B tiles are loaded by TMA (`nvgpu.tma.async.load`, the leader
      thread) into a ring of the plan's `stages` slots of dynamic shared
      memory, each
      with an mbarrier (`arrive.expect_tx`, `try_wait.parity`); `stages - 1`
      tiles are in flight while one is computed;
    - each K step of 16 is one `wgmma.mma_async.m64n128k16.f32.f16.f16` per
      accumulator (`nvgpu.warpgroup.mma`, descriptors of the shared tiles;
      B `[K, N]` is read transposed); the wgmmas of a K tile stay in flight
      while the next tile's are issued, then the slot of the retired tile
      is refilled;
    - epilogue: the accumulators go through shared memory and are added to
      C a row of 128 f32 per warp.

    Other matmuls are left alone; a wgmma plan the kernel cannot run is an
    error on its matmul. The kernels need sm_90a (`wgmma`
    fence/commit/wait).
  }];
  let options = [
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "Keep the wgmmas of one K tile in flight while the next tile's "
           "are issued (false: each wgmma waits for all but itself)">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "nvgpu::NVGPUDialect",
                           "NVVM::NVVMDialect", "LLVM::LLVMDialect",
                           "vector::VectorDialect",
                           "affine::AffineDialect", "memref::MemRefDialect",
                           "scf::SCFDialect", "func::FuncDialect"];
}

def TfmGpuContractionDtype : Pass<"tfm-gpu-contraction-dtype", "ModuleOp"> {
  let summary = "Computes f32 matmuls with f16 operands (f32 accumulation)";
  let description = [{
    On linalg on tensors: the f32 operands of each `linalg.matmul` are
    rounded to f16 (`arith.truncf` in a `linalg.generic`); the accumulator
    and result stay f32. This is what lets f32 models use the tensor-core
    kernels of `tfm-gpu-tensor-core-matmul`; results differ from f32
    arithmetic by f16 rounding of the operands.

    An operand that is a weight parameter (a `tfm.param` argument of the
    function) is not rounded on every call: the function gets an f16
    argument after it with the same attributes plus `tfm.param_rounded`
    (whoever binds weights rounds the tensor once), and the f32 argument is
    erased when nothing else reads it (a tied embedding's table stays for
    its gathers).
  }];
  let dependentDialects = ["linalg::LinalgDialect", "arith::ArithDialect",
                           "tensor::TensorDialect"];
}

def TfmGpuLowerContractions : Pass<"tfm-gpu-lower-contractions",
                                  "gpu::GPUModuleOp"> {
  let summary = "Turns the vector contractions of kernels into mma.sync";
  let description = [{
    Runs `convert-vector-to-gpu{use-nvgpu=true}`, canonicalize and cse on
    each outlined kernel that contains a `vector.contract` (the 16x8x16
    tiles of `tfm-gpu-tensor-core-matmul`), giving `nvgpu.ldmatrix` and
    `nvgpu.mma.sync`. Other kernels are left alone: the upstream pass
    rejects kernels with scalar `arith` index math, which the SIMT kernels
    have.
  }];
  let dependentDialects = ["nvgpu::NVGPUDialect", "gpu::GPUDialect"];
}

#endif // TFM_CODEGEN_GPU_PASSES_TD

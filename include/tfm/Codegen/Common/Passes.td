//===- Passes.td - Codegen passes both pipelines run -------*- tablegen -*-===//
//
// Steps shared by `--tfm-cpu-pipeline` and `--tfm-gpu-pipeline`
// (tfm/Pipelines/Pipelines.h): the calling convention around bufferization,
// elementwise fusion, the workspace plan, and the cleanup before LLVM IR.
// Registered so that tests can run each alone and
// `--mlir-print-ir-after=<argument>` can name it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_COMMON_PASSES_TD
#define TFM_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmPrepareAbi : Pass<"tfm-prepare-abi", "ModuleOp"> {
  let summary = "Marks public functions for the C interface, their KV-cache "
                "arguments writable and every other tensor argument read-only";
  let description = [{
    Before one-shot bufferization (the calling convention of
    `tfm/Pipelines/Pipelines.h`): every public function gets
    `llvm.emit_c_interface`, and each of its tensor arguments
    `bufferization.writable`: true for KV caches (`tfm.kv_cache`), so that a
    `tfm.kv_cache_write` bufferizes to a write into the caller's buffer,
    false for the rest, so that bufferization never reuses a caller's input
    (a weight, the hidden state) as scratch space. Malformed cache
    annotations are rejected.
  }];
}

def TfmBufferize : Pass<"tfm-bufferize", "ModuleOp"> {
  let summary = "One-shot bufferization across function boundaries: identity "
                "layouts at public functions, the callers' layouts at "
                "private ones";
  let description = [{
    One-shot bufferization of the whole module, function boundaries
    included (`one-shot-bufferize{bufferize-function-boundaries}`). A
    public function's tensors become buffers of identity layout: the
    calling convention (`tfm/Pipelines/Pipelines.h`). A private function's
    (a loop nest that `tfm-outline-loop-nests{tensors}` outlined) take the
    layout of the buffers its callers pass, predicted from their tensors,
    where all calls agree, else a view with contiguous rows
    (`strided<[?, ..., 1], offset: ?>`): a caller passes a view (a slice
    of the fused Q/K/V projection, the columns of a result) as it is, and
    the buffers the function writes come back with the static layout its
    caller's reshapes need. What a private function wrote in place is not
    returned (as upstream's `drop-equivalent-buffer-results` does, but for
    private functions only); public functions keep identity results. Rationale:
    docs/design.md, "Compile time does not grow with depth".
  }];
  let dependentDialects = ["bufferization::BufferizationDialect",
                           "memref::MemRefDialect"];
}

def TfmDropKVCacheResults : Pass<"tfm-drop-kv-cache-results", "ModuleOp"> {
  let summary = "Drops the KV-cache results that bufferization made "
                "equivalent to their cache arguments";
  let description = [{
    After one-shot bufferization: removes every `tfm.kv_cache` result of a
    public function (it is the cache argument's buffer, updated in place),
    so no out-parameter is made for it, and fails with a clear error when
    bufferization had to copy the cache.
  }];
}

def TfmResultsInPlace : Pass<"tfm-results-in-place", "ModuleOp"> {
  let summary = "Computes results that are reshapes of a local buffer in the "
                "caller's out-parameter instead of copying them into it";
  let description = [{
    After results became out-parameters: a result computed in a buffer of
    another shape (a `[M, N]` GEMM output returned as `[1, M, N]`) is
    computed in the caller's buffer, reshaped, instead of being copied into
    it at the end. `buffer-results-to-out-params` does this
    (`hoist-static-allocs`) only for a result that is the alloc itself.
  }];
}

def TfmFuseElementwise : Pass<"tfm-fuse-elementwise"> {
  let summary = "Fuses linalg producers into consumers that read each "
                "produced element once (no recomputation inside contractions)";
  let description = [{
    Upstream's `--linalg-fuse-elementwise-ops` fuses any single-use producer
    into its consumer generic. When the consumer is a contraction that reads
    the producer's result through a map without one of its loops (the A
    operand of a matmul does not depend on the output column n), the fused
    producer runs once per iteration of that loop: a GELU fused into the
    down projection evaluated tanh d times per element, and the
    contraction, no longer a plain multiply-add, also lost its vectorised
    code. This pass fuses a producer only where the consumer reads each
    produced element exactly once: the operand's indexing map is a
    permutation of the consumer's loops.
  }];
  let dependentDialects = ["affine::AffineDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
}

def TfmStripFrontendArgAttributes
    : Pass<"tfm-strip-frontend-arg-attributes", "ModuleOp"> {
  let summary = "Drops non-LLVM argument and result attributes of llvm.func";
  let description = [{
    The frontend's argument attributes (`tfm.param`, `tfm.input`,
    `tfm.kv_cache`, ...) survive the conversion to the LLVM dialect, but they
    have been read (the entry signature is taken before codegen) and mean
    nothing to LLVM. The translation to LLVM IR warns once per such
    argument and each warning prints the whole function: for a 12-layer
    model's entries, hundreds of prints of thousands of operations, about a
    third of the compile time. This pass removes every argument and result
    attribute of an `llvm.func` whose name is not in the `llvm.` namespace,
    so the translation sees only what it understands.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def TfmPlanWorkspace : Pass<"tfm-plan-workspace", "func::FuncOp"> {
  let summary = "Places a function's temporaries in one workspace by liveness";
  let description = [{
    After bufferization (results already out-parameters, before the
    deallocation pipeline), the activations of an entry function are
    `memref.alloc`s in its body: one per layer output, norm statistic,
    projection result. Allocated and freed one by one, they cost an
    allocator call each per model call and hold as much memory as the
    allocator's free lists happen to keep. This pass plans them instead:

    - candidates are the static-shaped, identity-layout allocs directly in
      the function's body that stay inside the function: neither they nor
      any value that may alias them (views, reshapes and casts of them, the
      results of a loop that carries them, of an op whose region yields
      them) is returned or passed to a call that may keep it (calls of an
      external function marked `tfm.nocapture`, such as the runtime's
      quantized micro-kernels, and of a private function of the module with
      a body and no results do not). Allocs inside loops (a flash-attention
      tile's scratch, private to one thread) are not planned here;
    - a buffer lives from its alloc to the last top-level operation that
      uses it or any of its aliases; two buffers whose lifetimes do not
      overlap may share bytes;
    - offsets are assigned largest first, each at the lowest 64-byte
      aligned offset that overlaps no live-at-the-same-time buffer placed
      before it (a greedy interval packing);
    - one `memref.alloc` of `i8` of the planned size at the start of the
      function replaces them all, each buffer a `memref.view` at its offset.

    The function gets `tfm.workspace = {bytes = N, buffers = K, unplanned =
    U}` (N the planned peak, K the buffers placed in it, U the sum of their
    sizes had each its own allocation); `-debug-only` is not needed to see
    it: with `report`, each function's plan is also emitted as a remark.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit each function's workspace plan as a remark">,
  ];
  let dependentDialects = ["memref::MemRefDialect", "arith::ArithDialect"];
}

#endif // TFM_CODEGEN_COMMON_PASSES_TD

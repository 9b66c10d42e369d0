//===- Pipelines.h - tfm pass pipelines -------------------------*- C++ -*-===//
//
// The pipelines that take a tfm module to executable code.
//
// Calling convention of the code `--tfm-cpu-pipeline` produces (what
// transformer-runner relies on): every public function keeps its name and
// gets `llvm.emit_c_interface`; each tensor argument becomes a memref with
// the identity layout, passed as a `StridedMemRefType *` through the
// `_mlir_ciface_<name>` wrapper; each tensor result becomes a trailing
// out-parameter memref that the caller allocates; `index` arguments are i64.
// Tensor arguments are read-only: the code never writes into them.
//
// KV caches are the exception, updated in place. A tensor argument with the
// string arg attribute `tfm.kv_cache = "<name>"` (e.g. "0.key" for layer 0's
// keys) is a cache `[B, Hkv, S_max, dh]` the caller owns for the whole
// generation; the function returns its updated value (tfm.kv_cache_write
// results) as a result with the result attribute `tfm.kv_cache` of the same
// name and the same type. The pipeline marks such arguments writable for
// bufferization and drops the matching results: the compiled function writes
// the new keys/values straight into the caller's buffer and has NO
// out-parameter for a cache result (the result list of the C interface is the
// function's results minus its `tfm.kv_cache` results). If bufferization
// cannot update a cache in place (the old cache value is read after the
// write), the pipeline fails with an error naming the cache rather than
// silently copying it.
//
// With `fuse-qkv` on (the default), tfm-fuse-qkv replaces the Q, K and V
// weights of an attention by one argument whose `tfm.param_parts` lists the
// original parameter names and `tfm.param_concat_axis` the axis the caller
// concatenates them along.
//
// With `pack-weights` on (the default), a weight read by matmuls becomes an
// argument of type tensor<ceil(N/nr) x K x nr> with `tfm.param_pack =
// {layout, panel = nr, shape}`: the caller packs the weight-file tensor of
// that `shape` (after any concatenation) as P[j, k, r] = W(k, j*nr + r),
// zero past N, W(k, n) being W[k, n] for layout "in_out" and W[n, k] for
// "out_in". The original argument stays only if something else reads it.
//
// With `amx` and `amx-choice=tiles` (the defaults, on a CPU with AMX-BF16), a
// packed f32 weight that only AMX GEMMs read, in every function of the
// module, is instead an argument of type tensor<3 x J*nr/16 x K/2 x 32 x
// bf16> (J = ceil(N/nr)) whose tfm.param_pack adds `format = "amx_bf16x3"`:
// the caller binds S[i, n/16, k/2, 2*(n%16) + k%2] = part i of W(k, n),
// w = w0 + w1 + w2 with w0 = bf16(w), w1 = bf16(w - w0), w2 = bf16(w - w0 -
// w1) (round to nearest even, subnormals to zero as the CPU's conversion
// does), zero past N. A packed bf16 weight likewise becomes tensor<1 x
// J*nr/16 x K/2 x 32 x bf16> with `format = "amx_bf16"`: the weight itself in
// that order.
//
// With `bf16-dot` (the default) on a CPU with AVX512-BF16 and 512-bit
// vectors where no AMX tiles are planned, a packed bf16 weight of even K is
// instead an argument of type tensor<J x K/2 x nr x 2 x bf16> whose
// tfm.param_pack adds `format = "bf16_pairs"`: P[j, k/2, r, k%2] = W(k,
// j*nr + r), zero past N, the K pairs that one `vdpbf16ps` multiplies side
// by side.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_PIPELINES_PIPELINES_H
#define TFM_PIPELINES_PIPELINES_H

#include "tfm/Codegen/CPU/CpuTarget.h"
#include "tfm/Dialect/Tfm/Transforms/FlashAttentionTiles.h"

#include "mlir/Pass/PassOptions.h"

#include <functional>

namespace mlir {
class OpPassManager;
namespace tfm {

/// Switches for measuring and debugging the code generator, not for
/// production: each turns off (or swaps) one mechanism to compare against
/// it. Both pipelines' `debug` option, e.g. `debug=vectorize=0`; a field
/// the target's pipeline does not have is ignored there.
struct PipelineDebugOptions : OptionGroup<PipelineDebugOptions> {
  /// Skip key tiles wholly in a causal query tile's future.
  bool flashCausalSkip = true;
  /// CPU: tile and vectorise f32 contractions (off: scalar loops).
  bool vectorize = true;
  /// CPU: vectorise the non-contraction ops too.
  bool vectorizeElementwise = true;
  /// CPU with AMX: per block of a GEMM's columns, tiles, measured or fma.
  std::string amxChoice = "tiles";
  /// CPU: outline each top-level loop nest of a function with many.
  bool outlineLoops = true;
  /// GPU: wgmma kernels keep a K tile's wgmmas in flight.
  bool warpgroupMmaOverlap = true;

  static llvm::ArrayRef<OptionGroupField<PipelineDebugOptions>> getFields();
  /// The `debug` option's help: its fields and what each does.
  static llvm::StringRef getHelp();
};

} // namespace tfm
} // namespace mlir

namespace llvm::cl {
template <>
class parser<mlir::tfm::PipelineDebugOptions>
    : public mlir::tfm::OptionGroupParser<mlir::tfm::PipelineDebugOptions> {
public:
  using OptionGroupParser::OptionGroupParser;
};
} // namespace llvm::cl

namespace mlir {
namespace tfm {

/// The options both pipelines give with the same name and help text (those
/// of the tfm -> linalg stage below whose meaning does not depend on the
/// target), declared once; each pipeline's options derive from it and add
/// their own. `Derived::kFlashAttentionByDefault` is the one default that
/// differs.
template <typename Derived>
struct CommonPipelineOptions : public PassPipelineOptions<Derived> {
  using Base = PassPipelineOptions<Derived>;
  typename Base::template Option<bool> verifyContracts{
      *this, "verify-contracts",
      llvm::cl::desc("Run --tfm-verify-contracts first"), llvm::cl::init(true)};
  typename Base::template Option<bool> fuseQKV{
      *this, "fuse-qkv",
      llvm::cl::desc("Fuse the Q/K/V projections into one GEMM "
                     "(--tfm-fuse-qkv; changes the signature, see above)"),
      llvm::cl::init(true)};
  typename Base::template Option<bool> flashAttention{
      *this, "flash-attention",
      llvm::cl::desc("Lower tfm.attention through --tfm-flash-attention "
                     "instead of materialising the score matrix (default on "
                     "the CPU; off on the GPU, where its tile loops stay on "
                     "the host and launch kernels per head and key tile, "
                     "about 10x the launches of the naive form for GPT-2 "
                     "small at S = 128)"),
      llvm::cl::init(Derived::kFlashAttentionByDefault)};
  typename Base::template Option<int64_t> flashDecodeMinKeys{
      *this, "flash-decode-min-keys",
      llvm::cl::desc("Tile a decode step's attention (one query row) only "
                     "over a KV cache of at least this many positions (its "
                     "key loop then stops at the position); shorter ones "
                     "keep the plain one-row form"),
      llvm::cl::init(512)};
  typename Base::template Option<int64_t> flashQueryTile{
      *this, "flash-query-tile",
      llvm::cl::desc("Query rows per flash-attention tile"),
      llvm::cl::init(kDefaultFlashQueryTile)};
  typename Base::template Option<int64_t> flashKeyTile{
      *this, "flash-key-tile",
      llvm::cl::desc("Key/value rows per flash-attention tile"),
      llvm::cl::init(kDefaultFlashKeyTile)};
  typename Base::template Option<bool> planWorkspace{
      *this, "plan-workspace",
      llvm::cl::desc("Place each function's temporaries in one workspace "
                     "allocation, sharing bytes between buffers whose "
                     "lifetimes do not overlap (--tfm-plan-workspace; on the "
                     "GPU one device allocation per call instead of one per "
                     "temporary)"),
      llvm::cl::init(true)};
  typename Base::template Option<int64_t> tensorParallel{
      *this, "tensor-parallel",
      llvm::cl::desc("Partition attention and MLP blocks over this many "
                     "ranks (--tfm-tensor-parallel; every rank runs the same "
                     "code on its slices of the weights, summing with MPI "
                     "on the CPU and NCCL on the GPU; changes the "
                     "signature). 1: one process"),
      llvm::cl::init(1)};
  typename Base::template Option<PipelineDebugOptions> debug{
      *this, "debug", llvm::cl::desc(PipelineDebugOptions::getHelp())};
};

struct CpuPipelineOptions : public CommonPipelineOptions<CpuPipelineOptions> {
  static constexpr bool kFlashAttentionByDefault = true;
  PassOptions::Option<std::string> cpu{
      *this, "cpu",
      llvm::cl::desc("Target CPU (an LLVM CPU name such as znver3 or "
                     "skylake-avx512, or 'host'): tile sizes are derived from "
                     "its vector width, register count and caches, and the "
                     "runner's machine code is generated for it, less the "
                     "features this machine lacks"),
      llvm::cl::init("host")};
  PassOptions::Option<CpuTilingOverrides> tiling{
      *this, "tiling",
      llvm::cl::desc("Overrides of single fields of the tiling derived from "
                     "the target, name=value,... (0: as derived), as "
                     "tfm-cpu-configure's `tiling`")};
  PassOptions::Option<bool> amx{
      *this, "amx",
      llvm::cl::desc("Run f32 GEMMs (M at least 64, N and K multiples of 32) "
                     "on AMX tiles "
                     "as six bf16 products (bf16x6, about f32's accuracy) "
                     "where the target has AMX-BF16, and the prefill of "
                     "GEMMs on int8 activations on AMX-INT8 tiles where it "
                     "has those (off: FMA and VNNI everywhere)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> amxSplitWeights{
      *this, "amx-split-weights",
      llvm::cl::desc("With amx and amx-choice=tiles: weights that only AMX "
                     "GEMMs read are bound as the bf16 parts the tiles load "
                     "(split once at bind time; changes the signature, see "
                     "above). Off: split per call"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("Run bf16 GEMMs (a bf16 model's projections) as "
                     "AVX512-BF16 pair dot products where the target has "
                     "them and no AMX tiles are planned: weights packed with "
                     "K pairs interleaved (see above). Off: bf16 extended "
                     "to f32 for f32 FMAs"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> int8Dot{
      *this, "int8-dot",
      llvm::cl::desc("With quantize: run the quantized weights' GEMMs on "
                     "int8 activations -- each row quantized per block of 32 "
                     "along K as Q8_0 is, each block's products summed "
                     "exactly by the target's int8 dot products (AVX-512 "
                     "VNNI, AVX2), as llama.cpp's CPU backend does -- where "
                     "the target has them (values packed four K steps a "
                     "column together). Off: f32 activations times the "
                     "dequantized weights, exact"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> quantize{
      *this, "quantize",
      llvm::cl::desc("Hold the projection weights quantized: q8_0, q4_0, "
                     "q4_k, q5_k or q6_k (--tfm-quantize-weights; bound in "
                     "blocks, read by the format's micro-kernel; changes the "
                     "signature). Empty: as the model declares them"),
      llvm::cl::init("")};
  PassOptions::ListOption<std::string> quantizeStored{
      *this, "quantize-stored",
      llvm::cl::desc("Parameters the weight file stores quantized, as "
                     "name:format, format q8_0, q4_0, q4_k, q5_k or q6_k (a "
                     "GGUF file's blocks; --tfm-quantize-weights' stored): "
                     "each held in its "
                     "file's format, bound as stored")};
  PassOptions::Option<bool> packWeights{
      *this, "pack-weights",
      llvm::cl::desc("Read matmul weights in the register tile's panel layout "
                     "(packed once at bind time; changes the signature, see "
                     "above)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Run independent tiles (GEMM cache blocks, flash "
                     "attention's batch x head group x query tile, decode "
                     "GEMV columns) on OpenMP threads; the code then calls "
                     "libomp (OMP_NUM_THREADS, or the runner's --threads)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> dynamicSchedule{
      *this, "dynamic-schedule",
      llvm::cl::desc("With parallel: threads take the blocks of loops that "
                     "run register tiles (GEMM cache blocks, attention query "
                     "tiles, GEMV columns) as they become free "
                     "(--tfm-schedule-block-loops), so that a thread slowed "
                     "by another tenant delays no other; off: equal static "
                     "shares. The results are the same either way"),
      llvm::cl::init(true)};
};

/// tfm -> linalg -> tiled and vectorised contractions, bufferized, the rest
/// as loops -> LLVM dialect: the two stages below in sequence.
void buildTfmCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// The stage that fixes the entry signature: contracts, Q/K/V fusion, flash
/// form, tfm -> linalg on tensors, fusion, the target's tile plan and weight
/// packing. A runner binds weights against the signature after this stage.
void buildTfmCpuSignatureStage(OpPassManager &pm,
                               const CpuPipelineOptions &options);

/// The rest: tiling and vectorisation, bufferization and the calling
/// convention, loops, threads, LLVM dialect.
void buildTfmCpuCodegenStage(OpPassManager &pm,
                             const CpuPipelineOptions &options);

/// The target-neutral stage both pipelines start with: contract check, Q/K/V
/// fusion, flash form of attention, tfm -> linalg on tensors, elementwise
/// fusion. The pipelines' options of the same names fill it.
struct TfmToLinalgStageOptions {
  /// Ranks of tfm-tensor-parallel, run first; 1: none.
  int64_t tensorParallel = 1;
  bool verifyContracts = true;
  bool fuseQKV = true;
  /// Parameters a weight file holds quantized, as name:format
  /// (tfm-fuse-qkv keeps projections stored in different formats apart).
  SmallVector<std::string> quantizeStored;
  bool flashAttention = true;
  int64_t flashQueryTile = kDefaultFlashQueryTile;
  int64_t flashKeyTile = kDefaultFlashKeyTile;
  bool flashCausalSkip = true;
  int64_t flashDecodeMinKeys = 512;
  /// Target passes to run on tfm ops after Q/K/V fusion, before the flash
  /// form and the lowering to linalg (the GPU pipeline's attention kernel).
  std::function<void(OpPassManager &)> beforeLowering;
};
void buildTfmToLinalgStage(OpPassManager &pm,
                           const TfmToLinalgStageOptions &options);

/// The stage's options from a pipeline's options of the same names.
template <typename PipelineOptions>
TfmToLinalgStageOptions
getTfmToLinalgStageOptions(const PipelineOptions &options) {
  TfmToLinalgStageOptions common;
  common.tensorParallel = options.tensorParallel;
  common.verifyContracts = options.verifyContracts;
  common.fuseQKV = options.fuseQKV;
  common.flashAttention = options.flashAttention;
  common.flashQueryTile = options.flashQueryTile;
  common.flashKeyTile = options.flashKeyTile;
  common.flashCausalSkip = options.debug.getValue().flashCausalSkip;
  common.flashDecodeMinKeys = options.flashDecodeMinKeys;
  return common;
}

/// The calling-convention stage both targets share: bufferization with
/// identity layouts at function boundaries, KV caches in place, results as
/// out-parameters, deallocation. Linalg on tensors in, memrefs out. Before
/// deallocation, optionally: results that are reshapes of a local buffer
/// computed in the caller's out-parameter (`resultsInPlace`,
/// --tfm-results-in-place), then each function's top-level temporaries
/// placed in one workspace by liveness (`planWorkspace`,
/// --tfm-plan-workspace).
/// `onBuffers`, if given, adds passes that run on the bufferized code before
/// the workspace is planned (their allocations are planned with the rest).
void buildCallingConventionStage(
    OpPassManager &pm, bool resultsInPlace = false, bool planWorkspace = false,
    llvm::function_ref<void(OpPassManager &)> onBuffers = nullptr);

/// Options of `--tfm-gpu-pipeline`. The calling convention is the CPU one
/// (above) with every memref holding DEVICE memory: the caller allocates the
/// arguments and out-parameters on the GPU (tfm/Runtime/CudaRuntime.h) and
/// the host code launches kernels through the `mgpu*` functions of
/// libtfm_cuda_runtime.so. Each entry function returns after its work on the
/// GPU is done.
struct GpuPipelineOptions : public CommonPipelineOptions<GpuPipelineOptions> {
  static constexpr bool kFlashAttentionByDefault = false;
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target GPU: sm_80, sm_86, sm_89, sm_90 or sm_90a"),
      llvm::cl::init("sm_80")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (default +ptx80: PTX 8.0, which sm_90a "
                     "needs and CUDA 12+ drivers accept)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Embedded device code: bin (cubin, needs ptxas), isa "
                     "(PTX, compiled by the driver) or fatbin"),
      llvm::cl::init("bin")};
  PassOptions::Option<int64_t> optLevel{
      *this, "opt-level", llvm::cl::desc("Device code optimisation level"),
      llvm::cl::init(3)};
  PassOptions::Option<std::string> cudaHome{
      *this, "cuda-home",
      llvm::cl::desc("CUDA toolkit (libdevice, ptxas); default: $CUDA_HOME, "
                     "else /usr/local/cuda when present"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> dtype{
      *this, "dtype",
      llvm::cl::desc("Operand type of f32 matmuls: f16 (rounded operands, "
                     "f32 accumulation, tensor cores where the shape allows) "
                     "or f32 (exact, SIMT kernels)"),
      llvm::cl::init("f16")};
  PassOptions::Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("Run f16 matmuls whose shape allows it as mma.sync "
                     "kernels (--tfm-gpu-tensor-core-matmul)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> warpgroupMma{
      *this, "warpgroup-mma",
      llvm::cl::desc("With chip=sm_90a, run f16 matmuls whose shape allows "
                     "it as TMA + wgmma kernels "
                     "(--tfm-gpu-warpgroup-matmul) before mma.sync"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> matvec{
      *this, "matvec",
      llvm::cl::desc("Run f16 matmuls of at most 8 rows (decode) as split-K "
                     "kernels (--tfm-gpu-matvec)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> rowReductions{
      *this, "row-reductions",
      llvm::cl::desc("Run row reductions (norm statistics, softmax) with a "
                     "warp a row (--tfm-gpu-row-reductions)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> asyncLaunches{
      *this, "async",
      llvm::cl::desc("Chain the kernels of a function on one stream "
                     "(gpu-async-region) instead of synchronising after each"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the SIMT kernels (one thread per "
                     "element of a parallel loop nest)"),
      llvm::cl::init(256)};
  PassOptions::Option<bool> flashKernel{
      *this, "flash-kernel",
      llvm::cl::desc("Run each attention the kernel handles as one FA2-style "
                     "tensor-core kernel (--tfm-gpu-flash-attention; f16 "
                     "q/k/v and P, f32 accumulation); the others take the "
                     "flash-attention / naive path below"),
      llvm::cl::init(true)};
};

/// tfm -> linalg -> bufferized with the calling convention -> every linalg
/// op a GPU kernel -> upstream gpu::buildLowerToNVVMPassPipeline (host code
/// in the LLVM dialect with the device code embedded as a gpu.binary).
/// The signature stage followed by the codegen stage.
void buildTfmGpuPipeline(OpPassManager &pm, const GpuPipelineOptions &options);

/// The steps of the GPU pipeline that change entry signatures (contracts,
/// Q/K/V fusion, tfm -> linalg, f16 weight parameters): whoever binds
/// weights reads the signature after this stage.
void buildTfmGpuSignatureStage(OpPassManager &pm,
                               const GpuPipelineOptions &options);

/// The rest of the GPU pipeline, from bufferization on.
void buildTfmGpuCodegenStage(OpPassManager &pm,
                             const GpuPipelineOptions &options);

/// Registers `--tfm-gpu-pipeline` (its own passes are registered by
/// registerTfmPipelines).
void registerGpuPipeline();

/// Registers every codegen pass (tfm/Codegen/*/Passes.td), `--tfm-cpu-pipeline` and
/// `--tfm-gpu-pipeline` with the pass registry.
void registerTfmPipelines();

} // namespace tfm
} // namespace mlir

#endif // TFM_PIPELINES_PIPELINES_H

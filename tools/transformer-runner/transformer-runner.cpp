//===- transformer-runner.cpp - JIT-run a tfm model on real weights -------===//
//
//   transformer-runner MODEL.mlir --weights W.safetensors
//       --input input_ids=ids.npy --input pos=0 --output logits=out.npy
//       [--entry FN] [--repeat N] [--random-weights SEED]
//   transformer-runner (MODEL_DIR | MODEL.gguf |
//                       config.json --weights model.safetensors)
//       [--dtype f32|bf16|f16] [--quantize q8_0|q4_0|q4_k|q5_k|q6_k]
//       (--input-ids ids.npy [--input-lengths lengths.npy] | --prompt TEXT)
//       [--output logits.npy | --generate N [--output-tokens out.npy]
//        [--temperature T] [--top-k K] [--top-p P] [--repetition-penalty R]
//        [--seed N] [--stop TEXT]...] [--repeat N]
//
// A model given as a Hugging Face config.json (or a GGUF file, read as the
// Hugging Face model it was converted from: tfm/Runtime/GgufModel.h) is
// imported in-process at the batch and length of the ids; see HuggingFaceRun.h for that mode (the code
// that compiles and runs models is in tfm/Engine, shared with the C API). The
// rest of this comment is about .mlir models.
//
// Reads the entry function's signature before lowering, binds every
// `tfm.param` argument to the tensor of that name in the .safetensors file
// (checked for presence, dtype and shape; passed without a copy when aligned)
// and every `tfm.input` to an .npy array or an integer, then lowers the module
// with the tfm CPU pipeline, JIT-compiles it and calls `_mlir_ciface_<entry>`
// following the calling convention in tfm/Pipelines/Pipelines.h.
//
// The contract check and the Q/K/V fusion of the pipeline run first, on their
// own: fusion changes the signature (one concatenated weight argument listing
// its `tfm.param_parts`), and binding must see the signature that is compiled.
// KV caches (`tfm.kv_cache`) are zero unless an --input preloads them; their
// updated contents can be written with --output like any result. Bad input
// ends with one `transformer-runner: error: ...` line and exit code 1.
//
//===----------------------------------------------------------------------===//
#include "Artifact.h"
#include "HuggingFaceRun.h"
#include "InputChecks.h"
#include "RunnerSupport.h"

#include "tfm/Engine/Compile.h"
#include "tfm/Engine/DeviceFrame.h"
#include "tfm/Engine/HuggingFaceModel.h"
#include "tfm/Engine/Registration.h"

#include "tfm/Dialect/Tfm/IR/TfmAttrNames.h"
#include "tfm/Dialect/Tfm/Transforms/Ledger.h"
#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Runtime/CodeCache.h"
#include "tfm/Runtime/Limits.h"
#include "tfm/Runtime/BufferPool.h"
#include "tfm/Runtime/EntryResources.h"
#include "tfm/Runtime/EntrySignature.h"
#include "tfm/Runtime/Npy.h"
#include "tfm/Runtime/ModelDirectory.h"
#include "tfm/Runtime/Mpi.h"
#include "tfm/Runtime/ProcessMemory.h"
#include "tfm/Runtime/Checkpoint.h"
#include "tfm/Runtime/GgufModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include <fcntl.h>
#include <limits>
#include <unistd.h>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::runner;
using namespace mlir::tfm::runtime;
namespace cl = llvm::cl;

static cl::OptionCategory runnerCategory("transformer-runner options");

static cl::opt<std::string> modelFile(
    cl::Positional, cl::Required,
    cl::desc("<model.mlir | config.json | model directory | model.gguf>"),
    cl::cat(runnerCategory));
static cl::list<std::string> weightsFiles(
    "weights", cl::value_desc("file.safetensors|index.json"),
    cl::desc("Weights, bound to tfm.param arguments by name: a .safetensors "
             "file or the index of a sharded checkpoint "
             "(model.safetensors.index.json); repeatable, each tensor in "
             "one file only (default for a model directory: its "
             "model.safetensors or model.safetensors.index.json)"),
    cl::cat(runnerCategory));
static cl::opt<std::string> computeDType(
    "dtype", cl::init("f32"), cl::value_desc("f32|bf16|f16"),
    cl::desc("config.json models and model directories: the type "
             "parameters, activations and KV caches are held in (default "
             "f32); any f32, bf16 or f16 checkpoint is converted to it once, "
             "when bound; bf16 and f16 accumulate in f32 and return f32 "
             "logits"),
    cl::cat(runnerCategory));
static cl::list<std::string>
    inputSpecs("input", cl::value_desc("NAME=FILE.npy|NAME=INTEGER"),
               cl::desc("Value of a tfm.input argument (an .npy array for a "
                        "tensor, an integer for an index)"), cl::cat(runnerCategory));
static cl::list<std::string> outputSpecs(
    "output", cl::value_desc("NAME=FILE.npy"),
    cl::desc("Write the tfm.output result NAME (f16/bf16 as f32); for a "
             "config.json model, FILE.npy (or logits=FILE.npy) receives the "
             "logits"), cl::cat(runnerCategory));
static cl::opt<std::string> inputIdsFile(
    "input-ids", cl::value_desc("ids.npy"),
    cl::desc("config.json models: token ids [B, S] (int64 or int32)"), cl::cat(runnerCategory));
static cl::opt<std::string> inputLengthsFile(
    "input-lengths", cl::value_desc("lengths.npy"),
    cl::desc("config.json models: a ragged batch, the length of each "
             "sequence of --input-ids [B] (int64 or int32); the ids are "
             "right-padded to S with any values. Each sequence's logits and "
             "tokens are what it would get alone"),
    cl::cat(runnerCategory));
static cl::opt<std::string> promptText(
    "prompt", cl::value_desc("text"),
    cl::desc("config.json models: the prompt (B = 1), encoded by the "
             "tokenizer.json next to config.json, or else as UTF-8 bytes for "
             "a byte-level vocabulary (256); the generated text is printed"),
    cl::cat(runnerCategory));
static cl::opt<int64_t> generateCount(
    "generate", cl::init(0), cl::value_desc("N"),
    cl::desc("config.json models: generate up to N tokens with @prefill "
             "and @decode over a KV cache, stopping early at an EOS token "
             "or a --stop string"), cl::cat(runnerCategory));
static cl::alias maxNewTokens("max-new-tokens",
                              cl::desc("Alias for --generate"),
                              cl::aliasopt(generateCount),
                              cl::cat(runnerCategory));
static cl::opt<bool> doSample(
    "do-sample",
    cl::desc("With --generate: sample instead of taking the most likely "
             "token (default: the model's generation_config.json, else "
             "greedy; --do-sample=false forces greedy)"),
    cl::cat(runnerCategory));
static cl::opt<float> temperature(
    "temperature", cl::value_desc("T"),
    cl::desc("Sampling temperature (turns sampling on; 0: greedy)"),
    cl::cat(runnerCategory));
static cl::opt<int64_t> topK(
    "top-k", cl::value_desc("K"),
    cl::desc("Sample among the K most likely tokens (turns sampling on; "
             "0: off; default 50 as in Hugging Face)"),
    cl::cat(runnerCategory));
static cl::opt<float> topP(
    "top-p", cl::value_desc("P"),
    cl::desc("Sample among the most likely tokens of total probability P "
             "(turns sampling on; 1: off)"),
    cl::cat(runnerCategory));
static cl::opt<float> repetitionPenalty(
    "repetition-penalty", cl::value_desc("R"),
    cl::desc("Divide the positive logits (multiply the negative ones) of "
             "tokens already in the prompt or output by R (1: off)"),
    cl::cat(runnerCategory));
static cl::opt<uint64_t> samplingSeed(
    "seed", cl::value_desc("N"),
    cl::desc("Seed of the sampler's SplitMix64 stream (turns sampling on; "
             "default 0): the same seed gives the same tokens"),
    cl::cat(runnerCategory));
static cl::list<std::string> stopStrings(
    "stop", cl::value_desc("text"),
    cl::desc("Byte-level models: end a sequence once its generated text "
             "contains this (repeatable; the text is kept)"),
    cl::cat(runnerCategory));
static cl::opt<bool> ignoreEos(
    "ignore-eos",
    cl::desc("With --generate: generate exactly N tokens, past the model's "
             "EOS ids and the stop_strings of its generation_config.json "
             "(as llama.cpp's flag; --stop still ends a sequence, which "
             "--output-tokens then pads with 0)"),
    cl::cat(runnerCategory));
static cl::opt<std::string> outputTokensFile(
    "output-tokens", cl::value_desc("tokens.npy"),
    cl::desc("With --generate: write the prompt and the new tokens, "
             "[B, S + N] int64 (N the longest sequence; those that stopped "
             "earlier, or had a shorter prompt, padded at the end with the "
             "first EOS id, else 0)"), cl::cat(runnerCategory));
static cl::opt<int64_t> maxSeqLen(
    "max-seq-len", cl::init(0), cl::value_desc("S_max"),
    cl::desc("With --generate: positions of the KV cache (default S + N)"), cl::cat(runnerCategory));
static cl::opt<int64_t> prefillChunk(
    "prefill-chunk", cl::init(-1), cl::value_desc("C"),
    cl::desc("config.json models: run the prompt through @prefill in chunks "
             "of C tokens over the KV cache, so that one compiled model "
             "serves every prompt length (default with --generate: the "
             "prompt's length rounded up to a power of two in [64, 256]; "
             "without it, @forward runs the whole prompt unless this is "
             "given; 0: one chunk of the prompt's length)"),
    cl::cat(runnerCategory));
static cl::opt<std::string>
    entryName("entry", cl::value_desc("function"),
              cl::desc("Entry function (default: @forward, or the only "
                       "public function)"), cl::cat(runnerCategory));
static cl::opt<unsigned>
    repeat("repeat", cl::init(0), cl::value_desc("N"),
           cl::desc("Time N warm runs after the first and report compile "
                    "time and the median, min and max run time (config.json "
                    "models: of @forward or @prefill; default 1)"),
           cl::cat(runnerCategory));
static cl::opt<uint64_t> randomWeights(
    "random-weights", cl::value_desc("SEED"),
    cl::desc("Fill parameters with deterministic uniform values in "
             "[-0.05, 0.05) (1-D '*weight' norm scales around 1) instead of "
             "reading --weights"), cl::cat(runnerCategory));
static cl::opt<std::string>
    pipelineOptions("pipeline-options", cl::value_desc("options"),
                    cl::desc("Options of --tfm-cpu-pipeline, e.g. 'fuse-qkv=0 "
                             "debug=vectorize=0'"),
                    cl::cat(runnerCategory));
static cl::opt<std::string> quantize(
    "quantize", cl::value_desc("q8_0|q4_0|q4_k|q5_k|q6_k"),
    cl::desc("Hold the projection weights (linear layers, an LM head, the "
             "embedding table) quantized, from any f32/bf16/f16 checkpoint, "
             "when bound, as llama.cpp's quantizer stores them: q8_0 (blocks "
             "of 32 int8 with an f16 scale, 1.0625 bytes a weight), q4_0 "
             "(blocks of 32 4-bit integers with an f16 scale, 0.5625 bytes a "
             "weight), q4_k (super-blocks of 256 4-bit integers, a 6-bit "
             "scale and min per 32, 0.5625 bytes a weight), q5_k (the same "
             "with 5-bit integers, 0.6875 bytes a weight) or q6_k "
             "(super-blocks of 256 6-bit integers, an 8-bit scale per 16, "
             "0.82 bytes a weight); activations are "
             "quantized to int8 per block where the CPU has int8 dot "
             "products (--pipeline-options=int8-dot=0 keeps them f32). CPU "
             "only; the CPU pipeline's quantize= option"),
    cl::cat(runnerCategory));
static cl::opt<int64_t> tensorParallel(
    "tensor-parallel", cl::init(1), cl::value_desc("N"),
    cl::desc("Run as one of N ranks started by `mpirun -np N` (Open MPI): "
             "attention and MLP blocks are partitioned over the ranks "
             "(--tfm-tensor-parallel), each binds its slices of the weights, "
             "and rank 0 prints and writes the results. With --device cuda "
             "each rank uses its own GPU (its local rank) and the ranks sum "
             "with NCCL"),
    cl::cat(runnerCategory));
/// The pipeline's options: --pipeline-options, and --quantize's (CPU only)
/// and --tensor-parallel's.
static std::string getPipelineOptions() {
  std::string options = pipelineOptions;
  if (!quantize.empty())
    options += " quantize=" + quantize.getValue();
  if (tensorParallel > 1)
    options += " tensor-parallel=" + std::to_string(tensorParallel);
  return options;
}
/// Whether this process prints and writes results: rank 0 of a
/// tensor-parallel run, or the only process.
static bool isOutputRank() {
  const runtime::MpiWorld *world = runtime::getMpiWorld();
  return !world || world->rank == 0;
}
static cl::opt<std::string> device(
    "device", cl::init("cpu"), cl::value_desc("cpu|cuda"),
    cl::desc("Where to run: cpu (the JIT on the host) or cuda (kernels on "
             "the first NVIDIA GPU, compiled with --tfm-gpu-pipeline; "
             "--pipeline-options then takes that pipeline's options)"),
    cl::cat(runnerCategory));
static cl::opt<std::string> chip(
    "chip", cl::value_desc("sm_XY"),
    cl::desc("With --device cuda: the GPU to compile for (default: the "
             "device's, e.g. sm_90; sm_90a enables wgmma)"),
    cl::cat(runnerCategory));
static cl::opt<bool> compileOnly(
    "compile-only",
    cl::desc(".mlir models: lower and JIT-compile the entry, print the "
             "compile time and stop (with --device cuda, needs --chip and no "
             "GPU or driver)"),
    cl::cat(runnerCategory));
static cl::opt<std::string> emitArtifact(
    "emit-artifact", cl::value_desc("DIR"),
    cl::desc(".mlir models with --device cuda --chip: save the compiled "
             "model (host LLVM IR with the kernels, glue, manifest, bound "
             "arguments) in DIR and stop; no GPU or driver needed (see "
             "Artifact.h)"),
    cl::cat(runnerCategory));
static cl::opt<bool> emitArtifactData(
    "emit-artifact-data", cl::init(true),
    cl::desc("With --emit-artifact: also save the bound tensors (index "
             "arguments are always saved)"),
    cl::cat(runnerCategory));
static cl::opt<std::string> artifact(
    "artifact", cl::value_desc("DIR/model.so"),
    cl::desc(".mlir models with --device cuda: run this linked artifact "
             "(scripts/gpu-artifact.sh) instead of compiling"),
    cl::cat(runnerCategory));
static cl::list<std::string> sharedLibs(
    "shared-libs", cl::CommaSeparated, cl::value_desc("lib.so"),
    cl::desc("Libraries to resolve symbols from (default: MLIR's "
             "c_runner_utils when it is installed)"), cl::cat(runnerCategory));
static cl::opt<std::string> cacheDir(
    "cache-dir", cl::value_desc("DIR"),
    cl::desc("Where compiled code is cached between runs (default: "
             "$XDG_CACHE_HOME/tfm, else ~/.cache/tfm); CPU only"),
    cl::cat(runnerCategory));
static cl::opt<bool> noCache(
    "no-cache",
    cl::desc("Compile without reading or writing the compiled-code cache"),
    cl::cat(runnerCategory));
static cl::opt<std::string> cacheLimit(
    "cache-limit", cl::value_desc("BYTES[K|M|G|T]"),
    cl::desc("The most the compiled-code cache directory holds: storing an "
             "entry removes those used longest ago beyond it (default "
             "$TFM_CACHE_LIMIT, else 2G)"),
    cl::cat(runnerCategory));
static cl::opt<std::string> maxMemory(
    "max-memory", cl::value_desc("BYTES[K|M|G|T]"),
    cl::desc("Refuse to run a model that needs more memory than this "
             "(weights, inputs, KV caches, results and the largest "
             "temporary; default: the machine's memory)"),
    cl::cat(runnerCategory));
static cl::opt<unsigned>
    printCount("print-values", cl::init(4), cl::value_desc("N"),
               cl::desc("Leading values of each result to print"), cl::cat(runnerCategory));

static CacheOptions getCacheOptions() {
  CacheOptions cache;
  cache.enabled = !noCache;
  cache.directory = cacheDir;
  cache.warn = warn;
  return cache;
}

//===----------------------------------------------------------------------===//
// Inputs and outputs
//===----------------------------------------------------------------------===//

namespace {
struct OutputRequest {
  std::string path;
  bool written = false;
};
} // namespace

static std::pair<llvm::StringRef, llvm::StringRef>
splitSpec(llvm::StringRef flag, llvm::StringRef spec) {
  auto [name, value] = spec.split('=');
  if (name.empty() || value.empty() || !spec.contains('='))
    fail(llvm::formatv("--{0} '{1}': expected NAME=VALUE", flag, spec));
  return {name, value};
}

static std::string listNames(const EntrySignature &sig, bool results) {
  std::string names;
  auto add = [&](llvm::StringRef name) {
    names += (names.empty() ? "'" : ", '") + name.str() + "'";
  };
  if (results) {
    for (const EntryResult &r : sig.results)
      add(r.name);
  } else {
    for (const EntryArgument &a : sig.arguments)
      if (a.kind != EntryArgument::Kind::Param)
        add(a.name);
  }
  return names.empty() ? "none" : names;
}

static void bindInput(const EntrySignature &sig, size_t i,
                      llvm::StringRef value, BoundArgument &bound) {
  const EntryArgument &arg = sig.arguments[i];
  if (arg.kind == EntryArgument::Kind::Index) {
    if (value.getAsInteger(0, bound.index))
      fail(llvm::formatv("input '{0}' ({1}): expected an integer, got '{2}'",
                         arg.name, describeArgument(sig, i), value));
    bound.bound = true;
    return;
  }
  NpyArray array = check(readNpy(value));
  bool intToInt = isIntegerDType(arg.dtype) && isIntegerDType(array.dtype) &&
                  isSupportedConversion(array.dtype, arg.dtype);
  if ((array.dtype != arg.dtype && !intToInt) || array.shape != arg.shape)
    fail(llvm::formatv("input '{0}' ({1}): expected {2}, got {3}", arg.name,
                       value, describe(arg.dtype, arg.shape),
                       describe(array.dtype, array.shape)));
  uint64_t count = array.getNumElements();
  bound.storage =
      check(AlignedBuffer::allocate(count * getDTypeSize(arg.dtype)));
  int64_t bad = convertElements(array.data, array.dtype, bound.storage->get(),
                                arg.dtype, count);
  if (bad >= 0)
    fail(llvm::formatv("input '{0}' ({1}): element {2} does not fit {3}",
                       arg.name, value, bad, getDTypeName(arg.dtype)));
  bound.data = bound.storage->get();
  bound.bound = true;
}

static void bindInputs(const EntrySignature &sig,
                       std::vector<BoundArgument> &bound) {
  for (llvm::StringRef spec : inputSpecs) {
    auto [nameRef, value] = splitSpec("input", spec);
    llvm::StringRef name = nameRef;
    auto it = llvm::find_if(sig.arguments, [&](const EntryArgument &a) {
      return a.kind != EntryArgument::Kind::Param && a.name == name;
    });
    if (it == sig.arguments.end())
      fail(llvm::formatv("--input '{0}': @{1} has no input '{0}' (inputs: "
                         "{2})",
                         name, sig.function, listNames(sig, false)));
    size_t i = it - sig.arguments.begin();
    if (bound[i].bound)
      fail(llvm::formatv("--input '{0}' is given more than once", name));
    bindInput(sig, i, value, bound[i]);
  }
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    if (bound[i].bound)
      continue;
    if (arg.kind == EntryArgument::Kind::KVCache) {
      // A fresh generation: the cache starts out zero.
      bound[i].storage = check(AlignedBuffer::allocate(
          *getNumBytes(arg.shape, getDTypeSize(arg.dtype))));
      bound[i].data = bound[i].storage->get();
      bound[i].bound = true;
      continue;
    }
    fail(llvm::formatv("missing input '{0}' ({1}): pass --input {0}={2}",
                         arg.name, describeArgument(sig, i),
                         arg.kind == EntryArgument::Kind::Index
                             ? "INTEGER"
                             : "FILE.npy"));
  }
}

static std::vector<OutputRequest> parseOutputs(const EntrySignature &sig) {
  std::vector<OutputRequest> requests(sig.results.size());
  for (llvm::StringRef spec : outputSpecs) {
    auto [nameRef, path] = splitSpec("output", spec);
    llvm::StringRef name = nameRef;
    auto it = llvm::find_if(
        sig.results, [&](const EntryResult &r) { return r.name == name; });
    if (it == sig.results.end())
      fail(llvm::formatv("--output '{0}': @{1} has no result '{0}' (results: "
                         "{2})",
                         name, sig.function, listNames(sig, true)));
    OutputRequest &request = requests[it - sig.results.begin()];
    if (!request.path.empty())
      fail(llvm::formatv("--output '{0}' is given more than once", name));
    request.path = path.str();
  }
  return requests;
}

/// The config.json mode (HuggingFaceRun.h); .mlir-only options are
/// rejected rather than silently ignored.
static void runConfig(MLIRContext &context, llvm::StringRef gpuChip) {
  if (!inputSpecs.empty() || !entryName.empty())
    fail("--input and --entry apply to .mlir models; a config.json model "
         "takes --input-ids or --prompt");
  if (compileOnly || !emitArtifact.empty() || !artifact.empty())
    fail("--compile-only, --emit-artifact and --artifact apply to .mlir "
         "models (import the config with transformer-translate first)");
  HuggingFaceRunOptions options;
  // A model directory names its config and, unless --weights or
  // --random-weights say otherwise, its checkpoint (as for the C API).
  ModelOptions located;
  located.weightsPaths.assign(weightsFiles.begin(), weightsFiles.end());
  if (randomWeights.getNumOccurrences())
    located.randomSeed = randomWeights;
  check(setModelPath(located, modelFile));
  options.configPath = located.configPath;
  options.weightsPaths = located.weightsPaths;
  options.randomSeed = located.randomSeed;
  options.tokenizerPath = located.tokenizerPath;
  options.dtype = check(parseComputeDType(computeDType, "--dtype"));
  options.inputIdsPath = inputIdsFile;
  options.inputLengthsPath = inputLengthsFile;
  if (promptText.getNumOccurrences())
    options.prompt = promptText;
  if (outputSpecs.size() > 1)
    fail("--output: a config.json model has one output, the logits");
  for (llvm::StringRef spec : outputSpecs) {
    if (spec.contains('=')) {
      auto [name, path] = splitSpec("output", spec);
      if (name != "logits")
        fail(llvm::formatv("--output '{0}': a config.json model has one "
                           "output, 'logits'",
                           name));
      options.logitsPath = path.str();
    } else {
      options.logitsPath = spec.str();
    }
  }
  options.generate = generateCount;
  options.tokensPath = outputTokensFile;
  options.maxSeqLen = maxSeqLen;
  if (prefillChunk.getNumOccurrences() && prefillChunk < 0)
    fail(llvm::formatv("--prefill-chunk {0}: must be positive (or 0 for one "
                       "chunk of the prompt's length)",
                       prefillChunk));
  if (prefillChunk.getNumOccurrences())
    options.prefillChunk = prefillChunk;
  if (maxSeqLen.getNumOccurrences() && maxSeqLen <= 0)
    fail(llvm::formatv("--max-seq-len {0}: must be positive", maxSeqLen));
  if (ignoreEos && !generateCount.getNumOccurrences())
    fail("--ignore-eos applies with --generate N");
  if (generateCount.getNumOccurrences() && generateCount <= 0)
    fail(llvm::formatv("--generate {0}: must be positive", generateCount));
  if (doSample.getNumOccurrences())
    options.doSample = doSample;
  if (temperature.getNumOccurrences())
    options.temperature = temperature;
  if (topK.getNumOccurrences())
    options.topK = topK;
  if (topP.getNumOccurrences())
    options.topP = topP;
  if (repetitionPenalty.getNumOccurrences())
    options.repetitionPenalty = repetitionPenalty;
  if (samplingSeed.getNumOccurrences())
    options.seed = samplingSeed;
  options.stopStrings.assign(stopStrings.begin(), stopStrings.end());
  options.ignoreEos = ignoreEos;
  if (repeat.getNumOccurrences()) {
    if (repeat == 0)
      fail("--repeat: must be at least 1");
    options.repeat = repeat;
  }
  options.cache = !noCache;
  options.cacheDir = cacheDir;
  // Sizes derived from it (prompt + N positions) must not overflow.
  if (generateCount > std::numeric_limits<int32_t>::max())
    fail(llvm::formatv("--generate {0}: more tokens than any model's context "
                       "(tfm's limit is 2^31 - 1 positions)",
                       generateCount));
  options.pipelineOptions = getPipelineOptions();
  options.gpuChip = gpuChip.str();
  options.sharedLibs.assign(sharedLibs.begin(), sharedLibs.end());
  options.printCount = printCount;
  options.tensorParallel = tensorParallel;
  if (!isOutputRank()) {
    options.logitsPath.clear();
    options.tokensPath.clear();
  }
  runHuggingFaceModel(context, options);
}

/// Checks what the command line names before any model is read: the device
/// (and, for CUDA, the driver), the memory limit, the shared libraries and
/// every input and output path. Returns the GPU chip to compile for, or ""
/// for the CPU.
static std::string checkCommandLine() {
  if (device != "cpu" && device != "cuda")
    fail(llvm::formatv("--device '{0}': expected cpu or cuda", device));
  if (device == "cpu" && chip.getNumOccurrences())
    fail("--chip applies to --device cuda");
  if (quantize.getNumOccurrences() && quantize != "q8_0" &&
      quantize != "q4_0" && quantize != "q4_k" && quantize != "q5_k" &&
      quantize != "q6_k")
    fail(llvm::formatv(
        "--quantize '{0}': expected q8_0, q4_0, q4_k, q5_k or q6_k",
        quantize));
  if (quantize.getNumOccurrences() && device == "cuda")
    fail("--quantize applies to --device cpu (quantized GPU kernels are not "
         "built yet)");
  // The driver first: without one, --device cuda stops here with one line.
  std::string gpuChip;
  if (device == "cpu" && (!emitArtifact.empty() || !artifact.empty()))
    fail("--emit-artifact and --artifact apply to --device cuda");
  if (device == "cuda" && (compileOnly || !emitArtifact.empty())) {
    if (chip.empty())
      fail(llvm::formatv("--{0} --device cuda needs --chip",
                         compileOnly ? "compile-only" : "emit-artifact"));
    gpuChip = chip;
  } else if (device == "cuda") {
    // One GPU a rank: its local rank's (one process on a machine: 0).
    gpuChip = check(initializeCudaDevice(
        chip, tensorParallel > 1 ? getLocalDeviceOrdinal() : 0));
  }

  // Everything a user named, checked before any parse or compile.
  setMemoryLimit(maxMemory);
  if (!cacheLimit.empty()) {
    std::optional<uint64_t> bytes = parseByteCount(cacheLimit);
    if (!bytes || *bytes == 0)
      fail(llvm::formatv("--cache-limit '{0}': expected a positive byte count "
                         "with an optional K, M, G or T suffix",
                         cacheLimit));
    // Read by every CodeCache this process makes (CodeCache.h).
    setenv(CodeCache::kLimitEnvironmentVariable,
           std::to_string(*bytes).c_str(), /*overwrite=*/1);
  }
  checkSharedLibs(std::vector<std::string>(sharedLibs.begin(),
                                           sharedLibs.end()));
  {
    std::vector<NamedPath> inputs{{"model", modelFile},
                                  {"--input-ids", inputIdsFile},
                                  {"--input-lengths", inputLengthsFile}};
    for (const std::string &weights : weightsFiles)
      inputs.push_back({"--weights", weights});
    for (llvm::StringRef spec : inputSpecs)
      if (spec.contains('='))
        inputs.push_back({"--input", spec.split('=').second.str()});
    std::vector<NamedPath> outputs;
    for (llvm::StringRef spec : outputSpecs)
      outputs.push_back({"--output", (spec.contains('=') ? spec.split('=').second
                                                         : spec)
                                         .str()});
    if (!outputTokensFile.empty())
      outputs.push_back({"--output-tokens", outputTokensFile});
    checkOutputPaths(outputs, inputs);
  }
  return gpuChip;
}

/// Refuses the options that apply only to config.json models.
static void rejectConfigOnlyOptions() {
  if (!inputLengthsFile.empty())
    fail("--input-lengths applies to config.json models and model directories (the lengths of the "
         "sequences of --input-ids)");
  if (computeDType.getNumOccurrences())
    fail("--dtype applies to config.json models and model directories (a "
         ".mlir model's types are in its IR)");
  if (!inputIdsFile.empty() || promptText.getNumOccurrences() ||
      generateCount.getNumOccurrences() || !outputTokensFile.empty() ||
      maxSeqLen.getNumOccurrences() || prefillChunk.getNumOccurrences())
    fail("--input-ids, --prompt, --generate, --output-tokens, --max-seq-len "
         "and --prefill-chunk apply to config.json models");
  if (doSample.getNumOccurrences() || temperature.getNumOccurrences() ||
      topK.getNumOccurrences() || topP.getNumOccurrences() ||
      repetitionPenalty.getNumOccurrences() ||
      samplingSeed.getNumOccurrences() || !stopStrings.empty() ||
      ignoreEos)
    fail("--do-sample, --temperature, --top-k, --top-p, "
         "--repetition-penalty, --seed, --stop and --ignore-eos apply to "
         "config.json models");
}

/// A .mlir model's entry, lowered to the signature the pipeline compiles:
/// the module after the signature passes, its signature, and the memory it
/// plans for (weights, buffers and KV caches are added when bound).
struct PreparedEntry {
  OwningOpRef<ModuleOp> module;
  EntrySignature sig;
  MemoryBudget budget;
  std::unique_ptr<CpuPipelineOptions> options;
  std::unique_ptr<GpuPipelineOptions> gpuOptions;
};

static OwningOpRef<ModuleOp> parseModel(MLIRContext &context) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(readModelText(modelFile), llvm::SMLoc());
  OwningOpRef<ModuleOp> module;
  {
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (!module)
    fail(llvm::formatv("cannot parse {0}", modelFile));
  return module;
}

static PreparedEntry prepareEntry(OwningOpRef<ModuleOp> module,
                                  llvm::StringRef gpuChip) {
  // Input ranges are read from the tfm ops, before passes lower them.
  EntrySignature tfmSig = check(getEntrySignature(*module, entryName));
  deriveInputRanges(*module, tfmSig);
  // The temporaries the entry plans for, from the ledger of its tfm ops
  // (computed once the memory check below has bounded every tensor).
  MemoryBudget budget;
  OwningOpRef<ModuleOp> tfmLevel(module->clone());
  std::unique_ptr<CpuPipelineOptions> options;
  std::unique_ptr<GpuPipelineOptions> gpuOptions;
  if (gpuChip.empty()) {
    options = check(parsePipelineOptions(getPipelineOptions()));
    check(runSignaturePasses(*module, *options, modelFile));
  } else {
    gpuOptions = check(parseGpuPipelineOptions(getPipelineOptions()));
    gpuOptions->chip = gpuChip.str();
    check(runSignaturePasses(*module, *gpuOptions, modelFile));
  }
  if (auto ranks = (*module)->getAttrOfType<IntegerAttr>(
          mlir::tfm::kTensorParallelAttrName);
      ranks && ranks.getInt() != tensorParallel)
    fail(llvm::formatv("{0} is partitioned for {1} ranks: run it with `mpirun "
                       "-np {1} transformer-runner ... --tensor-parallel {1}`",
                       modelFile, ranks.getInt()));
  EntrySignature sig = check(getEntrySignature(*module, entryName));
  copyInputRanges(tfmSig, sig);
  checkMemory(*module, {&sig});
  if (auto function = tfmLevel->lookupSymbol<func::FuncOp>(tfmSig.function))
    budget.workspace = computeLedger(function).peakLiveActivationBytes;
  tfmLevel = nullptr;
  return {std::move(module), std::move(sig), budget, std::move(options),
          std::move(gpuOptions)};
}

/// An entry's bound arguments, and the checkpoint whose mapping the weights
/// used in place point into (it must outlive every call).
struct BoundEntry {
  std::unique_ptr<Checkpoint> checkpoint;
  std::unique_ptr<CallFrame> frame;
};

/// Binds every argument of `sig` (weights, inputs, KV caches) and checks
/// them, all before the slow compilation; adds what they hold to `budget`.
static BoundEntry bindEntry(const EntrySignature &sig, MemoryBudget &budget) {
  if (!weightsFiles.empty() && randomWeights.getNumOccurrences())
    fail("--weights and --random-weights are mutually exclusive");
  std::unique_ptr<Checkpoint> weightsData;
  WeightSource weights;
  if (!weightsFiles.empty()) {
    weightsData = check(Checkpoint::open(
        std::vector<std::string>(weightsFiles.begin(), weightsFiles.end())));
    weights.checkpoint = weightsData.get();
  }
  if (randomWeights.getNumOccurrences())
    weights.randomSeed = randomWeights;
  if (const runtime::MpiWorld *world = runtime::getMpiWorld())
    weights.rank = world->rank;
  std::vector<BoundArgument> bound(sig.arguments.size());
  llvm::StringMap<BoundArgument> sharedParams;
  check(bindParameters(sig, weights, bound, sharedParams));
  bindInputs(sig, bound);
  checkInputRanges(sig, bound);
  budget.weights = getDistinctBytes(sharedParams);
  budget.buffers = getBufferBytes(sig);
  for (const EntryArgument &arg : sig.arguments)
    if (arg.kind == EntryArgument::Kind::KVCache)
      budget.kvCaches += *getNumBytes(arg.shape, getDTypeSize(arg.dtype));
  return {std::move(weightsData),
          check(CallFrame::create(sig, std::move(bound)))};
}

/// Calls the entry once, then --repeat timed times, and prints its results,
/// the timings and the memory it used.
static void runEntry(const PreparedEntry &entry, CallFrame &frame,
                     llvm::ArrayRef<OutputRequest> requests,
                     const PackedFunction &packed, JitModule *jit,
                     double compileMs) {
  const EntrySignature &sig = entry.sig;
  // On the GPU, arguments and results live in device memory; a call copies
  // the inputs there and the results back (DeviceFrame.h), KV caches stay.
  DevicePool pool;
  std::unique_ptr<DeviceFrame> deviceFrame;
  if (entry.gpuOptions)
    deviceFrame = check(DeviceFrame::create(frame, pool));
  auto call = [&] {
    if (deviceFrame)
      check(deviceFrame->call(packed));
    else
      packed(frame.getPackedArguments());
  };
  call();
  std::vector<double> times;
  for (unsigned r = 0; r < repeat; ++r) {
    Clock::time_point start = Clock::now();
    call();
    times.push_back(millisecondsSince(start));
  }
  if (deviceFrame)
    for (const EntryResult &r : sig.results)
      if (r.isKVCache)
        check(deviceFrame->downloadArgument(r.cacheArgument));

  for (auto [i, r] : llvm::enumerate(sig.results)) {
    reportResult(r, frame.getResultData(i), printCount);
    if (!requests[i].path.empty() && isOutputRank())
      writeResult(r, frame.getResultData(i), requests[i].path);
  }
  if (!times.empty()) {
    llvm::sort(times);
    llvm::outs() << llvm::format(
        "compile: %.1f ms; run (%u times): median %.4g ms, min %.4g ms, "
        "max %.4g ms%s\n",
        compileMs, unsigned(repeat), times[times.size() / 2], times.front(),
        times.back(), jit ? describeCache(*jit).c_str() : "");
    // Temporaries of >= 64 KiB come from the buffer pool: after the first
    // call every one is a reused buffer (tfm/Runtime/BufferPool.h).
    runtime::BufferPoolStats pool = runtime::getBufferPoolStats();
    llvm::outs() << llvm::format(
        "temporaries: peak %.2f MiB live, %.2f MiB held; %llu allocations "
        "reused, %llu from the system\n",
        pool.peakLiveBytes / 1048576.0, pool.heldBytes / 1048576.0,
        (unsigned long long)pool.reused, (unsigned long long)pool.fresh);
    printResidentMemory(entry.budget);
  }
}

/// The .mlir mode: parse, prepare, bind, compile (or load an artifact), run.
static void runMlirModel(MLIRContext &context, const std::string &gpuChip) {
  rejectConfigOnlyOptions();
  PreparedEntry entry = prepareEntry(parseModel(context), gpuChip);
  const EntrySignature &sig = entry.sig;
  // Bind and check everything before the (slow) compilation.
  BoundEntry bound = bindEntry(sig, entry.budget);
  std::vector<OutputRequest> requests = parseOutputs(sig);
  CallFrame &frame = *bound.frame;

  if (!emitArtifact.empty()) {
    writeGpuArtifact(*entry.module, {&sig}, *entry.gpuOptions, emitArtifact,
                     modelFile, &frame, emitArtifactData);
    llvm::outs() << "artifact of @" << sig.function << " for " << gpuChip
                 << ": " << emitArtifact << "\n";
    return;
  }

  Clock::time_point compileStart = Clock::now();
  std::vector<std::string> libs(sharedLibs.begin(), sharedLibs.end());
  std::unique_ptr<JitModule> jit;
  std::unique_ptr<ArtifactLibrary> library;
  PackedFunction packed;
  if (!artifact.empty()) {
    library = std::make_unique<ArtifactLibrary>(
        artifact, llvm::ArrayRef<const EntrySignature *>{&sig});
    packed = library->lookup(sig.function);
  } else {
    jit = check(entry.gpuOptions
                    ? compileGpuModule(*entry.module, {&sig}, *entry.gpuOptions,
                                       libs, modelFile,
                                       /*loadKernels=*/!compileOnly)
                    : compileModule(*entry.module, {&sig}, *entry.options, libs,
                                    modelFile, getCacheOptions()));
    packed = check(jit->lookup(sig.function));
  }
  double compileMs = millisecondsSince(compileStart);
  // The JIT holds the compiled code: the IR can go, the heap the compiler
  // freed back to the kernel, which glibc would otherwise keep, and the
  // compiler's code pages out of the resident set.
  entry.module = nullptr;
  releaseFreeHeapMemory();
  releaseCompilerCodePages();
  if (compileOnly) {
    llvm::outs() << llvm::format(
        "compiled @%s for %s: %.1f ms%s\n", sig.function.c_str(),
        gpuChip.empty() ? "the host CPU" : gpuChip.c_str(), compileMs,
        jit ? describeCache(*jit).c_str() : "");
    return;
  }

  runEntry(entry, frame, requests, packed, jit.get(), compileMs);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // --help lists the runner's own options, not every LLVM backend flag.
  // An LLVM library in the process registers a hidden, undocumented
  // `-threads` of its own; the runner's --threads takes the name over.
  if (cl::Option *other = cl::getRegisteredOptions().lookup("threads"))
    other->removeArgument();
  static cl::opt<unsigned> threadCount(
      "threads", cl::init(0), cl::value_desc("N"),
      cl::desc("Threads for the compiled code's parallel loops (default: "
               "all cores, or OMP_NUM_THREADS when set)"),
      cl::cat(runnerCategory));
  cl::HideUnrelatedOptions(runnerCategory);
  cl::ParseCommandLineOptions(
      argc, argv, "transformer-runner: JIT-run a tfm model on real weights\n");

  // The OpenMP runtime reads its thread count when the compiled code first
  // forks, which is after this.
  if (threadCount.getNumOccurrences()) {
    if (threadCount == 0)
      fail("--threads: must be at least 1");
    setenv("OMP_NUM_THREADS", std::to_string(threadCount).c_str(), 1);
  }
  std::string gpuChip = checkCommandLine();
  if (tensorParallel < 1)
    fail(llvm::formatv("--tensor-parallel {0}: must be at least 1",
                       tensorParallel));
  if (tensorParallel > 1) {
    const runtime::MpiWorld &world = check(runtime::initMpiWorld(tensorParallel));
    // A failing rank ends the job rather than leave the others waiting in
    // a collective.
    setFailHook(runtime::abortMpiWorld);
    // On GPUs the ranks sum with NCCL (unless they only compile).
    if (!gpuChip.empty() && !compileOnly && emitArtifact.empty())
      check(initializeNccl());
    // Rank 0 reports; the others' output (the same numbers) is dropped.
    if (world.rank != 0) {
      llvm::outs().flush();
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0) {
        dup2(null, STDOUT_FILENO);
        close(null);
      }
    }
  }
  DialectRegistry registry;
  registerEngineDialects(registry);
  MLIRContext context(registry);
  if (llvm::StringRef(modelFile).ends_with(".json") ||
      isGgufPath(modelFile) || isModelDirectory(modelFile))
    runConfig(context, gpuChip);
  else
    runMlirModel(context, gpuChip);
  return 0;
}

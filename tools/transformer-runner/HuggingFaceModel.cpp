//===- HuggingFaceModel.cpp - running Hugging Face models -----------------===//
//
// Generation follows Hugging Face's greedy `generate`: one @prefill over the
// prompt at position 0 (the argmax of its last position is new token 1), then
// N - 1 @decode steps, step j feeding token j at position S + j - 1. Both
// entries are compiled into one engine and share the weights and the caches
// [B, Hkv, S_max, dh] of every layer, which the compiled code updates in place
// (tfm/Pipelines/Pipelines.h): nothing is copied between steps.
//
//===----------------------------------------------------------------------===//
#include "HuggingFaceModel.h"
#include "Compile.h"
#include "DeviceFrame.h"
#include "InputChecks.h"
#include "RunnerSupport.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Runtime/Limits.h"
#include "tfm/Runtime/Npy.h"
#include "tfm/Runtime/SafeTensors.h"
#include "tfm/Target/HuggingFace/ImportModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <functional>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::runner;
using namespace mlir::tfm::runtime;

namespace {
/// Token ids [batch, seqLen], row-major.
struct TokenIds {
  int64_t batch = 0, seqLen = 0;
  std::vector<int64_t> ids;
};
} // namespace

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

static hf::ModelConfig readConfig(llvm::StringRef path) {
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      check(readInputFile(path, kMaxTextFileBytes, /*isText=*/true));
  llvm::Expected<hf::ModelConfig> config =
      hf::parseModelConfig(buffer->getBuffer());
  if (!config)
    fail(path + ": " + llvm::toString(config.takeError()));
  for (const std::string &field : config->unknownFields)
    warn(path + ": " + field +
         ": unknown field, ignored; the model is built as if it were absent");
  return std::move(*config);
}

static TokenIds readIds(const HuggingFaceRunOptions &options,
                        const hf::ModelConfig &config) {
  TokenIds tokens;
  if (options.prompt) {
    if (!options.inputIdsPath.empty())
      fail("--prompt and --input-ids are mutually exclusive");
    if (config.vocabSize != 256)
      fail(llvm::formatv("--prompt needs a byte-level model (vocabulary of "
                         "256, one id per UTF-8 byte); {0} has a vocabulary "
                         "of {1}: pass token ids with --input-ids",
                         options.configPath, config.vocabSize));
    if (options.prompt->empty())
      fail("--prompt: the prompt is empty");
    tokens.batch = 1;
    tokens.seqLen = options.prompt->size();
    for (char c : *options.prompt)
      tokens.ids.push_back(static_cast<uint8_t>(c));
    return tokens;
  }
  if (options.inputIdsPath.empty())
    fail("a config.json model needs token ids: pass --input-ids ids.npy "
         "(int64 or int32 [B, S]) or --prompt TEXT");
  NpyArray array = check(readNpy(options.inputIdsPath));
  if ((array.dtype != DType::I64 && array.dtype != DType::I32) ||
      array.shape.size() != 2 || array.shape[0] < 1 || array.shape[1] < 1)
    fail(llvm::formatv("--input-ids {0}: expected int64 or int32 token ids "
                       "[B, S], got {1}",
                       options.inputIdsPath,
                       describe(array.dtype, array.shape)));
  tokens.batch = array.shape[0];
  tokens.seqLen = array.shape[1];
  tokens.ids.resize(array.getNumElements());
  convertElements(array.data, array.dtype, tokens.ids.data(), DType::I64,
                  tokens.ids.size());
  for (auto [i, id] : llvm::enumerate(tokens.ids))
    if (id < 0 || id >= config.vocabSize)
      fail(llvm::formatv("--input-ids {0}: element {1} is {2}, outside the "
                         "vocabulary [0, {3})",
                         options.inputIdsPath, i, id, config.vocabSize));
  return tokens;
}

/// GPT2LMHeadModel checkpoints name the body's tensors "transformer.h.0...";
/// GPT2Model ones (and tfm's parameters) "h.0...". The file tells which.
static std::string detectNamePrefix(const hf::ModelConfig &config,
                                    const SafeTensorsFile &file) {
  if (config.family == hf::ModelFamily::GPT2 && !file.lookup("wte.weight") &&
      file.lookup("transformer.wte.weight"))
    return "transformer.";
  return "";
}

/// Tensors a checkpoint may hold that are not parameters of the model, as
/// Hugging Face's loaders ignore them: GPT-2's causal-mask buffers, the rotary
/// frequencies of older Llama checkpoints, and a tied LM head saved anyway.
static bool isIgnoredTensor(llvm::StringRef name, llvm::StringRef prefix,
                            const hf::ModelConfig &config) {
  if (config.tieWordEmbeddings && name == "lm_head.weight")
    return true;
  if (config.family == hf::ModelFamily::GPT2)
    return name.starts_with((prefix + "h.").str()) &&
           (name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias"));
  return name.ends_with(".rotary_emb.inv_freq");
}

/// Warns about tensors of the file that no parameter reads, as Hugging Face's
/// loaders do: usually a checkpoint of a slightly different model, and the
/// names help tell a misnamed tensor from a missing one.
static void warnUnusedTensors(const SafeTensorsFile &file,
                              llvm::StringRef prefix,
                              const hf::ModelConfig &config,
                              llvm::ArrayRef<const EntrySignature *> entries) {
  llvm::StringSet<> used;
  for (const EntrySignature *sig : entries)
    for (const EntryArgument &arg : sig->arguments) {
      if (arg.kind != EntryArgument::Kind::Param)
        continue;
      if (arg.parts.empty())
        used.insert((prefix + arg.name).str());
      for (const std::string &part : arg.parts)
        used.insert((prefix + part).str());
    }
  std::vector<std::string> unused;
  for (const TensorView &tensor : file.getTensors())
    if (!used.contains(tensor.name) &&
        !isIgnoredTensor(tensor.name, prefix, config))
      unused.push_back(tensor.name);
  if (unused.empty())
    return;
  std::string names;
  for (size_t i = 0; i < unused.size() && i < 8; ++i)
    names += (i ? ", '" : "'") + unused[i] + "'";
  if (unused.size() > 8)
    names += llvm::formatv(" and {0} more", unused.size() - 8).str();
  warn(llvm::formatv("{0}: {1} tensor(s) not used by the {2} model, ignored: "
                     "{3}",
                     file.getPath(), unused.size(),
                     hf::getFamilyName(config.family), names));
}

//===----------------------------------------------------------------------===//
// Binding
//===----------------------------------------------------------------------===//

namespace {
/// What the entries of one model share: weights and KV caches by name.
struct ModelBindings {
  WeightSource weights;
  llvm::StringMap<BoundArgument> params;
  llvm::StringMap<BoundArgument> caches;
};

/// One imported entry, bound and ready to call.
struct Entry {
  EntrySignature sig;
  std::unique_ptr<CallFrame> frame;
  size_t idsArgument = 0, positionArgument = 0, logitsResult = 0;
  bool hasPosition = false;

  int64_t *getIds() {
    return reinterpret_cast<int64_t *>(frame->getArgumentData(idsArgument));
  }
  const float *getLogits() {
    return reinterpret_cast<const float *>(
        frame->getResultData(logitsResult));
  }
};
} // namespace

/// Binds the entry `function` of the imported module; the importer's
/// signature is fixed (ImportModel.h), so anything else is an internal error.
static Entry bindEntry(EntrySignature signature, ModelBindings &bindings,
                       int64_t batch, int64_t seqLen, int64_t vocab) {
  Entry entry;
  entry.sig = std::move(signature);
  const EntrySignature &sig = entry.sig;
  llvm::StringRef function = sig.function;
  std::vector<BoundArgument> bound(sig.arguments.size());
  bindParameters(sig, bindings.weights, bound, bindings.params);
  bool hasIds = false;
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    if (arg.kind == EntryArgument::Kind::KVCache) {
      auto it = bindings.caches.find(arg.name);
      if (it == bindings.caches.end()) {
        BoundArgument cache;
        cache.storage = std::make_shared<AlignedBuffer>(
            *getNumBytes(arg.shape, getDTypeSize(arg.dtype)));
        cache.data = cache.storage->get();
        cache.bound = true;
        it = bindings.caches.try_emplace(arg.name, std::move(cache)).first;
      }
      bound[i] = it->second;
    } else if (arg.kind == EntryArgument::Kind::Index &&
               arg.name == "position") {
      entry.positionArgument = i;
      entry.hasPosition = true;
      bound[i].bound = true;
    } else if (arg.kind == EntryArgument::Kind::Input &&
               arg.name == "input_ids" && arg.dtype == DType::I64 &&
               arg.shape == llvm::ArrayRef<int64_t>{batch, seqLen}) {
      entry.idsArgument = i;
      hasIds = true;
      bound[i].storage = std::make_shared<AlignedBuffer>(batch * seqLen * 8);
      bound[i].data = bound[i].storage->get();
      bound[i].bound = true;
    }
    if (!bound[i].bound)
      fail(llvm::formatv("internal error: the imported @{0} has an "
                         "unexpected argument '{1}' ({2})",
                         function, arg.name, describeArgument(sig, i)));
  }
  auto logits = llvm::find_if(sig.results, [](const EntryResult &r) {
    return r.name == "logits";
  });
  if (!hasIds || logits == sig.results.end() ||
      logits->dtype != DType::F32 ||
      logits->shape != llvm::ArrayRef<int64_t>{batch, seqLen, vocab})
    fail(llvm::formatv("internal error: the imported @{0} does not take "
                       "input_ids [{1}, {2}] and return f32 logits",
                       function, batch, seqLen));
  entry.logitsResult = logits - sig.results.begin();
  entry.frame = std::make_unique<CallFrame>(entry.sig, std::move(bound));
  return entry;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// The index of the largest of `count` logits, the first on ties; NaN counts
/// as largest, as in torch.argmax.
static int64_t argmax(const float *logits, int64_t count) {
  int64_t best = 0;
  for (int64_t i = 1; i < count && !std::isnan(logits[best]); ++i)
    if (std::isnan(logits[i]) || logits[i] > logits[best])
      best = i;
  return best;
}

static double median(std::vector<double> values) {
  llvm::sort(values);
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string runner::decodeUtf8Lossy(const std::vector<uint8_t> &bytes) {
  static constexpr llvm::StringLiteral kReplacement = "\xEF\xBF\xBD";
  std::string text;
  size_t i = 0, n = bytes.size();
  while (i < n) {
    uint8_t lead = bytes[i];
    if (lead < 0x80) {
      text.push_back(char(lead));
      ++i;
      continue;
    }
    // Length and the allowed range of the second byte (excluding overlong
    // forms, surrogates and code points past U+10FFFF), per Unicode table 3-7.
    int length = 0;
    uint8_t low = 0x80, high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF)
      length = 2;
    else if (lead >= 0xE0 && lead <= 0xEF)
      length = 3, low = lead == 0xE0 ? 0xA0 : 0x80,
      high = lead == 0xED ? 0x9F : 0xBF;
    else if (lead >= 0xF0 && lead <= 0xF4)
      length = 4, low = lead == 0xF0 ? 0x90 : 0x80,
      high = lead == 0xF4 ? 0x8F : 0xBF;
    size_t end = i + 1;
    bool valid = length > 0;
    for (int k = 1; valid && k < length; ++k, ++end) {
      valid = end < n && bytes[end] >= (k == 1 ? low : 0x80) &&
              bytes[end] <= (k == 1 ? high : 0xBF);
      if (!valid)
        break;
    }
    // An invalid sequence is replaced as a whole up to the first byte that
    // cannot continue it (the "maximal subpart"), which starts anew.
    if (valid)
      text.append(bytes.begin() + i, bytes.begin() + end);
    else
      text += kReplacement;
    i = end;
  }
  return text;
}

namespace {
/// The pipeline a model is compiled with, and how its entries are called:
/// the CPU pipeline and host memory, or the GPU pipeline and device memory
/// (DeviceFrame.h).
struct Target {
  std::unique_ptr<CpuPipelineOptions> cpu;
  std::unique_ptr<GpuPipelineOptions> gpu;
  DevicePool pool;
  std::vector<std::unique_ptr<DeviceFrame>> frames;

  void runSignaturePasses(ModuleOp module, llvm::StringRef what) {
    if (gpu)
      runner::runSignaturePasses(module, *gpu, what);
    else
      runner::runSignaturePasses(module, *cpu, what);
  }
  std::unique_ptr<JitModule>
  compile(ModuleOp module, llvm::ArrayRef<const EntrySignature *> entries,
          llvm::ArrayRef<std::string> libs, llvm::StringRef what) {
    return gpu ? compileGpuModule(module, entries, *gpu, libs, what)
               : compileModule(module, entries, *cpu, libs, what);
  }
  /// Calls `function` on `frame` (host memory in and out either way).
  std::function<void()> bind(PackedFunction function, CallFrame &frame) {
    if (!gpu)
      return [function, &frame] { function(frame.getPackedArguments()); };
    frames.push_back(std::make_unique<DeviceFrame>(frame, pool));
    DeviceFrame *device = frames.back().get();
    return [function, device] { device->call(function); };
  }
};
} // namespace

static void runForward(ModuleOp module, const HuggingFaceRunOptions &options,
                       Target &pipeline, ModelBindings &bindings,
                       const hf::ModelConfig &config, const TokenIds &tokens) {
  pipeline.runSignaturePasses(module, options.configPath);
  EntrySignature sig = check(getEntrySignature(module, "forward"));
  checkMemory(module, {&sig});
  // Unused names first: they often explain a missing tensor.
  if (bindings.weights.file)
    warnUnusedTensors(*bindings.weights.file, bindings.weights.namePrefix,
                      config, {&sig});
  Entry forward = bindEntry(std::move(sig), bindings, tokens.batch,
                            tokens.seqLen, config.vocabSize);
  std::copy(tokens.ids.begin(), tokens.ids.end(), forward.getIds());

  Clock::time_point compileStart = Clock::now();
  std::unique_ptr<JitModule> jit = pipeline.compile(
      module, {&forward.sig}, options.sharedLibs, options.configPath);
  std::function<void()> call =
      pipeline.bind(jit->lookup("forward"), *forward.frame);
  double compileMs = millisecondsSince(compileStart);

  Clock::time_point start = Clock::now();
  call();
  double runMs = millisecondsSince(start);

  const EntryResult &logits = forward.sig.results[forward.logitsResult];
  reportResult(logits, reinterpret_cast<const char *>(forward.getLogits()),
               options.printCount);
  if (!options.logitsPath.empty())
    writeResult(logits, reinterpret_cast<const char *>(forward.getLogits()),
                options.logitsPath);
  llvm::outs() << llvm::format("compile: %.1f ms; forward: %.3f ms\n",
                               compileMs, runMs);
}

static void runGeneration(ModuleOp module,
                          const HuggingFaceRunOptions &options,
                          Target &pipeline, ModelBindings &bindings,
                          const hf::ModelConfig &config,
                          const TokenIds &tokens, int64_t maxSeqLen) {
  // Only the generation entries are compiled.
  if (auto forward = module.lookupSymbol<func::FuncOp>("forward"))
    forward.erase();
  pipeline.runSignaturePasses(module, options.configPath);
  int64_t batch = tokens.batch, prompt = tokens.seqLen, vocab = config.vocabSize;
  int64_t count = options.generate;
  EntrySignature prefillSig = check(getEntrySignature(module, "prefill"));
  EntrySignature decodeSig = check(getEntrySignature(module, "decode"));
  checkMemory(module, {&prefillSig, &decodeSig});
  // Unused names first: they often explain a missing tensor.
  if (bindings.weights.file)
    warnUnusedTensors(*bindings.weights.file, bindings.weights.namePrefix,
                      config, {&prefillSig, &decodeSig});
  Entry prefill =
      bindEntry(std::move(prefillSig), bindings, batch, prompt, vocab);
  Entry decode = bindEntry(std::move(decodeSig), bindings, batch, 1, vocab);
  if (!prefill.hasPosition || !decode.hasPosition)
    fail("internal error: the imported @prefill/@decode take no position");
  std::copy(tokens.ids.begin(), tokens.ids.end(), prefill.getIds());

  Clock::time_point compileStart = Clock::now();
  std::unique_ptr<JitModule> jit =
      pipeline.compile(module, {&prefill.sig, &decode.sig},
                       options.sharedLibs, options.configPath);
  std::function<void()> callPrefill =
      pipeline.bind(jit->lookup("prefill"), *prefill.frame);
  std::function<void()> callDecode =
      pipeline.bind(jit->lookup("decode"), *decode.frame);
  double compileMs = millisecondsSince(compileStart);

  // out[b] = prompt[b] followed by the new tokens.
  int64_t total = prompt + count;
  std::vector<int64_t> out(batch * total);
  for (int64_t b = 0; b < batch; ++b)
    std::copy_n(tokens.ids.begin() + b * prompt, prompt,
                out.begin() + b * total);

  auto checkRoom = [&](int64_t position, int64_t length) {
    if (position + length > maxSeqLen)
      fail(llvm::formatv("internal error: writing {0} token(s) at position "
                         "{1} would overrun the KV cache of {2} positions",
                         length, position, maxSeqLen));
  };
  checkRoom(0, prompt);
  prefill.frame->getIndex(prefill.positionArgument) = 0;
  Clock::time_point start = Clock::now();
  callPrefill();
  double prefillMs = millisecondsSince(start);
  for (int64_t b = 0; b < batch; ++b)
    out[b * total + prompt] =
        argmax(prefill.getLogits() + (b * prompt + prompt - 1) * vocab, vocab);

  std::vector<double> stepMs;
  int64_t *decodeIds = decode.getIds();
  for (int64_t step = 1; step < count; ++step) {
    int64_t position = prompt + step - 1;
    checkRoom(position, 1);
    for (int64_t b = 0; b < batch; ++b)
      decodeIds[b] = out[b * total + position];
    decode.frame->getIndex(decode.positionArgument) = position;
    start = Clock::now();
    callDecode();
    stepMs.push_back(millisecondsSince(start));
    for (int64_t b = 0; b < batch; ++b)
      out[b * total + position + 1] =
          argmax(decode.getLogits() + b * vocab, vocab);
  }

  if (!options.tokensPath.empty())
    if (llvm::Error err = writeNpy(options.tokensPath, DType::I64,
                                   {batch, total}, out.data()))
      fail(llvm::toString(std::move(err)));
  if (options.prompt) {
    std::vector<uint8_t> bytes(out.begin(), out.end());
    llvm::outs() << "text: " << decodeUtf8Lossy(bytes) << "\n";
  } else {
    for (int64_t b = 0; b < batch; ++b) {
      llvm::outs() << "tokens[" << b << "]:";
      for (int64_t t = prompt; t < total; ++t)
        llvm::outs() << " " << out[b * total + t];
      llvm::outs() << "\n";
    }
  }
  llvm::outs() << llvm::format("compile: %.1f ms\n", compileMs)
               << llvm::format("prefill: %.3f ms (B=%lld, %lld prompt "
                               "tokens, KV cache of %lld positions)\n",
                               prefillMs, (long long)batch, (long long)prompt,
                               (long long)maxSeqLen);
  if (!stepMs.empty())
    llvm::outs() << llvm::format(
        "decode: %.3f ms/token median (%zu steps, min %.3f ms, max %.3f ms)\n",
        median(stepMs), stepMs.size(), *llvm::min_element(stepMs),
        *llvm::max_element(stepMs));
  printResidentMemory();
}

void runner::runHuggingFaceModel(MLIRContext &context,
                                 const HuggingFaceRunOptions &options) {
  hf::ModelConfig config = readConfig(options.configPath);
  TokenIds tokens = readIds(options, config);
  if (options.generate < 0)
    fail(llvm::formatv("--generate {0}: must be positive", options.generate));
  if (!options.generate && !options.tokensPath.empty())
    fail("--output-tokens needs --generate N");
  if (!options.generate && options.maxSeqLen)
    fail("--max-seq-len needs --generate N");
  if (options.generate && !options.logitsPath.empty())
    fail("--output writes the logits of @forward; with --generate, write the "
         "tokens with --output-tokens");

  // The sizes, checked against the context here to name the options at fault.
  int64_t needed = tokens.seqLen + options.generate;
  if (needed > config.maxPositions && options.generate)
    fail(llvm::formatv("--generate {0}: the prompt's {1} tokens and {0} new "
                       "tokens need {2} positions, more than the model's "
                       "context of {3} ({4})",
                       options.generate, tokens.seqLen, needed,
                       config.maxPositions, config.maxPositionsField));
  if (needed > config.maxPositions)
    fail(llvm::formatv("the input's {0} tokens are more than the model's "
                       "context of {1} ({2})",
                       tokens.seqLen, config.maxPositions,
                       config.maxPositionsField));
  int64_t maxSeqLen = options.maxSeqLen ? options.maxSeqLen : needed;
  if (options.maxSeqLen && (options.maxSeqLen < needed ||
                            options.maxSeqLen > config.maxPositions))
    fail(llvm::formatv("--max-seq-len {0}: must be at least the {1} "
                       "positions of the prompt and the new tokens and at "
                       "most the model's context of {2} ({3})",
                       options.maxSeqLen, needed, config.maxPositions,
                       config.maxPositionsField));

  ModelBindings bindings;
  std::unique_ptr<SafeTensorsFile> file;
  if (!options.weightsPath.empty() && options.randomSeed)
    fail("--weights and --random-weights are mutually exclusive");
  if (!options.weightsPath.empty()) {
    file = check(SafeTensorsFile::open(options.weightsPath));
    bindings.weights.file = file.get();
    bindings.weights.namePrefix = detectNamePrefix(config, *file);
  }
  bindings.weights.randomSeed = options.randomSeed;

  context.loadDialect<TfmDialect, func::FuncDialect>();
  hf::ImportOptions importOptions;
  importOptions.batch = tokens.batch;
  importOptions.seqLen = tokens.seqLen;
  importOptions.kvCacheLength = options.generate ? maxSeqLen : 0;
  OwningOpRef<ModuleOp> module =
      check(hf::importModel(context, config, importOptions));

  Target pipeline;
  if (options.gpuChip.empty()) {
    pipeline.cpu = parsePipelineOptions(options.pipelineOptions);
  } else {
    pipeline.gpu = parseGpuPipelineOptions(options.pipelineOptions);
    pipeline.gpu->chip = options.gpuChip;
  }
  if (options.generate)
    runGeneration(*module, options, pipeline, bindings, config, tokens,
                  maxSeqLen);
  else
    runForward(*module, options, pipeline, bindings, config, tokens);
}

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
#include "RunnerSupport.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Runtime/GenerationConfig.h"
#include "tfm/Runtime/Npy.h"
#include "tfm/Runtime/Sampler.h"
#include "tfm/Runtime/SafeTensors.h"
#include "tfm/Target/HuggingFace/ImportModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/Timing.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/StringExtras.h"
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
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    fail(path + ": " + buffer.getError().message());
  llvm::Expected<hf::ModelConfig> config =
      hf::parseModelConfig((*buffer)->getBuffer());
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

/// The length of `bytes` without a trailing sequence that is valid so far
/// but incomplete: decoding up to there gives the same text as decoding
/// everything, whatever bytes follow (the decoder never looks past it).
static size_t getCompleteUtf8Prefix(llvm::ArrayRef<uint8_t> bytes) {
  size_t n = bytes.size();
  // A sequence is at most 4 bytes: an incomplete one has its lead among the
  // last 3 bytes, followed by continuation bytes only.
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    uint8_t lead = bytes[n - back];
    if (lead >= 0x80 && lead < 0xC0)
      continue;
    size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                    : lead >= 0xE0 && lead <= 0xEF ? 3
                    : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                   : 1;
    if (length <= back)
      return n;
    // The same second-byte ranges as decodeUtf8Lossy (Unicode table 3-7).
    uint8_t low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
    uint8_t high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
    bool valid = back < 2 || (bytes[n - back + 1] >= low &&
                              bytes[n - back + 1] <= high);
    return valid ? n - back : n;
  }
  return n;
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
  CacheOptions cache;

  std::unique_ptr<JitModule>
  compile(ModuleOp module, llvm::ArrayRef<const EntrySignature *> entries,
          llvm::ArrayRef<std::string> libs, llvm::StringRef what) {
    return gpu ? compileGpuModule(module, entries, *gpu, libs, what)
               : compileModule(module, entries, *cpu, libs, what, cache);
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

  // The first call is cold (page faults in the weights, first allocations
  // of the buffer pool); the time reported is the median of the warm ones.
  Clock::time_point start = Clock::now();
  call();
  double coldMs = millisecondsSince(start);
  std::vector<double> runMs;
  for (unsigned r = 0; r < options.repeat; ++r) {
    start = Clock::now();
    call();
    runMs.push_back(millisecondsSince(start));
  }

  const EntryResult &logits = forward.sig.results[forward.logitsResult];
  reportResult(logits, reinterpret_cast<const char *>(forward.getLogits()),
               options.printCount);
  if (!options.logitsPath.empty())
    writeResult(logits, reinterpret_cast<const char *>(forward.getLogits()),
                options.logitsPath);
  llvm::outs() << llvm::format("compile: %.1f ms; forward: %.3f ms (warm, "
                               "median of %zu, min %.3f ms, max %.3f ms); "
                               "first call: %.3f ms; %.0f tokens/s%s\n",
                               compileMs, median(runMs), runMs.size(),
                               *llvm::min_element(runMs),
                               *llvm::max_element(runMs), coldMs,
                               tokens.batch * tokens.seqLen * 1000.0 /
                                   median(runMs),
                               describeCache(*jit).c_str());
}

/// Runs the prompt through @prefill, whose input_ids hold `chunk` tokens per
/// sequence, at positions 0, chunk, 2 * chunk, ... of the KV cache: one
/// compiled entry serves every prompt length. A last, partial chunk is
/// padded at its end while the padded positions fit the cache (the padding's
/// keys and values land in slots that decoding overwrites before any query
/// can see them: causal attention reads only positions <= its own), or else
/// starts early, at `prompt - chunk`, recomputing tokens already cached.
/// `onChunk(window, first, end)` gets each call's logits rows [first, end):
/// row r is the logits of the prompt position `window + r`, each position
/// exactly once.
static void prefillInChunks(
    Entry &prefill, const std::function<void()> &call, const TokenIds &tokens,
    int64_t cacheLength,
    llvm::function_ref<void(int64_t window, int64_t first, int64_t end)>
        onChunk) {
  int64_t batch = tokens.batch, prompt = tokens.seqLen;
  int64_t chunk = prefill.sig.arguments[prefill.idsArgument].shape[1];
  int64_t *ids = prefill.getIds();
  for (int64_t start = 0; start < prompt; start += chunk) {
    int64_t window = start;
    if (start + chunk > prompt && start + chunk > cacheLength)
      window = prompt - chunk; // >= 0: the cache holds at least one chunk.
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < chunk; ++i) {
        // Padding repeats the last token: any valid id would do.
        int64_t t = std::min(window + i, prompt - 1);
        ids[b * chunk + i] = tokens.ids[b * prompt + t];
      }
    prefill.frame->getIndex(prefill.positionArgument) = window;
    call();
    onChunk(window, start - window, std::min(prompt, window + chunk) - window);
  }
}

/// The prompt's logits [B, S, V] from @prefill run in chunks (no @forward):
/// what --prefill-chunk gives without --generate.
static void runChunkedForward(ModuleOp module,
                              const HuggingFaceRunOptions &options,
                              Target &pipeline, ModelBindings &bindings,
                              const hf::ModelConfig &config,
                              const TokenIds &tokens, int64_t maxSeqLen) {
  for (llvm::StringRef unused : {"forward", "decode"})
    if (auto func = module.lookupSymbol<func::FuncOp>(unused))
      func.erase();
  pipeline.runSignaturePasses(module, options.configPath);
  EntrySignature sig = check(getEntrySignature(module, "prefill"));
  if (bindings.weights.file)
    warnUnusedTensors(*bindings.weights.file, bindings.weights.namePrefix,
                      config, {&sig});
  int64_t batch = tokens.batch, prompt = tokens.seqLen, vocab = config.vocabSize;
  int64_t chunk = options.prefillChunk;
  Entry prefill = bindEntry(std::move(sig), bindings, batch, chunk, vocab);
  if (!prefill.hasPosition)
    fail("internal error: the imported @prefill takes no position");

  Clock::time_point compileStart = Clock::now();
  std::unique_ptr<JitModule> jit = pipeline.compile(
      module, {&prefill.sig}, options.sharedLibs, options.configPath);
  std::function<void()> call =
      pipeline.bind(jit->lookup("prefill"), *prefill.frame);
  double compileMs = millisecondsSince(compileStart);

  std::vector<float> logits(batch * prompt * vocab);
  int64_t chunks = 0;
  Clock::time_point start = Clock::now();
  prefillInChunks(prefill, call, tokens, maxSeqLen,
                  [&](int64_t window, int64_t first, int64_t end) {
                    ++chunks;
                    for (int64_t b = 0; b < batch; ++b)
                      std::copy(prefill.getLogits() +
                                    (b * chunk + first) * vocab,
                                prefill.getLogits() + (b * chunk + end) * vocab,
                                logits.begin() +
                                    (b * prompt + window + first) * vocab);
                  });
  double runMs = millisecondsSince(start);

  EntryResult result = prefill.sig.results[prefill.logitsResult];
  result.shape = {batch, prompt, vocab};
  reportResult(result, reinterpret_cast<const char *>(logits.data()),
               options.printCount);
  if (!options.logitsPath.empty())
    writeResult(result, reinterpret_cast<const char *>(logits.data()),
                options.logitsPath);
  llvm::outs() << llvm::format("compile: %.1f ms; prefill: %.3f ms (%lld "
                               "chunk(s) of %lld, KV cache of %lld "
                               "positions)\n",
                               compileMs, runMs, (long long)chunks,
                               (long long)chunk, (long long)maxSeqLen);
}

namespace {
/// Prints the text or the ids of a B = 1 generation as they are produced,
/// flushing each token; larger batches are printed at the end.
class TokenPrinter {
public:
  TokenPrinter(bool text, int64_t batch) : text(text), batch(batch) {}

  void begin(llvm::ArrayRef<int64_t> prompt) {
    if (batch != 1)
      return;
    if (!text) {
      llvm::outs() << "tokens[0]:";
      llvm::outs().flush();
      return;
    }
    llvm::outs() << "text: ";
    for (int64_t id : prompt)
      push(id);
  }
  void push(int64_t id) {
    if (batch != 1)
      return;
    if (!text) {
      llvm::outs() << " " << id;
      llvm::outs().flush();
      return;
    }
    // Text up to the last complete character: a character's bytes may be
    // split over tokens.
    pending.push_back(uint8_t(id));
    size_t complete = getCompleteUtf8Prefix(pending);
    std::vector<uint8_t> ready(pending.begin(), pending.begin() + complete);
    pending.erase(pending.begin(), pending.begin() + complete);
    llvm::outs() << decodeUtf8Lossy(ready);
    llvm::outs().flush();
  }
  void end(llvm::ArrayRef<std::vector<int64_t>> sequences,
           int64_t promptLength) {
    if (batch == 1) {
      llvm::outs() << decodeUtf8Lossy(pending) << "\n";
      return;
    }
    for (auto [b, sequence] : llvm::enumerate(sequences)) {
      if (text) {
        std::vector<uint8_t> bytes(sequence.begin(), sequence.end());
        llvm::outs() << "text[" << b << "]: " << decodeUtf8Lossy(bytes)
                     << "\n";
        continue;
      }
      llvm::outs() << "tokens[" << b << "]:";
      for (size_t t = promptLength; t < sequence.size(); ++t)
        llvm::outs() << " " << sequence[t];
      llvm::outs() << "\n";
    }
  }

private:
  bool text;
  int64_t batch;
  std::vector<uint8_t> pending;
};

/// When each sequence of a batch is done: after an EOS token, or once its
/// generated bytes (a byte-level model's text) contain a stop string.
class StopCriteria {
public:
  StopCriteria(const GenerationConfig &config, int64_t batch)
      : config(config), generated(batch), done(batch) {}

  /// Records `token` of sequence `b`; true if that ends the sequence.
  bool push(int64_t b, int64_t token) {
    if (llvm::is_contained(config.eosTokenIds, token))
      return done[b] = true;
    std::string &text = generated[b];
    text.push_back(char(uint8_t(token)));
    for (const std::string &stop : config.stopStrings)
      if (llvm::StringRef(text).ends_with(stop))
        return done[b] = true;
    return false;
  }
  bool isDone(int64_t b) const { return done[b]; }
  bool allDone() const { return llvm::all_of(done, [](bool d) { return d; }); }

private:
  const GenerationConfig &config;
  std::vector<std::string> generated;
  std::vector<bool> done;
};
} // namespace

static void runGeneration(ModuleOp module,
                          const HuggingFaceRunOptions &options,
                          Target &pipeline, ModelBindings &bindings,
                          const hf::ModelConfig &config,
                          const GenerationConfig &generation,
                          const TokenIds &tokens, int64_t count,
                          int64_t maxSeqLen) {
  // Only the generation entries are compiled.
  if (auto forward = module.lookupSymbol<func::FuncOp>("forward"))
    forward.erase();
  pipeline.runSignaturePasses(module, options.configPath);
  int64_t batch = tokens.batch, prompt = tokens.seqLen, vocab = config.vocabSize;
  EntrySignature prefillSig = check(getEntrySignature(module, "prefill"));
  EntrySignature decodeSig = check(getEntrySignature(module, "decode"));
  // Unused names first: they often explain a missing tensor.
  if (bindings.weights.file)
    warnUnusedTensors(*bindings.weights.file, bindings.weights.namePrefix,
                      config, {&prefillSig, &decodeSig});
  int64_t chunk = options.prefillChunk ? options.prefillChunk : prompt;
  Entry prefill =
      bindEntry(std::move(prefillSig), bindings, batch, chunk, vocab);
  Entry decode = bindEntry(std::move(decodeSig), bindings, batch, 1, vocab);
  if (!prefill.hasPosition || !decode.hasPosition)
    fail("internal error: the imported @prefill/@decode take no position");

  Clock::time_point compileStart = Clock::now();
  std::unique_ptr<JitModule> jit =
      pipeline.compile(module, {&prefill.sig, &decode.sig},
                       options.sharedLibs, options.configPath);
  std::function<void()> callPrefill =
      pipeline.bind(jit->lookup("prefill"), *prefill.frame);
  std::function<void()> callDecode =
      pipeline.bind(jit->lookup("decode"), *decode.frame);
  double compileMs = millisecondsSince(compileStart);

  // sequences[b]: the prompt, then the new tokens.
  std::vector<std::vector<int64_t>> sequences(batch);
  for (int64_t b = 0; b < batch; ++b)
    sequences[b].assign(tokens.ids.begin() + b * prompt,
                        tokens.ids.begin() + (b + 1) * prompt);

  auto checkRoom = [&](int64_t position, int64_t length) {
    if (position + length > maxSeqLen)
      fail(llvm::formatv("internal error: writing {0} token(s) at position "
                         "{1} would overrun the KV cache of {2} positions",
                         length, position, maxSeqLen));
  };
  Sampler sampler(generation.sampling);
  StopCriteria stop(generation, batch);
  TokenPrinter printer(options.prompt.has_value(), batch);
  printer.begin(sequences[0]);
  // Sequences that are done stop drawing; the rest take the next token.
  auto choose = [&](const float *logits, int64_t rowStride) {
    for (int64_t b = 0; b < batch; ++b) {
      if (stop.isDone(b))
        continue;
      int64_t token = sampler.next(
          llvm::ArrayRef(logits + b * rowStride, vocab), sequences[b]);
      sequences[b].push_back(token);
      if (b == 0)
        printer.push(token);
      stop.push(b, token);
    }
  };

  // The first call of an entry is cold (page faults in the weights, the
  // buffer pool's first allocations): timed apart from the warm ones, which
  // rewrite the same cache positions with the same values.
  checkRoom(0, prompt);
  int64_t chunks = 0;
  Clock::time_point start = Clock::now();
  // One pass over the prompt in chunks; `onChunk` sees the last one's
  // logits, whose last real row picks the first new token.
  int64_t lastRow = 0;
  auto prefillPrompt = [&] {
    chunks = 0;
    prefillInChunks(prefill, callPrefill, tokens, maxSeqLen,
                    [&](int64_t, int64_t, int64_t end) {
                      ++chunks;
                      lastRow = end - 1;
                    });
  };
  prefillPrompt();
  double coldPrefillMs = millisecondsSince(start);
  std::vector<double> prefillMs;
  for (unsigned r = 0; r < options.repeat; ++r) {
    start = Clock::now();
    prefillPrompt();
    prefillMs.push_back(millisecondsSince(start));
  }
  Clock::time_point generationStart = Clock::now();
  choose(prefill.getLogits() + lastRow * vocab, chunk * vocab);

  std::vector<double> stepMs;
  int64_t *decodeIds = decode.getIds();
  int64_t produced = 1;
  for (int64_t step = 1; step < count && !stop.allDone(); ++step) {
    int64_t position = prompt + step - 1;
    checkRoom(position, 1);
    // A finished sequence keeps feeding its last token; its logits are not
    // read.
    for (int64_t b = 0; b < batch; ++b)
      decodeIds[b] = sequences[b].back();
    decode.frame->getIndex(decode.positionArgument) = position;
    start = Clock::now();
    callDecode();
    stepMs.push_back(millisecondsSince(start));
    choose(decode.getLogits(), vocab);
    ++produced;
  }
  double generationMs = millisecondsSince(generationStart);
  printer.end(sequences, prompt);

  if (!options.tokensPath.empty()) {
    // Rectangular [B, S + produced]: sequences that stopped early are padded
    // with the first EOS id, as Hugging Face pads without a pad token.
    int64_t total = prompt + produced;
    int64_t pad = generation.eosTokenIds.empty() ? 0
                                                 : generation.eosTokenIds[0];
    std::vector<int64_t> out(batch * total, pad);
    for (int64_t b = 0; b < batch; ++b)
      std::copy(sequences[b].begin(), sequences[b].end(),
                out.begin() + b * total);
    if (llvm::Error err =
            writeNpy(options.tokensPath, DType::I64, {batch, total}, out.data()))
      fail(llvm::toString(std::move(err)));
  }
  llvm::outs() << llvm::format("compile: %.1f ms%s\n", compileMs,
                               describeCache(*jit).c_str())
               << llvm::format("prefill: %.3f ms (B=%lld, %lld prompt "
                               "tokens in %lld chunk(s) of %lld, KV cache of "
                               "%lld positions)\n",
                               median(prefillMs), (long long)batch,
                               (long long)prompt, (long long)chunks,
                               (long long)chunk, (long long)maxSeqLen)
               << llvm::format("prefill, first call: %.3f ms; warm: median "
                               "of %zu, %.0f prompt tokens/s\n",
                               coldPrefillMs, prefillMs.size(),
                               batch * prompt * 1000.0 / median(prefillMs));
  if (!stepMs.empty())
    llvm::outs() << llvm::format(
        "decode: %.3f ms/token median (%zu steps, min %.3f ms, max %.3f ms), "
        "%.1f tokens/s\n",
        median(stepMs), stepMs.size(), *llvm::min_element(stepMs),
        *llvm::max_element(stepMs), batch * 1000.0 / median(stepMs));
  llvm::outs() << llvm::format(
      "generated: %lld token(s) per sequence in %.1f ms after the prefill, "
      "%.1f tokens/s\n",
      (long long)produced, generationMs,
      generationMs > 0 ? batch * produced * 1000.0 / generationMs : 0.0);
  printResidentMemory();
}

/// The model's generation defaults (GenerationConfig.h) overridden by the
/// command line, checked against the vocabulary.
static GenerationConfig
getGenerationConfig(const HuggingFaceRunOptions &options,
                    const hf::ModelConfig &config) {
  GenerationConfig generation =
      check(readGenerationDefaults(options.configPath));
  if (!generation.ignoredFields.empty())
    warn(llvm::formatv("{0}: generation_config.json asks for {1}, which tfm "
                       "does not implement; ignored",
                       options.configPath,
                       llvm::join(generation.ignoredFields, ", ")));
  SamplingOptions &s = generation.sampling;
  if (options.temperature || options.topK || options.topP || options.seed)
    s.doSample = true;
  if (options.temperature && *options.temperature == 0)
    s.doSample = false; // the usual spelling of greedy
  else if (options.temperature)
    s.temperature = *options.temperature;
  if (options.doSample)
    s.doSample = *options.doSample;
  if (options.topK)
    s.topK = *options.topK;
  if (options.topP)
    s.topP = *options.topP;
  if (options.repetitionPenalty)
    s.repetitionPenalty = *options.repetitionPenalty;
  if (options.seed)
    s.seed = *options.seed;
  if (llvm::Error err = verifySamplingOptions(s))
    fail("decoding options: " + llvm::toString(std::move(err)));
  llvm::erase_if(generation.eosTokenIds, [&](int64_t id) {
    if (id < config.vocabSize)
      return false;
    warn(llvm::formatv("{0}: the model's eos_token_id {1} (config.json or "
                       "generation_config.json) is outside the vocabulary of "
                       "{2}; ignored",
                       options.configPath, id, config.vocabSize));
    return true;
  });
  // Stop strings are matched on text, which only a byte-level model has.
  bool byteLevel = config.vocabSize == 256;
  if (!options.stopStrings.empty() && !byteLevel)
    fail(llvm::formatv("--stop needs a byte-level model (vocabulary of 256) "
                       "to decode text; {0} has a vocabulary of {1}",
                       options.configPath, config.vocabSize));
  if (!generation.stopStrings.empty() && !byteLevel) {
    warn(llvm::formatv("{0}: stop_strings of generation_config.json need a "
                       "byte-level model to decode text; ignored",
                       options.configPath));
    generation.stopStrings.clear();
  }
  for (const std::string &stop : options.stopStrings) {
    if (stop.empty())
      fail("--stop: the stop string is empty");
    generation.stopStrings.push_back(stop);
  }
  return generation;
}

void runner::runHuggingFaceModel(MLIRContext &context,
                                 const HuggingFaceRunOptions &options) {
  hf::ModelConfig config = readConfig(options.configPath);
  TokenIds tokens = readIds(options, config);
  GenerationConfig generation =
      getGenerationConfig(options, config);
  int64_t count = options.generate;
  bool controls = options.doSample || options.temperature || options.topK ||
                  options.topP || options.repetitionPenalty || options.seed ||
                  !options.stopStrings.empty();
  if (!count && controls) {
    std::optional<int64_t> fromModel =
        generation.getMaxNewTokens(tokens.seqLen);
    if (!fromModel || *fromModel < 1)
      fail("decoding options need a number of new tokens: pass "
           "--max-new-tokens N (the model's generation_config.json sets "
           "neither max_new_tokens nor a max_length past the prompt)");
    count = *fromModel;
  }
  if (count < 0)
    fail(llvm::formatv("--generate {0}: must be positive", count));
  if (!count && !options.tokensPath.empty())
    fail("--output-tokens needs --generate N");
  if (!count && options.prefillChunk <= 0 && options.maxSeqLen)
    fail("--max-seq-len needs --generate N or --prefill-chunk C");
  if (count && !options.logitsPath.empty())
    fail("--output writes the logits of @forward; with --generate, write the "
         "tokens with --output-tokens");

  // The sizes, checked against the context here to name the options at fault.
  int64_t needed = tokens.seqLen + count;
  if (needed > config.maxPositions && count)
    fail(llvm::formatv("--generate {0}: the prompt's {1} tokens and {0} new "
                       "tokens need {2} positions, more than the model's "
                       "context of {3} ({4})",
                       count, tokens.seqLen, needed,
                       config.maxPositions, config.maxPositionsField));
  if (needed > config.maxPositions)
    fail(llvm::formatv("the input's {0} tokens are more than the model's "
                       "context of {1} ({2})",
                       tokens.seqLen, config.maxPositions,
                       config.maxPositionsField));
  // Chunked prefill: a cache sized by the model, not by this prompt, so
  // that the compiled code is the same for every prompt that fits.
  bool chunked =
      options.prefillChunk > 0 || (options.prefillChunk < 0 && count);
  int64_t maxSeqLen = needed;
  if (options.maxSeqLen)
    maxSeqLen = options.maxSeqLen;
  else if (chunked)
    maxSeqLen = std::max(
        needed, std::min(config.maxPositions,
                         HuggingFaceRunOptions::kDefaultMaxCache));
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
  // Chunked prefill by default when generating; a chunk longer than the
  // cache could never be placed in it.
  HuggingFaceRunOptions runOptions = options;
  if (runOptions.prefillChunk < 0)
    runOptions.prefillChunk =
        count ? HuggingFaceRunOptions::kDefaultPrefillChunk : 0;
  if (runOptions.prefillChunk)
    runOptions.prefillChunk = std::min(runOptions.prefillChunk, maxSeqLen);
  importOptions.seqLen =
      runOptions.prefillChunk ? runOptions.prefillChunk : tokens.seqLen;
  importOptions.kvCacheLength =
      count || runOptions.prefillChunk ? maxSeqLen : 0;
  OwningOpRef<ModuleOp> module;
  {
    TimingScope timing = getCompileTiming().nest("import config.json");
    module = check(hf::importModel(context, config, importOptions));
  }

  Target pipeline;
  pipeline.cache.enabled = options.cache;
  pipeline.cache.directory = options.cacheDir;
  if (options.gpuChip.empty()) {
    pipeline.cpu = parsePipelineOptions(options.pipelineOptions);
  } else {
    pipeline.gpu = parseGpuPipelineOptions(options.pipelineOptions);
    pipeline.gpu->chip = options.gpuChip;
  }
  if (count)
    runGeneration(*module, runOptions, pipeline, bindings, config, generation,
                  tokens, count, maxSeqLen);
  else if (runOptions.prefillChunk)
    runChunkedForward(*module, runOptions, pipeline, bindings, config, tokens,
                      maxSeqLen);
  else
    runForward(*module, options, pipeline, bindings, config, tokens);
}

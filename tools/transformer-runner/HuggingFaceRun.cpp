//===- HuggingFaceRun.cpp - transformer-runner's config.json mode ---------===//
#include "HuggingFaceRun.h"
#include "InputChecks.h"
#include "RunnerSupport.h"

#include "tfm/Engine/HuggingFaceModel.h"
#include "tfm/Runtime/GenerationConfig.h"
#include "tfm/Runtime/Npy.h"
#include "tfm/Runtime/Sampler.h"
#include "tfm/Tokenizer/Tokenizer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::runner;
using namespace mlir::tfm::runtime;

/// The model's tokenizer.json, when it has one and the run needs text: to
/// encode --prompt and print the generation, and to match stop strings.
/// Null otherwise: the prompt's UTF-8 bytes are the ids of a byte-level
/// model, and so is its text.
static std::unique_ptr<tokenizer::Tokenizer>
loadTokenizer(const HuggingFaceRunOptions &options) {
  if (!options.prompt && options.stopStrings.empty())
    return nullptr;
  std::optional<std::string> path =
      tokenizer::findTokenizer(options.configPath);
  if (!path)
    return nullptr;
  return check(tokenizer::Tokenizer::load(*path));
}

/// The ids of --prompt as the tokenizer encodes it (with the special tokens
/// its post-processor adds, as `tokenizers` encode(text) does).
static TokenIds encodePrompt(const tokenizer::Tokenizer &tokenizer,
                             llvm::StringRef prompt,
                             const hf::ModelConfig &config,
                             llvm::StringRef configPath) {
  std::vector<int64_t> ids = check(tokenizer.encode(prompt));
  if (ids.empty())
    fail("--prompt: the prompt encodes to no tokens");
  TokenIds tokens;
  tokens.batch = 1;
  tokens.seqLen = ids.size();
  tokens.ids = std::move(ids);
  check(checkTokenIds(tokens, config,
                      llvm::formatv("--prompt (encoded with the tokenizer.json "
                                    "next to {0})",
                                    configPath)
                          .str()));
  return tokens;
}

static TokenIds readIds(const HuggingFaceRunOptions &options,
                        const hf::ModelConfig &config,
                        const tokenizer::Tokenizer *tokenizer) {
  if (options.prompt) {
    if (!options.inputIdsPath.empty())
      fail("--prompt and --input-ids are mutually exclusive");
    if (!options.inputLengthsPath.empty())
      fail("--input-lengths gives the lengths of the sequences of "
           "--input-ids; a --prompt is one sequence");
    if (tokenizer)
      return encodePrompt(*tokenizer, *options.prompt, config,
                          options.configPath);
    return check(getPromptIds(*options.prompt, config, options.configPath));
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
  TokenIds tokens;
  tokens.batch = array.shape[0];
  tokens.seqLen = array.shape[1];
  tokens.ids.resize(array.getNumElements());
  convertElements(array.data, array.dtype, tokens.ids.data(), DType::I64,
                  tokens.ids.size());
  if (!options.inputLengthsPath.empty()) {
    std::string what = "--input-lengths " + options.inputLengthsPath;
    NpyArray lengths = check(readNpy(options.inputLengthsPath));
    if ((lengths.dtype != DType::I64 && lengths.dtype != DType::I32) ||
        lengths.shape.size() != 1)
      fail(llvm::formatv("{0}: expected int64 or int32 lengths [B], got {1}",
                         what, describe(lengths.dtype, lengths.shape)));
    std::vector<int64_t> values(lengths.getNumElements());
    convertElements(lengths.data, lengths.dtype, values.data(), DType::I64,
                    values.size());
    // Fills the padding with real ids first: only those are checked.
    check(setLengths(tokens, values, what));
  }
  check(checkTokenIds(tokens, config, ("--input-ids " + options.inputIdsPath)));
  return tokens;
}

static double median(std::vector<double> values) {
  llvm::sort(values);
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

static void runForward(HuggingFaceModel &model,
                       const HuggingFaceRunOptions &options,
                       const TokenIds &tokens) {
  int64_t chunk = std::max<int64_t>(options.prefillChunk, 0);
  ForwardResult result = check(
      model.forward(tokens, options.repeat, chunk, options.maxSeqLen));
  const char *data = reinterpret_cast<const char *>(result.data);
  reportResult(result.logits, data, options.printCount);
  if (!options.logitsPath.empty())
    writeResult(result.logits, data, options.logitsPath);
  const std::vector<double> &runMs = result.warmMs;
  if (chunk) {
    llvm::outs() << llvm::format(
        "compile: %.1f ms%s; prefill: %.3f ms (%lld chunk(s) of %lld, KV "
        "cache of %lld positions); first call: %.3f ms\n",
        result.compileMs, result.cacheStatus.c_str(),
        runMs.empty() ? result.firstMs : median(runMs),
        (long long)result.prefillChunks, (long long)result.prefillChunk,
        (long long)result.kvCacheLength, result.firstMs);
    printResidentMemory(model.getMemoryBudget());
    return;
  }
  llvm::outs() << llvm::format(
      "compile: %.1f ms; forward: %.3f ms (warm, "
      "median of %zu, min %.3f ms, max %.3f ms); "
      "first call: %.3f ms; %.0f tokens/s%s\n",
      result.compileMs, median(runMs), runMs.size(), *llvm::min_element(runMs),
      *llvm::max_element(runMs), result.firstMs,
      tokens.batch * tokens.seqLen * 1000.0 / median(runMs),
      result.cacheStatus.c_str());
  printResidentMemory(model.getMemoryBudget());
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
    bool valid =
        back < 2 || (bytes[n - back + 1] >= low && bytes[n - back + 1] <= high);
    return valid ? n - back : n;
  }
  return n;
}

namespace {
/// Prints the text or the ids of a B = 1 generation as they are produced,
/// flushing each token; larger batches are printed at the end. Text is the
/// tokenizer's decoding (special tokens skipped) when there is a
/// tokenizer.json, else the tokens are UTF-8 bytes.
class TokenPrinter {
public:
  TokenPrinter(bool text, int64_t batch, const tokenizer::Tokenizer *tokenizer)
      : text(text), batch(batch), tokenizer(tokenizer) {
    if (tokenizer)
      stream.emplace(*tokenizer, /*skipSpecialTokens=*/true);
  }

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
    if (stream) {
      llvm::outs() << stream->push(id);
      llvm::outs().flush();
      return;
    }
    pending.push_back(uint8_t(id));
    size_t complete = getCompleteUtf8Prefix(pending);
    std::vector<uint8_t> ready(pending.begin(), pending.begin() + complete);
    pending.erase(pending.begin(), pending.begin() + complete);
    llvm::outs() << decodeUtf8Lossy(ready);
    llvm::outs().flush();
  }
  void end(llvm::ArrayRef<std::vector<int64_t>> sequences,
           llvm::ArrayRef<int64_t> promptLengths) {
    if (batch == 1) {
      llvm::outs() << (stream ? stream->finish() : decodeUtf8Lossy(pending))
                   << "\n";
      return;
    }
    for (auto [b, sequence] : llvm::enumerate(sequences)) {
      if (text && tokenizer) {
        llvm::outs() << "text[" << b << "]: "
                     << tokenizer->decode(sequence, /*skipSpecialTokens=*/true)
                     << "\n";
        continue;
      }
      if (text) {
        std::vector<uint8_t> bytes(sequence.begin(), sequence.end());
        llvm::outs() << "text[" << b << "]: " << decodeUtf8Lossy(bytes) << "\n";
        continue;
      }
      llvm::outs() << "tokens[" << b << "]:";
      for (size_t t = promptLengths[b]; t < sequence.size(); ++t)
        llvm::outs() << " " << sequence[t];
      llvm::outs() << "\n";
    }
  }

private:
  bool text;
  int64_t batch;
  const tokenizer::Tokenizer *tokenizer;
  std::optional<tokenizer::StreamDecoder> stream;
  std::vector<uint8_t> pending;
};

} // namespace

static void runGeneration(HuggingFaceModel &model,
                          const HuggingFaceRunOptions &options,
                          const GenerationConfig &config,
                          const TokenIds &tokens, int64_t count,
                          int64_t maxSeqLen,
                          const tokenizer::Tokenizer *tokenizer) {
  GenerationOptions generation;
  generation.count = count;
  generation.maxSeqLen = maxSeqLen;
  if (options.prefillChunk >= 0)
    generation.prefillChunk = options.prefillChunk;
  generation.sampling = config.sampling;
  generation.eosTokenIds = config.eosTokenIds;
  generation.stopStrings = config.stopStrings;
  generation.tokenizer = tokenizer;
  generation.repeat = options.repeat;
  int64_t batch = tokens.batch, prompt = tokens.seqLen;
  TokenPrinter printer(options.prompt.has_value(), batch, tokenizer);
  printer.begin(llvm::ArrayRef(tokens.ids).take_front(prompt));
  GenerationResult result = check(model.generate(
      tokens, generation, [&](int64_t, llvm::ArrayRef<int64_t> step) {
        if (step[0] >= 0)
          printer.push(step[0]);
        return true;
      }));
  printer.end(result.sequences, result.promptLengths);

  if (!options.tokensPath.empty())
    if (llvm::Error err =
            writeNpy(options.tokensPath, DType::I64,
                     {batch, prompt + result.generated}, result.tokens.data()))
      fail(llvm::toString(std::move(err)));
  const std::vector<double> &stepMs = result.stepMs,
                            &prefillMs = result.prefillMs;
  llvm::outs() << llvm::format("compile: %.1f ms%s\n", result.compileMs,
                               result.cacheStatus.c_str())
               << llvm::format("prefill: %.3f ms (B=%lld, %lld prompt "
                               "tokens in %lld chunk(s) of %lld, KV cache of "
                               "%lld positions)\n",
                               median(prefillMs), (long long)batch,
                               (long long)prompt,
                               (long long)result.prefillChunks,
                               (long long)result.prefillChunk,
                               (long long)result.kvCacheLength)
               << llvm::format("prefill, first call: %.3f ms; warm: median "
                               "of %zu, %.0f prompt tokens/s\n",
                               result.firstPrefillMs, prefillMs.size(),
                               batch * prompt * 1000.0 / median(prefillMs));
  if (!stepMs.empty())
    llvm::outs() << llvm::format(
        "decode: %.3f ms/token median (%zu steps, min %.3f ms, max %.3f ms), "
        "%.1f tokens/s\n",
        median(stepMs), stepMs.size(), *llvm::min_element(stepMs),
        *llvm::max_element(stepMs), batch * 1000.0 / median(stepMs));
  double generationMs = result.generationMs;
  llvm::outs() << llvm::format(
      "generated: %lld token(s) per sequence in %.1f ms after the prefill, "
      "%.1f tokens/s\n",
      (long long)result.generated, generationMs,
      generationMs > 0 ? batch * result.generated * 1000.0 / generationMs
                       : 0.0);
  printResidentMemory(model.getMemoryBudget());
}

/// The model's generation defaults (GenerationConfig.h) overridden by the
/// command line, checked against the vocabulary.
static GenerationConfig
getGenerationConfig(const HuggingFaceRunOptions &options,
                    const hf::ModelConfig &config,
                    const tokenizer::Tokenizer *tokenizer) {
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
  if (options.ignoreEos) {
    generation.eosTokenIds.clear();
    generation.stopStrings.clear();
  }
  llvm::erase_if(generation.eosTokenIds, [&](int64_t id) {
    if (id < config.vocabSize)
      return false;
    warn(llvm::formatv("{0}: the model's eos_token_id {1} (config.json or "
                       "generation_config.json) is outside the vocabulary of "
                       "{2}; ignored",
                       options.configPath, id, config.vocabSize));
    return true;
  });
  // Stop strings are matched on text: the tokenizer's, or a byte-level
  // model's bytes.
  bool hasText = tokenizer || config.vocabSize == 256;
  if (!options.stopStrings.empty() && !hasText)
    fail(llvm::formatv("--stop needs a byte-level model (vocabulary of 256) "
                       "to decode text; {0} has a vocabulary of {1} and no "
                       "tokenizer.json",
                       options.configPath, config.vocabSize));
  if (!generation.stopStrings.empty() && !hasText) {
    warn(llvm::formatv("{0}: stop_strings of generation_config.json need a "
                       "byte-level model or, with --prompt or --stop, a "
                       "tokenizer.json to decode text; ignored",
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
  hf::ModelConfig config = check(readConfig(options.configPath, warn));
  std::unique_ptr<tokenizer::Tokenizer> tokenizer = loadTokenizer(options);
  TokenIds tokens = readIds(options, config, tokenizer.get());
  GenerationConfig generation =
      getGenerationConfig(options, config, tokenizer.get());
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
  bool chunked =
      options.prefillChunk > 0 || (options.prefillChunk < 0 && count);
  if (!count && !chunked && options.maxSeqLen)
    fail("--max-seq-len needs --generate N or --prefill-chunk C");
  if (count && !options.logitsPath.empty())
    fail("--output writes the logits of @forward; with --generate, write the "
         "tokens with --output-tokens");
  int64_t maxSeqLen = check(getKVCacheLength(config, tokens.seqLen, count,
                                             options.maxSeqLen, chunked));

  ModelOptions modelOptions;
  modelOptions.configPath = options.configPath;
  modelOptions.weightsPaths = options.weightsPaths;
  modelOptions.dtype = options.dtype;
  modelOptions.tokenizerPath = options.tokenizerPath;
  modelOptions.randomSeed = options.randomSeed;
  modelOptions.pipelineOptions = options.pipelineOptions;
  modelOptions.cache = options.cache;
  modelOptions.cacheDir = options.cacheDir;
  modelOptions.gpuChip = options.gpuChip;
  modelOptions.sharedLibs = options.sharedLibs;
  modelOptions.maxMemory = getMemoryLimit();
  modelOptions.tensorParallel = options.tensorParallel;
  std::unique_ptr<HuggingFaceModel> model = check(HuggingFaceModel::create(
      context, std::move(config), std::move(modelOptions), warn));
  if (count)
    runGeneration(*model, options, generation, tokens, count, maxSeqLen,
                  tokenizer.get());
  else
    runForward(*model, options, tokens);
}

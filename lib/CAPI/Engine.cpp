//===- Engine.cpp - C API of the tfm engine -------------------------------===//
//
// A thin layer over tfm/Engine/HuggingFaceModel.h: each model owns an
// MLIRContext and the engine's model; llvm::Error becomes a status and a
// message kept for the model and the thread.
//
//===----------------------------------------------------------------------===//
#include "tfm-c/Engine.h"

#include "tfm/Engine/HuggingFaceModel.h"
#include "tfm/Engine/Registration.h"
#include "tfm/Runtime/GenerationConfig.h"
#include "tfm/Runtime/Limits.h"
#include "tfm/Target/HuggingFace/ImportModel.h"
#include "tfm/Tokenizer/Tokenizer.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"

#include "llvm/ADT/StringExtras.h"

#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::engine;

namespace {
struct Model {
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<HuggingFaceModel> model;
  std::string lastError;
  std::string warnings;
  /// generation_config.json (and config.json's EOS), filtered as the runner
  /// filters them.
  runtime::GenerationConfig generation;
  /// The tokenizer.json next to config.json, if any (else prompts are
  /// byte-level, as in transformer-runner).
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;
};
} // namespace

static thread_local std::string threadError;

static Model *unwrap(TfmModel model) { return static_cast<Model *>(model.ptr); }

/// Records `error` for the thread (and `model`, when there is one).
static TfmStatus report(Model *model, llvm::Error error) {
  threadError = llvm::toString(std::move(error));
  if (model)
    model->lastError = threadError;
  return 1;
}

/// The error of a call on a null model (closed, or never loaded): an error
/// code, never a dereference.
static llvm::Error nullModelError() {
  return makeError("no model: the handle is null (the model was closed or "
                   "never loaded)");
}

static TfmStatus succeed(Model *model) {
  threadError.clear();
  if (model)
    model->lastError.clear();
  return 0;
}

static void initializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // The engine applies the pass manager's command-line options (at their
    // defaults here), which must exist.
    registerPassManagerCLOptions();
  });
}

void tfmModelOptionsInit(TfmModelOptions *options) {
  *options = TfmModelOptions{};
  options->device = "cpu";
}

void tfmGenerateOptionsInit(TfmGenerateOptions *options) {
  *options = TfmGenerateOptions{};
  options->maxNewTokens = 16;
  runtime::SamplingOptions defaults;
  options->doSample = defaults.doSample;
  options->temperature = defaults.temperature;
  options->topK = defaults.topK;
  options->topP = defaults.topP;
  options->repetitionPenalty = defaults.repetitionPenalty;
  options->seed = defaults.seed;
  options->stopAtModelEos = 1;
}

void tfmModelGenerateOptionsInit(TfmModel handle, int64_t promptLength,
                                 TfmGenerateOptions *options) {
  tfmGenerateOptionsInit(options);
  Model *model = unwrap(handle);
  if (!model) {
    report(nullptr, nullModelError());
    return;
  }
  const runtime::GenerationConfig &g = model->generation;
  options->doSample = g.sampling.doSample;
  options->temperature = g.sampling.temperature;
  options->topK = g.sampling.topK;
  options->topP = g.sampling.topP;
  options->repetitionPenalty = g.sampling.repetitionPenalty;
  options->seed = g.sampling.seed;
  if (std::optional<int64_t> count = g.getMaxNewTokens(promptLength);
      count && *count > 0)
    options->maxNewTokens = *count;
}

TfmStatus tfmModelLoad(const char *path, const TfmModelOptions *options,
                       TfmModel *result) {
  result->ptr = nullptr;
  TfmModelOptions defaults;
  tfmModelOptionsInit(&defaults);
  if (!options)
    options = &defaults;
  if (!path)
    return report(nullptr, makeError("no model path given"));
  llvm::StringRef device = options->device ? options->device : "cpu";
  if (device == "cuda")
    return report(nullptr,
                  makeError("device 'cuda': the C API runs models on the "
                            "cpu only (transformer-runner --device cuda "
                            "runs them on the GPU)"));
  if (device != "cpu")
    return report(
        nullptr, makeError(llvm::formatv("--device '{0}': expected cpu or cuda",
                                         device)));
  if (options->threads < 0)
    return report(nullptr, makeError("--threads: must be at least 1"));
  if (options->tensorParallel < 0)
    return report(nullptr,
                  makeError("--tensor-parallel: must be at least 1"));

  ModelOptions modelOptions;
  if (options->weightsPath)
    modelOptions.weightsPaths = {options->weightsPath};
  if (options->hasRandomSeed)
    modelOptions.randomSeed = options->randomSeed;
  // A directory as save_pretrained writes it, or a config.json.
  if (llvm::Error err = setModelPath(modelOptions, path))
    return report(nullptr, std::move(err));
  if (options->dtype) {
    auto dtype = parseComputeDType(options->dtype, "dtype");
    if (!dtype)
      return report(nullptr, dtype.takeError());
    modelOptions.dtype = *dtype;
  }
  if (options->pipelineOptions)
    modelOptions.pipelineOptions = options->pipelineOptions;
  modelOptions.threads = unsigned(options->threads);
  modelOptions.tensorParallel = std::max(options->tensorParallel, 1);
  modelOptions.cache = !options->noCache;
  if (options->cacheDir)
    modelOptions.cacheDir = options->cacheDir;

  initializeLLVM();
  auto model = std::make_unique<Model>();
  DialectRegistry registry;
  registerEngineDialects(registry);
  model->context = std::make_unique<MLIRContext>(registry);
  std::string *warnings = &model->warnings;
  auto loaded = HuggingFaceModel::load(*model->context, std::move(modelOptions),
                                       [warnings](const llvm::Twine &message) {
                                         *warnings += message.str() + "\n";
                                       });
  if (!loaded)
    return report(nullptr, loaded.takeError());
  model->model = std::move(*loaded);
  if (std::optional<std::string> tokenizerPath =
          tokenizer::findTokenizer(model->model->getOptions().configPath)) {
    auto tokenizer = tokenizer::Tokenizer::load(*tokenizerPath);
    if (!tokenizer)
      return report(nullptr, tokenizer.takeError());
    model->tokenizer = std::move(*tokenizer);
  }
  // The generation defaults, read and filtered as transformer-runner does.
  const hf::ModelConfig &config = model->model->getConfig();
  llvm::StringRef configPath = model->model->getOptions().configPath;
  auto generation = runtime::readGenerationDefaults(configPath);
  if (!generation)
    return report(nullptr, generation.takeError());
  model->generation = std::move(*generation);
  runtime::GenerationConfig &g = model->generation;
  if (!g.ignoredFields.empty())
    *warnings += llvm::formatv("{0}: generation_config.json asks for {1}, "
                               "which tfm does not implement; ignored\n",
                               configPath, llvm::join(g.ignoredFields, ", "))
                     .str();
  llvm::erase_if(g.eosTokenIds, [&](int64_t id) {
    if (id < config.vocabSize)
      return false;
    *warnings += llvm::formatv("{0}: the model's eos_token_id {1} (config.json "
                               "or generation_config.json) is outside the "
                               "vocabulary of {2}; ignored\n",
                               configPath, id, config.vocabSize)
                     .str();
    return true;
  });
  if (!g.stopStrings.empty() && config.vocabSize != 256 &&
      !model->tokenizer) {
    *warnings += llvm::formatv("{0}: stop_strings of generation_config.json "
                               "need a byte-level model to decode text; "
                               "ignored\n",
                               configPath)
                     .str();
    g.stopStrings.clear();
  }
  result->ptr = model.release();
  return succeed(nullptr);
}

void tfmModelDestroy(TfmModel model) { delete unwrap(model); }

const char *tfmModelGetLastError(TfmModel model) {
  return unwrap(model) ? unwrap(model)->lastError.c_str() : "";
}

const char *tfmGetLastError(void) { return threadError.c_str(); }

const char *tfmModelGetWarnings(TfmModel model) {
  return unwrap(model) ? unwrap(model)->warnings.c_str() : "";
}

int64_t tfmModelGetVocabSize(TfmModel model) {
  if (!unwrap(model)) {
    report(nullptr, nullModelError());
    return -1;
  }
  return unwrap(model)->model->getConfig().vocabSize;
}

int64_t tfmModelGetMaxPositions(TfmModel model) {
  if (!unwrap(model)) {
    report(nullptr, nullModelError());
    return -1;
  }
  return unwrap(model)->model->getConfig().maxPositions;
}

/// The ids of a prompt: encoded by the model's tokenizer.json (with the
/// special tokens of its post-processor), else its UTF-8 bytes.
static llvm::Expected<TokenIds> encodePrompt(Model &model,
                                             llvm::StringRef prompt) {
  if (!model.tokenizer)
    return getPromptIds(prompt, model.model->getConfig(),
                        model.model->getOptions().configPath);
  auto ids = model.tokenizer->encode(prompt);
  if (!ids)
    return ids.takeError();
  TokenIds tokens;
  tokens.batch = 1;
  tokens.seqLen = ids->size();
  tokens.ids = std::move(*ids);
  if (tokens.ids.empty())
    return makeError("prompt: the prompt encodes to no tokens");
  if (llvm::Error err =
          checkTokenIds(tokens, model.model->getConfig(), "prompt"))
    return std::move(err);
  return tokens;
}

TfmStatus tfmModelEncodePrompt(TfmModel handle, const char *prompt,
                               size_t length, int64_t *out, size_t capacity,
                               int64_t *count) {
  Model *model = unwrap(handle);
  if (!model)
    return report(nullptr, nullModelError());
  if (!prompt && length)
    return report(model, makeError("prompt: null text of nonzero length"));
  llvm::Expected<TokenIds> tokens = encodePrompt(
      *model, prompt ? llvm::StringRef(prompt, length) : llvm::StringRef());
  if (!tokens)
    return report(model, tokens.takeError());
  *count = tokens->ids.size();
  if (capacity < tokens->ids.size())
    return report(model, makeError(llvm::formatv(
                             "prompt: the output holds {0} ids, {1} are "
                             "needed",
                             capacity, tokens->ids.size())));
  std::copy(tokens->ids.begin(), tokens->ids.end(), out);
  return succeed(model);
}

/// The ids as the engine takes them, checked like --input-ids.
static llvm::Expected<TokenIds> makeTokens(Model &model, const int64_t *ids,
                                           int64_t batch, int64_t seqLen,
                                           const int64_t *lengths) {
  if (!ids || batch < 1 || seqLen < 1)
    return makeError(llvm::formatv(
        "ids: expected token ids [B, S] with B, S >= 1, got [{0}, {1}]", batch,
        seqLen));
  // The input must fit the model's context (as the runner's), checked
  // before B x S is computed from the caller's numbers.
  if (auto length = getKVCacheLength(model.model->getConfig(), seqLen, 0, 0);
      !length)
    return length.takeError();
  std::optional<uint64_t> count = runtime::checkedMul(uint64_t(batch), uint64_t(seqLen));
  if (!count || *count > uint64_t(std::numeric_limits<int32_t>::max()))
    return makeError(llvm::formatv("ids: a batch of {0} sequences of {1} "
                                   "tokens is more ids than tfm takes in one "
                                   "call (2^31 - 1)",
                                   batch, seqLen));
  TokenIds tokens;
  tokens.batch = batch;
  tokens.seqLen = seqLen;
  tokens.ids.assign(ids, ids + batch * seqLen);
  // Fills the padding of a ragged batch first: only real ids are checked.
  if (lengths)
    if (llvm::Error err = setLengths(
            tokens, llvm::ArrayRef<int64_t>(lengths, batch), "lengths"))
      return std::move(err);
  if (llvm::Error err = checkTokenIds(tokens, model.model->getConfig(), "ids"))
    return std::move(err);
  return tokens;
}

TfmStatus tfmModelLogits(TfmModel handle, const int64_t *ids, int64_t batch,
                         int64_t seqLen, int allPositions, float *out,
                         size_t capacity) {
  return tfmModelLogitsRagged(handle, ids, batch, seqLen, nullptr,
                              allPositions, out, capacity);
}

TfmStatus tfmModelLogitsRagged(TfmModel handle, const int64_t *ids,
                               int64_t batch, int64_t seqLen,
                               const int64_t *lengths, int allPositions,
                               float *out, size_t capacity) {
  Model *model = unwrap(handle);
  if (!model)
    return report(nullptr, nullModelError());
  llvm::Expected<TokenIds> tokens =
      makeTokens(*model, ids, batch, seqLen, lengths);
  if (!tokens)
    return report(model, tokens.takeError());
  int64_t vocab = model->model->getConfig().vocabSize;
  // B x S fits in 2^31 (makeTokens), the vocabulary in the config's limits.
  std::optional<uint64_t> needed = runtime::checkedMul(
      uint64_t(batch) * uint64_t(allPositions ? seqLen : 1), uint64_t(vocab));
  if (!needed || capacity < *needed)
    return report(model, makeError(llvm::formatv(
                             "logits: the output holds {0} floats, {1} are "
                             "needed",
                             capacity,
                             needed ? std::to_string(*needed) : "more")));
  llvm::Expected<ForwardResult> result = model->model->forward(*tokens);
  if (!result)
    return report(model, result.takeError());
  if (allPositions) {
    std::memcpy(out, result->data, *needed * sizeof(float));
  } else {
    for (int64_t b = 0; b < batch; ++b)
      std::memcpy(out + b * vocab,
                  result->data +
                      (b * seqLen + tokens->getLength(b) - 1) * vocab,
                  vocab * sizeof(float));
  }
  return succeed(model);
}

TfmStatus tfmModelGenerate(TfmModel handle, const int64_t *ids, int64_t batch,
                           int64_t seqLen, const TfmGenerateOptions *options,
                           TfmTokenCallback onStep, void *userData,
                           int64_t *out, size_t capacity, int64_t *generated) {
  return tfmModelGenerateRagged(handle, ids, batch, seqLen, nullptr, options,
                                onStep, userData, out, capacity, generated,
                                nullptr);
}

TfmStatus tfmModelGenerateRagged(TfmModel handle, const int64_t *ids,
                                 int64_t batch, int64_t seqLen,
                                 const int64_t *lengths,
                                 const TfmGenerateOptions *options,
                                 TfmTokenCallback onStep, void *userData,
                                 int64_t *out, size_t capacity,
                                 int64_t *generated,
                                 int64_t *sequenceLengths) {
  Model *model = unwrap(handle);
  if (!model)
    return report(nullptr, nullModelError());
  TfmGenerateOptions defaults;
  tfmGenerateOptionsInit(&defaults);
  if (!options)
    options = &defaults;
  llvm::Expected<TokenIds> tokens =
      makeTokens(*model, ids, batch, seqLen, lengths);
  if (!tokens)
    return report(model, tokens.takeError());
  if (options->maxNewTokens <= 0)
    return report(model, makeError(llvm::formatv("--generate {0}: must be "
                                                 "positive",
                                                 options->maxNewTokens)));
  // The prompt and the new tokens must fit the context before their sum and
  // the output's size are computed (an API caller's count may be near 2^63).
  if (auto length = getKVCacheLength(model->model->getConfig(), seqLen,
                                     options->maxNewTokens, 0);
      !length)
    return report(model, length.takeError());
  uint64_t needed = uint64_t(batch) * uint64_t(seqLen + options->maxNewTokens);
  if (capacity < needed)
    return report(model, makeError(llvm::formatv("tokens: the output holds {0} "
                                                 "ids, {1} are needed",
                                                 capacity, needed)));
  GenerationOptions generation;
  generation.count = options->maxNewTokens;
  generation.maxSeqLen = options->maxSeqLen;
  generation.sampling.doSample = options->doSample != 0;
  generation.sampling.temperature = options->temperature;
  generation.sampling.topK = options->topK;
  generation.sampling.topP = options->topP;
  generation.sampling.repetitionPenalty = options->repetitionPenalty;
  generation.sampling.seed = options->seed;
  if (llvm::Error err = verifySamplingOptions(generation.sampling))
    return report(model, makeError("decoding options: " +
                                   llvm::toString(std::move(err))));
  if (options->stopAtModelEos) {
    generation.eosTokenIds = model->generation.eosTokenIds;
    generation.stopStrings = model->generation.stopStrings;
  }
  // Stop strings are matched on the tokenizer's text or a byte-level
  // model's bytes.
  generation.tokenizer = model->tokenizer.get();
  bool hasText = model->tokenizer || model->model->getConfig().vocabSize == 256;
  if (options->numStopStrings > 0 && !hasText)
    return report(model, makeError(llvm::formatv(
                             "--stop needs a byte-level model (vocabulary of "
                             "256) to decode text; {0} has a vocabulary of {1} "
                             "and no tokenizer.json",
                             model->model->getOptions().configPath,
                             model->model->getConfig().vocabSize)));
  if (options->numStopStrings > 0 && !options->stopStrings)
    return report(model, makeError("--stop: no stop strings given"));
  for (int64_t i = 0; i < options->numStopStrings; ++i) {
    const char *text = options->stopStrings[i];
    llvm::StringRef stop =
        !text ? llvm::StringRef()
        : options->stopStringLengths
            ? llvm::StringRef(text, options->stopStringLengths[i])
            : llvm::StringRef(text);
    if (stop.empty())
      return report(model, makeError("--stop: the stop string is empty"));
    generation.stopStrings.push_back(stop.str());
  }
  TokenCallback callback;
  if (onStep)
    callback = [&](int64_t step, llvm::ArrayRef<int64_t> stepTokens) {
      return onStep(userData, step, stepTokens.data(), stepTokens.size()) == 0;
    };
  llvm::Expected<GenerationResult> result =
      model->model->generate(*tokens, generation, callback);
  if (!result)
    return report(model, result.takeError());
  std::copy(result->tokens.begin(), result->tokens.end(), out);
  if (generated)
    *generated = result->generated;
  if (sequenceLengths)
    for (int64_t b = 0; b < batch; ++b)
      sequenceLengths[b] = result->sequences[b].size();
  return succeed(model);
}

char *tfmModelGetLedgerJson(TfmModel handle, int64_t batch, int64_t seqLen) {
  Model *model = unwrap(handle);
  if (!model) {
    report(nullptr, nullModelError());
    return nullptr;
  }
  if (batch < 1 || seqLen < 1) {
    report(model, makeError(llvm::formatv("ledger: expected a shape [B, S] "
                                          "with B, S >= 1, got [{0}, {1}]",
                                          batch, seqLen)));
    return nullptr;
  }
  llvm::Expected<std::string> json = model->model->getLedgerJson(batch, seqLen);
  if (!json) {
    report(model, json.takeError());
    return nullptr;
  }
  succeed(model);
  return strdup(json->c_str());
}

int tfmModelHasTokenizer(TfmModel handle) {
  return unwrap(handle) && unwrap(handle)->tokenizer != nullptr;
}

char *tfmModelDecode(TfmModel handle, const int64_t *ids, int64_t count,
                     int skipSpecialTokens, size_t *length) {
  Model *model = unwrap(handle);
  if (!model) {
    report(nullptr, nullModelError());
    return nullptr;
  }
  if (count < 0 || (count && !ids)) {
    report(model, makeError("decode: expected ids"));
    return nullptr;
  }
  llvm::ArrayRef<int64_t> tokens(ids, count);
  std::string text;
  if (model->tokenizer) {
    text = model->tokenizer->decode(tokens, skipSpecialTokens != 0);
  } else if (model->model->getConfig().vocabSize == 256) {
    text = decodeUtf8Lossy(std::vector<uint8_t>(tokens.begin(), tokens.end()));
  } else {
    report(model, makeError(llvm::formatv(
                      "decode: {0} has no tokenizer.json and is not a "
                      "byte-level model (vocabulary of 256)",
                      model->model->getOptions().configPath)));
    return nullptr;
  }
  succeed(model);
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  if (!copy) {
    report(model, makeError("decode: out of memory"));
    return nullptr;
  }
  std::memcpy(copy, text.data(), text.size());
  copy[text.size()] = '\0';
  if (length)
    *length = text.size();
  return copy;
}

void tfmStringDestroy(char *text) { std::free(text); }

void tfmImportOptionsInit(TfmImportOptions *options) {
  *options = TfmImportOptions{};
  options->batch = 1;
  options->block = -1;
}

char *tfmImportHFConfig(const char *config, size_t length,
                        const TfmImportOptions *options) {
  TfmImportOptions defaults;
  tfmImportOptionsInit(&defaults);
  if (!options)
    options = &defaults;
  if (!config && length) {
    report(nullptr, makeError("import: expected the config's text"));
    return nullptr;
  }
  llvm::Expected<hf::ModelConfig> parsed =
      hf::parseModelConfig(llvm::StringRef(config ? config : "", length));
  if (!parsed) {
    report(nullptr, parsed.takeError());
    return nullptr;
  }
  hf::ImportOptions importOptions;
  importOptions.batch = options->batch;
  importOptions.seqLen = options->seqLen;
  importOptions.kvCacheLength = options->kvCache;
  if (options->block >= 0)
    importOptions.block = options->block;
  else if (options->block != -1) {
    report(nullptr, makeError(llvm::formatv(
                        "--block: layer {0} is out of range", options->block)));
    return nullptr;
  }
  if (options->dtype) {
    auto dtype = parseComputeDType(options->dtype, "dtype");
    if (!dtype) {
      report(nullptr, dtype.takeError());
      return nullptr;
    }
    importOptions.computeType = *dtype;
  }
  DialectRegistry registry;
  registerEngineDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto module = hf::importModel(context, *parsed, importOptions);
  if (!module) {
    report(nullptr, module.takeError());
    return nullptr;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  // As transformer-translate prints it: the name locations the ledger labels
  // rows with, and values named after them.
  (*module)->print(os, OpPrintingFlags()
                           .enableDebugInfo(/*enable=*/true,
                                            /*prettyForm=*/false)
                           .useLocalScope()
                           .printNameLocAsPrefix());
  os << "\n";
  succeed(nullptr);
  return strdup(text.c_str());
}

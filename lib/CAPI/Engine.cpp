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

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::engine;

namespace {
struct Model {
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<HuggingFaceModel> model;
  std::string lastError;
  std::string warnings;
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
    return report(nullptr,
                  makeError(llvm::formatv(
                      "--device '{0}': expected cpu or cuda", device)));
  if (options->threads < 0)
    return report(nullptr, makeError("--threads: must be at least 1"));

  ModelOptions modelOptions;
  modelOptions.configPath = path;
  // A directory holds config.json and, usually, model.safetensors.
  if (llvm::sys::fs::is_directory(path)) {
    llvm::SmallString<256> config(path), weights(path);
    llvm::sys::path::append(config, "config.json");
    llvm::sys::path::append(weights, "model.safetensors");
    modelOptions.configPath = std::string(config);
    if (!options->weightsPath && !options->hasRandomSeed &&
        llvm::sys::fs::exists(weights))
      modelOptions.weightsPath = std::string(weights);
  }
  if (options->weightsPath)
    modelOptions.weightsPath = options->weightsPath;
  if (options->hasRandomSeed)
    modelOptions.randomSeed = options->randomSeed;
  if (options->pipelineOptions)
    modelOptions.pipelineOptions = options->pipelineOptions;
  modelOptions.threads = unsigned(options->threads);

  initializeLLVM();
  auto model = std::make_unique<Model>();
  DialectRegistry registry;
  registerEngineDialects(registry);
  model->context = std::make_unique<MLIRContext>(registry);
  std::string *warnings = &model->warnings;
  auto loaded = HuggingFaceModel::load(
      *model->context, std::move(modelOptions),
      [warnings](const llvm::Twine &message) {
        *warnings += message.str() + "\n";
      });
  if (!loaded)
    return report(nullptr, loaded.takeError());
  model->model = std::move(*loaded);
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
  return unwrap(model)->model->getConfig().vocabSize;
}

int64_t tfmModelGetMaxPositions(TfmModel model) {
  return unwrap(model)->model->getConfig().maxPositions;
}

TfmStatus tfmModelEncodePrompt(TfmModel handle, const char *prompt,
                               int64_t *out, size_t capacity, int64_t *count) {
  Model *model = unwrap(handle);
  llvm::Expected<TokenIds> tokens =
      getPromptIds(prompt ? prompt : "", model->model->getConfig(),
                   model->model->getOptions().configPath);
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
                                           int64_t batch, int64_t seqLen) {
  if (!ids || batch < 1 || seqLen < 1)
    return makeError(llvm::formatv(
        "ids: expected token ids [B, S] with B, S >= 1, got [{0}, {1}]",
        batch, seqLen));
  TokenIds tokens;
  tokens.batch = batch;
  tokens.seqLen = seqLen;
  tokens.ids.assign(ids, ids + batch * seqLen);
  if (llvm::Error err =
          checkTokenIds(tokens, model.model->getConfig(), "ids"))
    return std::move(err);
  // As the runner: the input must fit the model's context.
  if (auto length = getKVCacheLength(model.model->getConfig(), seqLen, 0, 0);
      !length)
    return length.takeError();
  return tokens;
}

TfmStatus tfmModelLogits(TfmModel handle, const int64_t *ids, int64_t batch,
                         int64_t seqLen, int allPositions, float *out,
                         size_t capacity) {
  Model *model = unwrap(handle);
  llvm::Expected<TokenIds> tokens = makeTokens(*model, ids, batch, seqLen);
  if (!tokens)
    return report(model, tokens.takeError());
  int64_t vocab = model->model->getConfig().vocabSize;
  size_t needed = size_t(batch) * (allPositions ? seqLen : 1) * vocab;
  if (capacity < needed)
    return report(model,
                  makeError(llvm::formatv("logits: the output holds {0} "
                                          "floats, {1} are needed",
                                          capacity, needed)));
  llvm::Expected<ForwardResult> result = model->model->forward(*tokens);
  if (!result)
    return report(model, result.takeError());
  if (allPositions) {
    std::memcpy(out, result->data, needed * sizeof(float));
  } else {
    for (int64_t b = 0; b < batch; ++b)
      std::memcpy(out + b * vocab,
                  result->data + (b * seqLen + seqLen - 1) * vocab,
                  vocab * sizeof(float));
  }
  return succeed(model);
}

TfmStatus tfmModelGenerate(TfmModel handle, const int64_t *ids, int64_t batch,
                           int64_t seqLen, const TfmGenerateOptions *options,
                           TfmTokenCallback onStep, void *userData,
                           int64_t *out, size_t capacity, int64_t *generated) {
  Model *model = unwrap(handle);
  TfmGenerateOptions defaults;
  tfmGenerateOptionsInit(&defaults);
  if (!options)
    options = &defaults;
  llvm::Expected<TokenIds> tokens = makeTokens(*model, ids, batch, seqLen);
  if (!tokens)
    return report(model, tokens.takeError());
  if (options->maxNewTokens <= 0)
    return report(model, makeError(llvm::formatv("--generate {0}: must be "
                                                 "positive",
                                                 options->maxNewTokens)));
  size_t needed = size_t(batch) * (seqLen + options->maxNewTokens);
  if (capacity < needed)
    return report(model,
                  makeError(llvm::formatv("tokens: the output holds {0} "
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
  TokenCallback callback;
  if (onStep)
    callback = [&](int64_t step, llvm::ArrayRef<int64_t> stepTokens) {
      return onStep(userData, step, stepTokens.data(), stepTokens.size()) ==
             0;
    };
  llvm::Expected<GenerationResult> result =
      model->model->generate(*tokens, generation, callback);
  if (!result)
    return report(model, result.takeError());
  std::copy(result->tokens.begin(), result->tokens.end(), out);
  if (generated)
    *generated = result->generated;
  return succeed(model);
}

char *tfmModelGetLedgerJson(TfmModel handle, int64_t batch, int64_t seqLen) {
  Model *model = unwrap(handle);
  if (batch < 1 || seqLen < 1) {
    report(model, makeError(llvm::formatv("ledger: expected a shape [B, S] "
                                          "with B, S >= 1, got [{0}, {1}]",
                                          batch, seqLen)));
    return nullptr;
  }
  llvm::Expected<std::string> json =
      model->model->getLedgerJson(batch, seqLen);
  if (!json) {
    report(model, json.takeError());
    return nullptr;
  }
  succeed(model);
  return strdup(json->c_str());
}

void tfmStringDestroy(char *text) { std::free(text); }

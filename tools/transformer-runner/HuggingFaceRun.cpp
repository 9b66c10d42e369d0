//===- HuggingFaceRun.cpp - transformer-runner's config.json mode ---------===//
#include "HuggingFaceRun.h"
#include "RunnerSupport.h"

#include "tfm/Engine/HuggingFaceModel.h"
#include "tfm/Runtime/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::runner;
using namespace mlir::tfm::runtime;

static TokenIds readIds(const HuggingFaceRunOptions &options,
                        const hf::ModelConfig &config) {
  if (options.prompt) {
    if (!options.inputIdsPath.empty())
      fail("--prompt and --input-ids are mutually exclusive");
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
  check(checkTokenIds(tokens, config,
                      ("--input-ids " + options.inputIdsPath)));
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
  ForwardResult result = check(model.forward(tokens));
  const char *data = reinterpret_cast<const char *>(result.data);
  reportResult(result.logits, data, options.printCount);
  if (!options.logitsPath.empty())
    writeResult(result.logits, data, options.logitsPath);
  llvm::outs() << llvm::format("compile: %.1f ms; forward: %.3f ms\n",
                               result.compileMs, result.runMs);
}

static void runGeneration(HuggingFaceModel &model,
                          const HuggingFaceRunOptions &options,
                          const TokenIds &tokens, int64_t maxSeqLen) {
  GenerationOptions generation;
  generation.count = options.generate;
  generation.maxSeqLen = maxSeqLen;
  GenerationResult result = check(model.generate(tokens, generation));
  int64_t batch = result.batch, prompt = result.promptLength,
          total = prompt + result.generated;
  const std::vector<int64_t> &out = result.tokens;

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
  const std::vector<double> &stepMs = result.stepMs;
  llvm::outs() << llvm::format("compile: %.1f ms\n", result.compileMs)
               << llvm::format("prefill: %.3f ms (B=%lld, %lld prompt "
                               "tokens, KV cache of %lld positions)\n",
                               result.prefillMs, (long long)batch,
                               (long long)prompt,
                               (long long)result.kvCacheLength);
  if (!stepMs.empty())
    llvm::outs() << llvm::format(
        "decode: %.3f ms/token median (%zu steps, min %.3f ms, max %.3f ms)\n",
        median(stepMs), stepMs.size(), *llvm::min_element(stepMs),
        *llvm::max_element(stepMs));
  printResidentMemory();
}

void runner::runHuggingFaceModel(MLIRContext &context,
                                 const HuggingFaceRunOptions &options) {
  hf::ModelConfig config = check(readConfig(options.configPath, warn));
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
  int64_t maxSeqLen = check(getKVCacheLength(config, tokens.seqLen,
                                             options.generate,
                                             options.maxSeqLen));

  ModelOptions modelOptions;
  modelOptions.configPath = options.configPath;
  modelOptions.weightsPath = options.weightsPath;
  modelOptions.randomSeed = options.randomSeed;
  modelOptions.pipelineOptions = options.pipelineOptions;
  modelOptions.gpuChip = options.gpuChip;
  modelOptions.sharedLibs = options.sharedLibs;
  std::unique_ptr<HuggingFaceModel> model = check(HuggingFaceModel::create(
      context, std::move(config), std::move(modelOptions), warn));
  if (options.generate)
    runGeneration(*model, options, tokens, maxSeqLen);
  else
    runForward(*model, options, tokens);
}

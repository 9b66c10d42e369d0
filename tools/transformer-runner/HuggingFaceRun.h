//===- HuggingFaceRun.h - transformer-runner's config.json mode -*- C++ -*-===//
//
// Runs a Hugging Face model through the engine (tfm/Engine/HuggingFaceModel.h)
// from the command line: ids from an .npy file or a prompt, the logits or
// the generated tokens (greedy unless the options or the model's
// generation_config.json say to sample, stopping at EOS or a stop string)
// printed as they are produced and written, timings reported.
// With chunked prefill the compiled code depends on the chunk and cache
// sizes, not on the prompt.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TRANSFORMER_RUNNER_HUGGINGFACERUN_H
#define TFM_TOOLS_TRANSFORMER_RUNNER_HUGGINGFACERUN_H

#include "tfm/Runtime/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
namespace tfm::runner {

struct HuggingFaceRunOptions {
  std::string configPath;
  /// The checkpoint's files (.safetensors files, shard indexes), or else
  /// random weights from `randomSeed`.
  std::vector<std::string> weightsPaths;
  std::optional<uint64_t> randomSeed;
  /// The compute type (engine::ModelOptions::dtype).
  runtime::DType dtype = runtime::DType::F32;
  /// The model directory's tokenizer.json; empty when it has none.
  std::string tokenizerPath;
  /// Token ids [B, S] (.npy, int64 or int32), or a prompt (B = 1): encoded
  /// by the tokenizer.json next to the config (tfm/Tokenizer/Tokenizer.h,
  /// findTokenizer) when there is one, else its UTF-8 bytes are the ids of a
  /// byte-level model.
  std::string inputIdsPath;
  std::optional<std::string> prompt;
  /// A ragged batch: each sequence's length [B] (.npy, int64 or int32), the
  /// ids right-padded.
  std::string inputLengthsPath;
  /// Without generation: where to write @forward's logits [B, S, V] (f32).
  std::string logitsPath;
  /// New tokens to generate at most (0: run @forward instead, unless a
  /// decoding control below asks for generation; the model's
  /// generation_config.json then gives the count).
  int64_t generate = 0;
  /// Decoding controls given on the command line; each overrides the
  /// model's generation_config.json (GenerationConfig.h). Any of
  /// temperature, topK, topP and seed turns sampling on unless doSample says
  /// otherwise; a temperature of 0 means greedy.
  std::optional<bool> doSample;
  std::optional<float> temperature, topP, repetitionPenalty;
  std::optional<int64_t> topK;
  std::optional<uint64_t> seed;
  /// Text that ends a sequence (byte-level models), with those of the model.
  std::vector<std::string> stopStrings;
  /// --ignore-eos: neither the model's EOS ids nor its generation_config.json
  /// stop_strings end a sequence (stopStrings above still do).
  bool ignoreEos = false;
  /// Timed warm calls of @forward (or @prefill) after the first.
  unsigned repeat = 1;
  /// Where to write the prompt and the new tokens, [B, S + N] int64.
  std::string tokensPath;
  /// KV cache length; 0: engine::getKVCacheLength's default.
  int64_t maxSeqLen = 0;
  /// > 0: the prompt runs through @prefill in chunks of this many tokens
  /// (also without generation: the logits then come from the chunks); 0:
  /// @prefill takes the whole prompt (generation) or @forward does; < 0:
  /// engine::getPrefillChunk's choice when generating, else 0.
  int64_t prefillChunk = -1;
  std::string pipelineOptions;
  /// The compiled-code cache (CPU): off, or in `cacheDir` (empty: the
  /// default directory, tfm/Runtime/CodeCache.h).
  bool cache = false;
  std::string cacheDir;
  /// Non-empty: run on the CUDA GPU (already initialised), compiling for
  /// this chip with the GPU pipeline; `pipelineOptions` are its options.
  std::string gpuChip;
  std::vector<std::string> sharedLibs;
  unsigned printCount = 4;
  /// engine::ModelOptions::tensorParallel (this process one of the ranks).
  int64_t tensorParallel = 1;
};

/// Runs the model; every error ends the process with one error line.
void runHuggingFaceModel(MLIRContext &context,
                         const HuggingFaceRunOptions &options);

} // namespace tfm::runner
} // namespace mlir

#endif // TFM_TOOLS_TRANSFORMER_RUNNER_HUGGINGFACERUN_H

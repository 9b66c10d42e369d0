//===- HuggingFaceModel.h - running Hugging Face models ----------*- C++ -*-===//
//
// transformer-runner's config.json mode: import a Hugging Face model
// in-process (tfm/Target/HuggingFace/ImportModel.h), bind its checkpoint,
// and either compute the prompt's logits or generate with @prefill and
// @decode over a preallocated KV cache, choosing tokens with
// tfm/Runtime/Sampler.h (greedy unless the options or the model's
// generation_config.json say to sample), stopping at EOS or a stop string,
// and printing each token as it is produced. With chunked prefill the
// compiled code depends on the chunk and cache sizes, not on the prompt.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TRANSFORMER_RUNNER_HUGGINGFACEMODEL_H
#define TFM_TOOLS_TRANSFORMER_RUNNER_HUGGINGFACEMODEL_H

#include "tfm/Runtime/Sampler.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
namespace tfm::runner {

struct HuggingFaceRunOptions {
  std::string configPath;
  /// A .safetensors checkpoint, or else random weights from `randomSeed`.
  std::string weightsPath;
  std::optional<uint64_t> randomSeed;
  /// Token ids [B, S] (.npy, int64 or int32), or a prompt whose UTF-8 bytes
  /// are the ids of a byte-level model (B = 1).
  std::string inputIdsPath;
  std::optional<std::string> prompt;
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
  /// Timed warm calls of @forward (or @prefill) after the first.
  unsigned repeat = 1;
  /// Where to write the prompt and the new tokens, [B, S + N] int64.
  std::string tokensPath;
  /// KV cache length; 0 picks S + N, or with chunked prefill the model's
  /// context up to kDefaultMaxCache (so that the compiled code does not
  /// depend on the prompt).
  int64_t maxSeqLen = 0;
  /// > 0: the prompt runs through @prefill in chunks of this many tokens
  /// (also without generation: the logits then come from the chunks); 0:
  /// @prefill takes the whole prompt (generation) or @forward does; < 0:
  /// kDefaultPrefillChunk when generating, else 0.
  int64_t prefillChunk = -1;
  static constexpr int64_t kDefaultPrefillChunk = 64;
  static constexpr int64_t kDefaultMaxCache = 4096;
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
};

/// Runs the model; every error ends the process with one error line.
void runHuggingFaceModel(MLIRContext &context,
                         const HuggingFaceRunOptions &options);

/// `bytes` as UTF-8 text, each invalid sequence (maximal subpart) replaced by
/// U+FFFD as Python's bytes.decode("utf-8", errors="replace") does.
std::string decodeUtf8Lossy(const std::vector<uint8_t> &bytes);

} // namespace tfm::runner
} // namespace mlir

#endif // TFM_TOOLS_TRANSFORMER_RUNNER_HUGGINGFACEMODEL_H

//===- HuggingFaceModel.h - running Hugging Face models ----------*- C++
//-*-===//
//
// A Hugging Face model (config.json, weights from a .safetensors checkpoint
// of one file or shards, in f32, bf16 or f16, or random ones) imported
// in-process (tfm/Target/HuggingFace/ImportModel.h)
// at the sizes the input calls for, its checkpoint bound, and either @forward
// run (logits) or tokens generated with @prefill and @decode over a
// preallocated KV cache, choosing tokens with tfm/Runtime/Sampler.h and
// stopping each sequence at an EOS token or a stop string.
//
// Used by transformer-runner's config.json mode and by the C API
// (tfm-c/Engine.h). Errors are returned with the text the runner prints
// after "error: "; warnings go to the model's WarningHandler. Compiled
// entries are kept per input shape, so that calling again with the same
// shape does not compile again.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_ENGINE_HUGGINGFACEMODEL_H
#define TFM_ENGINE_HUGGINGFACEMODEL_H

#include "tfm/Engine/Binding.h"
#include "tfm/Runtime/Sampler.h"
#include "tfm/Target/HuggingFace/ModelConfig.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace mlir {
class MLIRContext;
namespace tfm::tokenizer {
class Tokenizer;
} // namespace tfm::tokenizer
namespace tfm::engine {

/// Token ids [batch, seqLen], row-major. A ragged batch (sequences of
/// different lengths) is right-padded to seqLen, with `lengths` holding each
/// sequence's own length; empty `lengths`: every sequence is seqLen long.
struct TokenIds {
  int64_t batch = 0, seqLen = 0;
  std::vector<int64_t> ids;
  std::vector<int64_t> lengths;

  /// The length of sequence `b`, without its padding.
  int64_t getLength(int64_t b) const {
    return lengths.empty() ? seqLen : lengths[b];
  }
  /// True if the sequences differ in length (some rows are padded).
  bool isRagged() const {
    for (int64_t length : lengths)
      if (length != seqLen)
        return true;
    return false;
  }
};

/// What a model is loaded from and compiled with.
struct ModelOptions {
  std::string configPath;
  /// The checkpoint: .safetensors files and shard indexes (*.json), each
  /// tensor in one of them (runtime::Checkpoint); none: random
  /// weights from `randomSeed`.
  std::vector<std::string> weightsPaths;
  std::optional<uint64_t> randomSeed;
  /// The type the model computes in (hf::ImportOptions::computeType): f32,
  /// bf16 or f16, whatever the checkpoint's type; its weights are converted
  /// to it once, when bound. Logits are f32 in every case; the ledger counts
  /// the checkpoint's bytes.
  runtime::DType dtype = runtime::DType::F32;
  /// The model directory's tokenizer.json; empty when it has none.
  std::string tokenizerPath;
  std::string pipelineOptions;
  /// The compiled-code cache (CPU): off, or in `cacheDir` (empty: the
  /// default directory, tfm/Runtime/CodeCache.h).
  bool cache = false;
  std::string cacheDir;
  /// Non-empty: run on the CUDA GPU (already initialised), compiling for
  /// this chip with the GPU pipeline; `pipelineOptions` are its options.
  std::string gpuChip;
  std::vector<std::string> sharedLibs;
  /// The memory a session may need (weights, caches, inputs, results, the
  /// largest temporary; tfm/Runtime/EntryResources.h); unset: the machine's.
  std::optional<uint64_t> maxMemory;
  /// > 1: this process is one rank of a tensor-parallel run of that many
  /// (under mpirun; tfm/Runtime/Mpi.h): the model is partitioned
  /// (tfm-tensor-parallel) and binds this rank's slices of the weights.
  /// Every rank computes the same logits and tokens.
  int64_t tensorParallel = 1;
  /// Threads of the compiled code's parallel loops, set before every call;
  /// 0 leaves the OpenMP runtime's choice (OMP_NUM_THREADS or all cores).
  unsigned threads = 0;
};

/// Points `options` at the model `path` names: a directory as save_pretrained
/// writes it (config.json, model.safetensors or model.safetensors.index.json
/// and shards, tokenizer.json), or a config.json. The directory's weights
/// are taken unless `options` already names weights or a random seed.
llvm::Error setModelPath(ModelOptions &options, llvm::StringRef path);

/// "f32", "bf16" or "f16" (--dtype) to a compute type; errors name `flag`.
llvm::Expected<runtime::DType> parseComputeDType(llvm::StringRef name,
                                                 llvm::StringRef flag);

/// Reads and parses a config.json; each unknown field is a warning.
llvm::Expected<hf::ModelConfig> readConfig(llvm::StringRef path,
                                           const WarningHandler &warn);

/// The ids of a prompt for a byte-level model (its UTF-8 bytes, B = 1).
llvm::Expected<TokenIds> getPromptIds(llvm::StringRef prompt,
                                      const hf::ModelConfig &config,
                                      llvm::StringRef configPath);

/// Makes `tokens` a ragged batch: checks that `lengths` has one length in
/// [1, seqLen] per sequence, then overwrites each sequence's padding with its
/// last real token (any valid id would do: causal attention keeps real
/// tokens from seeing the padding after them). `what` names the lengths in
/// errors ("--input-lengths lengths.npy").
llvm::Error setLengths(TokenIds &tokens, llvm::ArrayRef<int64_t> lengths,
                       llvm::StringRef what);
/// Checks every id against the vocabulary; `what` names the ids in errors
/// ("--input-ids ids.npy").
llvm::Error checkTokenIds(const TokenIds &tokens, const hf::ModelConfig &config,
                          llvm::StringRef what);

/// Chunked prefill (GenerationOptions::prefillChunk): by default a chunk of
/// the prompt's length rounded up to a power of two, within [64, 256]
/// (kAutoPrefillChunk): a 128-token prompt in one chunk reads the weights
/// once, not twice, and a short one pads little; at most three compiled
/// prefill shapes serve every prompt. And the longest KV cache that the
/// model's context gives by default.
inline constexpr int64_t kAutoPrefillChunk = -1;
inline constexpr int64_t kMinPrefillChunk = 64;
inline constexpr int64_t kMaxPrefillChunk = 256;
inline constexpr int64_t kDefaultMaxKVCache = 4096;

/// The chunk a prompt of `prompt` tokens runs in for `requested`
/// (GenerationOptions::prefillChunk): itself when positive, the prompt's
/// length for 0, kAutoPrefillChunk's choice when negative.
int64_t getPrefillChunk(int64_t requested, int64_t prompt);

/// The KV cache length for generating `count` tokens after `seqLen` prompt
/// tokens (`count` 0: no generation, only the context is checked):
/// `maxSeqLen`, or when it is 0 S + N, or with `chunked` prefill the model's
/// context up to kDefaultMaxKVCache (at least S + N), so that the compiled
/// code does not depend on the prompt. Fails when the model's context is too
/// short or `maxSeqLen` does not fit.
llvm::Expected<int64_t> getKVCacheLength(const hf::ModelConfig &config,
                                         int64_t seqLen, int64_t count,
                                         int64_t maxSeqLen,
                                         bool chunked = false);

/// `bytes` as UTF-8 text, each invalid sequence (maximal subpart) replaced by
/// U+FFFD as Python's bytes.decode("utf-8", errors="replace") does.
std::string decodeUtf8Lossy(const std::vector<uint8_t> &bytes);

/// @forward's logits, [B, S, V] f32, valid until the next call of the model.
/// In a ragged batch the rows of padding positions are 0.
struct ForwardResult {
  runtime::EntryResult logits;
  const float *data = nullptr;
  /// 0 when the entry was compiled by an earlier call.
  double compileMs = 0;
  /// " (cache hit)", " (cache miss)" or empty (engine::describeCache).
  std::string cacheStatus;
  /// The first call, then the timed warm ones (`repeat`).
  double firstMs = 0;
  std::vector<double> warmMs;
  /// Chunked: the chunk size, the calls per pass, the KV cache length.
  int64_t prefillChunk = 0, prefillChunks = 0, kvCacheLength = 0;
};

struct GenerationOptions {
  /// New tokens (N >= 1).
  int64_t count = 0;
  /// KV cache length; 0: getKVCacheLength's default.
  int64_t maxSeqLen = 0;
  /// The prompt runs through @prefill in chunks of this many tokens (capped
  /// by the cache), at positions 0, C, 2C, ...: one compiled model serves
  /// every prompt length. 0: one chunk of the prompt's length;
  /// kAutoPrefillChunk: getPrefillChunk's choice.
  int64_t prefillChunk = kAutoPrefillChunk;
  /// How each token is chosen (tfm/Runtime/Sampler.h; greedy by default).
  runtime::SamplingOptions sampling;
  /// A sequence ends after one of these tokens, or once its generated text
  /// holds one of these strings, ending in its last token; both kept.
  std::vector<int64_t> eosTokenIds;
  std::vector<std::string> stopStrings;
  /// The text of the generated tokens for stop strings: decoded by this
  /// tokenizer (special tokens skipped), or when null the tokens are the
  /// bytes of a byte-level model's text.
  const tokenizer::Tokenizer *tokenizer = nullptr;
  /// Timed warm calls of @prefill after the first (which is cold); they
  /// rewrite the same cache positions with the same values.
  unsigned repeat = 0;
};

/// Called after each step with the B new tokens of that step (step 0 is the
/// prefill's; -1 for a sequence that had already ended); returning false
/// stops the generation after that step.
using TokenCallback =
    std::function<bool(int64_t step, llvm::ArrayRef<int64_t> tokens)>;

struct GenerationResult {
  /// promptLength: the longest prompt (the padded length of a ragged batch).
  int64_t batch = 0, promptLength = 0;
  /// Each sequence's prompt length.
  std::vector<int64_t> promptLengths;
  /// Steps run: the new tokens of the longest sequence (fewer than asked
  /// when every sequence ended or the callback stopped).
  int64_t generated = 0;
  /// sequences[b]: prompt b, then its new tokens (up to its EOS or stop).
  std::vector<std::vector<int64_t>> sequences;
  /// The sequences as [B, S + generated], those that ended earlier (or had a
  /// shorter prompt) padded at the end with the first EOS id (as Hugging
  /// Face pads without a pad token), or 0 without one.
  std::vector<int64_t> tokens;
  int64_t kvCacheLength = 0;
  /// The prefill's chunk size and the calls one pass over the prompt took.
  int64_t prefillChunk = 0, prefillChunks = 0;
  double compileMs = 0;
  /// " (cache hit)", " (cache miss)" or empty (engine::describeCache).
  std::string cacheStatus;
  /// The first (cold) @prefill call, then the timed warm ones.
  double firstPrefillMs = 0;
  std::vector<double> prefillMs;
  /// Each @decode call; the steps after the prefill in all (sampling too).
  std::vector<double> stepMs;
  double generationMs = 0;
};

class HuggingFaceModel {
public:
  /// Opens the weights and parses the pipeline options; `config` was read
  /// from `options.configPath`.
  static llvm::Expected<std::unique_ptr<HuggingFaceModel>>
  create(MLIRContext &context, hf::ModelConfig config, ModelOptions options,
         WarningHandler warn);
  /// readConfig, then create.
  static llvm::Expected<std::unique_ptr<HuggingFaceModel>>
  load(MLIRContext &context, ModelOptions options, WarningHandler warn);
  ~HuggingFaceModel();

  const hf::ModelConfig &getConfig() const { return config; }
  const ModelOptions &getOptions() const { return options; }

  /// Runs @forward on `tokens` (checked by the caller), compiling it for
  /// this shape on first use, then `repeat` timed warm calls. With
  /// `prefillChunk` > 0 the logits come from @prefill run in chunks over a
  /// KV cache of `maxSeqLen` positions (0: getKVCacheLength's default)
  /// instead, compiled once for every prompt length.
  llvm::Expected<ForwardResult> forward(const TokenIds &tokens,
                                        unsigned repeat = 0,
                                        int64_t prefillChunk = 0,
                                        int64_t maxSeqLen = 0);

  /// Generates from `tokens` (greedily unless `generation.sampling` says
  /// otherwise), compiling @prefill and @decode for
  /// this shape and cache length on first use. A ragged batch (`lengths`)
  /// decodes each sequence at its own position (@decode with a position per
  /// sequence), so that each gets the tokens it would get alone.
  llvm::Expected<GenerationResult>
  generate(const TokenIds &tokens, const GenerationOptions &generation,
           const TokenCallback &onStep = nullptr);

  /// The ledger of @forward at [batch, seqLen], as
  /// `--tfm-print-ledger=format=json` prints it for the imported module.
  llvm::Expected<std::string> getLedgerJson(int64_t batch, int64_t seqLen);

  /// What the model holds on purpose: its weights, and the KV caches,
  /// planned workspaces and buffers of every compiled shape (sessions are
  /// kept, so these add up).
  MemoryBudget getMemoryBudget() const;

  struct Session;

private:
  /// The @prefill and @decode session for [batch, chunk] chunks over a KV
  /// cache of `kvCacheLength`, compiled on first use (`result` gets the
  /// compile time and cache status then); with `lastLogits` its @prefill
  /// returns the logits of each sequence's last prompt position only
  /// (generation; a chunked forward returns every position's);
  /// `longRoPEFactors` as hf::ImportOptions's.
  llvm::Expected<Session *>
  getGenerationSession(int64_t batch, int64_t chunk, int64_t kvCacheLength,
                       double &compileMs, std::string &cacheStatus,
                       bool lastLogits, bool ragged = false,
                       std::optional<bool> longRoPEFactors = std::nullopt);
  HuggingFaceModel(MLIRContext &context, hf::ModelConfig config,
                   ModelOptions options, WarningHandler warn);
  void setThreads() const;

  MLIRContext &context;
  hf::ModelConfig config;
  ModelOptions options;
  WarningHandler warn;
  struct State;
  std::unique_ptr<State> state;
};

} // namespace tfm::engine
} // namespace mlir

#endif // TFM_ENGINE_HUGGINGFACEMODEL_H

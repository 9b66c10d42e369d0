//===- HuggingFaceModel.cpp - running Hugging Face models -----------------===//
//
// Generation follows Hugging Face's greedy `generate`: one @prefill over the
// prompt at position 0 (the argmax of its last position is new token 1), then
// N - 1 @decode steps, step j feeding token j at position S + j - 1. Both
// entries are compiled into one engine and share the weights and the caches
// [B, Hkv, S_max, dh] of every layer, which the compiled code updates in place
// (tfm/Pipelines/Pipelines.h): nothing is copied between steps.
//
// A ragged batch is right-padded: prefill chunks share their positions (each
// real token sees only keys at or before it, never the padding after it),
// and @decode, imported with a position per sequence, feeds each sequence's
// token at its own position, overwriting the padding's cache slots before
// any query can see them. Each sequence thus computes what it would alone.
//
//===----------------------------------------------------------------------===//
#include "tfm/Engine/HuggingFaceModel.h"
#include "tfm/Runtime/Mpi.h"
#include "tfm/Engine/Compile.h"
#include "tfm/Engine/DeviceFrame.h"

#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/Ledger.h"
#include "tfm/Runtime/EntryResources.h"
#include "tfm/Runtime/Limits.h"
#include "tfm/Runtime/Npy.h"
#include "tfm/Runtime/ModelDirectory.h"
#include "tfm/Runtime/ProcessMemory.h"
#include "tfm/Runtime/Checkpoint.h"
#include "tfm/Runtime/GgufModel.h"
#include "tfm/Runtime/Sampler.h"
#include "tfm/Target/HuggingFace/Checkpoint.h"
#include "tfm/Target/HuggingFace/ImportModel.h"
#include "tfm/Tokenizer/Tokenizer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/Timing.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <functional>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::engine;
using namespace mlir::tfm::runtime;

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

llvm::Error engine::setModelPath(ModelOptions &options, llvm::StringRef path) {
  // A GGUF file is config and weights in one (tfm/Runtime/GgufModel.h).
  if (isGgufPath(path) && !isModelDirectory(path)) {
    options.configPath = path.str();
    options.tokenizerPath.clear();
    if (options.weightsPaths.empty() && !options.randomSeed)
      options.weightsPaths = {path.str()};
    return llvm::Error::success();
  }
  llvm::Expected<ModelFiles> files = findModelFiles(path);
  if (!files)
    return files.takeError();
  options.configPath = files->configPath;
  options.tokenizerPath = files->tokenizerPath;
  if (files->directory.empty() || !options.weightsPaths.empty() ||
      options.randomSeed)
    return llvm::Error::success();
  if (files->weightsPath.empty())
    return makeMissingWeightsError(*files);
  options.weightsPaths = {files->weightsPath};
  return llvm::Error::success();
}

llvm::Expected<DType> engine::parseComputeDType(llvm::StringRef name,
                                                llvm::StringRef flag) {
  if (name == "f32")
    return DType::F32;
  if (name == "bf16")
    return DType::BF16;
  if (name == "f16")
    return DType::F16;
  return makeError(
      llvm::formatv("{0} '{1}': expected f32, bf16 or f16", flag, name));
}

llvm::Expected<hf::ModelConfig> engine::readConfig(llvm::StringRef path,
                                                   const WarningHandler &warn) {
  std::string text;
  if (isGgufPath(path)) {
    llvm::Expected<std::string> json = readGgufConfigJson(path);
    if (!json)
      return json.takeError();
    text = std::move(*json);
  } else {
    // A regular file of bounded size (tfm/Runtime/Limits.h): not /dev/zero.
    auto buffer = readInputFile(path, kMaxTextFileBytes, /*isText=*/true);
    if (!buffer)
      return buffer.takeError();
    text = (*buffer)->getBuffer().str();
  }
  llvm::Expected<hf::ModelConfig> config = hf::parseModelConfig(text);
  if (!config)
    return makeError(path + ": " + llvm::toString(config.takeError()));
  for (const std::string &field : config->unknownFields)
    warn(path + ": " + field +
         ": unknown field, ignored; the model is built as if it were absent");
  return std::move(*config);
}

llvm::Expected<TokenIds> engine::getPromptIds(llvm::StringRef prompt,
                                              const hf::ModelConfig &config,
                                              llvm::StringRef configPath) {
  if (config.vocabSize != 256)
    return makeError(llvm::formatv(
        "--prompt needs a byte-level model (vocabulary of 256, one id per "
        "UTF-8 byte); {0} has a vocabulary of {1}: pass token ids with "
        "--input-ids, or {2}",
        configPath, config.vocabSize,
        isGgufPath(configPath)
            ? "use a GGUF file that holds its vocabulary (tokenizer.ggml.*)"
            : "put the model's tokenizer.json next to it"));
  if (prompt.empty())
    return makeError("--prompt: the prompt is empty");
  TokenIds tokens;
  tokens.batch = 1;
  tokens.seqLen = prompt.size();
  for (char c : prompt)
    tokens.ids.push_back(static_cast<uint8_t>(c));
  return tokens;
}

llvm::Error engine::setLengths(TokenIds &tokens,
                               llvm::ArrayRef<int64_t> lengths,
                               llvm::StringRef what) {
  if (int64_t(lengths.size()) != tokens.batch)
    return makeError(llvm::formatv("{0}: {1} length(s) for a batch of {2} "
                                   "sequences; expected one per sequence",
                                   what, lengths.size(), tokens.batch));
  for (auto [b, length] : llvm::enumerate(lengths))
    if (length < 1 || length > tokens.seqLen)
      return makeError(llvm::formatv("{0}: element {1} is {2}, outside [1, "
                                     "{3}] (the padded length of the ids)",
                                     what, b, length, tokens.seqLen));
  tokens.lengths.assign(lengths.begin(), lengths.end());
  for (int64_t b = 0; b < tokens.batch; ++b) {
    int64_t *row = tokens.ids.data() + b * tokens.seqLen;
    std::fill(row + lengths[b], row + tokens.seqLen, row[lengths[b] - 1]);
  }
  return llvm::Error::success();
}

llvm::Error engine::checkTokenIds(const TokenIds &tokens,
                                  const hf::ModelConfig &config,
                                  llvm::StringRef what) {
  for (auto [i, id] : llvm::enumerate(tokens.ids))
    if (id < 0 || id >= config.vocabSize)
      return makeError(llvm::formatv("{0}: element {1} is {2}, outside the "
                                     "vocabulary [0, {3})",
                                     what, i, id, config.vocabSize));
  return llvm::Error::success();
}

int64_t engine::getPrefillChunk(int64_t requested, int64_t prompt) {
  if (requested > 0)
    return requested;
  if (requested == 0)
    return prompt;
  int64_t chunk = kMinPrefillChunk;
  while (chunk < prompt && chunk < kMaxPrefillChunk)
    chunk *= 2;
  return chunk;
}

llvm::Expected<int64_t> engine::getKVCacheLength(const hf::ModelConfig &config,
                                                 int64_t seqLen, int64_t count,
                                                 int64_t maxSeqLen,
                                                 bool chunked) {
  // The sizes, checked against the context here to name the options at
  // fault. seqLen + count is computed only once both are in range (a count
  // near 2^63 from an API caller must not wrap into a small cache).
  if (count < 0 || seqLen < 0)
    return makeError(llvm::formatv("--generate {0}: the prompt's {1} tokens "
                                   "and the new tokens must not be negative",
                                   count, seqLen));
  if (count > config.maxPositions || seqLen > config.maxPositions) {
    if (count > config.maxPositions && count)
      return makeError(llvm::formatv(
          "--generate {0}: more new tokens than the model's context of {1} "
          "({2})",
          count, config.maxPositions, config.maxPositionsField));
    return makeError(llvm::formatv("the input's {0} tokens are more than the "
                                   "model's context of {1} ({2})",
                                   seqLen, config.maxPositions,
                                   config.maxPositionsField));
  }
  int64_t needed = seqLen + count;
  if (needed > config.maxPositions && count)
    return makeError(llvm::formatv(
        "--generate {0}: the prompt's {1} tokens and {0} new tokens need {2} "
        "positions, more than the model's context of {3} ({4})",
        count, seqLen, needed, config.maxPositions, config.maxPositionsField));
  if (needed > config.maxPositions)
    return makeError(llvm::formatv("the input's {0} tokens are more than the "
                                   "model's context of {1} ({2})",
                                   seqLen, config.maxPositions,
                                   config.maxPositionsField));
  if (maxSeqLen && (maxSeqLen < needed || maxSeqLen > config.maxPositions))
    return makeError(llvm::formatv(
        "--max-seq-len {0}: must be at least the {1} positions of the prompt "
        "and the new tokens and at most the model's context of {2} ({3})",
        maxSeqLen, needed, config.maxPositions, config.maxPositionsField));
  if (maxSeqLen)
    return maxSeqLen;
  // Chunked prefill: a cache sized by the model, not by this prompt, so that
  // the compiled code is the same for every prompt that fits.
  if (chunked) {
    int64_t capacity = std::min(config.maxPositions, kDefaultMaxKVCache);
    return std::max(needed, capacity);
  }
  return needed;
}

/// Warns about tensors of the file that no parameter reads, as Hugging Face's
/// loaders do: usually a checkpoint of a slightly different model, and the
/// names help tell a misnamed tensor from a missing one.
static void warnUnusedTensors(const WarningHandler &warn,
                              const Checkpoint &file,
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
  for (const TensorView *tensor : file.getTensors())
    if (!used.contains(tensor->name) &&
        !hf::isIgnoredTensor(tensor->name, prefix, config))
      unused.push_back(tensor->name);
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
/// What the entries of one model share: weights (by name, across every
/// compiled shape) and KV caches (by name, within one generation session).
struct ModelBindings {
  WeightSource weights;
  llvm::StringMap<BoundArgument> params;
};

/// One imported entry, bound and ready to call.
struct Entry {
  EntrySignature sig;
  std::unique_ptr<CallFrame> frame;
  size_t idsArgument = 0, positionArgument = 0, logitsResult = 0;
  /// One index position, or (ragged batches) a [B] i64 tensor of them.
  bool hasPosition = false, hasPositions = false;
  /// A @prefill that returns one row of logits per sequence, the row of its
  /// chunk given by the [B] i64 argument `logit_positions`
  /// (ImportOptions::prefillLastLogits).
  bool hasLogitPositions = false;
  size_t logitPositionsArgument = 0;

  int64_t *getIds() {
    return reinterpret_cast<int64_t *>(frame->getArgumentData(idsArgument));
  }
  int64_t *getPositions() {
    return reinterpret_cast<int64_t *>(
        frame->getArgumentData(positionArgument));
  }
  const float *getLogits() {
    return reinterpret_cast<const float *>(frame->getResultData(logitsResult));
  }
  int64_t *getLogitPositions() {
    return reinterpret_cast<int64_t *>(
        frame->getArgumentData(logitPositionsArgument));
  }
  /// The logits of row `row` of sequence `b` of the last call, where that
  /// call computed them (each row, or the one `logit_positions` chose).
  const float *getLogits(int64_t b, int64_t row) {
    const EntryResult &logits = sig.results[logitsResult];
    int64_t rows = logits.shape[1], vocab = logits.shape[2];
    if (hasLogitPositions) {
      assert(getLogitPositions()[b] == row && "logits of a row not computed");
      row = 0;
    }
    return getLogits() + (b * rows + row) * vocab;
  }
};
} // namespace

/// Binds the entry `function` of the imported module; the importer's
/// signature is fixed (ImportModel.h), so anything else is an internal error.
static llvm::Expected<std::unique_ptr<Entry>>
bindEntry(EntrySignature signature, ModelBindings &bindings,
          llvm::StringMap<BoundArgument> &caches, int64_t batch, int64_t seqLen,
          int64_t vocab) {
  // On the heap: the frame refers to the signature.
  auto entry = std::make_unique<Entry>();
  entry->sig = std::move(signature);
  const EntrySignature &sig = entry->sig;
  llvm::StringRef function = sig.function;
  std::vector<BoundArgument> bound(sig.arguments.size());
  if (llvm::Error err =
          bindParameters(sig, bindings.weights, bound, bindings.params))
    return std::move(err);
  bool hasIds = false;
  // An input the engine fills before each call: a buffer of its own.
  auto ownInput = [&](size_t i, int64_t bytes) -> llvm::Error {
    auto storage = AlignedBuffer::allocate(bytes);
    if (!storage)
      return storage.takeError();
    bound[i].storage = std::move(*storage);
    bound[i].data = bound[i].storage->get();
    bound[i].bound = true;
    return llvm::Error::success();
  };
  for (auto [i, arg] : llvm::enumerate(sig.arguments)) {
    if (arg.kind == EntryArgument::Kind::KVCache) {
      auto it = caches.find(arg.name);
      if (it == caches.end()) {
        BoundArgument cache;
        cache.numBytes = *getNumBytes(arg.shape, getDTypeSize(arg.dtype));
        auto storage = AlignedBuffer::allocate(cache.numBytes);
        if (!storage)
          return storage.takeError();
        cache.storage = std::move(*storage);
        cache.data = cache.storage->get();
        cache.bound = true;
        it = caches.try_emplace(arg.name, std::move(cache)).first;
      }
      bound[i] = it->second;
    } else if (arg.kind == EntryArgument::Kind::Index &&
               arg.name == "position") {
      entry->positionArgument = i;
      entry->hasPosition = true;
      bound[i].bound = true;
    } else if (arg.kind == EntryArgument::Kind::Input &&
               arg.name == "positions" && arg.dtype == DType::I64 &&
               arg.shape == llvm::ArrayRef<int64_t>{batch}) {
      entry->positionArgument = i;
      entry->hasPositions = true;
      if (llvm::Error err = ownInput(i, batch * 8))
        return std::move(err);
    } else if (arg.kind == EntryArgument::Kind::Input &&
               arg.name == "logit_positions" && arg.dtype == DType::I64 &&
               arg.shape == llvm::ArrayRef<int64_t>{batch}) {
      entry->logitPositionsArgument = i;
      entry->hasLogitPositions = true;
      if (llvm::Error err = ownInput(i, batch * 8))
        return std::move(err);
    } else if (arg.kind == EntryArgument::Kind::Input &&
               arg.name == "input_ids" && arg.dtype == DType::I64 &&
               arg.shape == llvm::ArrayRef<int64_t>{batch, seqLen}) {
      entry->idsArgument = i;
      hasIds = true;
      if (llvm::Error err = ownInput(i, batch * seqLen * 8))
        return std::move(err);
    }
    if (!bound[i].bound)
      return makeError(llvm::formatv("internal error: the imported @{0} has an "
                                     "unexpected argument '{1}' ({2})",
                                     function, arg.name,
                                     describeArgument(sig, i)));
  }
  auto logits = llvm::find_if(
      sig.results, [](const EntryResult &r) { return r.name == "logits"; });
  int64_t logitRows = entry->hasLogitPositions ? 1 : seqLen;
  if (!hasIds || logits == sig.results.end() || logits->dtype != DType::F32 ||
      logits->shape != llvm::ArrayRef<int64_t>{batch, logitRows, vocab})
    return makeError(
        llvm::formatv("internal error: the imported @{0} does not take "
                      "input_ids [{1}, {2}] and return f32 logits [{1}, {3}, "
                      "{4}]",
                      function, batch, seqLen, logitRows, vocab));
  entry->logitsResult = logits - sig.results.begin();
  auto frame = CallFrame::create(entry->sig, std::move(bound));
  if (!frame)
    return frame.takeError();
  entry->frame = std::move(*frame);
  return entry;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

std::string engine::decodeUtf8Lossy(const std::vector<uint8_t> &bytes) {
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
/// When each sequence of a batch is done: after an EOS token, or once its
/// generated text contains a stop string ending in the last token. The text
/// is the tokenizer's decoding (whole characters, as they complete) or, for
/// a byte-level model, the bytes.
class StopCriteria {
public:
  StopCriteria(const GenerationOptions &options, int64_t batch)
      : options(options), generated(batch), done(batch) {
    if (options.tokenizer && !options.stopStrings.empty())
      for (int64_t b = 0; b < batch; ++b)
        streams.emplace_back(*options.tokenizer, /*skipSpecialTokens=*/true);
  }

  /// Records `token` of sequence `b`; true if that ends the sequence.
  bool push(int64_t b, int64_t token) {
    if (llvm::is_contained(options.eosTokenIds, token))
      return done[b] = true;
    if (options.stopStrings.empty())
      return false;
    std::string &text = generated[b];
    size_t before = text.size();
    if (streams.empty())
      text.push_back(char(uint8_t(token)));
    else
      text += streams[b].push(token);
    for (const std::string &stop : options.stopStrings) {
      // Earlier occurrences ended the sequence at an earlier token.
      size_t from = before >= stop.size() ? before - stop.size() + 1 : 0;
      if (text.find(stop, from) != std::string::npos)
        return done[b] = true;
    }
    return false;
  }
  bool isDone(int64_t b) const { return done[b]; }
  bool allDone() const {
    return llvm::all_of(done, [](bool d) { return d; });
  }

private:
  const GenerationOptions &options;
  std::vector<std::string> generated;
  std::vector<tokenizer::StreamDecoder> streams;
  std::vector<bool> done;
};
} // namespace

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

namespace {
/// A compiled entry bound to its frame: calls it with host memory in and
/// out either way.
struct BoundCall {
  PackedFunction function = nullptr;
  CallFrame *frame = nullptr;
  std::unique_ptr<DeviceFrame> device;

  llvm::Error operator()() {
    if (!device) {
      function(frame->getPackedArguments());
      return llvm::Error::success();
    }
    return device->call(function);
  }
};

/// The pipeline a model is compiled with, and how its entries are called:
/// the CPU pipeline and host memory, or the GPU pipeline and device memory
/// (DeviceFrame.h).
struct Target {
  std::unique_ptr<CpuPipelineOptions> cpu;
  std::unique_ptr<GpuPipelineOptions> gpu;
  DevicePool pool;
  CacheOptions cache;

  llvm::Error runSignaturePasses(ModuleOp module, llvm::StringRef what) {
    if (!gpu)
      return engine::runSignaturePasses(module, *cpu, what);
    return engine::runSignaturePasses(module, *gpu, what);
  }
  llvm::Expected<std::unique_ptr<JitModule>>
  compile(ModuleOp module, llvm::ArrayRef<const EntrySignature *> entries,
          llvm::ArrayRef<std::string> libs, llvm::StringRef what) {
    return gpu ? compileGpuModule(module, entries, *gpu, libs, what)
               : compileModule(module, entries, *cpu, libs, what, cache);
  }
  /// Looks `function` up and binds it to `entry`'s frame.
  llvm::Error bind(JitModule &jit, llvm::StringRef function, Entry &entry,
                   BoundCall &call);
};

llvm::Error Target::bind(JitModule &jit, llvm::StringRef function, Entry &entry,
                         BoundCall &call) {
  llvm::Expected<PackedFunction> packed = jit.lookup(function);
  if (!packed)
    return packed.takeError();
  call.function = *packed;
  call.frame = entry.frame.get();
  if (!gpu)
    return llvm::Error::success();
  auto device = DeviceFrame::create(*entry.frame, pool);
  if (!device)
    return device.takeError();
  call.device = std::move(*device);
  return llvm::Error::success();
}
} // namespace

/// Runs the prompt through @prefill, whose input_ids hold `chunk` tokens per
/// sequence, at positions 0, chunk, 2 * chunk, ... of the KV cache: one
/// compiled entry serves every prompt length. A last, partial chunk is
/// padded at its end while the padded positions fit the cache (the padding's
/// keys and values land in slots that decoding overwrites before any query
/// can see them: causal attention reads only positions <= its own), or else
/// starts early, at `prompt - chunk`, recomputing tokens already cached.
/// In a ragged batch `prompt` is the longest prompt; the shorter ones are
/// padded with their last token (causality keeps their real tokens from
/// seeing it).
/// `onChunk(window, first, end)` gets each call's logits rows [first, end):
/// row r is the logits of the prompt position `window + r`, each position
/// exactly once; an entry with `logit_positions` computes the row of each
/// sequence's last prompt position only (or, in a chunk before it, a row
/// nobody reads). Returns the number of calls.
static llvm::Expected<int64_t> prefillInChunks(
    Entry &prefill, BoundCall &call, const TokenIds &tokens,
    int64_t cacheLength,
    llvm::function_ref<void(int64_t window, int64_t first, int64_t end)>
        onChunk) {
  int64_t batch = tokens.batch, prompt = tokens.seqLen;
  int64_t chunk = prefill.sig.arguments[prefill.idsArgument].shape[1];
  if (prompt > cacheLength)
    return makeError(llvm::formatv(
        "internal error: a prompt of {0} tokens overruns the KV cache of {1} "
        "positions",
        prompt, cacheLength));
  int64_t *ids = prefill.getIds();
  int64_t calls = 0;
  for (int64_t start = 0; start < prompt; start += chunk, ++calls) {
    int64_t window = start;
    if (start + chunk > prompt && start + chunk > cacheLength)
      window = prompt - chunk; // >= 0: the cache holds at least one chunk.
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < chunk; ++i) {
        // Padding repeats the last token: any valid id would do.
        int64_t t = std::min(window + i, tokens.getLength(b) - 1);
        ids[b * chunk + i] = tokens.ids[b * prompt + t];
      }
    prefill.frame->getIndex(prefill.positionArgument) = window;
    if (prefill.hasLogitPositions)
      for (int64_t b = 0; b < batch; ++b)
        prefill.getLogitPositions()[b] =
            std::clamp<int64_t>(tokens.getLength(b) - 1 - window, 0, chunk - 1);
    if (llvm::Error err = call())
      return std::move(err);
    onChunk(window, start - window, std::min(prompt, window + chunk) - window);
  }
  return calls;
}

/// The entries compiled for one shape: @forward, or @prefill and @decode
/// with their KV caches.
struct HuggingFaceModel::Session {
  std::unique_ptr<JitModule> jit;
  llvm::StringMap<BoundArgument> caches;
  std::unique_ptr<Entry> first, decode;
  BoundCall callFirst, callDecode;
  int64_t kvCacheLength = 0;
  /// The entries' planned temporaries (MemoryBudget::workspace).
  uint64_t workspaceBytes = 0;
};

/// The ledger's peak of live activations of `functions` of the imported
/// (tfm-level) `module`: the most any one call holds.
static uint64_t getPlannedWorkspace(ModuleOp module,
                                    llvm::ArrayRef<llvm::StringRef> functions) {
  uint64_t peak = 0;
  for (llvm::StringRef name : functions)
    if (auto function = module.lookupSymbol<func::FuncOp>(name))
      peak = std::max<uint64_t>(
          peak, computeLedger(function).peakLiveActivationBytes);
  return peak;
}

/// A freshly compiled session's IR is no longer needed: it is freed, the
/// heap the compiler freed is given back to the kernel (glibc keeps it
/// otherwise, for the process's lifetime), and the compiler's code pages
/// leave the resident set (a later compile faults them back in).
static void releaseCompilerMemory(OwningOpRef<ModuleOp> &module) {
  module = nullptr;
  releaseFreeHeapMemory();
  releaseCompilerCodePages();
}

/// The parameters `checkpoint` stores in a block format the CPU code reads
/// (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K), as the pipeline's quantize-stored
/// entries; the others (Q4_1, Q5_1) are bound dequantized.
static std::vector<std::string>
getStoredQuantization(const Checkpoint &checkpoint) {
  std::vector<std::string> stored;
  for (const TensorView *view : checkpoint.getTensors())
    if (isHeldBlockFormat(view->blocks))
      stored.push_back(view->name + ":" +
                       getBlockFormatName(view->blocks).lower());
  return stored;
}

struct HuggingFaceModel::State {
  std::unique_ptr<Checkpoint> file;
  ModelBindings bindings;
  Target pipeline;
  bool warnedUnused = false;
  /// (B, S, KV cache length; 0 for @forward, a position per sequence,
  /// longrope's factors: 0 by length, 1 short, 2 long, @prefill returning
  /// each sequence's last logits only: generation's, not a chunked
  /// forward's) -> session; S is @prefill's chunk for generation sessions.
  std::map<std::tuple<int64_t, int64_t, int64_t, bool, int, bool>,
           std::unique_ptr<Session>>
      sessions;
  /// The logits of a chunked forward, gathered from the chunks.
  std::vector<float> gatheredLogits;
  /// omp_set_num_threads, once the OpenMP runtime is loaded.
  void (*setNumThreads)(int) = nullptr;
};

HuggingFaceModel::HuggingFaceModel(MLIRContext &context, hf::ModelConfig config,
                                   ModelOptions options, WarningHandler warn)
    : context(context), config(std::move(config)), options(std::move(options)),
      warn(std::move(warn)), state(std::make_unique<State>()) {}

HuggingFaceModel::~HuggingFaceModel() = default;

llvm::Expected<std::unique_ptr<HuggingFaceModel>>
HuggingFaceModel::create(MLIRContext &context, hf::ModelConfig config,
                         ModelOptions options, WarningHandler warn) {
  std::unique_ptr<HuggingFaceModel> model(new HuggingFaceModel(
      context, std::move(config), std::move(options), std::move(warn)));
  State &state = *model->state;
  const ModelOptions &opts = model->options;
  if (!opts.weightsPaths.empty() && opts.randomSeed)
    return makeError("--weights and --random-weights are mutually exclusive");
  // A row-parallel linear's rank holds a slice of its input rows, which
  // the reorder of an act-order linear's inputs mixes across ranks.
  if (opts.tensorParallel > 1 && model->config.packedInts &&
      model->config.packedInts->actOrder)
    return makeError("--tensor-parallel: act-order GPTQ "
                     "(quantization_config.desc_act true) runs in one "
                     "process: its linears' input reorders span the ranks' "
                     "slices");
  if (!opts.weightsPaths.empty()) {
    auto file = Checkpoint::open(opts.weightsPaths);
    if (!file)
      return file.takeError();
    state.file = std::move(*file);
    // A GPTQ or AWQ checkpoint's linears, read as the blocks they are.
    if (model->config.packedInts)
      if (llvm::Error err =
              state.file->addPackedInts(*model->config.packedInts))
        return std::move(err);
    // A mixture of experts saved by transformers 5 as fused 3-D tensors.
    if (llvm::Error err = hf::readFusedExperts(model->config, *state.file))
      return std::move(err);
    state.bindings.weights.checkpoint = state.file.get();
    state.bindings.weights.namePrefix =
        hf::getCheckpointNamePrefix(model->config, *state.file);
    // Checkpoints are published in bf16 or f16 as often as in f32; each
    // tensor is converted once, when bound, to the compute type (--dtype).
    state.bindings.weights.convertFloats = true;
  }
  state.bindings.weights.randomSeed = opts.randomSeed;
  state.pipeline.cache.enabled = opts.cache;
  state.pipeline.cache.directory = opts.cacheDir;
  state.pipeline.cache.warn = model->warn;
  context.loadDialect<TfmDialect, func::FuncDialect>();
  if (opts.gpuChip.empty()) {
    auto cpu = parsePipelineOptions(opts.pipelineOptions);
    if (!cpu)
      return cpu.takeError();
    // Every shape compiled for the model (@forward, each generation
    // session's @prefill and @decode) binds its weights from one map, and a
    // decode step reads f32 panels: a module that split a weight into AMX
    // parts would hold it a second time beside them (tfm-cpu-split-amx-
    // weights decides per module). The model's weights stay f32 panels; its
    // AMX GEMMs split them per call.
    (*cpu)->amxSplitWeights = false;
    if (opts.tensorParallel > 1) {
      auto world = initMpiWorld(opts.tensorParallel);
      if (!world)
        return world.takeError();
      (*cpu)->tensorParallel = opts.tensorParallel;
      state.bindings.weights.rank = world->rank;
    }
    if (state.file)
      (*cpu)->quantizeStored = getStoredQuantization(*state.file);
    state.pipeline.cpu = std::move(*cpu);
  } else {
    auto gpu = parseGpuPipelineOptions(opts.pipelineOptions);
    if (!gpu)
      return gpu.takeError();
    if (opts.tensorParallel > 1) {
      // The communicator is the runner's (initializeNccl, after the device).
      auto world = initMpiWorld(opts.tensorParallel);
      if (!world)
        return world.takeError();
      (*gpu)->tensorParallel = opts.tensorParallel;
      state.bindings.weights.rank = world->rank;
    }
    state.pipeline.gpu = std::move(*gpu);
    state.pipeline.gpu->chip = opts.gpuChip;
  }
  return model;
}

llvm::Expected<std::unique_ptr<HuggingFaceModel>>
HuggingFaceModel::load(MLIRContext &context, ModelOptions options,
                       WarningHandler warn) {
  llvm::Expected<hf::ModelConfig> config = readConfig(options.configPath, warn);
  if (!config)
    return config.takeError();
  return create(context, std::move(*config), std::move(options),
                std::move(warn));
}

void HuggingFaceModel::setThreads() const {
  if (!options.threads)
    return;
  // The compiled code's parallel loops fork on the OpenMP runtime that the
  // JIT loaded (Compile.cpp); its per-thread setting applies to the next
  // fork from this thread.
  if (!state->setNumThreads)
    state->setNumThreads = reinterpret_cast<void (*)(int)>(
        llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(
            "omp_set_num_threads"));
  if (state->setNumThreads)
    state->setNumThreads(int(options.threads));
}

/// Zeroes the logits of a ragged batch's padding positions ([B, S, V]):
/// they are computed from filler tokens and mean nothing.
static void zeroPaddingLogits(float *logits, const TokenIds &tokens,
                              int64_t vocab) {
  for (int64_t b = 0; b < tokens.batch; ++b)
    std::fill(logits + (b * tokens.seqLen + tokens.getLength(b)) * vocab,
              logits + (b + 1) * tokens.seqLen * vocab, 0.0f);
}

llvm::Expected<ForwardResult> HuggingFaceModel::forward(const TokenIds &tokens,
                                                        unsigned repeat,
                                                        int64_t prefillChunk,
                                                        int64_t maxSeqLen) {
  ForwardResult result;
  if (prefillChunk > 0) {
    // The logits from @prefill's chunks, gathered into [B, S, V].
    llvm::Expected<int64_t> cacheLength = getKVCacheLength(
        config, tokens.seqLen, /*count=*/0, maxSeqLen, /*chunked=*/true);
    if (!cacheLength)
      return cacheLength.takeError();
    int64_t chunk = std::min(prefillChunk, *cacheLength);
    llvm::Expected<Session *> session = getGenerationSession(
        tokens.batch, chunk, *cacheLength, result.compileMs, result.cacheStatus,
        /*lastLogits=*/false);
    if (!session)
      return session.takeError();
    Entry &prefill = *(*session)->first;
    int64_t batch = tokens.batch, prompt = tokens.seqLen,
            vocab = config.vocabSize;
    std::vector<float> &logits = state->gatheredLogits;
    logits.assign(batch * prompt * vocab, 0.0f);
    setThreads();
    for (unsigned r = 0; r <= repeat; ++r) {
      Clock::time_point start = Clock::now();
      llvm::Expected<int64_t> calls = prefillInChunks(
          prefill, (*session)->callFirst, tokens, *cacheLength,
          [&](int64_t window, int64_t first, int64_t end) {
            for (int64_t b = 0; b < batch; ++b)
              std::copy(prefill.getLogits() + (b * chunk + first) * vocab,
                        prefill.getLogits() + (b * chunk + end) * vocab,
                        logits.begin() + (b * prompt + window + first) * vocab);
          });
      if (!calls)
        return calls.takeError();
      result.prefillChunks = *calls;
      (r ? result.warmMs.emplace_back() : result.firstMs) =
          millisecondsSince(start);
    }
    result.prefillChunk = chunk;
    result.kvCacheLength = *cacheLength;
    result.logits = prefill.sig.results[prefill.logitsResult];
    result.logits.shape = {batch, prompt, vocab};
    zeroPaddingLogits(logits.data(), tokens, vocab);
    result.data = logits.data();
    return result;
  }
  std::unique_ptr<Session> &session =
      state->sessions[{tokens.batch, tokens.seqLen, 0, false, 0, false}];
  if (!session) {
    hf::ImportOptions importOptions;
    importOptions.batch = tokens.batch;
    importOptions.seqLen = tokens.seqLen;
    importOptions.computeType = options.dtype;
    llvm::Expected<OwningOpRef<ModuleOp>> module = [&] {
      TimingScope timing = getCompileTiming().nest("import config.json");
      return hf::importModel(context, config, importOptions);
    }();
    if (!module)
      return module.takeError();
    auto fresh = std::make_unique<Session>();
    // The ledger reads the tfm-level IR, but only once the memory check has
    // bounded every tensor (its byte arithmetic does not guard against
    // hostile sizes).
    OwningOpRef<ModuleOp> tfmLevel((**module).clone());
    if (llvm::Error err =
            state->pipeline.runSignaturePasses(**module, options.configPath))
      return std::move(err);
    auto sig = getEntrySignature(**module, "forward");
    if (!sig)
      return sig.takeError();
    if (llvm::Error err = checkMemoryFits(**module, {&*sig}, options.maxMemory))
      return std::move(err);
    fresh->workspaceBytes = getPlannedWorkspace(*tfmLevel, {"forward"});
    tfmLevel = nullptr;
    // Unused names first: they often explain a missing tensor.
    if (state->file && !state->warnedUnused) {
      warnUnusedTensors(warn, *state->file, state->bindings.weights.namePrefix,
                        config, {&*sig});
      state->warnedUnused = true;
    }
    auto entry = bindEntry(std::move(*sig), state->bindings, fresh->caches,
                           tokens.batch, tokens.seqLen, config.vocabSize);
    if (!entry)
      return entry.takeError();
    fresh->first = std::move(*entry);

    Clock::time_point compileStart = Clock::now();
    auto jit = state->pipeline.compile(**module, {&fresh->first->sig},
                                       options.sharedLibs, options.configPath);
    if (!jit)
      return jit.takeError();
    fresh->jit = std::move(*jit);
    result.cacheStatus = describeCache(*fresh->jit);
    if (llvm::Error err = state->pipeline.bind(*fresh->jit, "forward",
                                               *fresh->first, fresh->callFirst))
      return std::move(err);
    result.compileMs = millisecondsSince(compileStart);
    session = std::move(fresh);
    releaseCompilerMemory(*module);
  }
  Entry &forward = *session->first;
  std::copy(tokens.ids.begin(), tokens.ids.end(), forward.getIds());
  setThreads();
  // The first call is cold (page faults in the weights, first allocations
  // of the buffer pool): timed apart from the warm ones.
  for (unsigned r = 0; r <= repeat; ++r) {
    Clock::time_point start = Clock::now();
    if (llvm::Error err = session->callFirst())
      return std::move(err);
    (r ? result.warmMs.emplace_back() : result.firstMs) =
        millisecondsSince(start);
  }
  result.logits = forward.sig.results[forward.logitsResult];
  zeroPaddingLogits(reinterpret_cast<float *>(forward.frame->getResultData(
                        forward.logitsResult)),
                    tokens, config.vocabSize);
  result.data = forward.getLogits();
  return result;
}

llvm::Expected<HuggingFaceModel::Session *>
HuggingFaceModel::getGenerationSession(int64_t batch, int64_t chunk,
                                       int64_t kvCacheLength, double &compileMs,
                                       std::string &cacheStatus,
                                       bool lastLogits, bool ragged,
                                       std::optional<bool> longRoPEFactors) {
  int64_t vocab = config.vocabSize;
  int factors = longRoPEFactors ? (*longRoPEFactors ? 2 : 1) : 0;
  std::unique_ptr<Session> &session = state->sessions[{
      batch, chunk, kvCacheLength, ragged, factors, lastLogits}];
  if (!session) {
    hf::ImportOptions importOptions;
    importOptions.batch = batch;
    importOptions.seqLen = chunk;
    importOptions.kvCacheLength = kvCacheLength;
    importOptions.perSequencePositions = ragged;
    importOptions.prefillLastLogits = lastLogits;
    importOptions.longRoPEFactors = longRoPEFactors;
    importOptions.computeType = options.dtype;
    llvm::Expected<OwningOpRef<ModuleOp>> module = [&] {
      TimingScope timing = getCompileTiming().nest("import config.json");
      return hf::importModel(context, config, importOptions);
    }();
    if (!module)
      return module.takeError();
    // Only the generation entries are compiled.
    if (auto forward = (*module)->lookupSymbol<func::FuncOp>("forward"))
      forward.erase();
    auto fresh = std::make_unique<Session>();
    fresh->kvCacheLength = kvCacheLength;
    // The ledger after the memory check, as for @forward.
    OwningOpRef<ModuleOp> tfmLevel((**module).clone());
    if (llvm::Error err =
            state->pipeline.runSignaturePasses(**module, options.configPath))
      return std::move(err);
    auto prefillSig = getEntrySignature(**module, "prefill");
    if (!prefillSig)
      return prefillSig.takeError();
    auto decodeSig = getEntrySignature(**module, "decode");
    if (!decodeSig)
      return decodeSig.takeError();
    if (llvm::Error err = checkMemoryFits(
            **module, {&*prefillSig, &*decodeSig}, options.maxMemory))
      return std::move(err);
    fresh->workspaceBytes =
        getPlannedWorkspace(*tfmLevel, {"prefill", "decode"});
    tfmLevel = nullptr;
    // Unused names first: they often explain a missing tensor.
    if (state->file && !state->warnedUnused) {
      warnUnusedTensors(warn, *state->file, state->bindings.weights.namePrefix,
                        config, {&*prefillSig, &*decodeSig});
      state->warnedUnused = true;
    }
    auto prefill = bindEntry(std::move(*prefillSig), state->bindings,
                             fresh->caches, batch, chunk, vocab);
    if (!prefill)
      return prefill.takeError();
    auto decode = bindEntry(std::move(*decodeSig), state->bindings,
                            fresh->caches, batch, 1, vocab);
    if (!decode)
      return decode.takeError();
    fresh->first = std::move(*prefill);
    fresh->decode = std::move(*decode);
    if (!fresh->first->hasPosition ||
        !(ragged ? fresh->decode->hasPositions : fresh->decode->hasPosition))
      return makeError(
          "internal error: the imported @prefill/@decode take no position");

    Clock::time_point compileStart = Clock::now();
    auto jit = state->pipeline.compile(
        **module, {&fresh->first->sig, &fresh->decode->sig}, options.sharedLibs,
        options.configPath);
    if (!jit)
      return jit.takeError();
    fresh->jit = std::move(*jit);
    cacheStatus = describeCache(*fresh->jit);
    if (llvm::Error err = state->pipeline.bind(*fresh->jit, "prefill",
                                               *fresh->first, fresh->callFirst))
      return std::move(err);
    if (llvm::Error err = state->pipeline.bind(
            *fresh->jit, "decode", *fresh->decode, fresh->callDecode))
      return std::move(err);
    compileMs = millisecondsSince(compileStart);
    session = std::move(fresh);
    releaseCompilerMemory(*module);
  }
  return session.get();
}

llvm::Expected<GenerationResult>
HuggingFaceModel::generate(const TokenIds &tokens,
                           const GenerationOptions &generation,
                           const TokenCallback &onStep) {
  int64_t batch = tokens.batch, prompt = tokens.seqLen,
          vocab = config.vocabSize, count = generation.count;
  if (count <= 0)
    return makeError(llvm::formatv("--generate {0}: must be positive", count));
  if (llvm::Error err = verifySamplingOptions(generation.sampling))
    return std::move(err);
  llvm::Expected<int64_t> maxSeqLen =
      getKVCacheLength(config, prompt, count, generation.maxSeqLen,
                       /*chunked=*/generation.prefillChunk != 0);
  if (!maxSeqLen)
    return maxSeqLen.takeError();
  GenerationResult result;
  int64_t chunk = getPrefillChunk(generation.prefillChunk, prompt);
  if (generation.prefillChunk)
    chunk = std::min(chunk, *maxSeqLen);
  bool ragged = tokens.isRagged();
  // longrope: transformers rotates each forward call by the short factors
  // while its sequence is within the original context and by the long ones
  // past it; Phi-3's generate() drops its cache when the sequence first
  // passes it and recomputes every position with the long factors. So does
  // this loop: short entries while decoding positions below the original
  // context, then the long entries' prefill over the whole sequence at the
  // crossing, and their decode after it. (A ragged batch keeps the factors
  // of its KV cache's length.)
  std::optional<bool> longFactors;
  int64_t crossing = -1;
  if (config.ropeScaling == hf::RoPEScaling::LongRoPE && !ragged) {
    int64_t original = config.ropeOriginalMaxPositions;
    longFactors = prompt > original;
    // Decode step j runs position prompt + j - 1, the last prompt + count - 2.
    if (prompt <= original && prompt + count - 2 >= original)
      crossing = original;
  }
  llvm::Expected<Session *> session = getGenerationSession(
      batch, chunk, *maxSeqLen, result.compileMs, result.cacheStatus,
      /*lastLogits=*/true, ragged, longFactors);
  if (!session)
    return session.takeError();
  Entry &prefill = *(*session)->first;
  Entry *decode = (*session)->decode.get();
  BoundCall *callDecode = &(*session)->callDecode;
  setThreads();

  // sequences[b]: the prompt (without padding), then the new tokens.
  std::vector<std::vector<int64_t>> sequences(batch);
  for (int64_t b = 0; b < batch; ++b)
    sequences[b].assign(tokens.ids.begin() + b * prompt,
                        tokens.ids.begin() + b * prompt + tokens.getLength(b));

  auto checkRoom = [&](int64_t position, int64_t length) -> llvm::Error {
    if (position + length > *maxSeqLen)
      return makeError(llvm::formatv(
          "internal error: writing {0} token(s) at position {1} would "
          "overrun the KV cache of {2} positions",
          length, position, *maxSeqLen));
    return llvm::Error::success();
  };
  Sampler sampler(generation.sampling);
  StopCriteria stop(generation, batch);
  // The new tokens of one step, handed to `onStep` (-1: ended before).
  std::vector<int64_t> stepTokens(batch);
  // Sequences that are done stop drawing; the rest take the next token.
  // Each row sees its own sequence so far (the repetition penalty).
  auto choose = [&](const float *logits, int64_t rowStride, int64_t step) {
    for (int64_t b = 0; b < batch; ++b) {
      stepTokens[b] = -1;
      if (stop.isDone(b))
        continue;
      int64_t token = sampler.next(
          llvm::ArrayRef(logits + b * rowStride, vocab), sequences[b]);
      sequences[b].push_back(token);
      stepTokens[b] = token;
      stop.push(b, token);
    }
    return !onStep || onStep(step, stepTokens);
  };

  // The first pass over the prompt is cold (page faults in the weights, the
  // buffer pool's first allocations): timed apart from the warm ones, which
  // rewrite the same cache positions with the same values. The logits of
  // each prompt's last position pick its first new token: copied out of
  // the chunk that holds that position (in a ragged batch, not the same
  // chunk for every sequence).
  std::vector<float> lastLogits(batch * vocab);
  for (unsigned r = 0; r <= generation.repeat; ++r) {
    Clock::time_point start = Clock::now();
    llvm::Expected<int64_t> calls = prefillInChunks(
        prefill, (*session)->callFirst, tokens, *maxSeqLen,
        [&](int64_t window, int64_t first, int64_t end) {
          for (int64_t b = 0; b < batch; ++b) {
            int64_t row = tokens.getLength(b) - 1 - window;
            if (row < first || row >= end)
              continue;
            const float *logits = prefill.getLogits(b, row);
            std::copy(logits, logits + vocab, lastLogits.begin() + b * vocab);
          }
        });
    if (!calls)
      return calls.takeError();
    result.prefillChunks = *calls;
    (r ? result.prefillMs.emplace_back() : result.firstPrefillMs) =
        millisecondsSince(start);
  }
  result.prefillChunk = chunk;
  Clock::time_point generationStart = Clock::now();
  bool going = choose(lastLogits.data(), vocab, 0);
  int64_t produced = 1;

  for (int64_t step = 1; going && step < count && !stop.allDone(); ++step) {
    if (prompt + step - 1 == crossing) {
      // Every position so far, the last one the token of this step, again
      // through the long-factor entries (their own caches).
      double compileMs = 0;
      llvm::Expected<Session *> longSession = getGenerationSession(
          batch, chunk, *maxSeqLen, compileMs, result.cacheStatus,
          /*lastLogits=*/true, ragged, true);
      if (!longSession)
        return longSession.takeError();
      result.compileMs += compileMs;
      TokenIds sofar;
      sofar.batch = batch;
      sofar.seqLen = crossing + 1;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < sofar.seqLen; ++i)
          sofar.ids.push_back(
              sequences[b][std::min<size_t>(i, sequences[b].size() - 1)]);
      Entry &again = *(*longSession)->first;
      Clock::time_point start = Clock::now();
      llvm::Expected<int64_t> calls = prefillInChunks(
          again, (*longSession)->callFirst, sofar, *maxSeqLen,
          [&](int64_t window, int64_t first, int64_t end) {
            int64_t row = sofar.seqLen - 1 - window;
            if (row < first || row >= end)
              return;
            for (int64_t b = 0; b < batch; ++b) {
              const float *logits = again.getLogits(b, row);
              std::copy(logits, logits + vocab, lastLogits.begin() + b * vocab);
            }
          });
      if (!calls)
        return calls.takeError();
      result.stepMs.push_back(millisecondsSince(start));
      going = choose(lastLogits.data(), vocab, step);
      ++produced;
      decode = (*longSession)->decode.get();
      callDecode = &(*longSession)->callDecode;
      continue;
    }
    int64_t *decodeIds = decode->getIds();
    // A finished sequence keeps feeding its last token; its logits are not
    // read. In a ragged batch each sequence's token goes at its own
    // position, the index of its last token (a finished one's stays put,
    // rewriting the same cache slot with the same keys and values).
    for (int64_t b = 0; b < batch; ++b)
      decodeIds[b] = sequences[b].back();
    if (ragged) {
      for (int64_t b = 0; b < batch; ++b) {
        int64_t position = int64_t(sequences[b].size()) - 1;
        if (llvm::Error err = checkRoom(position, 1))
          return std::move(err);
        decode->getPositions()[b] = position;
      }
    } else {
      int64_t position = prompt + step - 1;
      if (llvm::Error err = checkRoom(position, 1))
        return std::move(err);
      decode->frame->getIndex(decode->positionArgument) = position;
    }
    Clock::time_point start = Clock::now();
    if (llvm::Error err = (*callDecode)())
      return std::move(err);
    result.stepMs.push_back(millisecondsSince(start));
    going = choose(decode->getLogits(), vocab, step);
    ++produced;
  }
  result.generationMs = millisecondsSince(generationStart);

  result.batch = batch;
  result.promptLength = prompt;
  for (int64_t b = 0; b < batch; ++b)
    result.promptLengths.push_back(tokens.getLength(b));
  result.generated = produced;
  result.kvCacheLength = *maxSeqLen;
  // Rectangular [B, S + produced]: sequences that stopped early are padded
  // with the first EOS id, as Hugging Face pads without a pad token.
  int64_t total = prompt + produced;
  int64_t pad = generation.eosTokenIds.empty() ? 0 : generation.eosTokenIds[0];
  result.tokens.assign(batch * total, pad);
  for (int64_t b = 0; b < batch; ++b)
    std::copy(sequences[b].begin(), sequences[b].end(),
              result.tokens.begin() + b * total);
  result.sequences = std::move(sequences);
  return result;
}

MemoryBudget HuggingFaceModel::getMemoryBudget() const {
  MemoryBudget budget;
  budget.weights = getDistinctBytes(state->bindings.params);
  for (const auto &[key, session] : state->sessions) {
    budget.kvCaches += getDistinctBytes(session->caches);
    budget.workspace = std::max(budget.workspace, session->workspaceBytes);
    for (const Entry *entry : {session->first.get(), session->decode.get()})
      if (entry)
        budget.buffers += getBufferBytes(entry->sig);
  }
  return budget;
}

llvm::Expected<std::string> HuggingFaceModel::getLedgerJson(int64_t batch,
                                                            int64_t seqLen) {
  hf::ImportOptions importOptions;
  importOptions.batch = batch;
  importOptions.seqLen = seqLen;
  importOptions.computeType = options.dtype;
  auto module = hf::importModel(context, config, importOptions);
  if (!module)
    return module.takeError();
  // Parameter bytes as the checkpoint stores them, not as computed.
  if (state->file)
    hf::annotateParamDTypes(**module, *state->file,
                            state->bindings.weights.namePrefix);
  std::string json;
  llvm::raw_string_ostream os(json);
  printLedgerJson(os, **module, LedgerOptions());
  return json;
}

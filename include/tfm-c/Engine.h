/*===- tfm-c/Engine.h - C API of the tfm engine -------------------*- C -*-===*\
|*                                                                            *|
|* Loads a Hugging Face model (config.json, with a .safetensors checkpoint or *|
|* random weights), runs its logits, generates tokens with a callback per     *|
|* step, and reports its ledger, through the engine transformer-runner uses   *|
|* (tfm/Engine). libtfm_engine.so; the Python package (python/tfm/engine.py)  *|
|* binds it with ctypes.                                                      *|
|*                                                                            *|
|* Errors never end the process: a function that fails returns a non-zero     *|
|* status, and the message (the text transformer-runner prints after          *|
|* "error: ") is kept for the model (tfmModelGetLastError) and for the        *|
|* calling thread (tfmGetLastError). A model is used by one thread at a time. *|
|* A null model (destroyed, or a failed load) is an error, never a crash:     *|
|* status 1, null text, -1 sizes, "" messages.                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef TFM_C_ENGINE_H
#define TFM_C_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFM_CAPI_EXPORTED __attribute__((visibility("default")))

/// A loaded model; `ptr` is null when there is none.
typedef struct TfmModel {
  void *ptr;
} TfmModel;

/// 0 on success, 1 on failure (the message: tfm*GetLastError).
typedef int TfmStatus;

typedef struct TfmModelOptions {
  /// "cpu" (the only device of the C API for now); null means "cpu".
  const char *device;
  /// A .safetensors checkpoint or a shard index (*.json); null: a model
  /// directory's model.safetensors or model.safetensors.index.json, else
  /// random weights if `hasRandomSeed`.
  const char *weightsPath;
  /// Deterministic random weights (transformer-runner --random-weights).
  int hasRandomSeed;
  uint64_t randomSeed;
  /// Threads of the compiled code; 0: OMP_NUM_THREADS or all cores.
  int threads;
  /// Options of --tfm-cpu-pipeline (transformer-runner --pipeline-options);
  /// null for the defaults.
  const char *pipelineOptions;
  /// Non-zero: compile without the compiled-code cache (--no-cache).
  int noCache;
  /// The cache's directory; null: $XDG_CACHE_HOME/tfm, else ~/.cache/tfm.
  const char *cacheDir;
  /// The compute type, "f32", "bf16" or "f16" (transformer-runner --dtype);
  /// null: f32. f32, bf16 and f16 checkpoints all load, converted to it once
  /// when bound; logits are f32 in every case.
  const char *dtype;
  /// > 1: this process is one of that many ranks of a tensor-parallel run,
  /// started by `mpirun -np N` (transformer-runner --tensor-parallel): each
  /// rank binds its slices of the weights, and every rank gets the same
  /// logits and tokens. 0 or 1: one process.
  int tensorParallel;
} TfmModelOptions;

/// The defaults: cpu, no weights file, no seed, all threads, the cache on.
TFM_CAPI_EXPORTED void tfmModelOptionsInit(TfmModelOptions *options);

/// Loads `path`: a config.json, or a model directory as save_pretrained
/// writes it (config.json, model.safetensors or model.safetensors.index.json
/// and its shards). On failure `*model` is null.
TFM_CAPI_EXPORTED TfmStatus tfmModelLoad(const char *path,
                                         const TfmModelOptions *options,
                                         TfmModel *model);
TFM_CAPI_EXPORTED void tfmModelDestroy(TfmModel model);

/// The message of the model's last failure ("" if none).
TFM_CAPI_EXPORTED const char *tfmModelGetLastError(TfmModel model);
/// The message of the calling thread's last failure ("" if none).
TFM_CAPI_EXPORTED const char *tfmGetLastError(void);

/// The warnings of the model so far (unknown config fields, unused
/// checkpoint tensors), one per line; "" if none.
TFM_CAPI_EXPORTED const char *tfmModelGetWarnings(TfmModel model);

TFM_CAPI_EXPORTED int64_t tfmModelGetVocabSize(TfmModel model);
TFM_CAPI_EXPORTED int64_t tfmModelGetMaxPositions(TfmModel model);

/// The ids of a prompt, as transformer-runner --prompt gives them: encoded
/// by the tokenizer.json next to the model's config.json (with the special
/// tokens its post-processor adds), else its UTF-8 bytes for a byte-level
/// model. `prompt` is `length` bytes of UTF-8 (NUL bytes included: text
/// passes as pointer and length through this API). Writes the ids into
/// `out` (`capacity` elements) and their number into `*count`, which is set
/// also when `capacity` is too small (an error), for the caller to retry.
TFM_CAPI_EXPORTED TfmStatus tfmModelEncodePrompt(TfmModel model,
                                                 const char *prompt,
                                                 size_t length, int64_t *out,
                                                 size_t capacity,
                                                 int64_t *count);

/// Runs @forward on `ids` [batch, seqLen] and writes the logits, f32
/// [batch, seqLen, V] with `allPositions`, else [batch, V] of the last
/// position, into `out` (`capacity` floats; too small is an error).
TFM_CAPI_EXPORTED TfmStatus tfmModelLogits(TfmModel model, const int64_t *ids,
                                           int64_t batch, int64_t seqLen,
                                           int allPositions, float *out,
                                           size_t capacity);

/// tfmModelLogits for a ragged batch: sequence b is `lengths[b]` (1 ..
/// seqLen) tokens long, its row of `ids` right-padded with any values
/// (transformer-runner --input-lengths). Each sequence's logits are what it
/// would get alone; padding positions get 0, and without `allPositions`
/// each row is the logits of that sequence's own last position. `lengths`
/// null: every sequence is seqLen long.
TFM_CAPI_EXPORTED TfmStatus tfmModelLogitsRagged(
    TfmModel model, const int64_t *ids, int64_t batch, int64_t seqLen,
    const int64_t *lengths, int allPositions, float *out, size_t capacity);

/// Called after each generation step with the step's new token of every
/// sequence (`tokens[batch]`); returning non-zero stops the generation.
typedef int (*TfmTokenCallback)(void *userData, int64_t step,
                                const int64_t *tokens, int64_t batch);

typedef struct TfmGenerateOptions {
  /// New tokens (transformer-runner --generate N).
  int64_t maxNewTokens;
  /// KV cache length; 0: prompt + maxNewTokens (--max-seq-len).
  int64_t maxSeqLen;
  /// How tokens are chosen (tfm/Runtime/Sampler.h, Hugging Face's order and
  /// defaults): greedy unless `doSample`; then temperature, top-k (0: off),
  /// top-p (1: off) and a seeded draw. The repetition penalty (1: off)
  /// applies either way.
  int doSample;
  float temperature;
  int64_t topK;
  float topP;
  float repetitionPenalty;
  uint64_t seed;
  /// Non-zero: a sequence ends at the model's EOS tokens (config.json,
  /// generation_config.json) and the stop strings of its
  /// generation_config.json, as in transformer-runner.
  int stopAtModelEos;
  /// More strings that end a sequence once its generated text holds one
  /// (transformer-runner --stop): the model's tokenizer.json decodes the
  /// text, else the tokens are the bytes of a byte-level model.
  const char *const *stopStrings;
  /// The byte length of each stop string (NUL bytes are then part of it);
  /// null: each is NUL-terminated.
  const size_t *stopStringLengths;
  int64_t numStopStrings;
} TfmGenerateOptions;

/// The defaults: 16 new tokens, greedy (Hugging Face's sampling defaults:
/// temperature 1, top-k 50, top-p 1, penalty 1, seed 0), stopping at the
/// model's EOS.
TFM_CAPI_EXPORTED void tfmGenerateOptionsInit(TfmGenerateOptions *options);
/// The defaults with the model's generation_config.json applied (sampling,
/// max_new_tokens or max_length past a prompt of `promptLength`), as
/// transformer-runner applies them.
TFM_CAPI_EXPORTED void tfmModelGenerateOptionsInit(TfmModel model,
                                                   int64_t promptLength,
                                                   TfmGenerateOptions *options);

/// Generates from `ids` [batch, seqLen]; `onStep` may be null (its tokens
/// are -1 for sequences that ended at an earlier step). Writes the prompt
/// and the new tokens into `out` (`capacity` >= batch * (seqLen +
/// maxNewTokens) elements) as [batch, seqLen + *generated] int64, where
/// `*generated` is the number of steps run (fewer than asked when every
/// sequence ended or the callback stopped); sequences that ended earlier
/// are padded with the first EOS id.
TFM_CAPI_EXPORTED TfmStatus tfmModelGenerate(
    TfmModel model, const int64_t *ids, int64_t batch, int64_t seqLen,
    const TfmGenerateOptions *options, TfmTokenCallback onStep, void *userData,
    int64_t *out, size_t capacity, int64_t *generated);

/// tfmModelGenerate for a ragged batch: sequence b's prompt is `lengths[b]`
/// (1 .. seqLen) tokens, its row of `ids` right-padded with any values
/// (null `lengths`: all seqLen long). Each sequence decodes at its own
/// position and gets the tokens it would get alone. Row b of `out` holds its
/// prompt and new tokens, padded at the end (first EOS id, else 0);
/// `sequenceLengths` (null, or `batch` elements) receives each row's real
/// length.
TFM_CAPI_EXPORTED TfmStatus tfmModelGenerateRagged(
    TfmModel model, const int64_t *ids, int64_t batch, int64_t seqLen,
    const int64_t *lengths, const TfmGenerateOptions *options,
    TfmTokenCallback onStep, void *userData, int64_t *out, size_t capacity,
    int64_t *generated, int64_t *sequenceLengths);

/// The ledger of @forward at [batch, seqLen] as JSON text (what
/// `transformer-opt --tfm-print-ledger=format=json` prints for the imported
/// model); free it with tfmStringDestroy. Null on failure.
TFM_CAPI_EXPORTED char *tfmModelGetLedgerJson(TfmModel model, int64_t batch,
                                              int64_t seqLen);
TFM_CAPI_EXPORTED void tfmStringDestroy(char *text);

typedef struct TfmImportOptions {
  /// B (transformer-translate --batch); default 1.
  int64_t batch;
  /// S of @forward and @prefill; 0: 128, or the context length if shorter.
  int64_t seqLen;
  /// S_max of the KV cache; 0: @forward only, else @prefill and @decode too.
  int64_t kvCache;
  /// -1: the whole model; else only that decoder layer, as a `tfm.block`
  /// function from the hidden state to the hidden state (--block).
  int64_t block;
  /// "f32", "bf16" or "f16"; null: f32.
  const char *dtype;
} TfmImportOptions;

/// The defaults: B = 1, S from the model, no cache, the whole model, f32.
TFM_CAPI_EXPORTED void tfmImportOptionsInit(TfmImportOptions *options);

/// The tfm module of a Hugging Face config.json, `config` (`length` bytes,
/// not necessarily NUL-terminated), as MLIR text: what
/// `transformer-translate --import-hf-config` prints, from the same
/// importer. Free it with tfmStringDestroy. Null on failure, the message
/// (tfmGetLastError) naming the field or option at fault.
TFM_CAPI_EXPORTED char *tfmImportHFConfig(const char *config, size_t length,
                                          const TfmImportOptions *options);

/// Whether the model has a tokenizer.json next to its config.json.
TFM_CAPI_EXPORTED int tfmModelHasTokenizer(TfmModel model);
/// The text of `ids` (`count` of them): the tokenizer's decoding (as
/// `tokenizers` decode(ids, skip_special_tokens)), or for a byte-level
/// model without one the ids as UTF-8 bytes, invalid sequences replaced by
/// U+FFFD. Its byte length goes to `*length` (when not null): the text may
/// hold NUL bytes (a NUL is also appended). Free it with tfmStringDestroy.
/// Null on failure.
TFM_CAPI_EXPORTED char *tfmModelDecode(TfmModel model, const int64_t *ids,
                                       int64_t count, int skipSpecialTokens,
                                       size_t *length);

#ifdef __cplusplus
}
#endif

#endif // TFM_C_ENGINE_H

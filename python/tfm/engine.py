"""Runs tfm models from Python through libtfm_engine.so (include/tfm-c/Engine.h).

The same engine as transformer-runner, in-process (ctypes, no subprocess):

    import tfm
    m = tfm.load("models/tiny-kjv", threads=2)     # config.json + model.safetensors
    m.logits([[1, 2, 3]])                           # numpy [1, 3, V] f32
    m.generate("In the beginning", max_new_tokens=20)   # text (tokenizer.json or byte-level)
    for token in m.generate([1, 2, 3], max_new_tokens=5, stream=True): ...
    m.ledger                                        # dict, as --tfm-print-ledger=format=json

Errors raise TfmError with the message transformer-runner prints after
"error: ". The library is found through $TFM_LIBRARY, then the build
directory of this checkout ($TFM_BUILD_DIR, else build/), then next to this
package (where `pip install` puts it).
"""
import ctypes
import json
import os
import queue
import threading

_LIBRARY_NAME = "libtfm_engine.so"


class TfmError(RuntimeError):
    """A failure of the engine, with its message."""


def _candidates():
    env = os.environ.get("TFM_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    checkout = os.path.dirname(os.path.dirname(here))
    build = os.environ.get("TFM_BUILD_DIR", os.path.join(checkout, "build"))
    return [os.path.join(build, "lib", _LIBRARY_NAME),
            os.path.join(here, _LIBRARY_NAME)]


class _ModelOptions(ctypes.Structure):
    _fields_ = [("device", ctypes.c_char_p),
                ("weightsPath", ctypes.c_char_p),
                ("hasRandomSeed", ctypes.c_int),
                ("randomSeed", ctypes.c_uint64),
                ("threads", ctypes.c_int),
                ("pipelineOptions", ctypes.c_char_p),
                ("noCache", ctypes.c_int),
                ("cacheDir", ctypes.c_char_p),
                ("dtype", ctypes.c_char_p),
                ("tensorParallel", ctypes.c_int)]


class _GenerateOptions(ctypes.Structure):
    _fields_ = [("maxNewTokens", ctypes.c_int64),
                ("maxSeqLen", ctypes.c_int64),
                ("doSample", ctypes.c_int),
                ("temperature", ctypes.c_float),
                ("topK", ctypes.c_int64),
                ("topP", ctypes.c_float),
                ("repetitionPenalty", ctypes.c_float),
                ("seed", ctypes.c_uint64),
                ("stopAtModelEos", ctypes.c_int),
                ("stopStrings", ctypes.POINTER(ctypes.c_char_p)),
                ("stopStringLengths", ctypes.POINTER(ctypes.c_size_t)),
                ("numStopStrings", ctypes.c_int64)]


class _ImportOptions(ctypes.Structure):
    _fields_ = [("batch", ctypes.c_int64),
                ("seqLen", ctypes.c_int64),
                ("kvCache", ctypes.c_int64),
                ("block", ctypes.c_int64),
                ("dtype", ctypes.c_char_p)]


_TokenCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64,
                                  ctypes.POINTER(ctypes.c_int64), ctypes.c_int64)

_lib = None
_lib_lock = threading.Lock()


def _library():
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = _candidates()
        path = next((p for p in tried if os.path.exists(p)), None)
        if path is None:
            raise TfmError(f"{_LIBRARY_NAME} not found (tried {', '.join(tried)}): "
                           "build tfm (bash scripts/build.sh) or set TFM_LIBRARY")
        # Global: the JIT-compiled code resolves symbols in the process.
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        model = ctypes.c_void_p
        i64, i64p = ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)
        signatures = {
            "tfmModelOptionsInit": (None, [ctypes.POINTER(_ModelOptions)]),
            "tfmGenerateOptionsInit": (None, [ctypes.POINTER(_GenerateOptions)]),
            "tfmModelGenerateOptionsInit": (None, [model, ctypes.c_int64,
                                                   ctypes.POINTER(_GenerateOptions)]),
            "tfmModelLoad": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_ModelOptions),
                                            ctypes.POINTER(model)]),
            "tfmModelDestroy": (None, [model]),
            "tfmModelGetLastError": (ctypes.c_char_p, [model]),
            "tfmGetLastError": (ctypes.c_char_p, []),
            "tfmModelGetWarnings": (ctypes.c_char_p, [model]),
            "tfmModelGetVocabSize": (i64, [model]),
            "tfmModelGetMaxPositions": (i64, [model]),
            "tfmModelEncodePrompt": (ctypes.c_int, [model, ctypes.c_char_p,
                                                    ctypes.c_size_t, i64p,
                                                    ctypes.c_size_t, i64p]),
            "tfmModelLogits": (ctypes.c_int, [model, i64p, i64, i64, ctypes.c_int,
                                              ctypes.POINTER(ctypes.c_float),
                                              ctypes.c_size_t]),
            "tfmModelGenerate": (ctypes.c_int, [model, i64p, i64, i64,
                                                ctypes.POINTER(_GenerateOptions),
                                                _TokenCallback, ctypes.c_void_p,
                                                i64p, ctypes.c_size_t, i64p]),
            "tfmModelLogitsRagged": (ctypes.c_int, [model, i64p, i64, i64, i64p,
                                                    ctypes.c_int,
                                                    ctypes.POINTER(ctypes.c_float),
                                                    ctypes.c_size_t]),
            "tfmModelGenerateRagged": (ctypes.c_int, [model, i64p, i64, i64, i64p,
                                                      ctypes.POINTER(_GenerateOptions),
                                                      _TokenCallback, ctypes.c_void_p,
                                                      i64p, ctypes.c_size_t, i64p,
                                                      i64p]),
            # A plain pointer, freed with tfmStringDestroy (c_char_p would copy
            # and lose it).
            "tfmModelGetLedgerJson": (ctypes.c_void_p, [model, i64, i64]),
            "tfmStringDestroy": (None, [ctypes.c_void_p]),
            "tfmModelHasTokenizer": (ctypes.c_int, [model]),
            "tfmModelDecode": (ctypes.c_void_p, [model, i64p, i64, ctypes.c_int,
                                                 ctypes.POINTER(ctypes.c_size_t)]),
            "tfmImportOptionsInit": (None, [ctypes.POINTER(_ImportOptions)]),
            "tfmImportHFConfig": (ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_size_t,
                                                    ctypes.POINTER(_ImportOptions)]),
        }
        for name, (restype, argtypes) in signatures.items():
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes
        _lib = lib
        return lib


def _int64(value, name, low):
    """`value` as an int64 C argument: an integer >= `low`, else TfmError
    naming the option (ctypes would wrap a too-large one silently)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TfmError(f"--{name}: expected an integer, got {value!r}")
    if not low <= value < 2**63:
        raise TfmError(f"--{name}: {value} is out of range")
    return value


def import_hf_config(config, batch=1, seq_len=None, kv_cache=0, block=None,
                     dtype=None):
    """The tfm module (MLIR text) of a Hugging Face config.json, built by the
    importer transformer-translate uses: `config` is the file's text (str
    or bytes) or a dict. @forward at [batch, seq_len] (None: 128, or the
    context length if shorter), plus @prefill and @decode over a KV cache of
    `kv_cache` positions; or with `block`, that decoder layer alone as a
    `tfm.block` function. Errors raise TfmError naming the field or option."""
    if isinstance(config, dict):
        config = json.dumps(config)
    if isinstance(config, str):
        config = config.encode()
    lib = _library()
    options = _ImportOptions()
    lib.tfmImportOptionsInit(ctypes.byref(options))
    options.batch = _int64(batch, "batch", 1)
    if seq_len is not None:
        options.seqLen = _int64(seq_len, "seq-len", 1)
    options.kvCache = _int64(kv_cache, "kv-cache", 0)
    if block is not None:
        options.block = _int64(block, "block", 0)
    if dtype is not None:
        options.dtype = str(dtype).encode()
    text = lib.tfmImportHFConfig(config, len(config), ctypes.byref(options))
    if not text:
        raise TfmError(lib.tfmGetLastError().decode(errors="replace"))
    try:
        return ctypes.string_at(text).decode()
    finally:
        lib.tfmStringDestroy(text)


def load(path, device="cpu", threads=None, weights=None, random_weights=None,
         pipeline_options=None, cache=True, cache_dir=None, dtype=None,
         quantize=None, tensor_parallel=None):
    """Loads a model: a config.json, a directory as save_pretrained writes
    it (config.json, model.safetensors or model.safetensors.index.json and
    its shards), or a GGUF file (llama.cpp's: its weights, quantized ones
    kept in their blocks, and its vocabulary). `weights`: a .safetensors file or a shard index;
    `random_weights`: a seed for deterministic random weights
    (transformer-runner --random-weights); `threads`: threads of the
    compiled code; `cache`, `cache_dir`: the compiled-code cache shared with
    transformer-runner (--no-cache, --cache-dir); `dtype`: the compute type
    ("f32", the default, "bf16" or "f16"; f32, bf16 and f16 checkpoints
    all load, converted once; logits are f32 whatever the type);
    `quantize`: "q8_0", "q4_0", "q4_k", "q5_k" or "q6_k" holds the projection
    weights as llama.cpp's blocks of that format (transformer-runner
    --quantize; CPU
    only); `tensor_parallel`: N
    when this process is one of N ranks started by `mpirun -np N`
    (transformer-runner --tensor-parallel; CPU only): every rank loads the
    model and binds its slices of the weights, and gets the same logits."""
    lib = _library()
    options = _ModelOptions()
    lib.tfmModelOptionsInit(ctypes.byref(options))
    options.device = device.encode()
    if weights is not None:
        options.weightsPath = os.fspath(weights).encode()
    if random_weights is not None:
        options.hasRandomSeed = 1
        options.randomSeed = _int64(random_weights, "random-weights", 0)
    if threads is not None:
        if isinstance(threads, int) and not isinstance(threads, bool) and \
                threads < 1:
            raise TfmError("--threads: must be at least 1")
        threads = _int64(threads, "threads", 1)
        if threads >= 2**31:  # a C int
            raise TfmError(f"--threads: {threads} is out of range")
        options.threads = threads
    if quantize is not None:
        if quantize not in ("q8_0", "q4_0", "q4_k", "q5_k", "q6_k"):
            raise TfmError(f"--quantize '{quantize}': expected q8_0, q4_0, "
                           "q4_k, q5_k or q6_k")
        if device != "cpu":
            raise TfmError("--quantize applies to --device cpu (quantized "
                           "GPU kernels are not built yet)")
        pipeline_options = ((pipeline_options or "") +
                            " quantize=" + quantize).strip()
    if tensor_parallel is not None:
        ranks = _int64(tensor_parallel, "tensor-parallel", 1)
        if ranks >= 2**31:  # a C int
            raise TfmError(f"--tensor-parallel: {ranks} is out of range")
        options.tensorParallel = ranks
    if pipeline_options is not None:
        options.pipelineOptions = pipeline_options.encode()
    options.noCache = int(not cache)
    if cache_dir is not None:
        options.cacheDir = os.fspath(cache_dir).encode()
    if dtype is not None:
        options.dtype = str(dtype).encode()
    handle = ctypes.c_void_p()
    if lib.tfmModelLoad(os.fspath(path).encode(), ctypes.byref(options),
                        ctypes.byref(handle)):
        raise TfmError(lib.tfmGetLastError().decode(errors="replace"))
    return Model(lib, handle)


def _ragged(ids, always=False):
    """For a list of 1-D sequences of different lengths (a ragged batch; of
    any lengths with `always`): (right-padded array [B, S] int64, lengths
    [B] int64); else None."""
    import numpy as np
    if not isinstance(ids, (list, tuple)) or not ids:
        return None
    rows = [np.asarray(row) for row in ids]
    if any(row.ndim != 1 for row in rows):
        return None
    lengths = np.array([row.size for row in rows], dtype=np.int64)
    if (lengths == lengths[0]).all() and not always:
        return None
    for row in rows:
        if row.dtype.kind not in "iu" and row.size:
            raise TfmError(f"ids: expected integer token ids, got {row.dtype}")
    if (lengths == 0).any():
        raise TfmError(f"ids: sequence {int(np.argmin(lengths))} of the batch "
                       "is empty")
    array = np.zeros((len(rows), int(lengths.max())), dtype=np.int64)
    for b, row in enumerate(rows):
        array[b, :row.size] = row
    return array, lengths


def _as_ids(ids):
    """(array [B, S] int64, whether the input was one sequence)."""
    import numpy as np
    array = np.asarray(ids)
    if array.dtype.kind not in "iu" and array.size:
        raise TfmError(f"ids: expected integer token ids, got {array.dtype}")
    single = array.ndim == 1
    if single:
        array = array[None, :]
    if array.ndim != 2:
        raise TfmError(f"ids: expected token ids [S] or [B, S], got shape "
                       f"{list(array.shape)}")
    return np.ascontiguousarray(array, dtype=np.int64), single


def _pointer(array, ctype):
    return array.ctypes.data_as(ctypes.POINTER(ctype))


class Model:
    """A loaded model; calls compile each new input shape once."""

    def __init__(self, lib, handle):
        self._lib = lib
        self._handle = handle
        # One call at a time: the model's buffers are reused across calls.
        self._lock = threading.Lock()
        self.vocab_size = lib.tfmModelGetVocabSize(handle)
        self.max_positions = lib.tfmModelGetMaxPositions(handle)

    def close(self):
        """Frees the engine. Waits for a call running on another thread
        (logits, generate, a stream) to end first; calls afterwards raise
        TfmError."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            if self._handle:
                self._lib.tfmModelDestroy(self._handle)
                self._handle = None

    def _live(self):
        """The engine's handle, or TfmError once the model is closed (the C
        API refuses a null handle too; this names the cause)."""
        if not self._handle:
            raise TfmError("the model is closed")
        return self._handle

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _error(self):
        return TfmError(self._lib.tfmModelGetLastError(self._handle)
                        .decode(errors="replace"))

    @property
    def warnings(self):
        """Warnings so far (unknown config fields, unused tensors)."""
        with self._lock:
            text = self._lib.tfmModelGetWarnings(self._live()).decode(
                errors="replace")
        return text.splitlines()

    @property
    def has_tokenizer(self):
        """Whether the model has a tokenizer: a tokenizer.json next to its
        config.json, or the vocabulary a GGUF file stores."""
        with self._lock:
            return bool(self._lib.tfmModelHasTokenizer(self._live()))

    def encode(self, prompt):
        """The ids of `prompt`: encoded by the model's tokenizer.json (with
        the special tokens its post-processor adds), else its UTF-8 bytes
        for a byte-level model."""
        import numpy as np
        data = prompt.encode()
        # A tokenizer gives at most a token per byte, plus the template's;
        # a template that adds more says how many (count) and is retried.
        out = np.zeros(len(data) + 16, dtype=np.int64)
        count = ctypes.c_int64()
        with self._lock:
            failed = self._lib.tfmModelEncodePrompt(
                self._live(), data, len(data), _pointer(out, ctypes.c_int64),
                out.size, ctypes.byref(count))
            if failed and count.value > out.size:
                out = np.zeros(count.value, dtype=np.int64)
                failed = self._lib.tfmModelEncodePrompt(
                    self._live(), data, len(data),
                    _pointer(out, ctypes.c_int64), out.size,
                    ctypes.byref(count))
            if failed:
                raise self._error()
        return out[:count.value]

    def decode(self, ids, skip_special_tokens=True):
        """The text of `ids` [S]: the tokenizer.json's decoding, or the
        UTF-8 bytes of a byte-level model."""
        import numpy as np
        array = np.ascontiguousarray(np.asarray(ids, dtype=np.int64).reshape(-1))
        with self._lock:
            length = ctypes.c_size_t()
            pointer = self._lib.tfmModelDecode(
                self._live(), _pointer(array, ctypes.c_int64), array.size,
                int(bool(skip_special_tokens)), ctypes.byref(length))
            if not pointer:
                raise self._error()
        try:
            return ctypes.string_at(pointer, length.value).decode(
                "utf-8", errors="replace")
        finally:
            self._lib.tfmStringDestroy(pointer)

    def logits(self, ids, last_only=False):
        """@forward's logits: [B, S, V] f32 for ids [B, S] ([S, V] for ids
        [S]); with `last_only`, the last position's ([B, V] or [V]). A list
        of sequences of different lengths (a ragged batch, run as one padded
        batch) gives a list: sequence b's logits [S_b, V] ([V] with
        `last_only`), what it would get alone."""
        import numpy as np
        ragged = _ragged(ids)
        if ragged is not None:
            array, lengths = ragged
            batch, seq = array.shape
            shape = (batch, self.vocab_size) if last_only else (batch, seq, self.vocab_size)
            out = np.empty(shape, dtype=np.float32)
            with self._lock:
                if self._lib.tfmModelLogitsRagged(
                        self._live(), _pointer(array, ctypes.c_int64), batch, seq,
                        _pointer(lengths, ctypes.c_int64), int(not last_only),
                        _pointer(out, ctypes.c_float), out.size):
                    raise self._error()
            if last_only:
                return list(out)
            return [out[b, :length] for b, length in enumerate(lengths)]
        array, single = _as_ids(ids)
        batch, seq = array.shape
        shape = (batch, self.vocab_size) if last_only else (batch, seq, self.vocab_size)
        out = np.empty(shape, dtype=np.float32)
        with self._lock:
            if self._lib.tfmModelLogits(self._live(), _pointer(array, ctypes.c_int64),
                                        batch, seq, int(not last_only),
                                        _pointer(out, ctypes.c_float), out.size):
                raise self._error()
        return out[0] if single else out

    def generate(self, prompt, max_new_tokens=None, max_seq_len=0, temperature=None,
                 top_k=None, top_p=None, repetition_penalty=None, seed=None,
                 do_sample=None, stop=None, stop_at_eos=True, stream=False):
        """Generates from `prompt` as transformer-runner --generate does: the
        model's generation_config.json gives the defaults (else greedy, 16
        new tokens); any of `temperature`, `top_k`, `top_p`, `seed` turns
        sampling on (unless `do_sample` is False; a temperature of 0 is
        greedy), with Hugging Face's order (tfm/Runtime/Sampler.h). A
        sequence ends at the model's EOS tokens (`stop_at_eos`) or once its
        text holds one of `stop` (str or bytes; decoded by the model's
        tokenizer.json, else the bytes of a byte-level model); a
        batch is padded
        with the first EOS id. `prompt` is text (encoded by the model's
        tokenizer.json, else as bytes of a byte-level model; returns the
        prompt and the new text, special tokens skipped, as
        transformer-runner --prompt prints it) or ids [S] / [B, S] (returns
        the prompt and the new ids, [S + N] / [B, S + N] int64), or a list of
        id sequences of different lengths (a ragged batch; returns a list,
        each sequence's prompt and new ids up to its own end, the tokens it
        would get alone), or a list of texts (returns a list of texts). With
        `stream`, returns an iterator over the new tokens as they are
        produced (an int per step for one sequence, an int64 array [B] for a
        batch, -1 for a sequence that has ended)."""
        texts = (isinstance(prompt, (list, tuple)) and len(prompt) > 0
                 and all(isinstance(p, str) for p in prompt))
        if texts:
            prompt = [self.encode(p) for p in prompt]
        text = isinstance(prompt, str)
        lengths = None
        ragged = None if text else _ragged(prompt, always=texts)
        if text:
            array, single = self.encode(prompt)[None, :], True
        elif ragged is not None:
            (array, lengths), single = ragged, False
        else:
            array, single = _as_ids(prompt)
        options = _GenerateOptions()
        with self._lock:
            self._lib.tfmModelGenerateOptionsInit(self._live(), array.shape[1],
                                                  ctypes.byref(options))
        if max_new_tokens is not None:
            options.maxNewTokens = _int64(max_new_tokens, "generate", 1)
        options.maxSeqLen = _int64(max_seq_len, "max-seq-len", 0)
        if any(v is not None for v in (temperature, top_k, top_p, seed)):
            options.doSample = 1
        if temperature == 0:
            options.doSample = 0  # the usual spelling of greedy
        elif temperature is not None:
            options.temperature = float(temperature)
        if do_sample is not None:
            options.doSample = int(bool(do_sample))
        if top_k is not None:
            options.topK = _int64(top_k, "top-k", 0)
        if top_p is not None:
            options.topP = float(top_p)
        if repetition_penalty is not None:
            options.repetitionPenalty = float(repetition_penalty)
        if seed is not None:
            options.seed = _int64(seed, "seed", 0)
        options.stopAtModelEos = int(bool(stop_at_eos))
        stops = [stop] if isinstance(stop, (str, bytes)) else list(stop or [])
        encoded = (ctypes.c_char_p * max(len(stops), 1))(
            *[t if isinstance(t, bytes) else t.encode() for t in stops])
        stop_lengths = (ctypes.c_size_t * max(len(stops), 1))(
            *[len(t if isinstance(t, bytes) else t.encode()) for t in stops])
        options.stopStrings = encoded
        options.stopStringLengths = stop_lengths
        options.numStopStrings = len(stops)
        # `encoded` and `stop_lengths` must outlive the call.
        options._keep = (encoded, stop_lengths)
        if stream:
            return self._stream(array, options, single, lengths)
        tokens, sizes = self._run_generation(array, options, None, lengths)
        if lengths is not None:
            sequences = [tokens[b, :size] for b, size in enumerate(sizes)]
            if texts:
                return [self.decode(s) for s in sequences]
            return sequences
        if text:
            return self.decode(tokens[0])
        return tokens[0] if single else tokens

    def _run_generation(self, array, options, on_step, lengths=None):
        """(tokens [B, S + generated], each sequence's own length)."""
        import numpy as np
        batch, seq = array.shape
        # Never more than the context: a larger count is the engine's error
        # (checked before the output's size), not a huge allocation here.
        context = self._lib.tfmModelGetMaxPositions(self._live())
        count = min(max(options.maxNewTokens, 0), max(context, 0))
        out = np.zeros((batch, seq + count), dtype=np.int64)
        sizes = np.zeros(batch, dtype=np.int64)
        generated = ctypes.c_int64()
        callback = _TokenCallback(on_step) if on_step else _TokenCallback()
        lengths_pointer = (_pointer(lengths, ctypes.c_int64) if lengths is not None
                           else ctypes.POINTER(ctypes.c_int64)())
        with self._lock:
            if self._lib.tfmModelGenerateRagged(
                    self._live(), _pointer(array, ctypes.c_int64), batch, seq,
                    lengths_pointer, ctypes.byref(options), callback, None,
                    _pointer(out, ctypes.c_int64), out.size, ctypes.byref(generated),
                    _pointer(sizes, ctypes.c_int64)):
                raise self._error()
        kept = seq + generated.value
        return out.reshape(-1)[:batch * kept].reshape(batch, kept), sizes

    def _stream(self, array, options, single, lengths=None):
        """Runs the generation on a thread; the callback hands each step's
        tokens over a queue (ctypes releases the GIL during the C call)."""
        import numpy as np
        steps = queue.Queue()
        stop = threading.Event()
        done = object()

        def on_step(user, step, tokens, batch):
            steps.put(np.ctypeslib.as_array(tokens, shape=(batch,)).copy())
            return 1 if stop.is_set() else 0

        failure = []

        def run():
            try:
                self._run_generation(array, options, on_step, lengths)
            except TfmError as error:
                failure.append(error)
            finally:
                steps.put(done)

        def iterate():
            worker = threading.Thread(target=run, daemon=True)
            worker.start()
            try:
                while True:
                    item = steps.get()
                    if item is done:
                        break
                    yield int(item[0]) if single else item
            finally:
                # Closed early: stop after the current step.
                stop.set()
                worker.join()
            if failure:
                raise failure[0]

        return iterate()

    def ledger_at(self, batch=1, seq_len=1):
        """The ledger of @forward at [batch, seq_len] as a dict (the object
        `--tfm-print-ledger=format=json` prints for the function)."""
        with self._lock:
            pointer = self._lib.tfmModelGetLedgerJson(self._live(), batch, seq_len)
        if not pointer:
            raise self._error()
        try:
            text = ctypes.string_at(pointer).decode()
        finally:
            self._lib.tfmStringDestroy(pointer)
        functions = json.loads(text)
        return next(f for f in functions if f["function"] == "forward")

    @property
    def ledger(self):
        """The ledger of @forward for one token ([1, 1]): parameters and
        weight bytes, FLOPs and KV cache per token."""
        return self.ledger_at(1, 1)

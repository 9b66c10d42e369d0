"""A closed model through the Python API and a null handle through the C
API: every call is an error, never a crash; close() from another thread
waits for the running generation."""
import ctypes
import sys
import threading

import tfm
from tfm import engine

config = sys.argv[1]

# Every method of a closed model raises TfmError.
m = tfm.load(config, random_weights=1, threads=1)
m.close()
m.close()  # twice is fine
calls = {
    "logits": lambda: m.logits([[1, 2]]),
    "generate": lambda: m.generate([1, 2], max_new_tokens=2),
    "stream": lambda: list(m.generate([1, 2], max_new_tokens=2, stream=True)),
    "encode": lambda: m.encode("hi"),
    "decode": lambda: m.decode([72, 105]),
    "has_tokenizer": lambda: m.has_tokenizer,
    "warnings": lambda: m.warnings,
    "ledger": lambda: m.ledger,
}
for name, call in calls.items():
    try:
        call()
        print(f"{name}: no error")
    except tfm.TfmError as e:
        print(f"{name}: TfmError: {e}")

# close() while a stream runs on another thread: it waits for the call.
m = tfm.load(config, random_weights=1, threads=1)
stream = m.generate([1, 2, 3], max_new_tokens=20, stream=True,
                    stop_at_eos=False)
first = next(stream)
closer = threading.Thread(target=m.close)
closer.start()
rest = list(stream)
closer.join()
print(f"stream: {1 + len(rest)} tokens, then closed: {m._handle is None}")

# The C API itself: a null handle gives an error status and message.
lib = engine._library()
null = ctypes.c_void_p()
out = (ctypes.c_float * 1024)()
ids = (ctypes.c_int64 * 2)(1, 2)
status = lib.tfmModelLogits(null, ids, 1, 2, 0, out, 1024)
print(f"C logits: status {status}: {lib.tfmGetLastError().decode()}")
print(f"C vocab: {lib.tfmModelGetVocabSize(null)}, tokenizer: "
      f"{lib.tfmModelHasTokenizer(null)}, error: "
      f"'{lib.tfmModelGetLastError(null).decode()}'")
print(f"C decode: {lib.tfmModelDecode(null, ids, 2, 1, None)}")

"""Writing and reading .safetensors files with numpy only.

Debian's python3 has no `safetensors` package; this implements the format
(https://github.com/huggingface/safetensors): an 8-byte little-endian header
length N, N bytes of JSON {name: {"dtype", "shape", "data_offsets"}} with an
optional "__metadata__" object of strings, then the raw little-endian data.
numpy has no bfloat16: pass `BF16(array)` to store an f32 array as BF16
(round to nearest even), and `read_safetensors` returns BF16 data widened to
f32.
"""
import json
import struct

import numpy as np

_NP_TO_ST = {
    np.dtype("<f8"): "F64", np.dtype("<f4"): "F32", np.dtype("<f2"): "F16",
    np.dtype("<i8"): "I64", np.dtype("<i4"): "I32", np.dtype("<i2"): "I16",
    np.dtype("i1"): "I8", np.dtype("u1"): "U8", np.dtype("bool"): "BOOL",
}
_ST_TO_NP = {v: k for k, v in _NP_TO_ST.items()}


class BF16:
    """An f32 array to be stored as bfloat16."""

    def __init__(self, array):
        self.array = np.ascontiguousarray(array, dtype=np.float32)

    def raw(self):
        bits = self.array.view(np.uint32).astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return rounded.astype(np.uint16).tobytes()


def _encode(value):
    """(dtype string, shape, bytes) of one tensor."""
    if isinstance(value, BF16):
        return "BF16", list(value.array.shape), value.raw()
    array = np.asarray(value)
    dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" \
        else array.dtype
    if dtype not in _NP_TO_ST:
        raise TypeError(f"unsupported dtype {array.dtype}")
    data = np.ascontiguousarray(array, dtype=dtype).tobytes()
    return _NP_TO_ST[dtype], list(array.shape), data


def write_safetensors(path, tensors, metadata=None, align=8):
    """Writes `tensors` (name -> numpy array or BF16) to `path`.

    The header is padded with spaces to a multiple of `align` bytes, as the
    reference writer does (8), so that data offsets keep natural alignment;
    tests pass align=1 for deliberately misaligned files.
    """
    header, chunks, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name, value in tensors.items():
        dtype, shape, data = _encode(value)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    # The data area starts at 8 + len(text): pad so that it is aligned.
    text += b" " * ((-(8 + len(text))) % align)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for chunk in chunks:
            f.write(chunk)


def read_safetensors(path):
    """Returns ({name: numpy array}, metadata dict)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    metadata = header.pop("__metadata__", {})
    data = blob[8 + n:]
    result = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        raw = data[begin:end]
        if entry["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            array = bits.view(np.float32)
        else:
            array = np.frombuffer(raw, dtype=_ST_TO_NP[entry["dtype"]])
        result[name] = array.reshape(entry["shape"]).copy()
    return result, metadata

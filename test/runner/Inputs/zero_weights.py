"""usage: zero_weights.py MODEL.mlir OUT.safetensors [INPUT=OUT.npy ...]

Writes a .safetensors file with every f32 `tfm.param` tensor of MODEL (found
as random_weights.py finds them) at zero, and for each INPUT=OUT.npy a zero
f32 .npy of that `tfm.input`'s shape. Plain Python (no NumPy): for tests of
how the runner holds a weight file, not of what it computes.
"""
import json
import re
import struct
import sys

text = open(sys.argv[1]).read()


def shape_of(dims):
    return [int(d) for d in dims.split("x")]


header, offset = {}, 0
for dims, name in re.findall(
        r"tensor<([0-9x]+)xf32>\s*\{tfm\.param = \"([^\"]+)\"", text):
    count = 1
    for d in shape_of(dims):
        count *= d
    header[name] = {"dtype": "F32", "shape": shape_of(dims),
                    "data_offsets": [offset, offset + 4 * count]}
    offset += 4 * count
if not header:
    sys.exit("no tfm.param arguments found")
encoded = json.dumps(header).encode()
encoded += b" " * (-len(encoded) % 8)
with open(sys.argv[2], "wb") as f:
    f.write(struct.pack("<Q", len(encoded)) + encoded)
    f.truncate(8 + len(encoded) + offset)

for spec in sys.argv[3:]:
    name, path = spec.split("=", 1)
    match = re.search(r"tensor<([0-9x]+)xf32>\s*\{tfm\.input = \"%s\"" % name,
                      text)
    if not match:
        sys.exit("no tfm.input '%s'" % name)
    shape = shape_of(match[1])
    npy = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s,), }" % (
        ", ".join(map(str, shape)))
    npy += " " * (-(len(npy) + 11) % 64) + "\n"
    count = 1
    for d in shape:
        count *= d
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(npy)))
        f.write(npy.encode() + bytes(4 * count))

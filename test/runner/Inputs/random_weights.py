"""usage: random_weights.py MODEL.mlir OUT.safetensors [SEED]

Writes a weight file with every `tfm.param` tensor of MODEL (found with a
regex over `%arg: tensor<AxBxf32> {tfm.param = "name"...}`): uniform values
in [-0.05, 0.05), 1-D "*weight" tensors (norm scales) around 1.
"""
import re
import sys

import numpy as np

from tfm.io import write_safetensors

text = open(sys.argv[1]).read()
rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 0)
tensors = {}
for dims, name in re.findall(
        r"tensor<([0-9x]+)xf32>\s*\{tfm\.param = \"([^\"]+)\"", text):
    shape = [int(d) for d in dims.split("x")]
    value = rng.uniform(-0.05, 0.05, shape).astype(np.float32)
    if len(shape) == 1 and name.endswith("weight"):
        value += 1
    tensors[name] = value
if not tensors:
    sys.exit("no tfm.param arguments found")
write_safetensors(sys.argv[2], tensors)

"""usage: memory_check.py WEIGHTS.txt RANDOM.txt W.safetensors

Reads the `memory:` and `memory budget:` lines of two transformer-runner runs
of one model, with the weights of W.safetensors and with --random-weights,
and checks that:
- the budget's weights are the checkpoint's tensors;
- the weights are held as anonymous memory (the runner's packed copies);
- the checkpoint's mapping is not held next to them: the run with the file
  has at most a quarter of its bytes more file-backed memory than the run
  without (before the runner released the pages it copied, it held them
  all);
- the compiler's code pages were released after compiling: the runner
  says how many MiB, and what stays file-backed (without a checkpoint) is
  less than a third of that;
- the printed ratio is resident / budget.
"""
import json
import re
import struct
import sys

MIB = 1024 * 1024


def read(path):
    text = open(path).read()
    memory = re.search(r"memory: resident ([0-9.]+) MiB \(anonymous ([0-9.]+), "
                       r"file-backed ([0-9.]+)\), peak ([0-9.]+) MiB", text)
    budget = re.search(r"memory budget: ([0-9.]+) MiB \(weights ([0-9.]+) \+ "
                       r"KV caches ([0-9.]+) \+ workspace ([0-9.]+) \+ inputs "
                       r"and results ([0-9.]+)\); resident ([0-9.]+) x budget",
                       text)
    if not memory or not budget:
        sys.exit(f"{path}: no memory lines in:\n{text}")
    released = re.search(r"memory: ([0-9.]+) MiB of compiler code", text)
    return ([float(v) for v in memory.groups()],
            [float(v) for v in budget.groups()],
            float(released.group(1)) if released else 0.0)


(resident, anonymous, file_backed, _), budget, _ = read(sys.argv[1])
(_, _, random_file_backed, _), random_budget, released = read(sys.argv[2])
with open(sys.argv[3], "rb") as f:
    (length,) = struct.unpack("<Q", f.read(8))
    header = json.loads(f.read(length))
weights = sum(t["data_offsets"][1] - t["data_offsets"][0]
              for name, t in header.items() if name != "__metadata__") / MIB

errors = []
if abs(budget[1] - weights) > 0.1 or abs(random_budget[1] - weights) > 0.1:
    errors.append(f"budget weights {budget[1]} / {random_budget[1]} MiB, "
                  f"the checkpoint holds {weights:.1f} MiB")
if anonymous < 0.9 * weights:
    errors.append(f"anonymous {anonymous} MiB: the weights ({weights:.1f} "
                  "MiB) are not held")
if file_backed - random_file_backed > 0.25 * weights:
    errors.append(f"file-backed {file_backed} MiB with the checkpoint, "
                  f"{random_file_backed} MiB without: the mapping of the "
                  f"{weights:.1f} MiB checkpoint is still resident")
if released < 10 or random_file_backed > released / 3:
    errors.append(f"{released} MiB of compiler code released, "
                  f"{random_file_backed} MiB file-backed left: the "
                  "compiler's code pages are still resident")
if abs(budget[5] - resident / budget[0]) > 0.01:
    errors.append(f"ratio {budget[5]} is not {resident} / {budget[0]}")
sys.exit("\n".join(errors) if errors else 0)

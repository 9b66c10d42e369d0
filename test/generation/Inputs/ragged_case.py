"""A ragged batch (prompts of different lengths, right-padded, with
--input-lengths) against each prompt run alone and against PyTorch.

For MODEL (DIR/MODEL.json is the config) and the prompt lengths given:
  - logits: the batch's logits at each prompt's real positions equal
    PyTorch's for that prompt alone (1e-4 abs + 1e-3 rel), its padding
    positions are 0, and each prompt's last-position logits equal the
    runner's for that prompt alone; with chunked prefill and with @forward;
  - greedy tokens: each row of the batch (chunked prefill, then KV-cache
    decode at each sequence's own position) equals the runner's tokens for
    that prompt alone and PyTorch's greedy tokens, exactly;
  - EOS: with an eos_token_id that one sequence produces early, that
    sequence stops there (padded with the EOS id) while the others go on.
The padding of the ids is out of the vocabulary: it must never be read.

Usage: ragged_case.py DIR MODEL CHUNK NEW LENGTH...
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch

from tfm import reference

here = os.path.dirname(os.path.abspath(__file__))
out_dir, model, chunk, new = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
lengths = [int(x) for x in sys.argv[5:]]
config = os.path.join(out_dir, model + ".json")
d = os.path.join(out_dir, f"{model}-ragged")
os.makedirs(d, exist_ok=True)
batch, longest = len(lengths), max(lengths)
subprocess.run([sys.executable, os.path.join(here, "hf_case.py"), "make", config,
                d, "--batch", str(batch), "--seq", str(longest), "--seed", "11"],
               check=True)
c = json.load(open(config))
ids = np.load(f"{d}/ids.npy")
for b, length in enumerate(lengths):
    ids[b, length:] = c["vocab_size"] + 1000  # never a valid id
np.save(f"{d}/ids.npy", ids)
np.save(f"{d}/lengths.npy", np.array(lengths, np.int64))
prompts = [ids[b, :length] for b, length in enumerate(lengths)]
weights_path = f"{d}/w.safetensors"


def runner(*args, config_path=config):
    run = subprocess.run(["transformer-runner", config_path, "--weights",
                          weights_path, *args], capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"transformer-runner {' '.join(args)} failed:\n{run.stdout}{run.stderr}")
    return run.stdout


def close(got, want, what):
    error = float(np.abs(got - want).max())
    if got.shape != want.shape or not np.allclose(got, want, atol=1e-4, rtol=1e-3):
        sys.exit(f"{what}: differ, shapes {got.shape} {want.shape}, max abs "
                 f"error {error:.3g}")
    return error


from tfm.io import read_safetensors  # noqa: E402
w, _ = read_safetensors(weights_path)
w = {k: torch.from_numpy(v) for k, v in w.items()}


def torch_logits(prompt):
    with torch.no_grad():
        return reference.hf_causal_lm_logits(
            c, w, torch.from_numpy(prompt).long().view(1, -1))[0].numpy()


def torch_greedy(prompt, count):
    seq = torch.from_numpy(prompt).long().view(1, -1)
    with torch.no_grad():
        for _ in range(count):
            last = reference.hf_causal_lm_logits(c, w, seq)[:, -1]
            seq = torch.cat([seq, last.argmax(-1, keepdim=True)], dim=1)
    return seq[0].numpy()


# Logits: chunked prefill and @forward, batch against PyTorch and alone.
worst = 0.0
for mode in (["--prefill-chunk", chunk], []):
    runner("--input-ids", f"{d}/ids.npy", "--input-lengths", f"{d}/lengths.npy",
           *mode, "--output", f"{d}/logits.npy")
    got = np.load(f"{d}/logits.npy")
    for b, (length, prompt) in enumerate(zip(lengths, prompts)):
        worst = max(worst, close(got[b, :length], torch_logits(prompt),
                                 f"{mode} row {b}: logits against PyTorch"))
        if np.any(got[b, length:] != 0):
            sys.exit(f"{mode} row {b}: padding logits are not 0")
        np.save(f"{d}/alone{b}.npy", prompt.reshape(1, -1))
        runner("--input-ids", f"{d}/alone{b}.npy", *mode, "--output",
               f"{d}/alone-logits.npy")
        alone = np.load(f"{d}/alone-logits.npy")
        close(got[b, length - 1], alone[0, length - 1],
              f"{mode} row {b}: last-position logits against the prompt alone")
print(f"logits: each row equals PyTorch and the prompt alone (max abs error "
      f"{worst:.3g}); padding rows are 0")

# Greedy tokens: the batch, each prompt alone, PyTorch.
out = runner("--input-ids", f"{d}/ids.npy", "--input-lengths", f"{d}/lengths.npy",
             "--generate", str(new), "--prefill-chunk", chunk,
             "--output-tokens", f"{d}/tokens.npy")
print(next(line for line in out.splitlines() if line.startswith("prefill:")))
tokens = np.load(f"{d}/tokens.npy")
references = []
for b, (length, prompt) in enumerate(zip(lengths, prompts)):
    want = torch_greedy(prompt, new)
    references.append(want)
    runner("--input-ids", f"{d}/alone{b}.npy", "--generate", str(new),
           "--prefill-chunk", chunk, "--output-tokens", f"{d}/alone-tokens.npy")
    alone = np.load(f"{d}/alone-tokens.npy")[0]
    row = tokens[b, :length + new]
    if not (row == alone).all():
        sys.exit(f"row {b}: tokens {row.tolist()} differ from the prompt alone "
                 f"{alone.tolist()}")
    if not (row == want).all():
        sys.exit(f"row {b}: tokens {row.tolist()} differ from PyTorch's "
                 f"{want.tolist()}")
    if (tokens[b, length + new:] != 0).any():
        sys.exit(f"row {b}: not padded with 0 after its tokens")
    print(f"row {b} (prompt of {length}): {new} tokens equal alone and PyTorch's")

# EOS: a new token of the longest prompt's row that it has not produced
# before (the third, if it can) ends it; other rows stop at their own first
# occurrence of it, if any.
b_eos = lengths.index(longest)
generated = list(references[b_eos][longest:])
eos = next((int(t) for k, t in enumerate(generated) if k >= 2 and t not in generated[:k]),
           int(generated[0]))
c_eos = dict(c, eos_token_id=eos)
eos_config = os.path.join(d, "eos.json")
json.dump(c_eos, open(eos_config, "w"))
runner("--input-ids", f"{d}/ids.npy", "--input-lengths", f"{d}/lengths.npy",
       "--generate", str(new), "--prefill-chunk", chunk,
       "--output-tokens", f"{d}/eos.npy", config_path=eos_config)
got = np.load(f"{d}/eos.npy")
sequences = []
for b, length in enumerate(lengths):
    generated = list(references[b][length:])
    if eos in generated:
        generated = generated[:generated.index(eos) + 1]
    sequences.append(list(references[b][:length]) + generated)
steps = max(len(s) - length for s, length in zip(sequences, lengths))
want = np.full((batch, longest + steps), eos, np.int64)
for b, s in enumerate(sequences):
    want[b, :len(s)] = s
if got.shape != want.shape or not (got == want).all():
    sys.exit(f"EOS {eos}: tokens\n{got}\nexpected\n{want}")
print(f"eos {eos}: row {b_eos} stops after {len(sequences[b_eos]) - longest} "
      f"token(s), the batch after {steps} step(s)")

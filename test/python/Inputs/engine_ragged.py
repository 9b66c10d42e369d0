"""Ragged batches through the Python API (tfm/engine.py over the C API):
a list of id sequences of different lengths. Prints PASS lines or exits 1.

  engine_ragged.py CONFIG WEIGHTS N LENGTH...

Each sequence of `m.logits([...])` equals `m.logits(sequence)` alone and
PyTorch's; each of `m.generate([...])` equals `m.generate(sequence)` alone
and PyTorch's greedy tokens; streaming yields one [B] array per step.
"""
import json
import sys

import numpy as np
import torch

import tfm
from tfm import reference
from tfm.io import read_safetensors


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


config, weights, new = sys.argv[1], sys.argv[2], int(sys.argv[3])
lengths = [int(x) for x in sys.argv[4:]]
c = json.load(open(config))
rng = np.random.default_rng(3)
prompts = [rng.integers(0, c["vocab_size"], length) for length in lengths]
w = {k: torch.from_numpy(v) for k, v in read_safetensors(weights)[0].items()}


def torch_logits(prompt):
    with torch.no_grad():
        return reference.hf_causal_lm_logits(
            c, w, torch.from_numpy(prompt).long().view(1, -1))[0].numpy()


def torch_greedy(prompt):
    seq = torch.from_numpy(prompt).long().view(1, -1)
    with torch.no_grad():
        for _ in range(new):
            last = reference.hf_causal_lm_logits(c, w, seq)[:, -1]
            seq = torch.cat([seq, last.argmax(-1, keepdim=True)], dim=1)
    return seq[0].numpy()


m = tfm.load(config, weights=weights, threads=2)
batch = m.logits(prompts)
if not isinstance(batch, list) or [x.shape for x in batch] != \
        [(length, m.vocab_size) for length in lengths]:
    fail(f"logits of a ragged batch: {type(batch)}")
for b, prompt in enumerate(prompts):
    if not np.allclose(batch[b], m.logits(prompt), atol=1e-4, rtol=1e-3):
        fail(f"sequence {b}: logits differ from the sequence alone")
    if not np.allclose(batch[b], torch_logits(prompt), atol=1e-4, rtol=1e-3):
        fail(f"sequence {b}: logits differ from PyTorch's")
print("PASS: each sequence's logits equal it alone and PyTorch's")
last = m.logits(prompts, last_only=True)
if not all(np.array_equal(last[b], batch[b][-1]) for b in range(len(prompts))):
    fail("last_only is not each sequence's own last position")
print("PASS: last_only gives each sequence's last position")

tokens = m.generate(prompts, max_new_tokens=new, stop_at_eos=False)
for b, prompt in enumerate(prompts):
    alone = m.generate(prompt, max_new_tokens=new, stop_at_eos=False)
    if not np.array_equal(tokens[b], alone):
        fail(f"sequence {b}: {tokens[b].tolist()} differs from it alone "
             f"{alone.tolist()}")
    want = torch_greedy(prompt)
    if not np.array_equal(tokens[b], want):
        fail(f"sequence {b}: {tokens[b].tolist()} differs from PyTorch's "
             f"{want.tolist()}")
print("PASS: each sequence's tokens equal it alone and PyTorch's greedy tokens")

steps = list(m.generate(prompts, max_new_tokens=new, stop_at_eos=False, stream=True))
streamed = np.stack(steps, axis=1)
for b, length in enumerate(lengths):
    if not np.array_equal(streamed[b], tokens[b][length:]):
        fail(f"sequence {b}: streamed {streamed[b].tolist()}")
print("PASS: streaming yields each step's tokens of every sequence")

texts = ["In", "Hello, world", "Hi"]
batch_texts = m.generate(texts, max_new_tokens=new, stop_at_eos=False)
alone_texts = [m.generate(t, max_new_tokens=new, stop_at_eos=False) for t in texts]
if batch_texts != alone_texts:
    fail(f"texts {batch_texts!r} differ from each alone {alone_texts!r}")
print("PASS: a list of texts gives each text's generation alone")

try:
    m.generate([prompts[0], []], max_new_tokens=2)
    fail("an empty sequence was accepted")
except tfm.TfmError as error:
    print(f"error: {error}")
try:
    m.logits([prompts[0], [c["vocab_size"], 1]])
    fail("an id outside the vocabulary was accepted")
except tfm.TfmError as error:
    print(f"error: {error}")

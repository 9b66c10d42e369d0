"""Drives transformer-runner's decoding controls on a byte-level GPT-2 with
random weights (the runner is found on PATH).

usage: decoding.py CHECK CONFIG DIR
  seed    sampling with a seed gives the same tokens every run, another
          seed other tokens
  eos     with generation_config.json's eos_token_id set to a token the
          seeded sampling produces, generation stops right after it, and
          with --ignore-eos goes on to the end
  stop    --stop with bytes it produces stops right after them
  stream  the text of the first tokens arrives while the runner still runs
"""
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

RUNNER = shutil.which("transformer-runner")
PROMPT = b"In the beginning"


def model_dir(config, out, generation=None, **overrides):
    os.makedirs(out, exist_ok=True)
    with open(config) as f:
        c = json.load(f)
    c.update(overrides)
    with open(f"{out}/config.json", "w") as f:
        json.dump(c, f)
    if generation is not None:
        with open(f"{out}/generation_config.json", "w") as f:
            json.dump(generation, f)
    return f"{out}/config.json"


def run(config, tokens, *args):
    result = subprocess.run(
        [RUNNER.encode(), config.encode(), b"--random-weights", b"3",
         b"--prompt", PROMPT, b"--output-tokens", tokens.encode(), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if result.returncode:
        sys.exit(result.stderr.decode(errors="replace"))
    return np.load(tokens)[0, len(PROMPT):].tolist(), result


SAMPLE = (b"--generate", b"24", b"--seed", b"2", b"--temperature", b"1.5")


def first_new(tokens, width=1):
    """The first position >= 3 whose `width` tokens occur there first."""
    return next(i for i in range(3, len(tokens) - width)
                if bytes(tokens).index(bytes(tokens[i:i + width])) == i)


def check_seed(config, out):
    plain = model_dir(config, f"{out}/plain", eos_token_id=None)
    a, _ = run(plain, f"{out}/a.npy", *SAMPLE)
    b, _ = run(plain, f"{out}/b.npy", *SAMPLE)
    c, _ = run(plain, f"{out}/c.npy", *SAMPLE[:2], b"--seed", b"3",
               *SAMPLE[4:])
    greedy, _ = run(plain, f"{out}/g.npy", *SAMPLE[:2])
    if a != b or a == c or a == greedy:
        sys.exit(f"seed 2: {a}\nagain: {b}\nseed 3: {c}\ngreedy: {greedy}")
    print(f"seed 2 twice: same {len(a)} tokens; seed 3 and greedy differ")


def check_eos(config, out):
    # The model's config.json names no EOS.
    plain = model_dir(config, f"{out}/plain", eos_token_id=None)
    greedy, _ = run(plain, f"{out}/greedy.npy", *SAMPLE)
    first = first_new(greedy)
    eos = greedy[first]
    # An id outside the vocabulary is dropped with a warning.
    stops = model_dir(config, f"{out}/eos", {"eos_token_id": [4096, eos]},
                      eos_token_id=None)
    got, result = run(stops, f"{out}/eos.npy", *SAMPLE)
    if got != greedy[:first + 1]:
        sys.exit(f"eos {eos}: got {got}, expected {greedy[:first + 1]}")
    sys.stderr.buffer.write(result.stderr)
    print(f"eos stops after {len(got)} of 24 tokens")
    # --ignore-eos: all 24 tokens, the same as without the EOS id (the
    # sampler's stream does not depend on where sequences stop).
    past, _ = run(stops, f"{out}/ignore-eos.npy", *SAMPLE, b"--ignore-eos")
    if past != greedy:
        sys.exit(f"--ignore-eos: got {past}, expected {greedy}")
    print(f"--ignore-eos generates all {len(past)} tokens")


def check_stop(config, out):
    plain = model_dir(config, f"{out}/plain", eos_token_id=None)
    greedy, _ = run(plain, f"{out}/greedy.npy", *SAMPLE)
    text = bytes(greedy)
    start = first_new(greedy, 2)
    stop = text[start:start + 2]
    end = start + 2
    got, _ = run(plain, f"{out}/stop.npy", *SAMPLE,
                 b"--stop", b"never there", b"--stop", stop)
    if got != greedy[:end]:
        sys.exit(f"stop {stop!r}: got {got}, expected {greedy[:end]}")
    print(f"stop string ends after {len(got)} of 24 tokens")


def check_stream(config, out):
    # A long context so that generation lasts long enough to be watched.
    long = model_dir(config, f"{out}/long", eos_token_id=None,
                     n_positions=512, n_ctx=512)
    process = subprocess.Popen(
        [RUNNER, long, "--random-weights", "3", "--prompt", "a",
         "--generate", "480", "--seed", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    chunks = []
    while True:
        data = os.read(process.stdout.fileno(), 65536)
        if not data:
            break
        chunks.append((time.monotonic(), data))
    process.wait()
    if process.returncode:
        sys.exit(process.stderr.read().decode(errors="replace"))
    output = b"".join(d for _, d in chunks)
    # The first read that holds generated text must come before the one
    # that holds the summary printed after the last token.
    prefix = b"text: a"
    first = next(i for i in range(len(chunks))
                 if len(b"".join(d for _, d in chunks[:i + 1])) > len(prefix))
    last = next(i for i in range(len(chunks))
                if b"compile:" in b"".join(d for _, d in chunks[:i + 1]))
    if first >= last:
        sys.exit(f"no streaming: {len(chunks)} read(s), first text in read "
                 f"{first}, summary in read {last}")
    ahead = (chunks[last][0] - chunks[first][0]) * 1000
    print(f"streamed: first text {ahead:.0f} ms before the end, "
          f"{len(chunks)} reads, {output.count(b'compile:')} summary")


def main():
    check, config, out = sys.argv[1:4]
    {"seed": check_seed, "eos": check_eos, "stop": check_stop, "stream": check_stream}[check](
        config, out)


if __name__ == "__main__":
    main()

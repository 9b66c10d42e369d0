"""Drives the tfm Python API (tfm.load over libtfm_engine.so) for the tests
in test/python/engine-*.test; each command prints PASS lines or exits 1.

  logits CONFIG_OR_DIR IDS.npy RUNNER.npy TORCH.npy [--random SEED]
  generate CONFIG WEIGHTS IDS.npy N RUNNER_TOKENS.npy TORCH_TOKENS.npy
  prompt CONFIG WEIGHTS TEXT N          (prints the text, as the runner does)
  sample CONFIG WEIGHTS IDS.npy N
  error KIND ARGS...                    (prints "error: MESSAGE")
  ledger CONFIG B S LEDGER.json
  match CONFIG WEIGHTS|SEED PROMPT|IDS.npy RUNNER_TOKENS.npy KWARGS_JSON
                                        (generate equals the runner's tokens)
  eos-config CONFIG SEED PROMPT N OUT_DIR   (a config whose eos_token_id is a
                                        token greedy generation produces later)
  stop CONFIG SEED PROMPT N             (a stop string ends the sequence)
  gguf GGUF IDS.npy RUNNER.npy VOCAB.gguf   (a GGUF file's logits; a GGUF
                                        vocabulary encodes and decodes)
"""
import json
import sys

import numpy as np

import tfm


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def same(what, a, b, atol):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        fail(f"{what}: shape {a.shape} != {b.shape}")
    diff = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
    if diff > atol:
        fail(f"{what}: differ by {diff} > {atol}")
    print(f"PASS: {what}")


def logits(args):
    path, ids, runner, reference = args[:4]
    seed = int(args[5]) if len(args) > 5 and args[4] == "--random" else None
    m = tfm.load(path, threads=2, random_weights=seed)
    ids = np.load(ids)
    out = m.logits(ids)
    if out.dtype != np.float32 or out.shape != (*ids.shape, m.vocab_size):
        fail(f"logits are {out.dtype} {out.shape}")
    # The same engine and the same compiled code as the runner: equal bits.
    same("logits equal the runner's", out, np.load(runner), 0)
    if reference != "-":
        same("logits match PyTorch", out, np.load(reference), 1e-4)
    # Again (the compiled entry is reused), one sequence, the last position.
    same("a second call gives the same logits", m.logits(ids), out, 0)
    same("one sequence [S] gives [S, V]", m.logits(ids[0]), out[0], 0)
    same("last_only gives the last position", m.logits(ids, last_only=True),
         out[:, -1, :], 0)


def quantized(args):
    """tfm.load(..., quantize="q8_0") against the runner's --quantize q8_0,
    and a format it does not know."""
    path, ids, runner, seed = args
    m = tfm.load(path, threads=2, random_weights=int(seed), quantize="q8_0")
    same("q8_0 logits equal the runner's", m.logits(np.load(ids)),
         np.load(runner), 0)
    try:
        tfm.load(path, random_weights=int(seed), quantize="q4_9")
        fail("quantize='q4_9' loaded")
    except tfm.TfmError as e:
        print(f"PASS: TfmError: {e}")


def gguf(args):
    """tfm.load of a GGUF file: the runner's logits bit for bit; the
    tokenizer a GGUF file stores."""
    path, ids, runner, vocab = args
    m = tfm.load(path, threads=2)
    same("GGUF logits equal the runner's", m.logits(np.load(ids)),
         np.load(runner), 0)
    v = tfm.load(vocab)
    if not v.has_tokenizer:
        fail("the GGUF vocabulary was not read")
    ids = v.encode("ab c")
    same("GGUF vocabulary encodes", ids, [3, 5], 0)
    if v.decode(ids) != "ab c":
        fail(f"decode gave {v.decode(ids)!r}")
    print("PASS: GGUF vocabulary decodes")


def generate(args):
    config, weights, ids, n, runner, reference = args
    n = int(n)
    m = tfm.load(config, weights=weights, threads=2)
    ids = np.load(ids)
    tokens = m.generate(ids, max_new_tokens=n)
    same("greedy tokens equal the runner's", tokens, np.load(runner), 0)
    same("greedy tokens equal PyTorch's", tokens, np.load(reference), 0)
    # Streaming: one step at a time, the same tokens.
    steps = list(m.generate(ids, max_new_tokens=n, stream=True))
    if len(steps) != n or any(s.shape != (ids.shape[0],) for s in steps):
        fail(f"stream gave {len(steps)} steps: {steps}")
    same("streamed tokens equal the tokens", np.stack(steps, axis=1),
         tokens[:, ids.shape[1]:], 0)
    one = m.generate(ids[0], max_new_tokens=n, stream=True)
    first = next(one)
    if not isinstance(first, int) or first != tokens[0, ids.shape[1]]:
        fail(f"first streamed token of one sequence is {first!r}")
    rest = list(one)
    same("a single sequence streams ints", [first] + rest, tokens[0, ids.shape[1]:], 0)
    # Closing a stream early stops the generation after the current step.
    early = m.generate(ids[0], max_new_tokens=n, stream=True)
    next(early)
    early.close()
    same("generation after a closed stream", m.generate(ids, max_new_tokens=n), tokens, 0)


def prompt(args):
    config, weights, text, n = args
    m = tfm.load(config, weights=weights, threads=2)
    print("text: " + m.generate(text, max_new_tokens=int(n)))


def sample(args):
    config, weights, ids, n = args
    m = tfm.load(config, weights=weights, threads=2)
    ids = np.load(ids)
    kwargs = dict(max_new_tokens=int(n), temperature=1.5, top_k=20, top_p=0.95, seed=7)
    a, b = m.generate(ids, **kwargs), m.generate(ids, **kwargs)
    same("the same seed gives the same tokens", a, b, 0)
    greedy = m.generate(ids, max_new_tokens=int(n))
    if np.array_equal(a, greedy):
        fail("sampling at temperature 1.5 gave the greedy tokens")
    print("PASS: sampling differs from greedy")
    same("temperature 0 is greedy", m.generate(ids, max_new_tokens=int(n), temperature=0),
         greedy, 0)
    others = [m.generate(ids, **dict(kwargs, seed=s)) for s in (8, 9, 10)]
    if all(np.array_equal(a, o) for o in others):
        fail("seeds 7-10 gave the same tokens")
    print("PASS: other seeds give other tokens")


def error(args):
    kind = args[0]
    try:
        if kind == "load":
            tfm.load(args[1], **json.loads(args[2]) if len(args) > 2 else {})
        elif kind == "logits":
            tfm.load(args[1], random_weights=1).logits(json.loads(args[2]))
        elif kind == "generate":
            tfm.load(args[1], random_weights=1).generate(
                json.loads(args[2]), **json.loads(args[3]))
        elif kind == "prompt":
            tfm.load(args[1], random_weights=1).generate(args[2], max_new_tokens=2)
    except tfm.TfmError as e:
        print(f"error: {e}")
        return
    fail("no TfmError")


def ledger(args):
    config, batch, seq, path = args
    m = tfm.load(config, random_weights=1)
    expected = next(f for f in json.load(open(path)) if f["function"] == "forward")
    got = m.ledger_at(int(batch), int(seq))
    if got != expected:
        fail(f"ledger differs:\n{json.dumps(got)[:400]}\n{json.dumps(expected)[:400]}")
    print(f"PASS: ledger at [{batch}, {seq}] equals the runner's "
          f"(params {got['totals']['params']}, flops {got['totals']['flops']})")
    if int(batch) == 1 and int(seq) == 1 and m.ledger != expected:
        fail("m.ledger is not the [1, 1] ledger")


def match(args):
    config, weights, prompt, runner, kwargs = args
    kwargs = json.loads(kwargs)
    if weights.isdigit():
        m = tfm.load(config, random_weights=int(weights), threads=2)
    else:
        m = tfm.load(config, weights=weights, threads=2)
    ids = np.load(prompt) if prompt.endswith(".npy") else m.encode(prompt)[None, :]
    tokens = m.generate(ids, **kwargs)
    expected = np.load(runner)
    same(f"generate({', '.join(f'{k}={v!r}' for k, v in kwargs.items())}) equals "
         f"the runner's {expected.shape[1] - ids.shape[1]} new tokens", tokens, expected, 0)
    for warning in m.warnings:
        print(f"warning: {warning}")


def eos_config(args):
    config, seed, prompt, n, out = args
    m = tfm.load(config, random_weights=int(seed), threads=2)
    ids = m.encode(prompt)
    new = m.generate(ids, max_new_tokens=int(n))[len(ids):]
    # The first new token that differs from the first one.
    end = next(i for i in range(1, len(new)) if new[i] != new[0])
    c = json.load(open(config))
    c["eos_token_id"] = int(new[end])
    json.dump(c, open(f"{out}/config.json", "w"))
    print(f"eos_token_id {int(new[end])}")


def stop(args):
    config, seed, prompt, n = args
    m = tfm.load(config, random_weights=int(seed), threads=2)
    ids = m.encode(prompt)
    full = m.generate(ids, max_new_tokens=int(n))
    new = bytes(int(t) for t in full[len(ids):])
    # The first new byte that is not the first one: the sequence must end
    # right after its first occurrence.
    end = next(i for i in range(1, len(new)) if new[i] != new[0])
    got = m.generate(ids, max_new_tokens=int(n), stop=new[end:end + 1])
    same(f"stop={new[end:end + 1]!r} ends the sequence after {end + 1} new tokens",
         got, full[:len(ids) + end + 1], 0)
    steps = list(m.generate(ids, max_new_tokens=int(n), stop=new[end:end + 1], stream=True))
    same("the stream ends there too", steps, full[len(ids):len(ids) + end + 1], 0)


if __name__ == "__main__":
    globals()[sys.argv[1].replace("-", "_")](sys.argv[2:])

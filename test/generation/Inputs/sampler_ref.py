"""References for tfm's sampler (tfm/Runtime/Sampler.h).

usage:
  sampler_ref.py make DIR            random logits [R, V] (with ties) and seen ids
  sampler_ref.py check DIR OUT.txt PROCESSED.npy [--do-sample] [--temperature T]
      [--top-k K] [--top-p P] [--repetition-penalty R] [--seed S] [--draws N]

`check` compares the logits tfm-sample wrote after its processors with
Hugging Face's logits processors (RepetitionPenaltyLogitsProcessor,
TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper, in the order
`generate` applies them, min_tokens_to_keep=1), written out here in torch as
transformers implements them; then redraws the ids tfm-sample printed from
those logits with the generator and draw of Sampler.h in pure Python.
"""
import argparse
import math
import sys

import numpy as np
import torch

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def next_double(self):
        return (self.next() >> 11) * 2.0**-53


def draw(row, u):
    """Sampler.h step 5: the first token whose running weight passes u * total."""
    finite = [float(x) for x in row if x != -math.inf]
    m = max(finite)
    weights = [0.0 if x == -math.inf else math.exp(float(x) - m) for x in row]
    total = 0.0
    for w in weights:
        total += w
    target, cumulative, last = u * total, 0.0, 0
    for i, w in enumerate(weights):
        if w == 0.0:
            continue
        cumulative += w
        last = i
        if cumulative > target:
            return i
    return last


# Hugging Face's processors (transformers/generation/logits_process.py).
def repetition_penalty(input_ids, scores, penalty):
    score = torch.gather(scores, 1, input_ids)
    score = torch.where(score < 0, score * penalty, score / penalty)
    return scores.scatter(1, input_ids, score)


def top_k(scores, k, min_tokens_to_keep=1):
    k = min(max(k, min_tokens_to_keep), scores.size(-1))
    remove = scores < torch.topk(scores, k)[0][..., -1, None]
    return scores.masked_fill(remove, -float("inf"))


def top_p(scores, p, min_tokens_to_keep=1):
    # transformers sorts unstably, which leaves the order of tied logits (and
    # so which of them stay) to the sort; a stable sort is tfm's rule.
    sorted_logits, sorted_indices = torch.sort(scores, descending=False,
                                               stable=True)
    cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    sorted_remove = cumulative <= (1 - p)
    sorted_remove[..., -min_tokens_to_keep:] = 0
    remove = sorted_remove.scatter(1, sorted_indices, sorted_remove)
    return scores.masked_fill(remove, -float("inf"))


def hf_process(logits, seen, a):
    scores = torch.from_numpy(logits.copy())
    if a.repetition_penalty != 1.0:
        scores = repetition_penalty(torch.from_numpy(seen), scores,
                                    a.repetition_penalty)
    if not a.do_sample:
        return scores.numpy()
    if a.temperature != 1.0:
        scores = scores / a.temperature
    if a.top_k != 0:
        scores = top_k(scores, a.top_k)
    if a.top_p < 1.0:
        scores = top_p(scores, a.top_p)
    return scores.numpy()


def make(out):
    rng = np.random.default_rng(5)
    rows, vocab = 6, 97
    logits = (rng.standard_normal((rows, vocab)) * 3).astype(np.float32)
    # Ties at and around the k-th value: top-k keeps every tie of its
    # threshold; negative and positive logits both penalised.
    logits[1, 10:16] = logits[1].max()
    logits[2, :] = np.round(logits[2])
    logits[3, :] = -np.abs(logits[3])
    seen = rng.integers(0, vocab, (rows, 12)).astype(np.int64)
    seen[:, 0] = seen[:, 1]  # a token seen twice is penalised once
    np.save(f"{out}/logits.npy", logits)
    np.save(f"{out}/seen.npy", seen)


def check(a):
    logits = np.load(f"{a.dir}/logits.npy")
    seen = np.load(f"{a.dir}/seen.npy")
    processed = np.load(a.processed)
    expected = hf_process(logits, seen, a)
    if not np.array_equal(np.isinf(processed), np.isinf(expected)) or \
            not np.array_equal(processed, expected):
        bad = np.argwhere(processed != expected)
        sys.exit(f"processed logits differ from Hugging Face's at {bad[:8].tolist()}: "
                 f"{processed[tuple(bad[0])]} vs {expected[tuple(bad[0])]}")
    printed = open(a.out).read().split("ids:")[1].split()
    ids = [int(t) for t in printed]
    random = SplitMix64(a.seed)
    ref = []
    for _ in range(a.draws):
        for r in range(logits.shape[0]):
            if a.do_sample:
                ref.append(draw(expected[r], random.next_double()))
            else:
                ref.append(int(np.argmax(expected[r])))
    if ids != ref:
        sys.exit(f"ids {ids}\nexpected {ref}")
    kept = np.isfinite(expected).sum(-1)
    print(f"match: {len(ids)} ids, {len(set(ids))} distinct; "
          f"kept per row {kept.tolist()}")


def greedy_limit(a):
    """A temperature so small that transformers' logits / T overflow (its
    softmax is then NaN and multinomial raises): tfm's processed logits are
    0 at each row's maxima and -inf elsewhere, and every id drawn is one of
    the row's maxima."""
    logits = np.load(f"{a.dir}/logits.npy")
    processed = np.load(a.processed)
    maxima = logits == logits.max(-1, keepdims=True)
    if np.isnan(processed).any() or \
            not np.array_equal(processed == 0, maxima) or \
            not np.all(processed[~maxima] < -1e30):
        sys.exit(f"processed logits are not the greedy limit: {processed}")
    ids = [int(t) for t in open(a.out).read().split("ids:")[1].split()]
    rows = logits.shape[0]
    bad = [(i, t) for i, t in enumerate(ids) if not maxima[i % rows, t]]
    if bad:
        sys.exit(f"ids not at their row's maxima: {bad}")
    print(f"greedy limit: {len(ids)} ids at their row's maxima, "
          f"{len(set(ids))} distinct")


def main():
    if sys.argv[1] == "make":
        return make(sys.argv[2])
    p = argparse.ArgumentParser()
    p.add_argument("cmd")
    p.add_argument("dir")
    p.add_argument("out")
    p.add_argument("processed")
    p.add_argument("--do-sample", action="store_true")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--top-k", type=int, default=50)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--repetition-penalty", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--draws", type=int, default=1)
    a = p.parse_args()
    greedy_limit(a) if a.cmd == "greedy-limit" else check(a)


if __name__ == "__main__":
    main()

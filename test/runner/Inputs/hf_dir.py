"""Model directories written by Hugging Face `transformers` (the reference).

usage:
  hf_dir.py make FAMILY DIR [--dtype f32|bf16|f16] [--shard-size SIZE]
                            [--seed N] [--batch B] [--seq S]
      A tiny random FAMILY (gpt2, llama) causal LM saved with save_pretrained
      into DIR, in that dtype (weights rounded to it), sharded when
      --shard-size is given (e.g. 20KB), and DIR/ids.npy [B, S].
  hf_dir.py logits DIR IDS.npy OUT.npy [--dtype f32|bf16]
      The reference logits, transformers run in f32 on DIR's weights (a bf16
      or f16 checkpoint is upcast: the same numbers tfm computes with), or in
      bf16 (weights rounded to bf16; logits saved widened to f32). torch
      1.13 has no f16 matmul on the CPU, so there is no f16 run.
  hf_dir.py greedy DIR IDS.npy N OUT.npy
      The prompt and N greedy tokens, [B, S + N], from an explicit argmax
      loop over full forward passes (generate() needs a newer torch).
  hf_dir.py compare ACTUAL.npy EXPECTED.npy
      Exits non-zero unless the arrays agree within 1e-4 abs + 1e-3 rel
      (float) or exactly (integers).
  hf_dir.py compare-half ACTUAL.npy F32.npy --dtype bf16|f16 [--half HALF.npy]
      Logits computed in bf16 or f16 (ACTUAL) against the f32 reference: the
      largest error, relative to the largest |logit|, within the compute
      type's budget (HALF_BUDGET). With --half (transformers' own bf16 run;
      where its error exceeds the budget, 1.5x its error is the budget):
      also within that budget of it, and no more than 1.5x transformers' own
      bf16 error against f32 (tfm must be as accurate as the reference's
      half-precision run).
  hf_dir.py greedy-half DIR TOKENS.npy PROMPT_LEN --dtype bf16|f16
      Greedy tokens generated in bf16 or f16, checked teacher-forced against
      transformers in f32 over the same sequence: each new token (up to and
      including a first EOS) is the f32 argmax, or a near tie whose f32
      logit is within the compute type's budget of the top one. Prints how
      many are the exact argmax.

Runs under %hf_python (transformers 4.46.3 over torch 1.13).
"""
import argparse
import sys

import numpy as np


def tiny_config(family):
    import transformers
    if family == "gpt2":
        return transformers.GPT2Config(
            vocab_size=96, n_positions=48, n_embd=32, n_layer=2, n_head=4,
            bos_token_id=95, eos_token_id=95)
    if family == "llama":
        return transformers.LlamaConfig(
            vocab_size=80, hidden_size=32, intermediate_size=48,
            num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            max_position_embeddings=48, rms_norm_eps=1e-5, rope_theta=10000.0,
            tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)
    sys.exit(f"unknown family {family}")


DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def make(args):
    import torch
    import transformers
    torch.manual_seed(args.seed)
    config = tiny_config(args.family)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    # Larger than the default init, so that the logits are not all ~0 and
    # greedy tokens differ from step to step.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.2)
    model = model.to(getattr(torch, DTYPES[args.dtype]))
    kwargs = {"safe_serialization": True}
    if args.shard_size:
        kwargs["max_shard_size"] = args.shard_size
    model.save_pretrained(args.dir, **kwargs)
    rng = np.random.default_rng(args.seed)
    ids = rng.integers(0, config.vocab_size, (args.batch, args.seq))
    np.save(f"{args.dir}/ids.npy", ids.astype(np.int64))


def load_f32(path):
    import torch
    import transformers
    model = transformers.AutoModelForCausalLM.from_pretrained(
        path, torch_dtype=torch.float32)
    return model.eval()


def logits(args):
    import torch
    import transformers
    if args.dtype == "bf16":
        model = transformers.AutoModelForCausalLM.from_pretrained(
            args.dir, torch_dtype=torch.bfloat16).eval()
    else:
        model = load_f32(args.dir)
    ids = torch.from_numpy(np.load(args.ids))
    with torch.no_grad():
        out = model(input_ids=ids).logits
    np.save(args.out, out.float().numpy())


def greedy(args):
    import torch
    model = load_f32(args.dir)
    ids = torch.from_numpy(np.load(args.ids))
    # As generate() does: a sequence ends at an EOS token of the model's
    # generation config and is padded with the first one after that; the
    # loop ends when every sequence has.
    eos = model.generation_config.eos_token_id
    eos = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
    done = torch.zeros(ids.shape[0], dtype=torch.bool)
    with torch.no_grad():
        for _ in range(args.count):
            step = model(input_ids=ids).logits[:, -1, :].argmax(-1)
            if eos:
                step = torch.where(done, torch.tensor(eos[0]), step)
                done |= torch.isin(step, torch.tensor(eos))
            ids = torch.cat([ids, step[:, None]], dim=1)
            if bool(done.all()):
                break
    np.save(args.out, ids.numpy().astype(np.int64))


def compare(args):
    actual, expected = np.load(args.actual), np.load(args.expected)
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        sys.exit(f"mismatch: got {actual.dtype}{list(actual.shape)}, "
                 f"expected {expected.dtype}{list(expected.shape)}")
    if actual.dtype.kind in "iu":
        if not np.array_equal(actual, expected):
            sys.exit(f"mismatch:\n{actual}\nexpected\n{expected}")
        print("match: equal")
        return
    err = np.max(np.abs(actual.astype(np.float64) - expected), initial=0.0)
    if not np.allclose(actual, expected, atol=1e-4, rtol=1e-3):
        sys.exit(f"mismatch: max abs error {err:.3g}")
    print(f"match: max abs error {err:.3g}")


# The largest logit error, as a fraction of the largest |logit|, allowed for
# a model computed in that type (f32 accumulation and statistics). bf16 keeps
# 8 significant bits, f16 11; over the tiny test models (2-3 layers, weights
# of std 0.2) tfm's errors measured 0.8-2.6% (bf16) and 0.12-0.36% (f16),
# and transformers' own bf16 runs 1.0-3.8%: budgets with room above both.
HALF_BUDGET = {"bf16": 5e-2, "f16": 6e-3}


def relative_error(actual, expected):
    scale = float(np.max(np.abs(expected)))
    return float(np.max(np.abs(actual.astype(np.float64) - expected))) / scale


def compare_half(args):
    actual, f32 = np.load(args.actual), np.load(args.f32)
    if actual.shape != f32.shape:
        sys.exit(f"mismatch: shape {list(actual.shape)}, expected "
                 f"{list(f32.shape)}")
    budget = HALF_BUDGET[args.dtype]
    err = relative_error(actual, f32)
    print(f"{args.dtype} vs f32: {err:.3g} of the logit range "
          f"(budget {budget:g})")
    failed = err > budget
    if args.half:
        half = np.load(args.half)
        reference_err = relative_error(half, f32)
        agreement = relative_error(actual, half)
        print(f"{args.dtype} vs transformers {args.dtype}: {agreement:.3g}; "
              f"transformers {args.dtype} vs f32: {reference_err:.3g}")
        # Weights whose own half run strays past the budget (sharp
        # attention or softcapped logits on tiny random weights) are held
        # to 1.5x that run's error instead. The agreement of the two half
        # runs is printed, not held to a limit: each rounds differently
        # (AMX tiles, pair dot products and FMAs sum in other orders), so
        # it is bounded by the sum of the two errors and says nothing
        # the error against f32 does not.
        limit = max(budget, 1.5 * reference_err)
        failed = err > limit or err > 1.5 * reference_err + 1e-6
    if failed:
        sys.exit("mismatch")
    print("match")


def greedy_half(args):
    import torch
    model = load_f32(args.dir)
    tokens = np.load(args.tokens)
    eos = model.generation_config.eos_token_id
    eos = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
    with torch.no_grad():
        logits = model(input_ids=torch.from_numpy(tokens)).logits.numpy()
    budget = HALF_BUDGET[args.dtype] * float(np.max(np.abs(logits)))
    exact = total = 0
    for b in range(tokens.shape[0]):
        for t in range(args.prompt_len, tokens.shape[1]):
            row, token = logits[b, t - 1], int(tokens[b, t])
            gap = float(row.max() - row[token])
            total += 1
            exact += gap == 0.0
            if gap > budget:
                sys.exit(f"mismatch: sequence {b} step {t}: token {token} is "
                         f"{gap:.3g} below the f32 argmax "
                         f"{int(row.argmax())} (budget {budget:.3g})")
            if token in eos:
                break
    print(f"match: {exact} of {total} tokens are the f32 argmax, the rest "
          f"near ties")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make")
    p.add_argument("family")
    p.add_argument("dir")
    p.add_argument("--dtype", default="f32", choices=sorted(DTYPES))
    p.add_argument("--shard-size")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=7)
    p.set_defaults(run=make)
    p = sub.add_parser("logits")
    p.add_argument("dir")
    p.add_argument("ids")
    p.add_argument("out")
    p.add_argument("--dtype", default="f32", choices=["f32", "bf16"])
    p.set_defaults(run=logits)
    p = sub.add_parser("greedy")
    p.add_argument("dir")
    p.add_argument("ids")
    p.add_argument("count", type=int)
    p.add_argument("out")
    p.set_defaults(run=greedy)
    p = sub.add_parser("compare")
    p.add_argument("actual")
    p.add_argument("expected")
    p.set_defaults(run=compare)
    p = sub.add_parser("compare-half")
    p.add_argument("actual")
    p.add_argument("f32")
    p.add_argument("--dtype", required=True, choices=sorted(HALF_BUDGET))
    p.add_argument("--half")
    p.set_defaults(run=compare_half)
    p = sub.add_parser("greedy-half")
    p.add_argument("dir")
    p.add_argument("tokens")
    p.add_argument("prompt_len", type=int)
    p.add_argument("--dtype", required=True, choices=sorted(HALF_BUDGET))
    p.set_defaults(run=greedy_half)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()

"""Model directories written by Hugging Face `transformers` (the reference).

usage:
  hf_dir.py make FAMILY DIR [--dtype f32|bf16|f16] [--shard-size SIZE]
                            [--seed N] [--batch B] [--seq S]
      A tiny random FAMILY (gpt2, llama) causal LM saved with save_pretrained
      into DIR, in that dtype (weights rounded to it), sharded when
      --shard-size is given (e.g. 20KB), and DIR/ids.npy [B, S].
  hf_dir.py logits DIR IDS.npy OUT.npy
      The reference logits, transformers run in f32 on DIR's weights (a bf16
      or f16 checkpoint is upcast: the same numbers tfm computes with).
  hf_dir.py greedy DIR IDS.npy N OUT.npy
      The prompt and N greedy tokens, [B, S + N], from an explicit argmax
      loop over full forward passes (generate() needs a newer torch).
  hf_dir.py compare ACTUAL.npy EXPECTED.npy
      Exits non-zero unless the arrays agree within 1e-4 abs + 1e-3 rel
      (float) or exactly (integers).

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
    model = load_f32(args.dir)
    ids = torch.from_numpy(np.load(args.ids))
    with torch.no_grad():
        out = model(input_ids=ids).logits
    np.save(args.out, out.numpy().astype(np.float32))


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
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()

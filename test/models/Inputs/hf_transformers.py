"""Tiny random checkpoints written by Hugging Face `transformers`, and its
logits and greedy tokens as the reference (run with %hf_python).

usage:
  hf_transformers.py make FAMILY DIR [--seed N] [--batch B] [--seq S]
                     [--set KEY=JSON ...]
      instantiates FAMILY's tiny config (below; --set overrides fields),
      fills every parameter with random values sized to keep activations
      near unit scale, and writes DIR with `save_pretrained` (config.json and
      an f32 model.safetensors), plus DIR/ids.npy (int64 [B, S]).
  hf_transformers.py logits DIR IDS OUT
      transformers' logits [B, S, V] for DIR's model on IDS (f32).
  hf_transformers.py greedy DIR IDS N OUT
      greedy generation as an explicit argmax loop over full forward passes
      (no cache; `generate()` does not import with torch 1.13): [B, S + N].
  hf_transformers.py close GOT WANT [--atol A] [--rtol R]
      exits 1 unless GOT matches WANT within A abs + R rel (1e-4 / 1e-3).
  hf_transformers.py same A B
      exits 1 unless A and B are equal.
"""
import argparse
import json
import sys

import numpy as np

# Small enough to run in a second, large enough to exercise what each family
# does differently. No EOS: random weights may pick any token, and an EOS
# would stop tfm's generation early.
TINY = {
    # GQA 4:2 and a head_dim (32) that is not hidden_size / heads (16).
    "gemma": dict(vocab_size=96, hidden_size=64, intermediate_size=128,
                  num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=32,
                  max_position_embeddings=64,
                  hidden_activation="gelu_pytorch_tanh", rope_theta=10000.0,
                  pad_token_id=0, bos_token_id=1, eos_token_id=None),
    # GQA 4:2; a sliding window as long as the context (so it never masks).
    "phi3": dict(vocab_size=96, hidden_size=64, intermediate_size=96,
                 num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=64,
                 rope_theta=5000.0, sliding_window=64, pad_token_id=0,
                 bos_token_id=1, eos_token_id=None),
    # Half of each 16-wide head rotates (8 dims).
    "gpt_neox": dict(vocab_size=96, hidden_size=64, intermediate_size=128,
                     num_hidden_layers=2, num_attention_heads=4,
                     max_position_embeddings=64, rotary_pct=0.5,
                     rotary_emb_base=10000, use_parallel_residual=True,
                     hidden_act="gelu", bos_token_id=1, eos_token_id=None,
                     pad_token_id=0),
    "opt": dict(vocab_size=96, hidden_size=64, ffn_dim=128,
                num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=64, word_embed_proj_dim=64,
                do_layer_norm_before=True, activation_function="relu",
                pad_token_id=0, bos_token_id=1, eos_token_id=None),
}


def config_class(family):
    import transformers
    return {"gemma": transformers.GemmaConfig,
            "phi3": transformers.Phi3Config,
            "gpt_neox": transformers.GPTNeoXConfig,
            "opt": transformers.OPTConfig}[family]


def randomize(model, family, rng):
    """Norm scales near 1 (Gemma's near 0: it scales by 1 + w), small
    biases, matrices scaled by 1/sqrt(fan_in), so that the logits spread over
    a few units and greedy choices are not near-ties."""
    import torch
    for name, p in model.named_parameters():
        shape = tuple(p.shape)
        x = rng.standard_normal(shape)
        if len(shape) == 1:
            norm = "norm" in name
            base = 1.0 if norm and name.endswith("weight") and \
                family != "gemma" else 0.0
            x = base + 0.1 * x
        elif "embed_positions" in name:
            x = 0.5 * x
        elif "embed" in name and "embed_out" not in name:
            # A tied head favours the input token itself (and Gemma scales
            # the embeddings by sqrt(d)): small embeddings keep the blocks'
            # contribution visible and the greedy tokens varied.
            x = (0.15 if family == "gemma" else 0.3) * x
        else:
            scale = 3.0 if ("lm_head" in name or "embed_out" in name) else 1.5
            x = x * scale / np.sqrt(shape[1])
        with torch.no_grad():
            p.copy_(torch.from_numpy(x.astype(np.float32)))


def cmd_make(argv):
    import torch
    import transformers
    p = argparse.ArgumentParser(prog="hf_transformers.py make")
    p.add_argument("family")
    p.add_argument("dir")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=7)
    p.add_argument("--set", action="append", default=[])
    a = p.parse_args(argv)
    fields = dict(TINY[a.family])
    for item in a.set:
        key, value = item.split("=", 1)
        fields[key] = json.loads(value)
    config = config_class(a.family)(**fields)
    torch.manual_seed(a.seed)
    model = transformers.AutoModelForCausalLM.from_config(config)
    model = model.float().eval()
    rng = np.random.default_rng(a.seed)
    randomize(model, a.family, rng)
    model.save_pretrained(a.dir, safe_serialization=True)
    ids = rng.integers(0, fields["vocab_size"], (a.batch, a.seq))
    np.save(f"{a.dir}/ids.npy", ids.astype(np.int64))
    params = sum(t.numel() for t in model.parameters())
    print(f"{a.family}: {params} parameters, ids {list(ids.shape)}")


def load(directory):
    import transformers
    model = transformers.AutoModelForCausalLM.from_pretrained(
        directory, torch_dtype="float32")
    return model.eval()


def forward(model, ids):
    import torch
    with torch.no_grad():
        return model(input_ids=ids, use_cache=False).logits.float()


def cmd_logits(argv):
    import torch
    directory, ids, out = argv
    model = load(directory)
    ids = torch.from_numpy(np.load(ids)).long()
    np.save(out, forward(model, ids).numpy().astype(np.float32))


def cmd_greedy(argv):
    import torch
    directory, ids, count, out = argv
    model = load(directory)
    ids = torch.from_numpy(np.load(ids)).long()
    margin = float("inf")
    for _ in range(int(count)):
        last = forward(model, ids)[:, -1]
        top = torch.topk(last, 2, dim=-1).values
        margin = min(margin, float((top[:, 0] - top[:, 1]).min()))
        ids = torch.cat([ids, last.argmax(-1, keepdim=True)], dim=1)
    np.save(out, ids.numpy().astype(np.int64))
    new = ids[:, -int(count):]
    print(f"reference: {new.unique().numel()} distinct new tokens, "
          f"smallest top-2 logit margin {margin:.3g}")


def cmd_close(argv):
    p = argparse.ArgumentParser(prog="hf_transformers.py close")
    p.add_argument("got")
    p.add_argument("want")
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--rtol", type=float, default=1e-3)
    a = p.parse_args(argv)
    got, want = np.load(a.got), np.load(a.want)
    if got.shape != want.shape:
        print(f"FAIL: shapes {list(got.shape)} and {list(want.shape)}")
        return 1
    err = np.abs(got.astype(np.float64) - want)
    print(f"logits {list(got.shape)}: max abs error {err.max():.2e}, "
          f"reference std {want.std():.2f}")
    if not np.allclose(got, want, atol=a.atol, rtol=a.rtol):
        i = np.unravel_index(np.argmax(err - a.rtol * np.abs(want)), err.shape)
        print(f"FAIL: at {list(i)}: got {got[i]}, reference {want[i]}")
        return 1
    print("PASS: logits match transformers")
    return 0


def cmd_same(argv):
    a, b = np.load(argv[0]), np.load(argv[1])
    if a.shape != b.shape or not (a == b).all():
        print(f"FAIL: different:\n{a!r}\n{b!r}")
        return 1
    print(f"PASS: same tokens {list(a.shape)}")
    return 0


def main():
    cmd, argv = sys.argv[1], sys.argv[2:]
    commands = {"make": cmd_make, "logits": cmd_logits, "greedy": cmd_greedy,
                "close": cmd_close, "same": cmd_same}
    if cmd not in commands:
        sys.exit(f"unknown command {cmd}")
    return commands[cmd](argv) or 0


if __name__ == "__main__":
    sys.exit(main())

"""Tiny random checkpoints saved by Hugging Face transformers (or, for the
families newer than it, by the torch modules of hf_newer_families.py), and
their reference logits and greedy tokens, for the Llama-family variant
tests.

Runs under %hf_python (transformers 4.46.3 over torch 1.13).

usage:
  hf_family.py make CONFIG DIR [--seed N] [--batch B] [--seq S]
      builds the transformers model of CONFIG (a config.json) with random
      weights, writes it with save_pretrained (DIR/config.json and an f32
      DIR/model.safetensors) and random prompt ids [B, S] to DIR/ids.npy.
  hf_family.py logits DIR IDS OUT [--dtype bf16]
                                        reference logits [B, S, V] (f32;
                                        or the model run in bf16)
  hf_family.py greedy DIR IDS N OUT     reference greedy tokens [B, S + N]:
      an argmax loop, each step a full forward pass over the whole sequence
      (transformers' generate() does not import with torch 1.13).
  hf_family.py close A B                exits 1 unless A and B agree within
      1e-4 abs + 1e-3 rel (and have the same shape)
  hf_family.py same A B                 exits 1 unless A == B exactly
  hf_family.py v5config SRC DST         rewrites the config.json SRC into the
      layout transformers 5 writes (see v5_layout); the math is unchanged.
  hf_family.py v5weights SRC DST        rewrites model.safetensors SRC with
      transformers 5's fused expert tensors (see cmd_v5weights).
  hf_family.py moe-as-llama SRC DST     the one-expert Mixtral directory SRC
      as the Llama it equals (its expert the MLP, no router) in DST.

Where transformers 4.46 and 5.x differ on what these tests exercise
(which layers slide; the families 4.46 lacks), the reference follows 5.x in
f32 eager mode. CONFIG may be in the 4.x layout (rope_theta, rope_scaling)
or the 5.x one (rope_parameters, layer_types, dtype); legacy_config reads
either.

Qwen3 is newer than transformers 4.46, so its reference is built here from
transformers' Llama modules, following the published Qwen3 modeling code
(transformers >= 4.51, models/qwen3/modeling_qwen3.py): Qwen3 is Llama
(RMSNorm, SwiGLU, GQA, RoPE, `head_dim` independent of hidden_size / heads,
`attention_bias` on q/k/v/o) plus, in each attention, `q_norm` and `k_norm`:
RMSNorms of size head_dim applied to every query / key head after the q/k
projection and before RoPE:
    q = q_norm(q_proj(x).view(B, S, H, dh)).transpose(1, 2)
Here that is a forward hook on q_proj/k_proj that applies the head-wise norm
(registered as self_attn.q_norm / k_norm, so the checkpoint names are the
published ones). save_pretrained then writes a Llama config, which is
replaced by the Qwen3 CONFIG.

Sliding windows follow transformers 5.x, which slides only some layers:
Qwen2/Qwen3 the layers i >= max_window_layers (or per `layer_types`), and
only with use_sliding_window. transformers 4.46's eager Qwen2 mask slides
every layer instead (its per-layer choice reaches FlashAttention-2 only), and
Llama (under Qwen3) slides none; so each layer whose kind differs from the
mask 4.46 gives it gets its own mask (see with_layer_mask). Gemma 2 takes
`layer_types` through its layers' `is_sliding`.

OLMo 2, Qwen3-MoE and Gemma 3 text are not in 4.46 at all: their references
are the self-contained torch modules of hf_newer_families.py, written from
transformers 5.x's modeling code and saved under the published names.
"""
import json
import os
import sys

import numpy as np
import torch

import hf_newer_families as newer

ATOL, RTOL = 1e-4, 1e-3
FULL, SLIDING = newer.FULL, newer.SLIDING

# Families that multiply the embeddings by sqrt(hidden_size).
SCALED_EMBEDDINGS = ("gemma", "gemma2", "gemma3_text")


def load_json(path):
    with open(path) as f:
        return json.load(f)


def add_qk_norm(model, cfg):
    """Qwen3's per-head q/k RMSNorm on a Llama model (see the docstring)."""
    from transformers.models.llama.modeling_llama import LlamaRMSNorm
    dh = cfg["head_dim"]
    eps = cfg.get("rms_norm_eps", 1e-6)
    for layer in model.model.layers:
        attn = layer.self_attn
        for which in ("q", "k"):
            norm = LlamaRMSNorm(dh, eps=eps)
            attn.add_module(f"{which}_norm", norm)

            def hook(module, inputs, out, norm=norm):
                return norm(out.view(*out.shape[:-1], -1, dh)).flatten(-2)
            getattr(attn, f"{which}_proj").register_forward_hook(hook)


# The transformers 5 layout (v5_layout writes it; legacy_config reads it).
NESTED_ROPE = {"gemma3_text"}
LAYER_TYPE_FAMILIES = {"qwen2", "qwen3", "gemma2", "gemma3_text"}
ROPE_FAMILIES = {"llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe",
                 "olmo2", "gemma", "gemma2", "gemma3_text", "phi3", "gpt_neox"}
DEFAULT_THETA = {"gemma3_text": 1e6}


def legacy_config(cfg):
    """CONFIG in the 4.x layout: a 5.x `rope_parameters` back into
    rope_theta, partial_rotary_factor and rope_scaling (Gemma 3's nested
    one: full_attention -> rope_theta + rope_scaling, sliding_attention ->
    rope_local_base_freq), `dtype` back into torch_dtype. `layer_types`
    stays: the families read it."""
    cfg = dict(cfg)
    rope = cfg.pop("rope_parameters", None)
    if rope is not None:
        if cfg["model_type"] in NESTED_ROPE:
            local = rope.get(SLIDING) or {}
            if "rope_theta" in local:
                cfg["rope_local_base_freq"] = local["rope_theta"]
            rope = rope.get(FULL) or {}
        rope = dict(rope)
        if "rope_theta" in rope:
            cfg["rope_theta"] = rope.pop("rope_theta")
        if "partial_rotary_factor" in rope:
            cfg["partial_rotary_factor"] = rope.pop("partial_rotary_factor")
        kind = rope.get("rope_type", rope.get("type", "default"))
        if kind == "longrope" and cfg["model_type"] == "phi3":
            rope = phi3_rope_scaling(cfg, rope)
        cfg["rope_scaling"] = None if kind == "default" else rope
    if "dtype" in cfg:
        cfg.setdefault("torch_dtype", cfg.pop("dtype"))
    return cfg


def phi3_rope_scaling(cfg, rope):
    """4.46's Phi-3 takes exactly {type, short_factor, long_factor}; 5.x's
    copy of original_max_position_embeddings goes back to the top level
    (where 5.x reads it first anyway). A `factor` or `attention_factor`
    stays, for 4.46 to refuse: it cannot follow 5.x there."""
    rope = dict(rope)
    orig = rope.pop("original_max_position_embeddings", None)
    if orig is not None:
        cfg.setdefault("original_max_position_embeddings", orig)
    rope["type"] = rope.pop("rope_type", rope.get("type"))
    return rope


def qwen_layer_types(cfg):
    """transformers 5.x Qwen2/Qwen3: ([kind of each layer], window). No
    window without use_sliding_window; then `layer_types`, else sliding
    from layer max_window_layers (default 28) on."""
    n = cfg["num_hidden_layers"]
    window = cfg.get("sliding_window") if cfg.get("use_sliding_window") else None
    if window is None:
        return [FULL] * n, None
    types = cfg.get("layer_types") or [
        SLIDING if i >= cfg.get("max_window_layers", 28) else FULL
        for i in range(n)]
    return list(types), window


def gemma2_layer_types(cfg):
    """transformers 5.x Gemma 2: `layer_types`, else the even layers slide."""
    if cfg.get("sliding_window", 4096) is None:
        return [FULL] * cfg["num_hidden_layers"]
    return list(cfg.get("layer_types") or [
        SLIDING if (i + 1) % 2 else FULL
        for i in range(cfg["num_hidden_layers"])])


def default_layer_types(cfg):
    """The `layer_types` transformers 5 writes for a legacy config."""
    kind = cfg["model_type"]
    if kind in ("qwen2", "qwen3"):
        return qwen_layer_types(cfg)[0]
    if kind == "gemma2":
        return gemma2_layer_types(cfg)
    return newer.gemma3_layer_types(cfg)


def causal_mask_like(mask, cache_position, window):
    """An additive mask of `mask`'s shape [B, 1, S, T] for queries at
    cache_position: key j hidden (finfo.min) when j > i, or with a window W
    when i - j >= W. Tests pass no padding, so there is none to keep."""
    b, _, s, t = mask.shape
    pos = (torch.arange(s) if cache_position is None else cache_position)
    i, j = pos.reshape(-1, 1), torch.arange(t).reshape(1, -1)
    hidden = j > i
    if window is not None:
        hidden = hidden | (j <= i - window)
    out = torch.zeros(s, t, dtype=mask.dtype).masked_fill(
        hidden, torch.finfo(mask.dtype).min)
    return out[None, None].expand(b, 1, s, t)


def with_layer_mask(layer, window):
    """Replaces the decoder layer's forward by one that rewrites its
    `attention_mask` kwarg (the 4D additive eager mask) to the causal mask,
    sliding when `window` is set. torch 1.13 has no forward pre-hook with
    kwargs, and the models pass the mask by keyword."""
    forward = layer.forward

    def wrapped(*args, **kwargs):
        mask = kwargs.get("attention_mask")
        if mask is None or mask.dim() != 4:
            raise RuntimeError("expected the 4D eager attention mask")
        kwargs["attention_mask"] = causal_mask_like(
            mask, kwargs.get("cache_position"), window)
        return forward(*args, **kwargs)
    layer.forward = wrapped


def set_qwen_windows(model, cfg, native):
    """Gives the layers whose 5.x kind (qwen_layer_types) is not `native`,
    the kind of 4.46's shared mask, their own mask."""
    types, window = qwen_layer_types(cfg)
    for layer, kind in zip(model.model.layers, types):
        if kind != native:
            with_layer_mask(layer, window if kind == SLIDING else None)


def set_gemma2_windows(model, cfg):
    """4.46's Gemma 2 layers slide by `is_sliding` (even layers); 5.x by
    layer_types."""
    for layer, kind in zip(model.model.layers, gemma2_layer_types(cfg)):
        layer.is_sliding = kind == SLIDING
        layer.self_attn.sliding_window = (cfg.get("sliding_window")
                                          if layer.is_sliding else None)


# Config fields transformers 4.46 must not see: 5.x ones, and Qwen3's
# window fields (its reference is a Llama model, windows set here).
NOT_FOR_446 = {"layer_types", "transformers_version"}
QWEN3_WINDOW = {"use_sliding_window", "sliding_window", "max_window_layers"}


def build(cfg):
    """The reference model for the config dict `cfg` (either layout), in
    eval mode."""
    import transformers
    cfg = legacy_config(cfg)
    kind = cfg["model_type"]
    if kind in newer.BUILDERS:
        return newer.build(cfg)
    fields = {k: v for k, v in cfg.items()
              if k != "model_type" and k not in NOT_FOR_446}
    if kind == "qwen3":
        # Qwen3's fields are Llama's, with attention_bias and head_dim as is.
        fields = {k: v for k, v in fields.items() if k not in QWEN3_WINDOW}
        config = transformers.LlamaConfig(**fields)
    else:
        config = transformers.AutoConfig.for_model(kind, **fields)
    # Eager attention: the masks (causal, sliding window) are explicit.
    config._attn_implementation = "eager"
    model = transformers.AutoModelForCausalLM.from_config(config)
    if kind == "qwen3":
        add_qk_norm(model, cfg)
        set_qwen_windows(model, cfg, native=FULL)
    elif kind == "qwen2":
        # Qwen2Config nulls sliding_window without use_sliding_window.
        native = SLIDING if config.sliding_window is not None else FULL
        set_qwen_windows(model, cfg, native)
    elif kind == "gemma2":
        set_gemma2_windows(model, cfg)
    return model.eval()


def randomize(model, seed, scaled_embedding=False):
    """Weights large enough that the logits spread over a few units: norm
    scales near 1 (near 2 where norms scale by (1 + w)), biases small,
    matrices ~ 1.5 / sqrt(fan_in). Embeddings ~ 0.5; where the model
    multiplies them by sqrt(hidden_size) (Gemma), ~ 0.75 / sqrt(hidden_size):
    larger, the token's own embedding outweighs the sublayers in the
    residual, the tied head then favours the last token, and greedy decoding
    repeats it forever."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            x = torch.randn(p.shape, generator=g)
            if p.dim() == 1:
                p.copy_((1.0 if name.endswith("norm.weight") else 0.0) + 0.1 * x)
            elif "embed_tokens" in name:
                std = 0.75 / np.sqrt(p.shape[1]) if scaled_embedding else 0.5
                p.copy_(std * x)
            else:
                p.copy_(x * 1.5 / np.sqrt(p.shape[1]))


def load(dir):
    """The model saved in DIR (weights from DIR/model.safetensors)."""
    from safetensors.torch import load_file
    cfg = load_json(os.path.join(dir, "config.json"))
    model = build(cfg)
    state = load_file(os.path.join(dir, "model.safetensors"))
    missing, unexpected = model.load_state_dict(state, strict=False)
    # A tied head is saved once; nothing else may be missing.
    missing = [m for m in missing if m != "lm_head.weight"]
    if missing or unexpected:
        sys.exit(f"{dir}: missing {missing}, unexpected {unexpected}")
    if cfg.get("tie_word_embeddings"):
        model.tie_weights()
    return model


def config_as_given(cfg):
    """Whether DIR/config.json must be CONFIG itself rather than what
    transformers 4.46 writes: for Qwen3 (saved as Llama) and for fields
    4.46 drops or rewrites (layer_types, the 5.x layout)."""
    return (cfg["model_type"] == "qwen3" or "layer_types" in cfg
            or "rope_parameters" in cfg or "dtype" in cfg)


def cmd_make(args):
    import argparse
    p = argparse.ArgumentParser(prog="hf_family.py make")
    p.add_argument("config")
    p.add_argument("dir")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=8)
    a = p.parse_args(args)
    cfg = load_json(a.config)
    torch.manual_seed(a.seed)
    model = build(cfg)
    randomize(model, a.seed, cfg["model_type"] in SCALED_EMBEDDINGS)
    model.save_pretrained(a.dir, safe_serialization=True)
    if config_as_given(cfg):
        with open(os.path.join(a.dir, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
    rng = np.random.default_rng(a.seed)
    ids = rng.integers(0, cfg["vocab_size"], (a.batch, a.seq)).astype(np.int64)
    np.save(os.path.join(a.dir, "ids.npy"), ids)
    n = sum(p.numel() for p in model.parameters())
    print(f"saved {cfg['model_type']}: {n} parameters, ids {list(ids.shape)}")


def rope_parameters(cfg):
    """5.x's single `rope_parameters` dict for a legacy config: rope_scaling
    (its "type" alias kept, "rope_type" added), rope_theta (or the family
    default) and partial_rotary_factor inside (Phi-3 always writes it, 1.0
    by default); llama3/yarn/longrope carry original_max_position_embeddings
    (the top-level one first, as Phi-3 writes it, else
    max_position_embeddings)."""
    kind = cfg["model_type"]
    params = dict(cfg.get("rope_scaling") or {})
    params.setdefault("rope_type", params.get("type", "default"))
    if kind == "gpt_neox":
        # GPT-NeoX's own names win over any rope_theta next to them.
        params.setdefault("rope_theta", cfg.get("rotary_emb_base", 10000))
        params.setdefault("partial_rotary_factor", cfg.get("rotary_pct", 0.25))
    params.setdefault("rope_theta", cfg.get(
        "rope_theta", DEFAULT_THETA.get(kind, 10000.0)))
    partial = cfg.get("partial_rotary_factor", 1.0 if kind == "phi3" else None)
    if partial is not None:
        params.setdefault("partial_rotary_factor", partial)
    if params["rope_type"] in ("llama3", "yarn", "longrope"):
        if "original_max_position_embeddings" in cfg:
            params["original_max_position_embeddings"] = \
                cfg["original_max_position_embeddings"]
        else:
            params.setdefault("original_max_position_embeddings",
                              cfg["max_position_embeddings"])
    return params


def gemma3_rope_parameters(cfg):
    """Gemma 3's nested form: global layers rope_theta + rope_scaling, local
    ones rope_local_base_freq without scaling."""
    full = rope_parameters(cfg)
    local = {"rope_type": "default",
             "rope_theta": cfg.get("rope_local_base_freq", 10000.0)}
    return {FULL: full, SLIDING: local}


# Legacy RoPE fields that rope_parameters replaces. GPT-NeoX's are
# rotary_emb_base / rotary_pct; a rope_theta / partial_rotary_factor beside
# them (4.46 writes both) is unused by 5.x, which writes it back as given.
LEGACY_ROPE = ("rope_theta", "rope_scaling", "partial_rotary_factor",
               "rope_local_base_freq")
LEGACY_ROPE_NEOX = ("rope_scaling", "rotary_emb_base", "rotary_pct")


def v5_layout(cfg):
    """CONFIG as transformers 5 save_pretrained writes it: rope_theta,
    rope_scaling, partial_rotary_factor (and Gemma 3's rope_local_base_freq,
    GPT-NeoX's rotary_emb_base / rotary_pct) inside `rope_parameters`;
    `layer_types` for the families that have the field (by their default
    rules unless given); Qwen2/Qwen3 sliding_window null without
    use_sliding_window; `dtype` for torch_dtype; Qwen3-MoE's num_experts
    under its 5.x name num_local_experts; Gemma's legacy hidden_act "gelu"
    as the tanh GELU it always meant. Every value that decides the math is
    carried over, so a 5.x reader computes what the legacy reader did. (5.x
    also writes fields at their defaults, e.g. pad_token_id null; those are
    left out.)"""
    out = legacy_config(cfg)
    kind = out["model_type"]
    if (kind in ROPE_FAMILIES or "rope_theta" in out or out.get("rope_scaling")
            or "rotary_emb_base" in out):
        rope = (gemma3_rope_parameters(out) if kind in NESTED_ROPE
                else rope_parameters(out))
        for key in LEGACY_ROPE_NEOX if kind == "gpt_neox" else LEGACY_ROPE:
            out.pop(key, None)
        out["rope_parameters"] = rope
    if kind in ("qwen2", "qwen3") and not out.get("use_sliding_window"):
        out["sliding_window"] = None
    if kind in LAYER_TYPE_FAMILIES and not out.get("layer_types"):
        out["layer_types"] = default_layer_types(legacy_config(cfg))
    if kind == "qwen3_moe" and "num_experts" in out:
        out["num_local_experts"] = out.pop("num_experts")
    if kind == "gemma" and out.get("hidden_act") == "gelu":
        out["hidden_act"] = "gelu_pytorch_tanh"
    if "torch_dtype" in out:
        out["dtype"] = out.pop("torch_dtype")
    out["transformers_version"] = "5.0.0"
    return dict(sorted(out.items()))


def cmd_v5config(src, dst):
    with open(dst, "w") as f:
        json.dump(v5_layout(load_json(src)), f, indent=2)
        f.write("\n")


def cmd_v5weights(src, dst):
    """Rewrites the per-expert tensors of model.safetensors SRC into
    transformers 5's fused ones, as save_pretrained(save_original_format=
    False) writes them (models/*/modeling_*.py's Experts modules): per layer
    `mlp.experts.gate_up_proj` [E, 2m, d] (expert e's gate rows, then its up
    rows), `mlp.experts.down_proj` [E, d, m] and the router `mlp.gate.weight`
    (Mixtral's block_sparse_moe becomes mlp); every other tensor as it is."""
    from safetensors.numpy import load_file, save_file
    import re
    tensors = load_file(src)
    out, experts = {}, {}
    for name, value in tensors.items():
        m = re.match(r"(.*)\.(block_sparse_moe|mlp)\.experts\.(\d+)\.(\w+)\.weight$", name)
        if m:
            layer, _, e, part = m.groups()
            part = {"w1": "gate", "w3": "up", "w2": "down",
                    "gate_proj": "gate", "up_proj": "up", "down_proj": "down"}[part]
            experts.setdefault(layer, {}).setdefault(int(e), {})[part] = value
            continue
        out[name.replace(".block_sparse_moe.", ".mlp.")] = value
    for layer, by_expert in experts.items():
        order = sorted(by_expert)
        out[f"{layer}.mlp.experts.gate_up_proj"] = np.stack(
            [np.concatenate([by_expert[e]["gate"], by_expert[e]["up"]], 0) for e in order])
        out[f"{layer}.mlp.experts.down_proj"] = np.stack(
            [by_expert[e]["down"] for e in order])
    save_file(out, dst, metadata={"format": "pt"})
    print(f"{len(experts)} layer(s) of fused experts")


def forward(model, ids):
    with torch.no_grad():
        return model(torch.from_numpy(ids), use_cache=False).logits.float()


def cmd_logits(dir, ids, out, *options):
    """`--dtype bf16`: the model run in bf16 (transformers' own half run,
    the yardstick of hf_dir.py compare-half --half)."""
    model = load(dir)
    if options == ("--dtype", "bf16"):
        model = model.to(torch.bfloat16)
    elif options:
        sys.exit(f"logits: unknown options {options}")
    np.save(out, forward(model, np.load(ids)).numpy())


def cmd_greedy(dir, ids, n, out):
    """As transformer-runner --generate writes them: a sequence that produced
    an EOS id continues with the first EOS id, and generation ends once every
    sequence has."""
    model = load(dir)
    eos = load_json(os.path.join(dir, "config.json")).get("eos_token_id")
    eos = [] if eos is None else [eos] if isinstance(eos, int) else eos
    seq = np.load(ids)
    done = np.zeros(seq.shape[0], dtype=bool)
    for _ in range(int(n)):
        nxt = forward(model, seq)[:, -1, :].argmax(-1).numpy()
        nxt = np.where(done, eos[0] if eos else 0, nxt)
        seq = np.concatenate([seq, nxt[:, None].astype(np.int64)], axis=1)
        done |= np.isin(nxt, eos)
        if done.all():
            break
    np.save(out, seq)


def cmd_close(a, b):
    x, y = np.load(a), np.load(b)
    if x.shape != y.shape:
        sys.exit(f"FAIL: shapes {x.shape} and {y.shape} differ")
    err = np.abs(x - y)
    bad = err > ATOL + RTOL * np.abs(y)
    print(f"max abs error {err.max():.3g} over {x.size} logits "
          f"(reference spread {y.std():.3g})")
    if bad.any():
        i = np.unravel_index(np.argmax(err - RTOL * np.abs(y)), x.shape)
        sys.exit(f"FAIL: at {i}: {x[i]} vs reference {y[i]}")
    print("PASS: logits match transformers")


def cmd_same(a, b):
    x, y = np.load(a), np.load(b)
    if x.shape != y.shape or not (x == y).all():
        sys.exit(f"FAIL: tokens differ:\n{x}\nreference:\n{y}")
    print(f"PASS: {x.shape[0]}x{x.shape[1]} tokens equal transformers'")


def cmd_moe_as_llama(src, dst):
    """A Mixtral of one expert (top-1: every token routed to it at weight
    softmax = 1) is a Llama whose MLP is that expert."""
    from safetensors.numpy import load_file, save_file
    c = json.load(open(os.path.join(src, "config.json")))
    assert c["model_type"] == "mixtral" and c["num_local_experts"] == 1, c
    for key in ("num_local_experts", "num_experts_per_tok", "sliding_window",
                "router_aux_loss_coef", "router_jitter_noise",
                "output_router_logits"):
        c.pop(key, None)
    c.update(model_type="llama", architectures=["LlamaForCausalLM"])
    os.makedirs(dst, exist_ok=True)
    json.dump(c, open(os.path.join(dst, "config.json"), "w"), indent=2)
    names = {"experts.0.w1": "gate_proj", "experts.0.w3": "up_proj",
             "experts.0.w2": "down_proj"}
    weights = {}
    for name, t in load_file(os.path.join(src, "model.safetensors")).items():
        if ".block_sparse_moe.gate." in name:
            continue
        for expert, mlp in names.items():
            name = name.replace(f"block_sparse_moe.{expert}", f"mlp.{mlp}")
        weights[name] = t
    save_file(weights, os.path.join(dst, "model.safetensors"),
              metadata={"format": "pt"})


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "make":
        cmd_make(args)
    elif cmd == "logits":
        cmd_logits(*args)
    elif cmd == "greedy":
        cmd_greedy(*args)
    elif cmd == "close":
        cmd_close(*args)
    elif cmd == "same":
        cmd_same(*args)
    elif cmd == "v5config":
        cmd_v5config(*args)
    elif cmd == "v5weights":
        cmd_v5weights(*args)
    elif cmd == "moe-as-llama":
        cmd_moe_as_llama(*args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

"""Self-contained torch references for the decoder families newer than the
pinned transformers 4.46.3: OLMo 2 (`olmo2`), Qwen3-MoE (`qwen3_moe`) and
Gemma 3 text (`gemma3_text`). hf_family.py imports it.

Their modeling code (transformers >= 4.47 / 4.51 / 4.50) needs torch >= 2.4,
and the reference venv runs Debian's torch 1.13, so each family is written
out here from transformers 5.x's modeling files (models/olmo2, qwen3_moe,
gemma3), keeping their f32 arithmetic step for step where it decides
rounding:
  - RoPE: inv_freq = 1 / (base ** (arange(0, d, 2).float() / d)) in f32
    (divided by the factor for "linear" scaling), angles = pos.float() *
    inv_freq in f32, cos/sin of cat(angles, angles), rotate-half pairing;
  - RMSNorm statistics in f32, `w * y` (Llama style) or `y * (1 + w)`
    (Gemma style, weights stored as scale - 1);
  - eager attention: (q @ k^T) * scaling, [tanh softcap], + an additive mask
    holding finfo.min, softmax in f32, @ v; KV heads repeated for GQA;
  - the MoE router: softmax over all experts in f32, torch.topk, optional
    renormalisation, experts visited in index order and summed with
    index_add_ (as Qwen3MoeExperts does).
Parameter names are the published checkpoint names (model.embed_tokens,
model.layers.{i}.self_attn.q_proj, ..., lm_head), so hf_family.py saves and
loads these modules like transformers models. Only what the tests need is
here: whole-sequence forward passes from position 0, no padding, no cache.

The modules take the legacy (transformers 4.x) config layout: rope_theta,
rope_scaling, rope_local_base_freq; hf_family.legacy_config rewrites a 5.x
layout (rope_parameters, dtype) into it first.
"""
import json
import os
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch import nn

FULL, SLIDING = "full_attention", "sliding_attention"


class RMSNorm(nn.Module):
    """RMSNorm with f32 statistics. `unit_offset` is Gemma's form, which
    scales by (1 + w) and so stores zeros for the identity scale."""

    def __init__(self, dim, eps, unit_offset=False):
        super().__init__()
        self.eps = eps
        self.unit_offset = unit_offset
        self.weight = nn.Parameter(torch.zeros(dim) if unit_offset
                                   else torch.ones(dim))

    def forward(self, x):
        # Statistics in f32, the result in the input's type, as
        # transformers' Llama and Gemma RMSNorms (identical in f32).
        dtype = x.dtype
        x = x.float()
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        if self.unit_offset:
            return (y * (1.0 + self.weight.float())).to(dtype)
        return self.weight * y.to(dtype)


def gelu_tanh(x):
    """transformers' gelu_pytorch_tanh."""
    return F.gelu(x, approximate="tanh")


ACTIVATIONS = {"silu": F.silu, "gelu_pytorch_tanh": gelu_tanh,
               "gelu_new": gelu_tanh, "gelu_fast": gelu_tanh,
               "gelu": F.gelu}


def rope_type(scaling):
    if not scaling:
        return "default"
    return scaling.get("rope_type", scaling.get("type", "default"))


def inv_freq(base, dim, scaling=None):
    """RoPE inverse frequencies as transformers computes them (f32 pow),
    for the scalings these families' tests use."""
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float()
                          / dim))
    kind = rope_type(scaling)
    if kind == "linear":
        return inv / scaling["factor"]
    if kind != "default":
        raise NotImplementedError(f"rope scaling {kind!r} in this reference")
    return inv


def cos_sin(inv, seq_len):
    """cos/sin [S, dim] for positions 0..S-1; the angles are an f32
    product, as in the *RotaryEmbedding.forward of transformers."""
    freqs = torch.arange(seq_len)[:, None].float() * inv[None, :].float()
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope(x, cs):
    """x [B, H, S, D] rotated by cs = (cos, sin) [S, D]."""
    cos, sin = (t.to(x.dtype) for t in cs)
    return (x * cos) + (rotate_half(x) * sin)


def causal_mask(seq_len, window=None, dtype=torch.float32):
    """Additive mask [S, S]: query i sees key j iff j <= i and, with a
    window W, i - j < W (transformers' eager semantics)."""
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    hidden = j > i
    if window is not None:
        hidden = hidden | (i - j >= window)
    return torch.zeros(seq_len, seq_len, dtype=dtype).masked_fill(
        hidden, torch.finfo(dtype).min)


def eager_attention(q, k, v, mask, scaling, softcap=None):
    """q [B, H, S, D], k/v [B, KV, S, D] -> [B, S, H * D]."""
    groups = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(groups, dim=1)
    v = v.repeat_interleave(groups, dim=1)
    scores = torch.matmul(q, k.transpose(2, 3)) * scaling
    if softcap is not None:
        scores = torch.tanh(scores / softcap) * softcap
    scores = scores + mask
    probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
    out = torch.matmul(probs, v).transpose(1, 2).contiguous()
    return out.reshape(*out.shape[:2], -1)


def head_dim(cfg):
    """`head_dim`, else Gemma 3's default 256, else hidden_size / heads."""
    if cfg.get("head_dim"):
        return cfg["head_dim"]
    if cfg["model_type"] == "gemma3_text":
        return 256
    return cfg["hidden_size"] // cfg["num_attention_heads"]


def norm_eps(cfg):
    """rms_norm_eps, by default 1e-5 in OLMo 2 and 1e-6 elsewhere."""
    return cfg.get("rms_norm_eps",
                   1e-5 if cfg["model_type"] == "olmo2" else 1e-6)


class Attention(nn.Module):
    """q/k/v/o projections and eager attention. `qk_norm` is "whole" (OLMo
    2: an RMSNorm over the full projection, all heads jointly, before the
    head split), "head" (Qwen3, Gemma 3: one RMSNorm of size head_dim
    shared by every head, after the split) or None."""

    def __init__(self, cfg, qk_norm, unit_offset=False, scaling=None,
                 softcap=None):
        super().__init__()
        d, h = cfg["hidden_size"], cfg["num_attention_heads"]
        kv = cfg.get("num_key_value_heads") or h
        self.dh, self.h, self.kv = head_dim(cfg), h, kv
        bias = bool(cfg.get("attention_bias", False))
        self.q_proj = nn.Linear(d, h * self.dh, bias=bias)
        self.k_proj = nn.Linear(d, kv * self.dh, bias=bias)
        self.v_proj = nn.Linear(d, kv * self.dh, bias=bias)
        self.o_proj = nn.Linear(h * self.dh, d, bias=bias)
        eps = norm_eps(cfg)
        self.qk_norm = qk_norm
        if qk_norm == "whole":
            self.q_norm = RMSNorm(h * self.dh, eps, unit_offset)
            self.k_norm = RMSNorm(kv * self.dh, eps, unit_offset)
        elif qk_norm == "head":
            self.q_norm = RMSNorm(self.dh, eps, unit_offset)
            self.k_norm = RMSNorm(self.dh, eps, unit_offset)
        self.scaling = self.dh ** -0.5 if scaling is None else scaling
        self.softcap = softcap

    def forward(self, x, cs, mask):
        b, s, _ = x.shape
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if self.qk_norm == "whole":
            q, k = self.q_norm(q), self.k_norm(k)
        q = q.view(b, s, -1, self.dh)
        k = k.view(b, s, -1, self.dh)
        v = v.view(b, s, -1, self.dh)
        if self.qk_norm == "head":
            q, k = self.q_norm(q), self.k_norm(k)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        q, k = rope(q, cs), rope(k, cs)
        out = eager_attention(q, k, v, mask, self.scaling, self.softcap)
        return self.o_proj(out)


class GatedMLP(nn.Module):
    """down(act(gate(x)) * up(x)): SwiGLU or, with the tanh GELU, GeGLU."""

    def __init__(self, d, width, act):
        super().__init__()
        self.gate_proj = nn.Linear(d, width, bias=False)
        self.up_proj = nn.Linear(d, width, bias=False)
        self.down_proj = nn.Linear(width, d, bias=False)
        self.act = ACTIVATIONS[act]

    def forward(self, x):
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


class Router(nn.Module):
    """Qwen3-MoE's top-k router (`mlp.gate.weight` [E, d], no bias):
    softmax over all experts in f32 first, then torch.topk (whose order
    decides ties, as in transformers), then renormalisation only with
    norm_topk_prob."""

    def __init__(self, d, experts, top_k, renormalize):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(experts, d))
        self.top_k, self.renormalize = top_k, renormalize

    def forward(self, x):
        logits = F.linear(x, self.weight)
        probs = F.softmax(logits, dim=-1, dtype=torch.float)
        weights, index = torch.topk(probs, self.top_k, dim=-1)
        if self.renormalize:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights.to(logits.dtype), index


class SparseMoE(nn.Module):
    """Qwen3-MoE's sparse block: `mlp.gate` and `mlp.experts.{e}` SwiGLU
    experts of width moe_intermediate_size (the checkpoint layout; 5.x fuses
    them in memory only). No shared expert."""

    def __init__(self, cfg):
        super().__init__()
        d = cfg["hidden_size"]
        n = num_experts(cfg)
        self.gate = Router(d, n, cfg.get("num_experts_per_tok", 8),
                           bool(cfg.get("norm_topk_prob", False)))
        self.experts = nn.ModuleList(
            GatedMLP(d, cfg.get("moe_intermediate_size", 768),
                     cfg.get("hidden_act", "silu")) for _ in range(n))

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        weights, index = self.gate(x)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = torch.where(index == e)
            if token.numel() == 0:
                continue
            y = expert(x[token]) * weights[token, slot, None]
            out.index_add_(0, token, y.to(out.dtype))
        return out.reshape(shape)


def num_experts(cfg):
    return cfg.get("num_experts", cfg.get("num_local_experts", 128))


def sparse_layer(cfg, i):
    """Qwen3-MoE: a layer is sparse unless listed in mlp_only_layers or off
    the decoder_sparse_step grid."""
    return (i not in (cfg.get("mlp_only_layers") or [])
            and num_experts(cfg) > 0
            and (i + 1) % cfg.get("decoder_sparse_step", 1) == 0)


class Olmo2Layer(nn.Module):
    """Post-norm: h = x + norm(attn(x)); out = h + norm(mlp(h)). No
    input_layernorm."""

    def __init__(self, cfg, i):
        super().__init__()
        eps = norm_eps(cfg)
        d = cfg["hidden_size"]
        self.self_attn = Attention(cfg, qk_norm="whole")
        self.mlp = GatedMLP(d, cfg["intermediate_size"],
                            cfg.get("hidden_act", "silu"))
        self.post_attention_layernorm = RMSNorm(d, eps)
        self.post_feedforward_layernorm = RMSNorm(d, eps)

    def forward(self, x, cs, mask):
        h = x + self.post_attention_layernorm(self.self_attn(x, cs, mask))
        return h + self.post_feedforward_layernorm(self.mlp(h))


class Qwen3MoeLayer(nn.Module):
    """Pre-norm Qwen3 layer whose MLP is the sparse block or, on dense
    layers, a SwiGLU of width intermediate_size."""

    def __init__(self, cfg, i):
        super().__init__()
        eps = norm_eps(cfg)
        d = cfg["hidden_size"]
        self.self_attn = Attention(cfg, qk_norm="head")
        self.mlp = (SparseMoE(cfg) if sparse_layer(cfg, i) else
                    GatedMLP(d, cfg["intermediate_size"],
                             cfg.get("hidden_act", "silu")))
        self.input_layernorm = RMSNorm(d, eps)
        self.post_attention_layernorm = RMSNorm(d, eps)

    def forward(self, x, cs, mask):
        h = x + self.self_attn(self.input_layernorm(x), cs, mask)
        return h + self.mlp(self.post_attention_layernorm(h))


class Gemma3Layer(nn.Module):
    """Gemma 2's four norms around attention and MLP, all (1 + w); Gemma 3
    adds the per-head q/k norms. `qk_norm` False drops them, which makes
    the layer Gemma 2's: with Gemma 2's layer pattern and one RoPE base the
    module then reproduces transformers 4.46's Gemma2ForCausalLM, a check
    of the rest of the module against transformers' own code."""

    def __init__(self, cfg, i, qk_norm=True):
        super().__init__()
        eps = norm_eps(cfg)
        d = cfg["hidden_size"]
        self.self_attn = Attention(
            cfg, qk_norm="head" if qk_norm else None, unit_offset=True,
            scaling=cfg.get("query_pre_attn_scalar", 256) ** -0.5,
            # transformers' Gemma3Attention keeps attn_logit_softcapping but
            # never applies it (4.57, 5.17); the Gemma-2 form of this layer
            # (qk_norm off, the cross-check) applies it as Gemma 2 does.
            softcap=None if qk_norm else cfg.get("attn_logit_softcapping"))
        self.mlp = GatedMLP(d, cfg["intermediate_size"],
                            cfg.get("hidden_activation", "gelu_pytorch_tanh"))
        for name in ("input_layernorm", "post_attention_layernorm",
                     "pre_feedforward_layernorm", "post_feedforward_layernorm"):
            setattr(self, name, RMSNorm(d, eps, unit_offset=True))

    def forward(self, x, cs, mask):
        a = self.self_attn(self.input_layernorm(x), cs, mask)
        h = x + self.post_attention_layernorm(a)
        m = self.mlp(self.pre_feedforward_layernorm(h))
        return h + self.post_feedforward_layernorm(m)


def gemma3_layer_types(cfg):
    """5.x: `layer_types`, else every sliding_window_pattern-th layer
    (default 6) global, the others sliding."""
    if cfg.get("layer_types"):
        return list(cfg["layer_types"])
    p = cfg.get("sliding_window_pattern", 6)
    return [SLIDING if (i + 1) % p else FULL
            for i in range(cfg["num_hidden_layers"])]


class Decoder(nn.Module):
    """`model.`: embed_tokens, layers, norm."""

    def __init__(self, cfg, layer, unit_offset, **layer_args):
        super().__init__()
        eps = norm_eps(cfg)
        self.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"])
        self.layers = nn.ModuleList(
            layer(cfg, i, **layer_args) for i in range(cfg["num_hidden_layers"]))
        self.norm = RMSNorm(cfg["hidden_size"], eps, unit_offset)


class CausalLM(nn.Module):
    """A decoder with its head, and the few methods of a transformers
    PreTrainedModel that hf_family.py calls (save_pretrained, tie_weights,
    forward(ids, use_cache=False).logits). Per layer: its attention kind
    (full or sliding, with `window`) and its RoPE inverse frequencies."""

    def __init__(self, cfg, layer, kinds, window, inv_freqs, unit_offset=False,
                 embed_scale=None, final_softcap=None, tie_default=False,
                 **layer_args):
        super().__init__()
        self.cfg = cfg
        self.model = Decoder(cfg, layer, unit_offset, **layer_args)
        self.lm_head = nn.Linear(cfg["hidden_size"], cfg["vocab_size"],
                                 bias=False)
        self.kinds, self.window, self.inv_freqs = kinds, window, inv_freqs
        self.embed_scale = embed_scale
        self.final_softcap = final_softcap
        self.tied = bool(cfg.get("tie_word_embeddings", tie_default))
        self.tie_weights()

    def tie_weights(self):
        if self.tied:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids, use_cache=False):
        s = input_ids.shape[1]
        h = self.model.embed_tokens(input_ids)
        if self.embed_scale is not None:
            # Gemma: a scalar tensor in the weights' dtype (f32 here).
            h = h * torch.tensor(self.embed_scale).to(h.dtype)
        masks = {FULL: causal_mask(s, None, h.dtype),
                 SLIDING: causal_mask(s, self.window, h.dtype)}
        tables = {}
        for layer, kind, inv in zip(self.model.layers, self.kinds,
                                    self.inv_freqs):
            key = id(inv)
            if key not in tables:
                tables[key] = cos_sin(inv, s)
            h = layer(h, tables[key], masks[kind])
        logits = self.lm_head(self.model.norm(h))
        if self.final_softcap is not None:
            logits = torch.tanh(logits / self.final_softcap) * self.final_softcap
        return SimpleNamespace(logits=logits)

    def save_pretrained(self, dir, safe_serialization=True):
        """DIR/config.json (the config as given) and an f32
        DIR/model.safetensors without the tied head, as transformers
        writes them."""
        from safetensors.torch import save_file
        os.makedirs(dir, exist_ok=True)
        with open(os.path.join(dir, "config.json"), "w") as f:
            json.dump(self.cfg, f, indent=2)
        state = {k: v.detach().contiguous()
                 for k, v in self.state_dict().items()
                 if not (self.tied and k == "lm_head.weight")}
        save_file(state, os.path.join(dir, "model.safetensors"),
                  metadata={"format": "pt"})


def olmo2(cfg):
    dh = head_dim(cfg)
    inv = inv_freq(cfg.get("rope_theta", 10000.0), dh, cfg.get("rope_scaling"))
    n = cfg["num_hidden_layers"]
    return CausalLM(cfg, Olmo2Layer, [FULL] * n, None, [inv] * n)


def qwen3_moe(cfg):
    """Every layer slides when use_sliding_window sets a window (5.x has no
    layer_types and ignores max_window_layers here)."""
    dh = head_dim(cfg)
    inv = inv_freq(cfg.get("rope_theta", 10000.0), dh, cfg.get("rope_scaling"))
    n = cfg["num_hidden_layers"]
    window = cfg.get("sliding_window") if cfg.get("use_sliding_window") else None
    kind = SLIDING if window is not None else FULL
    return CausalLM(cfg, Qwen3MoeLayer, [kind] * n, window, [inv] * n)


def gemma3_text(cfg, qk_norm=True):
    """Sliding layers use RoPE base rope_local_base_freq without scaling;
    global ones rope_theta with rope_scaling."""
    dh = head_dim(cfg)
    kinds = gemma3_layer_types(cfg)
    window = cfg.get("sliding_window", 4096)
    if window is None:
        kinds = [FULL] * len(kinds)
    local = inv_freq(cfg.get("rope_local_base_freq", 10000.0), dh)
    glob = inv_freq(cfg.get("rope_theta", 1e6), dh, cfg.get("rope_scaling"))
    invs = [local if k == SLIDING else glob for k in kinds]
    return CausalLM(cfg, Gemma3Layer, kinds, window, invs, unit_offset=True,
                    embed_scale=cfg["hidden_size"] ** 0.5,
                    final_softcap=cfg.get("final_logit_softcapping"),
                    tie_default=True, qk_norm=qk_norm)


BUILDERS = {"olmo2": olmo2, "qwen3_moe": qwen3_moe, "gemma3_text": gemma3_text}


def build(cfg):
    """The reference module for the legacy-layout config dict `cfg`."""
    return BUILDERS[cfg["model_type"]](cfg).eval()

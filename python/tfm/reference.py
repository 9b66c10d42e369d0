"""PyTorch reference implementations of the models tfm compiles.

Written from the published model definitions (Hugging Face GPT-2, Llama,
Mixtral) in plain tensor operations, independent of tfm's lowering, so that
tests compare two implementations rather than one with itself. Weights are a
dict from Hugging Face tensor names to tensors, in the layouts the checkpoints
use (GPT-2 Conv1D weights [in, out]; nn.Linear weights [out, in]).
"""
import math

import torch


def layer_norm(x, weight, bias, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def rms_norm(x, weight, eps):
    x32 = x.float()
    var = x32.pow(2).mean(-1, keepdim=True)
    return (x32 * torch.rsqrt(var + eps)).to(x.dtype) * weight


def gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1.0 + torch.tanh(
            math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
    return torch.nn.functional.gelu(x)


def silu(x):
    return torch.nn.functional.silu(x)


def split_heads(x, n_heads):
    b, s, w = x.shape
    return x.view(b, s, n_heads, w // n_heads).transpose(1, 2)


def merge_heads(x):
    b, h, s, dh = x.shape
    return x.transpose(1, 2).reshape(b, s, h * dh)


def rope(x, theta=10000.0, offset=0):
    """Rotate-half RoPE (Llama / GPT-NeoX) on [B, H, S, dh]."""
    dh, s = x.shape[-1], x.shape[-2]
    inv_freq = 1.0 / (theta ** (torch.arange(0, dh, 2, dtype=torch.float64) / dh))
    pos = torch.arange(offset, offset + s, dtype=torch.float64)
    angles = torch.outer(pos, inv_freq)
    emb = torch.cat((angles, angles), dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    half = dh // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


def attention(q, k, v, causal=True, offset=None, scale=None):
    """softmax(q k^T * scale + mask) v with GQA by repeating K/V heads."""
    hq, hkv = q.shape[1], k.shape[1]
    s, skv = q.shape[2], k.shape[2]
    if offset is None:
        offset = skv - s
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    k = k.repeat_interleave(hq // hkv, dim=1)
    v = v.repeat_interleave(hq // hkv, dim=1)
    scores = torch.matmul(q.float(), k.float().transpose(-1, -2)) * scale
    if causal:
        qpos = torch.arange(offset, offset + s).view(s, 1)
        kpos = torch.arange(skv).view(1, skv)
        scores = scores.masked_fill(kpos > qpos, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v.float()).to(q.dtype)


def linear(x, weight, bias=None, layout="out_in"):
    y = x @ (weight.t() if layout == "out_in" else weight)
    return y if bias is None else y + bias


# --- GPT-2 -------------------------------------------------------------------

def gpt2_block(w, p, x, n_head, eps=1e-5):
    """A GPT-2 pre-LN block; `p` is the name prefix, e.g. "h.0."."""
    d = x.shape[-1]
    h = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
    qkv = linear(h, w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"], "in_out")
    q, k, v = qkv.split(d, dim=-1)
    a = attention(split_heads(q, n_head), split_heads(k, n_head), split_heads(v, n_head))
    a = linear(merge_heads(a), w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"], "in_out")
    x = x + a
    h = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
    h = gelu(linear(h, w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"], "in_out"), "tanh")
    h = linear(h, w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"], "in_out")
    return x + h


def gpt2_model(w, ids, n_layer, n_head, eps=1e-5, prefix=""):
    """Logits of a GPT-2 model with tied embeddings."""
    s = ids.shape[1]
    x = w[prefix + "wte.weight"][ids] + w[prefix + "wpe.weight"][:s]
    for i in range(n_layer):
        x = gpt2_block(w, f"{prefix}h.{i}.", x, n_head, eps)
    x = layer_norm(x, w[prefix + "ln_f.weight"], w[prefix + "ln_f.bias"], eps)
    return x @ w[prefix + "wte.weight"].t()


# --- Llama -------------------------------------------------------------------

def llama_attention(w, p, h, n_heads, n_kv_heads, theta, offset=0, bias=False):
    def proj(name):
        return linear(h, w[p + f"self_attn.{name}.weight"],
                      w.get(p + f"self_attn.{name}.bias") if bias else None)
    q = rope(split_heads(proj("q_proj"), n_heads), theta, offset)
    k = rope(split_heads(proj("k_proj"), n_kv_heads), theta, offset)
    v = split_heads(proj("v_proj"), n_kv_heads)
    a = merge_heads(attention(q, k, v))
    return linear(a, w[p + "self_attn.o_proj.weight"])


def swiglu_mlp(w, p, h):
    g = linear(h, w[p + "gate_proj.weight"])
    u = linear(h, w[p + "up_proj.weight"])
    return linear(silu(g) * u, w[p + "down_proj.weight"])


def llama_block(w, p, x, n_heads, n_kv_heads, eps=1e-6, theta=10000.0):
    """A Llama block; `p` is the name prefix, e.g. "model.layers.0."."""
    h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
    x = x + llama_attention(w, p, h, n_heads, n_kv_heads, theta)
    h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
    return x + swiglu_mlp(w, p + "mlp.", h)


def moe(w, p, h, n_experts, top_k):
    """Mixtral's sparse MoE block: softmax router, top-k, renormalised."""
    b, s, d = h.shape
    flat = h.reshape(-1, d)
    probs = torch.softmax(flat @ w[p + "gate.weight"].t(), dim=-1)
    weights, experts = torch.topk(probs, top_k, dim=-1)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    out = torch.zeros_like(flat)
    for e in range(n_experts):
        e_p = p + f"experts.{e}."
        for slot in range(top_k):
            rows = (experts[:, slot] == e).nonzero().flatten()
            if rows.numel() == 0:
                continue
            x = flat[rows]
            y = linear(silu(linear(x, w[e_p + "w1.weight"])) * linear(x, w[e_p + "w3.weight"]),
                       w[e_p + "w2.weight"])
            out[rows] += weights[rows, slot].unsqueeze(-1) * y
    return out.reshape(b, s, d)

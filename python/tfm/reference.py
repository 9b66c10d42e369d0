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


def attention(q, k, v, causal=True, offset=None, scale=None, window=None):
    """softmax(q k^T * scale + mask) v with GQA by repeating K/V heads; with
    a sliding `window` W, a query at p sees only keys p - W < j <= p."""
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
        masked = kpos > qpos
        if window is not None:
            masked |= qpos - kpos >= window
        scores = scores.masked_fill(masked, float("-inf"))
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


# --- Whole models from a Hugging Face config.json ------------------------------
#
# These read the config dict themselves, with transformers' defaults, rather
# than through tfm's importer, so that a test comparing the two checks the
# importer's reading of the config as well as its ops.

def _cfg(c, key, default):
    """`c[key]`, or `default` when the key is absent or null (transformers
    reads null as "use the default")."""
    value = c.get(key)
    return default if value is None else value


def hf_gpt2_block(w, p, x, n_head, eps=1e-5, approximate="tanh", scale=None):
    """A GPT-2 block as GPT2Block: any n_inner (read off c_fc), exact or tanh
    GELU, and `scale` = 1.0 for scale_attn_weights = false."""
    d = x.shape[-1]
    h = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
    qkv = linear(h, w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"], "in_out")
    q, k, v = qkv.split(d, dim=-1)
    a = attention(split_heads(q, n_head), split_heads(k, n_head),
                  split_heads(v, n_head), scale=scale)
    a = linear(merge_heads(a), w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"], "in_out")
    x = x + a
    h = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
    h = gelu(linear(h, w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"], "in_out"), approximate)
    h = linear(h, w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"], "in_out")
    return x + h


def hf_llama_attention(w, p, h, n_heads, n_kv_heads, head_dim, theta, bias=False):
    """LlamaAttention: q/k/v/o projections (all with biases when
    attention_bias), head size `head_dim` (need not be d / n_heads), GQA/MQA
    by repeated K/V heads, rotate-half RoPE."""
    def proj(x, name):
        a = p + f"self_attn.{name}."
        return linear(x, w[a + "weight"], w[a + "bias"] if bias else None)
    q, k, v = proj(h, "q_proj"), proj(h, "k_proj"), proj(h, "v_proj")
    if q.shape[-1] != n_heads * head_dim or k.shape[-1] != n_kv_heads * head_dim:
        raise ValueError(f"{p}self_attn: q/k widths {q.shape[-1]}/{k.shape[-1]} "
                         f"do not match {n_heads}/{n_kv_heads} heads of {head_dim}")
    q = rope(split_heads(q, n_heads), theta)
    k = rope(split_heads(k, n_kv_heads), theta)
    a = attention(q, k, split_heads(v, n_kv_heads))
    return proj(merge_heads(a), "o_proj")


def hf_swiglu_mlp(w, p, h, bias=False):
    """LlamaMLP: down(silu(gate(x)) * up(x)), with biases when mlp_bias."""
    def proj(x, name):
        return linear(x, w[p + name + ".weight"], w[p + name + ".bias"] if bias else None)
    return proj(silu(proj(h, "gate_proj")) * proj(h, "up_proj"), "down_proj")


def hf_causal_lm_logits(c, w, ids):
    """Logits [B, S, V] of GPT2LMHeadModel, LlamaForCausalLM or
    MixtralForCausalLM for the config.json dict `c`, weights `w` named as in
    the checkpoint (GPT-2 with or without the `transformer.` prefix)."""
    t = c["model_type"]
    if t == "gpt2":
        prefix = "transformer." if "transformer.wte.weight" in w else ""
        eps = _cfg(c, "layer_norm_epsilon", 1e-5)
        act = _cfg(c, "activation_function", "gelu_new")
        approximate = "none" if act == "gelu" else "tanh"
        scale = None if _cfg(c, "scale_attn_weights", True) else 1.0
        wte = w[prefix + "wte.weight"]
        x = wte[ids] + w[prefix + "wpe.weight"][:ids.shape[1]]
        for i in range(c["n_layer"]):
            x = hf_gpt2_block(w, f"{prefix}h.{i}.", x, c["n_head"], eps,
                              approximate, scale)
        x = layer_norm(x, w[prefix + "ln_f.weight"], w[prefix + "ln_f.bias"], eps)
        head = wte if _cfg(c, "tie_word_embeddings", True) else w["lm_head.weight"]
        return x @ head.t()
    if t not in ("llama", "mixtral"):
        raise ValueError(f"unsupported model_type {t!r}")
    mixtral = t == "mixtral"
    n_heads = c["num_attention_heads"]
    n_kv = _cfg(c, "num_key_value_heads", 8 if mixtral else n_heads)
    head_dim = _cfg(c, "head_dim", c["hidden_size"] // n_heads)
    eps = _cfg(c, "rms_norm_eps", 1e-5 if mixtral else 1e-6)
    theta = _cfg(c, "rope_theta", 1e6 if mixtral else 10000.0)
    theta = _cfg(_cfg(c, "rope_parameters", {}), "rope_theta", theta)
    attn_bias = _cfg(c, "attention_bias", False) and not mixtral
    mlp_bias = _cfg(c, "mlp_bias", False) and not mixtral
    embed = w["model.embed_tokens.weight"]
    x = embed[ids]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        x = x + hf_llama_attention(w, p, h, n_heads, n_kv, head_dim, theta, attn_bias)
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        if mixtral:
            x = x + moe(w, p + "block_sparse_moe.", h, c["num_local_experts"],
                        c["num_experts_per_tok"])
        else:
            x = x + hf_swiglu_mlp(w, p + "mlp.", h, mlp_bias)
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = embed if _cfg(c, "tie_word_embeddings", False) else w["lm_head.weight"]
    return x @ head.t()

"""GPT-2, Llama and Mixtral models (and single blocks) from Hugging Face
config.json dictionaries, built with tfm.builder.

This is a second front end next to `transformer-translate --import-hf-config`
(lib/Target/HuggingFace): it reads the same fields with the same defaults,
names parameters as the checkpoints do (GPT-2 without the `transformer.`
prefix; Llama/Mixtral `model.layers.N....`, `lm_head.weight`), builds the same
ops in the same order with the same location names, and emits the same
entries: @forward, plus @prefill and @decode over a KV cache when
`kv_cache` is given. The two front ends are cross-checked by the tests in
test/python/.
"""
import json
from dataclasses import dataclass

from .builder import Module

# Fields that change the math and that tfm does not model: rejected rather
# than silently ignored (as lib/Target/HuggingFace/ModelConfig.cpp does).
_REJECT_TRUE = {
    "gpt2": {
        "scale_attn_by_inverse_layer_idx":
            "it scales each layer's attention by 1/(layer+1), which "
            "tfm.attention does not model",
        "reorder_and_upcast_attn":
            "tfm does not model the reordered, upcast attention",
        "add_cross_attention":
            "cross-attention needs an encoder; tfm builds decoder-only models",
    },
}


class ConfigError(ValueError):
    """A config.json that tfm cannot build, with the field at fault."""


@dataclass
class ModelConfig:
    model_type: str
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    max_positions: int
    max_positions_field: str
    norm_eps: float
    tie_word_embeddings: bool
    activation: str = "silu"          # gelu_tanh, gelu, silu
    scale_attn_weights: bool = True   # GPT-2
    rope_theta: float = 10000.0       # Llama, Mixtral
    attention_bias: bool = False      # Llama
    mlp_bias: bool = False            # Llama
    num_experts: int = 0              # Mixtral
    num_experts_per_token: int = 0    # Mixtral


class _Fields:
    """Typed reads of a config dict; JSON null reads as absent (transformers
    reads it as "use the default")."""

    def __init__(self, raw):
        self.raw = raw

    def get(self, key):
        return self.raw.get(key)

    def size(self, key, default=None, model_type=None):
        value = self.get(key)
        if value is None:
            if default is None:
                raise ConfigError(f"{key}: missing; a {model_type} config must "
                                  f"give it")
            return default
        if isinstance(value, bool) or not isinstance(value, int) or \
                not 1 <= value < 2 ** 31:
            raise ConfigError(f"{key}: expected a positive integer below 2^31, "
                              f"got {json.dumps(value)}")
        return value

    def number(self, key, default, positive=False):
        value = self.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                value < 0 or (positive and value == 0):
            kind = "positive" if positive else "non-negative"
            raise ConfigError(f"{key}: expected a {kind} number, got "
                              f"{json.dumps(value)}")
        return float(value)

    def flag(self, key, default):
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: expected true or false, got "
                              f"{json.dumps(value)}")
        return value

    def string(self, key, default):
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise ConfigError(f"{key}: expected a string, got "
                              f"{json.dumps(value)}")
        return value


def _read_rope(f, default_theta):
    theta = f.number("rope_theta", default_theta, positive=True)
    scaling = f.get("rope_scaling")
    if scaling is not None:
        kind = None
        if isinstance(scaling, dict):
            kind = scaling.get("rope_type", scaling.get("type"))
        if kind != "default":
            raise ConfigError(f"rope_scaling: {json.dumps(scaling)} RoPE "
                              f"scaling is not supported; tfm implements "
                              f"unscaled RoPE (rope_scaling must be null)")
    params = f.get("rope_parameters")
    if params is not None:
        if not isinstance(params, dict):
            raise ConfigError("rope_parameters: expected an object")
        for key, value in params.items():
            if key == "rope_type" and value == "default":
                continue
            if key == "rope_theta" and isinstance(value, (int, float)) and \
                    value > 0:
                theta = float(value)
                continue
            raise ConfigError(f"rope_parameters.{key}: {json.dumps(value)} is "
                              f"not supported; tfm implements unscaled RoPE")
    return theta


def parse_config(raw):
    """A ModelConfig from a config.json dict, with the defaults of
    transformers' GPT2Config / LlamaConfig / MixtralConfig."""
    if not isinstance(raw, dict):
        raise ConfigError("invalid config: expected a JSON object at the top "
                          "level")
    f = _Fields(raw)
    model_type = f.get("model_type")
    if model_type is None:
        raise ConfigError("model_type: missing; tfm imports gpt2, llama and "
                          "mixtral")
    if model_type not in ("gpt2", "llama", "mixtral"):
        raise ConfigError(f"model_type: unsupported model type "
                          f"'{model_type}' (tfm imports gpt2, llama and "
                          f"mixtral)")
    if f.get("quantization_config") is not None:
        raise ConfigError("quantization_config: quantized checkpoints are not "
                          "supported; tfm reads float weights")
    for key, why in _REJECT_TRUE.get(model_type, {}).items():
        if f.flag(key, False):
            raise ConfigError(f"{key}: true is not supported: {why}")
    if model_type == "gpt2":
        return _gpt2_config(f)
    return _llama_config(f, model_type)


def _gpt2_config(f):
    t = "gpt2"
    vocab = f.size("vocab_size", model_type=t)
    d = f.size("n_embd", model_type=t)
    layers = f.size("n_layer", model_type=t)
    heads = f.size("n_head", model_type=t)
    if f.get("n_positions") is not None or f.get("n_ctx") is None:
        pos_field = "n_positions"
    else:
        pos_field = "n_ctx"
    act = f.string("activation_function", "gelu_new")
    if act in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        activation = "gelu_tanh"
    elif act == "gelu":
        activation = "gelu"
    else:
        raise ConfigError(f"activation_function: unsupported activation "
                          f"'{act}' (tfm supports gelu_new, gelu_pytorch_tanh, "
                          f"gelu_fast and gelu)")
    c = ModelConfig(
        model_type=t, vocab_size=vocab, hidden_size=d, num_layers=layers,
        num_heads=heads, num_kv_heads=heads, head_dim=0,
        intermediate_size=f.size("n_inner", 4 * d),
        max_positions=f.size(pos_field, model_type=t),
        max_positions_field=pos_field,
        norm_eps=f.number("layer_norm_epsilon", 1e-5),
        tie_word_embeddings=f.flag("tie_word_embeddings", True),
        activation=activation,
        scale_attn_weights=f.flag("scale_attn_weights", True))
    if d % heads:
        raise ConfigError(f"n_head: {heads} heads do not divide n_embd = {d}")
    c.head_dim = d // heads
    return c


def _llama_config(f, t):
    mixtral = t == "mixtral"
    # Read in the order of ModelConfig.cpp, so that the first missing field
    # reported is the same.
    vocab = f.size("vocab_size", model_type=t)
    d = f.size("hidden_size", model_type=t)
    layers = f.size("num_hidden_layers", model_type=t)
    heads = f.size("num_attention_heads", model_type=t)
    intermediate = f.size("intermediate_size", model_type=t)
    max_positions = f.size("max_position_embeddings", model_type=t)
    explicit_head_dim = f.get("head_dim") is not None
    act = f.string("hidden_act", "silu")
    if act not in ("silu", "swish"):
        raise ConfigError(f"hidden_act: unsupported activation '{act}' (tfm "
                          f"supports silu for {t})")
    c = ModelConfig(
        model_type=t, vocab_size=vocab, hidden_size=d, num_layers=layers,
        num_heads=heads,
        num_kv_heads=f.size("num_key_value_heads", 8 if mixtral else heads),
        head_dim=f.size("head_dim", max(d // heads, 1)),
        intermediate_size=intermediate, max_positions=max_positions,
        max_positions_field="max_position_embeddings",
        norm_eps=f.number("rms_norm_eps", 1e-5 if mixtral else 1e-6),
        tie_word_embeddings=f.flag("tie_word_embeddings", False),
        rope_theta=_read_rope(f, 1e6 if mixtral else 10000.0))
    if mixtral:
        c.num_experts = f.size("num_local_experts", model_type=t)
        c.num_experts_per_token = f.size("num_experts_per_tok", model_type=t)
        if f.get("sliding_window") is not None:
            raise ConfigError("sliding_window: not supported; tfm implements "
                              "full causal attention (sliding_window must be "
                              "null)")
    else:
        c.attention_bias = f.flag("attention_bias", False)
        c.mlp_bias = f.flag("mlp_bias", False)
        if f.size("pretraining_tp", 1) > 1:
            raise ConfigError("pretraining_tp: only 1 is supported")
    if not explicit_head_dim and d % heads:
        raise ConfigError(f"num_attention_heads: {heads} heads do not divide "
                          f"hidden_size = {d} (and no head_dim is given)")
    if heads % c.num_kv_heads:
        raise ConfigError(f"num_key_value_heads: {c.num_kv_heads} key/value "
                          f"heads do not divide num_attention_heads = {heads}")
    if c.head_dim % 2:
        raise ConfigError(f"{'head_dim' if explicit_head_dim else 'num_attention_heads'}"
                          f": RoPE needs an even head size, got {c.head_dim}")
    if mixtral and c.num_experts_per_token > c.num_experts:
        raise ConfigError(f"num_experts_per_tok: {c.num_experts_per_token} "
                          f"exceeds num_local_experts = {c.num_experts}")
    return c


def load_config(path):
    with open(path) as fh:
        return parse_config(json.load(fh))


def _as_config(config):
    return config if isinstance(config, ModelConfig) else parse_config(config)


# --- building ------------------------------------------------------------------


class _Entry:
    """Builds one entry function; mirrors EntryBuilder in ImportModel.cpp."""

    def __init__(self, fn, c, batch, seq_len, cache_len=0, pos=None,
                 dtype="f32"):
        self.f, self.c = fn, c
        self.batch, self.seq_len = batch, seq_len
        self.cache_len, self.pos = cache_len, pos
        self.dtype = dtype  # of every parameter
        self.caches = []   # (name, written value)

    def param(self, name, shape):
        return self.f.param(name, shape, self.dtype)

    def linear(self, x, module, n_in, n_out, layout, bias):
        shape = (n_in, n_out) if layout == "in_out" else (n_out, n_in)
        w = self.param(module + ".weight", shape)
        b = self.param(module + ".bias", (n_out,)) if bias else None
        return self.f.linear(x, w, b, layout=layout, name=module)

    def attend(self, layer, prefix, q, k, v, scale=None):
        if self.pos is not None:
            shape = (self.batch, self.c.num_kv_heads, self.cache_len,
                     self.c.head_dim)
            k = self.write_cache(layer, "key", shape, k, prefix)
            v = self.write_cache(layer, "value", shape, v, prefix)
        return self.f.attention(q, k, v, offset=self.pos, scale=scale,
                                name=prefix + ".attention")

    def write_cache(self, layer, which, shape, update, prefix):
        name = f"{layer}.{which}"
        cache = self.f.kv_cache(name, shape)
        written = self.f.kv_cache_write(cache, update, self.pos,
                                        name=f"{prefix}.{which}_cache")
        self.caches.append((name, written))
        return written

    # GPT-2 ---------------------------------------------------------------------

    def gpt2_block(self, layer, h):
        f, c = self.f, self.c
        p = f"h.{layer}."
        attn = p + "attn"
        d, m = c.hidden_size, c.intermediate_size

        def layer_norm(x, name):
            return f.layer_norm(x, self.param(p + name + ".weight", (d,)),
                                self.param(p + name + ".bias", (d,)),
                                eps=c.norm_eps, name=p + name)

        x = layer_norm(h, "ln_1")
        qkv = self.linear(x, attn + ".c_attn", d, 3 * d, "in_out", True)
        q, k, v = f.split(qkv, [d, d, d], name=attn + ".split_qkv")
        q = f.split_heads(q, c.num_heads, name=attn + ".split_heads_q")
        k = f.split_heads(k, c.num_heads, name=attn + ".split_heads_k")
        v = f.split_heads(v, c.num_heads, name=attn + ".split_heads_v")
        # scale_attn_weights = false: GPT2Attention skips 1/sqrt(dh).
        a = self.attend(layer, attn, q, k, v,
                        None if c.scale_attn_weights else 1.0)
        a = f.merge_heads(a, name=attn + ".merge_heads")
        a = self.linear(a, attn + ".c_proj", d, d, "in_out", True)
        h = f.residual_add(h, a, name=attn + ".residual")

        x = layer_norm(h, "ln_2")
        x = self.linear(x, p + "mlp.c_fc", d, m, "in_out", True)
        x = f.gelu(x, "none" if c.activation == "gelu" else "tanh",
                   name=p + "mlp.act")
        x = self.linear(x, p + "mlp.c_proj", m, d, "in_out", True)
        return f.residual_add(h, x, name=p + "mlp.residual")

    def gpt2(self, ids):
        f, c = self.f, self.c
        d = c.hidden_size
        wte = self.param("wte.weight", (c.vocab_size, d))
        h = f.embedding(ids, wte, name="wte")
        h = f.position_embedding(h, self.param("wpe.weight",
                                            (c.max_positions, d)),
                                 offset=self.pos, name="wpe")
        for i in range(c.num_layers):
            h = self.gpt2_block(i, h)
        h = f.layer_norm(h, self.param("ln_f.weight", (d,)),
                         self.param("ln_f.bias", (d,)), eps=c.norm_eps,
                         name="ln_f")
        head = wte if c.tie_word_embeddings else \
            self.param("lm_head.weight", (c.vocab_size, d))
        return f.lm_head(h, head, name="lm_head")

    # Llama and Mixtral -----------------------------------------------------------

    def llama_block(self, layer, h):
        f, c = self.f, self.c
        p = f"model.layers.{layer}."
        attn = p + "self_attn"
        d, m, dh = c.hidden_size, c.intermediate_size, c.head_dim
        q_width, kv_width = c.num_heads * dh, c.num_kv_heads * dh

        def rms_norm(x, name):
            return f.rms_norm(x, self.param(p + name + ".weight", (d,)),
                              eps=c.norm_eps, name=p + name)

        def rope(x, name):
            return f.rope(x, offset=self.pos, theta=c.rope_theta,
                          name=f"{attn}.{name}")

        x = rms_norm(h, "input_layernorm")
        bias = c.attention_bias
        q = self.linear(x, attn + ".q_proj", d, q_width, "out_in", bias)
        k = self.linear(x, attn + ".k_proj", d, kv_width, "out_in", bias)
        v = self.linear(x, attn + ".v_proj", d, kv_width, "out_in", bias)
        q = f.split_heads(q, c.num_heads, name=attn + ".split_heads_q")
        k = f.split_heads(k, c.num_kv_heads, name=attn + ".split_heads_k")
        v = f.split_heads(v, c.num_kv_heads, name=attn + ".split_heads_v")
        q = rope(q, "rope_q")
        k = rope(k, "rope_k")
        a = self.attend(layer, attn, q, k, v)
        a = f.merge_heads(a, name=attn + ".merge_heads")
        a = self.linear(a, attn + ".o_proj", q_width, d, "out_in", bias)
        h = f.residual_add(h, a, name=attn + ".residual")

        x = rms_norm(h, "post_attention_layernorm")
        if c.model_type == "mixtral":
            moe = p + "block_sparse_moe"
            router = self.param(moe + ".gate.weight", (c.num_experts, d))
            experts = []
            for e in range(c.num_experts):
                q_ = f"{moe}.experts.{e}."
                experts.append((self.param(q_ + "w1.weight", (m, d)),
                                self.param(q_ + "w3.weight", (m, d)),
                                self.param(q_ + "w2.weight", (d, m))))
            x = f.moe(x, router, experts, c.num_experts_per_token, name=moe)
            return f.residual_add(h, x, name=moe + ".residual")
        mlp = p + "mlp"
        gate = self.linear(x, mlp + ".gate_proj", d, m, "out_in", c.mlp_bias)
        up = self.linear(x, mlp + ".up_proj", d, m, "out_in", c.mlp_bias)
        x = f.swiglu(gate, up, name=mlp + ".act")
        x = self.linear(x, mlp + ".down_proj", m, d, "out_in", c.mlp_bias)
        return f.residual_add(h, x, name=mlp + ".residual")

    def llama(self, ids):
        f, c = self.f, self.c
        d = c.hidden_size
        embed = self.param("model.embed_tokens.weight", (c.vocab_size, d))
        h = f.embedding(ids, embed, name="model.embed_tokens")
        for i in range(c.num_layers):
            h = self.llama_block(i, h)
        h = f.rms_norm(h, self.param("model.norm.weight", (d,)), eps=c.norm_eps,
                       name="model.norm")
        head = embed if c.tie_word_embeddings else \
            self.param("lm_head.weight", (c.vocab_size, d))
        return f.lm_head(h, head, name="lm_head")


def _check_sizes(c, batch, seq_len, kv_cache):
    if batch < 1:
        raise ConfigError(f"--batch: must be positive, got {batch}")
    if seq_len < 1:
        raise ConfigError(f"--seq-len: must be positive, got {seq_len}")
    if kv_cache < 0:
        raise ConfigError(f"--kv-cache: must be positive, got {kv_cache}")
    for what, n in (("--seq-len", seq_len), ("--kv-cache", kv_cache)):
        if n > c.max_positions:
            raise ConfigError(f"{what}: {n} exceeds the model's context length "
                              f"({c.max_positions_field} = {c.max_positions})")
    if kv_cache and kv_cache < seq_len:
        raise ConfigError(f"--kv-cache: a cache of {kv_cache} positions cannot "
                          f"hold the {seq_len} tokens of one prefill "
                          f"(--seq-len)")


def default_seq_len(config):
    return min(128, _as_config(config).max_positions)


def build_model(config, batch=1, seq_len=None, kv_cache=0):
    """The module of a whole causal LM: @forward (input_ids [B, S] ->
    logits [B, S, V]) and, with `kv_cache` = S_max, @prefill and @decode
    (taking a `position` and per-layer caches "N.key"/"N.value", returned
    updated after the logits)."""
    c = _as_config(config)
    seq_len = default_seq_len(c) if seq_len is None else seq_len
    _check_sizes(c, batch, seq_len, kv_cache)
    module = Module(c.model_type)
    entries = [("forward", seq_len)]
    if kv_cache:
        entries += [("prefill", seq_len), ("decode", 1)]
    for name, s in entries:
        f = module.function(name)
        ids = f.input("input_ids", (batch, s), "i64")
        pos = f.index_input("position") if name != "forward" else None
        e = _Entry(f, c, batch, s, kv_cache, pos)
        logits = e.gpt2(ids) if c.model_type == "gpt2" else e.llama(ids)
        f.output("logits", logits)
        for cache_name, value in e.caches:
            f.output_kv_cache(cache_name, value)
    return module


def build_block(config, layer=0, batch=1, seq_len=None, name=None,
                dtype="f32"):
    """One decoder block of layer `layer` as a `tfm.block` function
    ([B, S, d] "hidden" -> [B, S, d] "hidden"), parameters named as in the
    checkpoint. With `dtype` bf16 or f16 the parameters and the block's
    computation are in that type; "hidden" stays f32 in and out (converted
    on entry and exit), and the function is then not marked a block."""
    c = _as_config(config)
    seq_len = default_seq_len(c) if seq_len is None else seq_len
    _check_sizes(c, batch, seq_len, 0)
    if not 0 <= layer < c.num_layers:
        raise ConfigError(f"layer {layer} is out of range: the model has "
                          f"{c.num_layers} layers")
    module = Module()
    # A tfm.block's residual stream is its argument's type: a half-precision
    # block converting an f32 "hidden" is a plain function instead.
    f = module.function(name or f"{c.model_type}_block_{layer}",
                        block=dtype == "f32")
    x = f.input("hidden", (batch, seq_len, c.hidden_size))
    if dtype != "f32":
        x = f.convert(x, dtype)
    e = _Entry(f, c, batch, seq_len, dtype=dtype)
    y = e.gpt2_block(layer, x) if c.model_type == "gpt2" else \
        e.llama_block(layer, x)
    if dtype != "f32":
        y = f.convert(y, "f32")
    f.output("hidden", y)
    return module

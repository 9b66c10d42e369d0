"""A small builder that writes tfm dialect modules as MLIR text.

It needs nothing beyond the standard library: no MLIR Python bindings. Each
op method mirrors one tfm op (include/tfm/Dialect/Tfm/IR/TfmOps.td), computes
the result type in Python and raises ValueError, naming the op and the shapes
involved, when the operands break the op's contract; so a model built here
fails where it is written, not later in transformer-opt. The text uses the
ops' custom form (`operands attr-dict : functional-type(...)`) and the
argument conventions of tfm:

- `param(name, shape)`: a weight, `{tfm.param = "<Hugging Face name>"}`;
  asking again for the same name returns the same argument (tied weights);
- `input(name, shape, dtype)`: a tensor input, `{tfm.input = "<name>"}`;
  `index_input(name)` an `index` input (a position);
- `kv_cache(name, shape)`: a preallocated cache, `{tfm.kv_cache = "<name>"}`;
- `output(name, value)` / `output_kv_cache(name, value)`: results with
  `{tfm.output = ...}` / `{tfm.kv_cache = ...}`.

Arguments are printed inputs first, then parameters, then KV caches, each
group in the order it was created (the order transformer-translate uses). Every op takes an optional
`name`, printed as its location (`loc("h.0.attn.c_attn")`), which the
ledger uses as the row label and diagnostics point at.

    m = Module()
    f = m.function("forward")
    ids = f.input("input_ids", (1, 8), "i64")
    h = f.embedding(ids, f.param("wte.weight", (256, 64)), name="wte")
    f.output("hidden", h)
    print(m.to_mlir())
"""
import re
import struct

FLOAT_TYPES = ("f32", "f16", "bf16")
TOKEN_TYPES = ("i32", "i64")
_BITS = {"f32": 32, "f16": 16, "bf16": 16, "i32": 32, "i64": 64}


def _fmt_shape(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


class Type:
    """A static tensor type (`shape`, `dtype`) or `index` (shape None)."""

    def __init__(self, shape, dtype):
        self.shape = None if shape is None else tuple(int(s) for s in shape)
        self.dtype = dtype

    @property
    def is_index(self):
        return self.dtype == "index"

    @property
    def rank(self):
        return len(self.shape)

    def with_shape(self, shape):
        return Type(shape, self.dtype)

    def mlir(self):
        if self.is_index:
            return "index"
        dims = "".join(f"{s}x" for s in self.shape)
        return f"tensor<{dims}{self.dtype}>"

    def __eq__(self, other):
        return isinstance(other, Type) and (self.shape, self.dtype) == \
            (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __str__(self):
        return "index" if self.is_index else \
            f"{self.dtype}{_fmt_shape(self.shape)}"

    __repr__ = __str__


class Value:
    """An SSA value of one function: an argument or an op result."""

    def __init__(self, function, ssa, type):
        self.function = function
        self.ssa = ssa
        self.type = type

    @property
    def shape(self):
        return self.type.shape

    @property
    def dtype(self):
        return self.type.dtype

    def __repr__(self):
        return f"Value(%{self.ssa}: {self.type})"


def _float_attr(x):
    # Rounded to f32 first (as the C++ importer's getF32FloatAttr does), then
    # printed with nine significant digits, which name every f32 exactly; MLIR
    # float literals need the decimal point that "%e" always writes.
    f32 = struct.unpack("<f", struct.pack("<f", float(x)))[0]
    return f"{f32:.8e} : f32"


class Function:
    """One func.func; create it with Module.function()."""

    def __init__(self, module, name, block=False):
        self.module = module
        self.name = name
        self.block = block
        self._args = []          # (Value, attr name, attr value, loc)
        self._params = {}        # HF name -> Value
        self._arg_names = {}     # (attr name, attr value) -> Value
        self._ops = []           # lines of the body
        self._results = []       # (Value, attr name, attr value)
        self._ssa_used = set()

    # --- values and arguments --------------------------------------------

    def _fresh(self, hint):
        base = re.sub(r"[^A-Za-z0-9_]", "_", hint or "v")
        if not re.match(r"[A-Za-z_]", base):
            base = "v" + base
        name, n = base, 0
        while name in self._ssa_used:
            n += 1
            name = f"{base}_{n}"
        self._ssa_used.add(name)
        return name

    def _check_value(self, op, what, v):
        if not isinstance(v, Value):
            raise ValueError(f"{op}: {what} must be a Value of this function, "
                             f"got {v!r}")
        if v.function is not self:
            raise ValueError(f"{op}: {what} {v!r} belongs to function "
                             f"@{v.function.name}, not @{self.name}")

    def _add_arg(self, attr, key, type):
        if (attr, key) in self._arg_names:
            raise ValueError(f"{attr} = \"{key}\" is already an argument of "
                             f"@{self.name}")
        v = Value(self, self._fresh(key), type)
        self._args.append((v, attr, key))
        self._arg_names[(attr, key)] = v
        return v

    @staticmethod
    def _check_shape(what, shape):
        shape = tuple(shape)
        if not all(isinstance(s, int) and s > 0 for s in shape):
            raise ValueError(f"{what}: shape {_fmt_shape(shape)} must have "
                             f"positive integer dimensions")
        return shape

    def param(self, name, shape, dtype="f32"):
        """The weight `name` (a Hugging Face tensor name). Asking again for
        the same name returns the same argument; a different shape or dtype
        is an error (one checkpoint tensor, one type)."""
        shape = self._check_shape(f"param '{name}'", shape)
        if dtype not in FLOAT_TYPES:
            raise ValueError(f"param '{name}': dtype must be one of "
                             f"{', '.join(FLOAT_TYPES)}, got {dtype}")
        t = Type(shape, dtype)
        if name in self._params:
            old = self._params[name]
            if old.type != t:
                raise ValueError(f"param '{name}' is already {old.type}, "
                                 f"asked again as {t}")
            return old
        v = self._add_arg("tfm.param", name, t)
        self._params[name] = v
        return v

    def input(self, name, shape, dtype="f32"):
        """A tensor input (`input_ids` [B, S] of i64/i32, `hidden` ...)."""
        shape = self._check_shape(f"input '{name}'", shape)
        if dtype not in FLOAT_TYPES + TOKEN_TYPES:
            raise ValueError(f"input '{name}': unsupported dtype {dtype}")
        return self._add_arg("tfm.input", name, Type(shape, dtype))

    def index_input(self, name):
        """An `index` input, e.g. the position of the first token."""
        return self._add_arg("tfm.input", name, Type(None, "index"))

    def kv_cache(self, name, shape, dtype="f32"):
        """A preallocated KV cache [B, Hkv, S_max, dh], e.g. "0.key"."""
        shape = self._check_shape(f"kv_cache '{name}'", shape)
        if len(shape) != 4:
            raise ValueError(f"kv_cache '{name}': must be [B, Hkv, S_max, dh], "
                             f"got {_fmt_shape(shape)}")
        return self._add_arg("tfm.kv_cache", name, Type(shape, dtype))

    @property
    def params(self):
        """{Hugging Face name: Type} of the parameters, in argument order."""
        return {k: v.type for k, v in self._params.items()}

    def output(self, name, value):
        self._check_value("output", f"'{name}'", value)
        self._results.append((value, "tfm.output", name))

    def output_kv_cache(self, name, value):
        self._check_value("output_kv_cache", f"'{name}'", value)
        self._results.append((value, "tfm.kv_cache", name))

    # --- op emission -------------------------------------------------------

    def _emit(self, op, operands, result_types, attrs=None, name=None,
              operand_syntax=True):
        results = [Value(self, self._fresh(name or op.split(".")[-1]), t)
                   for t in result_types]
        lhs = ", ".join("%" + r.ssa for r in results)
        ops = ", ".join("%" + v.ssa for v in operands)
        attr_text = ""
        if attrs:
            attr_text = " {" + ", ".join(f"{k} = {v}" for k, v in attrs) + "}"
        in_types = ", ".join(v.type.mlir() for v in operands)
        if len(result_types) == 1:
            out_types = result_types[0].mlir()
        else:
            out_types = "(" + ", ".join(t.mlir() for t in result_types) + ")"
        loc = f' loc("{name}")' if name else ""
        self._ops.append(f"{lhs} = {op} {ops}{attr_text} : ({in_types}) -> "
                         f"{out_types}{loc}")
        return results[0] if len(results) == 1 else tuple(results)

    def _float(self, op, what, v):
        self._check_value(op, what, v)
        if v.type.is_index or v.dtype not in FLOAT_TYPES:
            raise ValueError(f"{op}: {what} must be a float tensor "
                             f"({'/'.join(FLOAT_TYPES)}), got {v.type}")

    def _rank(self, op, what, v, rank):
        self._float(op, what, v)
        if v.type.rank != rank:
            raise ValueError(f"{op}: {what} must have rank {rank}, got "
                             f"{v.type}")

    def _index(self, op, what, v):
        self._check_value(op, what, v)
        if not v.type.is_index:
            raise ValueError(f"{op}: {what} must be an index, got {v.type}")

    @staticmethod
    def _same_dtype(op, a, an, b, bn):
        if a.dtype != b.dtype:
            raise ValueError(f"{op}: {an} element type {a.dtype} differs from "
                             f"{bn} element type {b.dtype} ({a.type} vs "
                             f"{b.type})")

    @staticmethod
    def _vector(op, what, v, d, dname):
        if v.type.shape != (d,):
            raise ValueError(f"{op}: {what} must be [{d}] ({dname}), got "
                             f"{v.type}")

    # --- embeddings --------------------------------------------------------

    def embedding(self, ids, table, name=None):
        """`table[ids]`: ids [B, S] (i32/i64), table [V, d] -> [B, S, d]."""
        op = "tfm.embedding"
        self._check_value(op, "ids", ids)
        if ids.type.is_index or ids.dtype not in TOKEN_TYPES or \
                ids.type.rank != 2:
            raise ValueError(f"{op}: ids must be [B, S] of i32 or i64, got "
                             f"{ids.type}")
        self._rank(op, "table", table, 2)
        (b, s), (_, d) = ids.shape, table.shape
        return self._emit(op, [ids, table], [table.type.with_shape((b, s, d))],
                          name=name)

    def position_embedding(self, x, table, offset=None, name=None):
        """`x + table[offset + s]`: x [B, S, d], table [P, d]."""
        op = "tfm.position_embedding"
        self._rank(op, "input", x, 3)
        self._rank(op, "table", table, 2)
        self._same_dtype(op, x, "input", table, "table")
        if table.shape[1] != x.shape[2]:
            raise ValueError(f"{op}: table {table.type} width differs from "
                             f"the hidden size d={x.shape[2]} of input "
                             f"{x.type}")
        operands = [x, table]
        if offset is not None:
            self._index(op, "offset", offset)
            operands.append(offset)
        elif x.shape[1] > table.shape[0]:
            raise ValueError(f"{op}: sequence length {x.shape[1]} of input "
                             f"{x.type} exceeds the {table.shape[0]} "
                             f"positions of table {table.type}")
        return self._emit(op, operands, [x.type], name=name)

    # --- normalisation -----------------------------------------------------

    def _norm(self, op, x, params, eps, name):
        self._float(op, "input", x)
        if x.type.rank < 1:
            raise ValueError(f"{op}: input must have rank >= 1, got {x.type}")
        d = x.shape[-1]
        for what, p in params:
            self._float(op, what, p)
            self._vector(op, what, p, d, f"the last dimension of input "
                         f"{x.type}")
            self._same_dtype(op, x, "input", p, what)
        if not eps > 0:
            raise ValueError(f"{op}: epsilon must be positive, got {eps}")
        return self._emit(op, [x] + [p for _, p in params], [x.type],
                          [("epsilon", _float_attr(eps))], name)

    def layer_norm(self, x, scale, bias, eps=1e-5, name=None):
        return self._norm("tfm.layer_norm", x,
                          [("scale", scale), ("bias", bias)], eps, name)

    def rms_norm(self, x, scale, eps=1e-6, name=None):
        return self._norm("tfm.rms_norm", x, [("scale", scale)], eps, name)

    # --- projections -------------------------------------------------------

    def linear(self, x, weight, bias=None, layout="in_out", name=None):
        """`x W (+ b)`; weight [in, out] (`in_out`, GPT-2 Conv1D) or
        [out, in] (`out_in`, nn.Linear)."""
        op = "tfm.linear"
        self._float(op, "input", x)
        if x.type.rank < 2:
            raise ValueError(f"{op}: input must have rank >= 2, got {x.type}")
        self._rank(op, "weight", weight, 2)
        self._same_dtype(op, x, "input", weight, "weight")
        if layout not in ("in_out", "out_in"):
            raise ValueError(f"{op}: layout must be 'in_out' or 'out_in', got "
                             f"{layout!r}")
        n_in, n_out = weight.shape if layout == "in_out" else \
            weight.shape[::-1]
        if x.shape[-1] != n_in:
            raise ValueError(f"{op}: input {x.type}'s last dimension "
                             f"{x.shape[-1]} does not match the weight's "
                             f"in={n_in} (weight {weight.type}, layout "
                             f"{layout})")
        operands = [x, weight]
        if bias is not None:
            self._float(op, "bias", bias)
            self._vector(op, "bias", bias, n_out, "the weight's out")
            self._same_dtype(op, x, "input", bias, "bias")
            operands.append(bias)
        attrs = [("layout", "#tfm.layout<out_in>")] if layout == "out_in" \
            else None
        return self._emit(op, operands, [x.type.with_shape(x.shape[:-1] +
                                                           (n_out,))],
                          attrs, name)

    def lm_head(self, x, weight, layout="out_in", name=None):
        """Logits `x W^T`: x [B, S, d], weight [V, d] (`out_in`, default) or
        [d, V] (`in_out`) -> [B, S, V]."""
        op = "tfm.lm_head"
        self._rank(op, "input", x, 3)
        self._rank(op, "weight", weight, 2)
        self._same_dtype(op, x, "input", weight, "weight")
        if layout not in ("in_out", "out_in"):
            raise ValueError(f"{op}: layout must be 'in_out' or 'out_in', got "
                             f"{layout!r}")
        vocab, d = weight.shape if layout == "out_in" else weight.shape[::-1]
        if d != x.shape[2]:
            raise ValueError(f"{op}: weight {weight.type} (layout {layout}) "
                             f"expects hidden size {d}, input {x.type} has "
                             f"{x.shape[2]}")
        attrs = [("layout", "#tfm.layout<in_out>")] if layout == "in_out" \
            else None
        return self._emit(op, [x, weight],
                          [x.type.with_shape(x.shape[:2] + (vocab,))],
                          attrs, name)

    def split(self, x, sizes, name=None):
        """Splits the last dimension into pieces of `sizes` (in order)."""
        op = "tfm.split"
        self._float(op, "input", x)
        sizes = [int(s) for s in sizes]
        if not sizes or any(s <= 0 for s in sizes):
            raise ValueError(f"{op}: sizes {sizes} must be one or more "
                             f"positive sizes")
        if sum(sizes) != x.shape[-1]:
            raise ValueError(f"{op}: pieces {sizes} add up to {sum(sizes)}, "
                             f"but the last dimension of input {x.type} is "
                             f"{x.shape[-1]}")
        types = [x.type.with_shape(x.shape[:-1] + (s,)) for s in sizes]
        result = self._emit(op, [x], types, name=name)
        return result if isinstance(result, tuple) else (result,)

    # --- heads and positions -------------------------------------------------

    def split_heads(self, x, num_heads, name=None):
        """[B, S, H*dh] -> [B, H, S, dh]."""
        op = "tfm.split_heads"
        self._rank(op, "input", x, 3)
        if not isinstance(num_heads, int) or num_heads <= 0:
            raise ValueError(f"{op}: num_heads must be a positive integer, "
                             f"got {num_heads!r}")
        b, s, w = x.shape
        if w % num_heads:
            raise ValueError(f"{op}: width {w} of input {x.type} is not "
                             f"divisible by num_heads={num_heads}")
        return self._emit(op, [x], [x.type.with_shape(
            (b, num_heads, s, w // num_heads))],
            [("num_heads", f"{num_heads} : i64")], name)

    def merge_heads(self, x, name=None):
        """[B, H, S, dh] -> [B, S, H*dh]."""
        op = "tfm.merge_heads"
        self._rank(op, "input", x, 4)
        b, h, s, dh = x.shape
        return self._emit(op, [x], [x.type.with_shape((b, s, h * dh))],
                          name=name)

    def rope(self, x, offset=None, theta=10000.0, name=None):
        """Rotate-half RoPE on [B, H, S, dh] (dh even)."""
        op = "tfm.rope"
        self._rank(op, "input", x, 4)
        if x.shape[3] % 2:
            raise ValueError(f"{op}: head dimension dh={x.shape[3]} of input "
                             f"{x.type} must be even to rotate halves")
        if not theta > 0:
            raise ValueError(f"{op}: theta must be positive, got {theta}")
        operands = [x]
        if offset is not None:
            self._index(op, "offset", offset)
            operands.append(offset)
        return self._emit(op, operands, [x.type],
                          [("theta", _float_attr(theta))], name)

    def attention(self, q, k, v, offset=None, causal=True, scale=None,
                  name=None):
        """softmax(q k^T * scale + mask) v: q [B, Hq, S, dh],
        k [B, Hkv, Skv, dh], v [B, Hkv, Skv, dv], Hq % Hkv == 0."""
        op = "tfm.attention"
        for what, t in (("query", q), ("key", k), ("value", v)):
            self._rank(op, what, t, 4)
        self._same_dtype(op, q, "query", k, "key")
        self._same_dtype(op, q, "query", v, "value")
        b, hq, s, dh = q.shape
        if k.shape[0] != b or v.shape[0] != b:
            raise ValueError(f"{op}: batch sizes differ: query {q.type}, key "
                             f"{k.type}, value {v.type}")
        hkv, skv = k.shape[1], k.shape[2]
        if v.shape[1] != hkv or v.shape[2] != skv:
            raise ValueError(f"{op}: key {k.type} and value {v.type} must "
                             f"agree in heads and length")
        if hq % hkv:
            raise ValueError(f"{op}: query heads Hq={hq} ({q.type}) must be a "
                             f"multiple of key/value heads Hkv={hkv} "
                             f"({k.type})")
        if k.shape[3] != dh:
            raise ValueError(f"{op}: query head dim {dh} ({q.type}) differs "
                             f"from key head dim {k.shape[3]} ({k.type})")
        operands = [q, k, v]
        if offset is not None:
            self._index(op, "offset", offset)
            operands.append(offset)
        elif s > skv:
            raise ValueError(f"{op}: query length {s} ({q.type}) exceeds key "
                             f"length {skv} ({k.type}) with no offset")
        attrs = []
        if not causal:
            attrs.append(("causal", "false"))
        if scale is not None:
            attrs.append(("scale", _float_attr(scale)))
        return self._emit(op, operands,
                          [q.type.with_shape((b, hq, s, v.shape[3]))],
                          attrs, name)

    def kv_cache_write(self, cache, update, position, name=None):
        """`cache[:, :, position:position+S] = update`, returning the cache."""
        op = "tfm.kv_cache_write"
        self._rank(op, "cache", cache, 4)
        self._rank(op, "update", update, 4)
        self._same_dtype(op, cache, "cache", update, "update")
        self._index(op, "position", position)
        c, u = cache.shape, update.shape
        if (c[0], c[1], c[3]) != (u[0], u[1], u[3]):
            raise ValueError(f"{op}: update {update.type} must match cache "
                             f"{cache.type} in batch, heads and head dim")
        if u[2] > c[2]:
            raise ValueError(f"{op}: update of {u[2]} positions exceeds the "
                             f"cache's {c[2]} ({cache.type})")
        return self._emit(op, [cache, update, position], [cache.type],
                          name=name)

    def convert(self, x, dtype, name=None):
        """`x` in another float type (`tfm.convert`: rounds to nearest even
        when narrowing, exact when widening)."""
        op = "tfm.convert"
        self._float(op, "input", x)
        if dtype not in FLOAT_TYPES:
            raise ValueError(f"{op}: dtype must be one of "
                             f"{', '.join(FLOAT_TYPES)}, got {dtype}")
        return self._emit(op, [x], [Type(x.shape, dtype)], name=name)

    # --- activations and the MLP --------------------------------------------

    def gelu(self, x, approximate="none", name=None):
        op = "tfm.gelu"
        self._float(op, "input", x)
        if approximate not in ("none", "tanh"):
            raise ValueError(f"{op}: approximate must be 'none' or 'tanh', "
                             f"got {approximate!r}")
        attrs = [("approximate", "#tfm.gelu<tanh>")] \
            if approximate == "tanh" else None
        return self._emit(op, [x], [x.type], attrs, name)

    def silu(self, x, name=None):
        self._float("tfm.silu", "input", x)
        return self._emit("tfm.silu", [x], [x.type], name=name)

    def swiglu(self, gate, up, name=None):
        op = "tfm.swiglu"
        self._float(op, "gate", gate)
        self._float(op, "up", up)
        if gate.type != up.type:
            raise ValueError(f"{op}: gate {gate.type} and up {up.type} must "
                             f"have the same type")
        return self._emit(op, [gate, up], [gate.type], name=name)

    def residual_add(self, residual, branch, name=None):
        """`residual + branch`; both sides must have the residual stream's
        type (the contract --tfm-verify-contracts checks)."""
        op = "tfm.residual_add"
        self._float(op, "residual", residual)
        self._float(op, "branch", branch)
        if residual.type != branch.type:
            raise ValueError(f"{op}: branch {branch.type} does not match the "
                             f"residual stream {residual.type}")
        return self._emit(op, [residual, branch], [residual.type], name=name)

    def moe(self, x, router, experts, top_k, name=None):
        """Mixtral's sparse MoE. `experts` is a list of (gate [m, d],
        up [m, d], down [d, m]) triples in nn.Linear layout; router [E, d]."""
        op = "tfm.moe"
        self._rank(op, "input", x, 3)
        self._rank(op, "router", router, 2)
        experts = list(experts)
        if not experts or any(len(e) != 3 for e in experts):
            raise ValueError(f"{op}: experts must be one or more "
                             f"(gate, up, down) triples")
        d, n = x.shape[2], len(experts)
        if router.shape != (n, d):
            raise ValueError(f"{op}: router must be [{n}, {d}] (experts x d), "
                             f"got {router.type}")
        if not isinstance(top_k, int) or not 1 <= top_k <= n:
            raise ValueError(f"{op}: top_k={top_k} must be in [1, {n}]")
        self._rank(op, "expert 0 gate weight", experts[0][0], 2)
        m = experts[0][0].shape[0]
        operands = [x, router]
        for e, triple in enumerate(experts):
            for what, w, shape in zip(("gate", "up", "down"), triple,
                                      ((m, d), (m, d), (d, m))):
                self._float(op, f"expert {e} {what} weight", w)
                if w.type != x.type.with_shape(shape):
                    raise ValueError(
                        f"{op}: expert {e} {what} weight must be "
                        f"{x.type.with_shape(shape)}, got {w.type}")
                operands.append(w)
        return self._emit(op, operands, [x.type],
                          [("top_k", f"{top_k} : i64")], name)

    # --- printing --------------------------------------------------------------

    def to_mlir(self, indent="  "):
        if not self._results:
            raise ValueError(f"@{self.name} has no outputs")
        order = {"tfm.input": 0, "tfm.param": 1, "tfm.kv_cache": 2}
        ordered = sorted(self._args, key=lambda a: order[a[1]])
        if self.block:
            # The contract --tfm-verify-contracts enforces on tfm.block.
            first = ordered[0][0].type if ordered else None
            outs = [v.type for v, _, _ in self._results]
            if outs != [first]:
                raise ValueError(
                    f"@{self.name} is a tfm.block: it must return exactly the "
                    f"type of its first argument ({first}), got "
                    f"({', '.join(str(t) for t in outs)})")
        args = []
        for v, attr, key in ordered:
            # Argument locations name the tensor (caches as "kv_cache.<name>"),
            # as transformer-translate's do.
            loc = f"kv_cache.{key}" if attr == "tfm.kv_cache" else key
            args.append(f'{indent * 3}%{v.ssa}: {v.type.mlir()} '
                        f'{{{attr} = "{key}"}} loc("{loc}")')
        results = ", ".join(f'{v.type.mlir()} {{{attr} = "{key}"}}'
                            for v, attr, key in self._results)
        head = f"{indent}func.func @{self.name}(\n" + ",\n".join(args) + \
            f")\n{indent * 3}-> ({results})"
        if self.block:
            head += f"\n{indent * 3}attributes {{tfm.block}}"
        body = [f"{indent * 2}{line}" for line in self._ops]
        ret_vals = ", ".join("%" + v.ssa for v, _, _ in self._results)
        ret_types = ", ".join(v.type.mlir() for v, _, _ in self._results)
        body.append(f'{indent * 2}return {ret_vals} : {ret_types} '
                    f'loc("return")')
        return head + " {\n" + "\n".join(body) + \
            f'\n{indent}}} loc("{self.name}")'



class Module:
    """A builtin.module of tfm functions."""

    def __init__(self, name=None):
        """`name`, if given, is the module's location (the model type)."""
        self.name = name
        self.functions = []

    def function(self, name, block=False):
        """A new function @name; `block` marks it `tfm.block`."""
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
            raise ValueError(f"function name {name!r} is not a valid MLIR "
                             f"symbol")
        if any(f.name == name for f in self.functions):
            raise ValueError(f"function @{name} already exists")
        f = Function(self, name, block)
        self.functions.append(f)
        return f

    def to_mlir(self):
        loc = f' loc("{self.name}")' if self.name else ""
        return "module {\n" + "\n".join(f.to_mlir() for f in self.functions) \
            + f"\n}}{loc}\n"

# The Python builder (python/tfm/builder.py): shape checks raise ValueError
# naming the op and the shapes; a hand-built module verifies with the
# contracts pass and prints in the tfm syntax.
#
# RUN: %python %s errors | FileCheck %s --check-prefix=ERR
# RUN: %python %s module > %t.mlir
# RUN: transformer-opt --tfm-verify-contracts %t.mlir | FileCheck %s
import sys

from tfm.builder import Module


def expect_error(what, fn):
    try:
        fn()
    except ValueError as e:
        print(f"{what}: {e}")
        return
    print(f"{what}: NO ERROR")


def errors():
    f = Module().function("f")
    x = f.input("hidden", (2, 8, 64))
    w = f.param("w", (64, 96))
    # ERR: linear: tfm.linear: input f32[2, 8, 64]'s last dimension 64 does not match the weight's in=96 (weight f32[64, 96], layout out_in)
    expect_error("linear", lambda: f.linear(x, w, layout="out_in"))
    # ERR: bias: tfm.linear: bias must be [96] (the weight's out), got f32[64]
    expect_error("bias", lambda: f.linear(x, w, f.param("b", (64,))))
    # ERR: tied: param 'w' is already f32[64, 96], asked again as f32[96, 64]
    expect_error("tied", lambda: f.param("w", (96, 64)))
    # ERR: split: tfm.split: pieces [64, 16, 8] add up to 88, but the last dimension of input f32[2, 8, 96] is 96
    y = f.linear(x, w)
    expect_error("split", lambda: f.split(y, [64, 16, 8]))
    # ERR: heads: tfm.split_heads: width 96 of input f32[2, 8, 96] is not divisible by num_heads=5
    expect_error("heads", lambda: f.split_heads(y, 5))
    q = f.split_heads(x, 4)
    k = f.split_heads(f.linear(x, f.param("wk", (64, 48))), 3)
    # ERR: gqa: tfm.attention: query heads Hq=4 (f32[2, 4, 8, 16]) must be a multiple of key/value heads Hkv=3 (f32[2, 3, 8, 16])
    expect_error("gqa", lambda: f.attention(q, k, k))
    # ERR: rope: tfm.rope: head dimension dh=3 of input f32[2, 32, 8, 3] must be even to rotate halves
    expect_error("rope", lambda: f.rope(f.split_heads(y, 32)))
    # ERR: offset: tfm.attention: offset must be an index, got f32[2, 8, 64]
    expect_error("offset", lambda: f.attention(q, q, q, offset=x))
    # ERR: long query: tfm.attention: query length 8 (f32[2, 4, 8, 16]) exceeds key length 4 (f32[2, 4, 4, 16]) with no offset
    short = f.split_heads(f.input("short", (2, 4, 64)), 4)
    expect_error("long query", lambda: f.attention(q, short, short))
    # ERR: residual: tfm.residual_add: branch f32[2, 8, 96] does not match the residual stream f32[2, 8, 64]
    expect_error("residual", lambda: f.residual_add(x, y))
    # ERR: embedding: tfm.embedding: ids must be [B, S] of i32 or i64, got f32[2, 8, 64]
    expect_error("embedding", lambda: f.embedding(x, f.param("wte", (10, 64))))
    # ERR: positions: tfm.position_embedding: sequence length 8 of input f32[2, 8, 64] exceeds the 4 positions of table f32[4, 64]
    expect_error("positions", lambda: f.position_embedding(
        x, f.param("wpe", (4, 64))))
    # ERR: norm: tfm.rms_norm: scale must be [64] (the last dimension of input f32[2, 8, 64]), got f32[96]
    expect_error("norm", lambda: f.rms_norm(x, f.param("n", (96,))))
    # ERR: norm eps: tfm.layer_norm: epsilon must be positive, got 0.0
    expect_error("norm eps", lambda: f.layer_norm(
        x, f.param("s", (64,)), f.param("sb", (64,)), eps=0.0))
    # ERR: dtype: tfm.linear: input element type f32 differs from weight element type f16 (f32[2, 8, 64] vs f16[64, 64])
    expect_error("dtype", lambda: f.linear(x, f.param("h", (64, 64), "f16")))
    # ERR: lm_head: tfm.lm_head: weight f32[64, 96] (layout out_in) expects hidden size 96, input f32[2, 8, 64] has 64
    expect_error("lm_head", lambda: f.lm_head(x, w))
    router = f.param("router", (2, 64))
    ex = [(f.param(f"e{i}.w1", (32, 64)), f.param(f"e{i}.w3", (32, 64)),
           f.param(f"e{i}.w2", (64, 32))) for i in range(2)]
    # ERR: moe top_k: tfm.moe: top_k=3 must be in [1, 2]
    expect_error("moe top_k", lambda: f.moe(x, router, ex, 3))
    # ERR: moe down: tfm.moe: expert 1 down weight must be f32[64, 32], got f32[32, 64]
    expect_error("moe down", lambda: f.moe(
        x, router, [ex[0], (ex[1][0], ex[1][1], ex[1][0])], 2))
    cache = f.kv_cache("0.key", (2, 4, 16, 16))
    pos = f.index_input("position")
    # ERR: cache: tfm.kv_cache_write: update f32[2, 3, 8, 16] must match cache f32[2, 4, 16, 16] in batch, heads and head dim
    expect_error("cache", lambda: f.kv_cache_write(cache, k, pos))
    # ERR: other function: tfm.silu: input Value(%hidden: f32[2, 8, 64]) belongs to function @f, not @g
    g = Module().function("g")
    expect_error("other function", lambda: g.silu(x))
    # ERR: duplicate input: tfm.input = "hidden" is already an argument of @f
    expect_error("duplicate input", lambda: f.input("hidden", (1, 1, 64)))
    # ERR: no outputs: @f has no outputs
    expect_error("no outputs", lambda: f.to_mlir())
    b = Module().function("b", block=True)
    bx = b.input("hidden", (1, 4, 32))
    b.output("hidden", bx)
    b.output("extra", bx)
    # ERR: block results: @b is a tfm.block: it must return exactly the type of its first argument (f32[1, 4, 32]), got (f32[1, 4, 32], f32[1, 4, 32])
    expect_error("block results", lambda: b.to_mlir())
    # ERR-NOT: NO ERROR


def module():
    """A decode step using every op kind but lm_head/embedding, a block, and
    a tiny model with a tied head."""
    m = Module()
    f = m.function("step")
    x = f.input("hidden", (1, 4, 32))
    pos = f.index_input("position")
    h = f.layer_norm(x, f.param("ln.weight", (32,)), f.param("ln.bias", (32,)),
                     eps=1e-6, name="ln")
    q, k, v = f.split(f.linear(h, f.param("qkv.weight", (32, 64)),
                               f.param("qkv.bias", (64,)), name="qkv"),
                      [32, 16, 16])
    q = f.rope(f.split_heads(q, 4), offset=pos, theta=500000.0)
    k = f.rope(f.split_heads(k, 2), offset=pos)
    k = f.kv_cache_write(f.kv_cache("0.key", (1, 2, 16, 8)), k, pos,
                         name="k_cache")
    v = f.kv_cache_write(f.kv_cache("0.value", (1, 2, 16, 8)),
                         f.split_heads(v, 2), pos, name="v_cache")
    a = f.attention(q, k, v, offset=pos, scale=0.25)
    a = f.linear(f.merge_heads(a), f.param("o.weight", (32, 32)),
                 layout="out_in")
    h = f.residual_add(x, a, name="attn.residual")
    n = f.rms_norm(h, f.param("norm.weight", (32,)))
    g = f.linear(n, f.param("gate.weight", (48, 32)), layout="out_in")
    u = f.linear(n, f.param("up.weight", (48, 32)), layout="out_in")
    s = f.gelu(f.silu(f.swiglu(g, u)), "tanh")
    d = f.linear(s, f.param("down.weight", (32, 48)), layout="out_in")
    h = f.residual_add(h, d)
    experts = [(f.param(f"e.{i}.w1", (24, 32)), f.param(f"e.{i}.w3", (24, 32)),
                f.param(f"e.{i}.w2", (32, 24))) for i in range(3)]
    h = f.residual_add(h, f.moe(h, f.param("router", (3, 32)), experts, 2))
    f.output("hidden", h)
    f.output_kv_cache("0.key", k)
    f.output_kv_cache("0.value", v)

    blk = m.function("block", block=True)
    bx = blk.input("hidden", (1, 4, 32))
    blk.output("hidden", blk.residual_add(bx, blk.gelu(bx)))

    lm = m.function("lm")
    ids = lm.input("input_ids", (1, 4), "i32")
    wte = lm.param("wte.weight", (50, 32))
    e = lm.position_embedding(lm.embedding(ids, wte),
                              lm.param("wpe.weight", (8, 32)))
    lm.output("logits", lm.lm_head(e, lm.param("wte.weight", (50, 32))))
    sys.stdout.write(m.to_mlir())


# Arguments: inputs, then parameters, then caches; attributes as the dialect
# prints them; the tied head reads the embedding's argument again.
# CHECK-LABEL: func.func @step(
# CHECK-SAME: %arg0: tensor<1x4x32xf32> {tfm.input = "hidden"}, %arg1: index {tfm.input = "position"}
# CHECK-SAME: {tfm.param = "ln.weight"}
# CHECK-SAME: %arg{{[0-9]+}}: tensor<1x2x16x8xf32> {tfm.kv_cache = "0.key"}, %arg{{[0-9]+}}: tensor<1x2x16x8xf32> {tfm.kv_cache = "0.value"})
# CHECK-SAME: -> (tensor<1x4x32xf32> {tfm.output = "hidden"}, tensor<1x2x16x8xf32> {tfm.kv_cache = "0.key"}, tensor<1x2x16x8xf32> {tfm.kv_cache = "0.value"})
# CHECK: tfm.layer_norm {{.*}} {epsilon = 9.99999997E-7 : f32}
# CHECK: tfm.split {{.*}} -> (tensor<1x4x32xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>)
# CHECK: tfm.rope {{.*}} {theta = 5.000000e+05 : f32} : (tensor<1x4x4x8xf32>, index)
# CHECK: tfm.kv_cache_write
# CHECK: tfm.kv_cache_write
# CHECK: tfm.attention {{.*}} {scale = 2.500000e-01 : f32} : (tensor<1x4x4x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, index) -> tensor<1x4x4x8xf32>
# CHECK: tfm.linear {{.*}} {layout = #tfm.layout<out_in>}
# CHECK: tfm.gelu {{.*}} {approximate = #tfm.gelu<tanh>}
# CHECK: tfm.moe {{.*}} {top_k = 2 : i64}
# CHECK-LABEL: func.func @block(
# CHECK-SAME: attributes {tfm.block}
# CHECK: tfm.gelu %arg0 : (tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
# CHECK-LABEL: func.func @lm(
# CHECK-SAME: %arg0: tensor<1x4xi32> {tfm.input = "input_ids"}, %arg1: tensor<50x32xf32> {tfm.param = "wte.weight"}, %arg2: tensor<8x32xf32> {tfm.param = "wpe.weight"})
# CHECK: tfm.lm_head %{{.*}}, %arg1 :

if __name__ == "__main__":
    {"errors": errors, "module": module}[sys.argv[1]]()

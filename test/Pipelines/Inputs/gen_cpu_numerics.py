#!/usr/bin/python3
"""Generates ../cpu-numerics.mlir: small tfm functions run through
--tfm-cpu-pipeline and mlir-runner, compared in-process against PyTorch
references computed here (pasted into the test as constants).

Usage: /usr/bin/python3 gen_cpu_numerics.py > ../cpu-numerics.mlir
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numerics_common import MODULE_PROLOGUE  # noqa: E402

torch.manual_seed(0)
F = torch.nn.functional


def ty(t, dt="f32"):
    return "tensor<" + "x".join(str(s) for s in t.shape) + "x" + dt + ">"


def lit(t):
    return "dense<" + str(t.flatten().tolist()).replace("'", "") + ">"


def const(name, t, dt="f32"):
    if t.dtype in (torch.int64, torch.int32):
        vals = t.flatten().tolist()
    else:
        vals = ["%.9g" % v for v in t.flatten().tolist()]
    shape = ty(t, dt)
    return "    %%%s = arith.constant dense<[%s]> : tensor<%dx%s>\n" % (
        name, ", ".join(str(v) for v in vals), t.numel(), dt), shape


cases = []  # (func text, main text)


def case(name, body, args, ref, extra_args=(), atol=1e-4, rtol=1e-3,
         out_dt="f32", in_dts=None):
    """args: list of (tensor, dtype); body: tfm body using %a0..; ref tensor"""
    in_dts = in_dts or ["f32"] * len(args)
    sig = ", ".join("%%a%d: %s" % (i, ty(t, d))
                    for i, (t, d) in enumerate(zip(args, in_dts)))
    for j, _ in enumerate(extra_args):
        sig += ", %%i%d: index" % j
    func = "  func.func @%s(%s) -> %s {\n%s  }\n" % (
        name, sig, ty(ref, out_dt), body)
    main = "    // %s\n" % name
    names = []
    for i, (t, d) in enumerate(zip(args, in_dts)):
        n = "%s_a%d" % (name, i)
        c, shape = const(n + "_flat", t, d)
        main += c
        main += "    %%%s = tensor.expand_shape %%%s_flat [[%s]] output_shape [%s] : tensor<%dx%s> into %s\n" % (
            n, n, ", ".join(str(k) for k in range(t.dim())),
            ", ".join(str(s) for s in t.shape), t.numel(), d, shape) if t.dim() > 1 else \
            "    %%%s = tensor.cast %%%s_flat : tensor<%dx%s> to %s\n" % (n, n, t.numel(), d, shape)
        names.append("%" + n)
    for j, v in enumerate(extra_args):
        main += "    %%%s_i%d = arith.constant %d : index\n" % (name, j, v)
        names.append("%%%s_i%d" % (name, j))
    types = [ty(t, d) for t, d in zip(args, in_dts)] + ["index"] * len(extra_args)
    main += "    %%%s_y = call @%s(%s) : (%s) -> %s\n" % (
        name, name, ", ".join(names), ", ".join(types), ty(ref, out_dt))
    flat = "tensor<%dx%s>" % (ref.numel(), out_dt)
    main += "    %%%s_yf = tensor.collapse_shape %%%s_y [[%s]] : %s into %s\n" % (
        name, name, ", ".join(str(k) for k in range(ref.dim())), ty(ref, out_dt), flat)
    y = "%%%s_yf" % name
    if out_dt != "f32":
        main += ("    %%%s_e32 = tensor.empty() : tensor<%dxf32>\n"
                 "    %%%s_y32 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = [\"parallel\"]} ins(%%%s_yf : %s) outs(%%%s_e32 : tensor<%dxf32>) {\n"
                 "    ^bb0(%%a: %s, %%o: f32):\n      %%w = arith.extf %%a : %s to f32\n      linalg.yield %%w : f32\n    } -> tensor<%dxf32>\n") % (
            name, ref.numel(), name, name, flat, name, ref.numel(), out_dt, out_dt, ref.numel())
        y = "%%%s_y32" % name
    c, _ = const("%s_ref" % name, ref.float())
    main += c
    main += "    %%%s_yd = tensor.cast %s : tensor<%d x f32> to tensor<?xf32>\n" % (name, y, ref.numel())
    main += "    %%%s_rd = tensor.cast %%%s_ref : tensor<%d x f32> to tensor<?xf32>\n" % (name, name, ref.numel())
    main += "    %%%s_at = arith.constant %g : f32\n    %%%s_rt = arith.constant %g : f32\n" % (name, atol, name, rtol)
    main += "    call @check(%%%s_yd, %%%s_rd, %%%s_at, %%%s_rt) : (tensor<?xf32>, tensor<?xf32>, f32, f32) -> ()\n" % ((name,) * 4)
    cases.append((name, func, main))


def rnd(*shape):
    return torch.randn(*shape)


# Attention: GQA (Hq=4, Hkv=2), causal, default offset Skv-S, dv != dh.
q, k, v = rnd(1, 4, 3, 4), rnd(1, 2, 5, 4), rnd(1, 2, 5, 3)
def attn_ref(q, k, v, offset, causal=True, scale=None):
    g = q.shape[1] // k.shape[1]
    kk, vv = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = q @ kk.transpose(-1, -2) * (scale or 1 / math.sqrt(q.shape[-1]))
    if causal:
        S, Skv = q.shape[2], k.shape[2]
        mask = torch.arange(Skv)[None, :] > (offset + torch.arange(S))[:, None]
        s = s.masked_fill(mask, float("-inf"))
    return torch.softmax(s, -1) @ vv
case("attn_gqa", "    %r = tfm.attention %a0, %a1, %a2 : (tensor<1x4x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x3xf32>) -> tensor<1x4x3x3xf32>\n    return %r : tensor<1x4x3x3xf32>\n",
     [q, k, v], attn_ref(q, k, v, 2))
# Decode step over a preallocated cache: MQA, explicit offset 2 of Skv=6, scale.
q2, k2, v2 = rnd(2, 2, 1, 4), rnd(2, 1, 6, 4), rnd(2, 1, 6, 4)
case("attn_mqa_offset", "    %r = tfm.attention %a0, %a1, %a2, %i0 {scale = 0.25 : f32} : (tensor<2x2x1x4xf32>, tensor<2x1x6x4xf32>, tensor<2x1x6x4xf32>, index) -> tensor<2x2x1x4xf32>\n    return %r : tensor<2x2x1x4xf32>\n",
     [q2, k2, v2], attn_ref(q2, k2, v2, 2, scale=0.25), extra_args=[2])
# Non-causal MHA.
q3, k3, v3 = rnd(1, 2, 3, 2), rnd(1, 2, 4, 2), rnd(1, 2, 4, 2)
case("attn_noncausal", "    %r = tfm.attention %a0, %a1, %a2 {causal = false} : (tensor<1x2x3x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x3x2xf32>\n    return %r : tensor<1x2x3x2xf32>\n",
     [q3, k3, v3], attn_ref(q3, k3, v3, 0, causal=False))

# Norms.
x, g, b = rnd(2, 3, 8) * 3 + 1, rnd(8), rnd(8)
case("layer_norm", "    %r = tfm.layer_norm %a0, %a1, %a2 : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>\n    return %r : tensor<2x3x8xf32>\n",
     [x, g, b], F.layer_norm(x, (8,), g, b, 1e-5))
def rms(x, g, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * g
case("rms_norm", "    %r = tfm.rms_norm %a0, %a1 {epsilon = 1.0e-5 : f32} : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>\n    return %r : tensor<2x3x8xf32>\n",
     [x, g], rms(x, g, 1e-5))
xh, gh = (rnd(2, 16) * 4).half(), rnd(16).half()
case("rms_norm_f16", "    %r = tfm.rms_norm %a0, %a1 : (tensor<2x16xf16>, tensor<16xf16>) -> tensor<2x16xf16>\n    return %r : tensor<2x16xf16>\n",
     [xh, gh], rms(xh.float(), gh.float(), 1e-6).half(), atol=2e-3, rtol=2e-3,
     out_dt="f16", in_dts=["f16", "f16"])

# RoPE with offset 3 and theta 500000.
xr = rnd(1, 2, 3, 8)
def rope(x, offset, theta):
    dh = x.shape[-1]
    inv = 1.0 / (theta ** (torch.arange(0, dh, 2).float() / dh))
    ang = (offset + torch.arange(x.shape[2]).float())[:, None] * inv[None, :]
    emb = torch.cat([ang, ang], -1)
    x1, x2 = x[..., : dh // 2], x[..., dh // 2:]
    rot = torch.cat([-x2, x1], -1)
    return x * emb.cos() + rot * emb.sin()
case("rope", "    %r = tfm.rope %a0, %i0 {theta = 500000.0 : f32} : (tensor<1x2x3x8xf32>, index) -> tensor<1x2x3x8xf32>\n    return %r : tensor<1x2x3x8xf32>\n",
     [xr], rope(xr, 3, 500000.0), extra_args=[3])

# Activations.
xa = rnd(3, 5) * 3
case("gelu", "    %r = tfm.gelu %a0 : (tensor<3x5xf32>) -> tensor<3x5xf32>\n    return %r : tensor<3x5xf32>\n",
     [xa], F.gelu(xa))
case("gelu_tanh", "    %r = tfm.gelu %a0 {approximate = #tfm.gelu<tanh>} : (tensor<3x5xf32>) -> tensor<3x5xf32>\n    return %r : tensor<3x5xf32>\n",
     [xa], F.gelu(xa, approximate="tanh"))

# Projections: out_in with bias on rank 3; in_out without bias; lm_head.
xl, wl, bl = rnd(2, 3, 6), rnd(5, 6), rnd(5)
case("linear_out_in", "    %r = tfm.linear %a0, %a1, %a2 {layout = #tfm.layout<out_in>} : (tensor<2x3x6xf32>, tensor<5x6xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>\n    return %r : tensor<2x3x5xf32>\n",
     [xl, wl, bl], F.linear(xl, wl, bl))
wi = rnd(6, 7)
case("linear_in_out", "    %r = tfm.linear %a0, %a1 : (tensor<2x3x6xf32>, tensor<6x7xf32>) -> tensor<2x3x7xf32>\n    return %r : tensor<2x3x7xf32>\n",
     [xl, wi], xl @ wi)
case("lm_head", "    %r = tfm.lm_head %a0, %a1 : (tensor<2x3x6xf32>, tensor<5x6xf32>) -> tensor<2x3x5xf32>\n    return %r : tensor<2x3x5xf32>\n",
     [xl, wl], xl @ wl.t())

# Embeddings: ids out of range are clamped; positions start at offset 1.
ids = torch.tensor([[0, 3, -2], [7, 2, 1]])
wte, wpe = rnd(5, 4), rnd(6, 4)
emb_ref = wte[ids.clamp(0, 4)] + wpe[1:4][None]
case("embeddings", "    %e = tfm.embedding %a0, %a1 : (tensor<2x3xi64>, tensor<5x4xf32>) -> tensor<2x3x4xf32>\n    %r = tfm.position_embedding %e, %a2, %i0 : (tensor<2x3x4xf32>, tensor<6x4xf32>, index) -> tensor<2x3x4xf32>\n    return %r : tensor<2x3x4xf32>\n",
     [ids, wte, wpe], emb_ref, extra_args=[1], in_dts=["i64", "f32", "f32"])

# Reshapes, SwiGLU, SiLU and residual: split, heads round trip.
xs = rnd(1, 3, 12)
qs, ks, vs = xs[..., :4], xs[..., 4:8], xs[..., 8:]
case("split_heads_swiglu", """    %q, %k, %v = tfm.split %a0 : (tensor<1x3x12xf32>) -> (tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>)
    %h = tfm.split_heads %q {num_heads = 2 : i64} : (tensor<1x3x4xf32>) -> tensor<1x2x3x2xf32>
    %hr = tfm.rope %h : (tensor<1x2x3x2xf32>) -> tensor<1x2x3x2xf32>
    %m = tfm.merge_heads %hr : (tensor<1x2x3x2xf32>) -> tensor<1x3x4xf32>
    %s = tfm.swiglu %k, %v : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
    %t = tfm.silu %s : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
    %r = tfm.residual_add %m, %t : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
    return %r : tensor<1x3x4xf32>
""", [xs], rope(qs.view(1, 3, 2, 2).transpose(1, 2), 0, 10000.0).transpose(1, 2).reshape(1, 3, 4)
     + F.silu(F.silu(ks) * vs))

# MoE: E=3 experts, top-2, SwiGLU experts in nn.Linear layout.
E, d, m = 3, 4, 5
xm, rw = rnd(1, 3, d), rnd(E, d)
ws = [(rnd(m, d), rnd(m, d), rnd(d, m)) for _ in range(E)]
def moe(x, rw, ws, k):
    t = x.reshape(-1, x.shape[-1])
    p = torch.softmax(t @ rw.t(), -1)
    w, e = torch.topk(p, k, -1)
    w = w / w.sum(-1, keepdim=True)
    y = torch.zeros_like(t)
    for n in range(t.shape[0]):
        for j in range(k):
            g, u, dn = ws[e[n, j]]
            y[n] += w[n, j] * ((F.silu(t[n] @ g.t()) * (t[n] @ u.t())) @ dn.t())
    return y.reshape(x.shape)
flat_ws = [w for triple in ws for w in triple]
case("moe", "    %r = tfm.moe %a0, %a1, " + ", ".join("%%a%d" % (i + 2) for i in range(3 * E))
     + " {top_k = 2 : i64} : (tensor<1x3x4xf32>, tensor<3x4xf32>, "
     + ", ".join(ty(w) for w in flat_ws) + ") -> tensor<1x3x4xf32>\n    return %r : tensor<1x3x4xf32>\n",
     [xm, rw] + flat_ws, moe(xm, rw, ws, 2))

print("""// GENERATED by Inputs/gen_cpu_numerics.py (PyTorch references); do not edit.
// Each case runs a tfm function through --tfm-cpu-pipeline and checks every
// element against PyTorch: |y - ref| <= atol + rtol * |ref| (1e-4 / 1e-3 for
// f32). @check prints, per case in order, [mismatches, max abs error].
// REQUIRES: mlir-runner
// RUN: transformer-opt %s --tfm-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%libomp | FileCheck %s
""")
for name, _, _ in cases:
    print("// Case %s: no mismatch (the second number is the max error)." % name)
    print("// CHECK: data =")
    print("// CHECK-NEXT: [0,")
print(MODULE_PROLOGUE)

for _, func, _ in cases:
    print(func)
print("  func.func @main() {")
for name, _, main in cases:
    print(main)
print("    return\n  }\n}")

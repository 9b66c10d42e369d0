#!/usr/bin/python3
"""Generates ../moe-numerics.mlir: tfm.moe functions of several shapes run
through --tfm-cpu-pipeline and mlir-runner (the routed lowering: experts see
only their tokens, in chunks of 32 rows), compared in-process against
python/tfm/reference.py's `moe` (Mixtral semantics), pasted in as constants.

Cases cover full and remainder chunks (with padding), experts that
no token selects, top_k = 1 and top_k = E, f16, and exact ties. Random cases
are redrawn until every token's k-th and (k+1)-th router probabilities differ
by more than 1e-4, so that float rounding cannot flip a selection; the tie
case uses the lowering's documented rule (the lower expert index wins, i.e. a
stable descending sort), since torch.topk has no defined order for ties.

Usage: /usr/bin/python3 gen_moe_numerics.py > ../moe-numerics.mlir
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numerics_common import MODULE_PROLOGUE  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "python"))
from tfm import reference  # noqa: E402

torch.manual_seed(0)


def ty(shape, dt):
    return "tensor<" + "x".join(str(s) for s in shape) + "x" + dt + ">"


def weights_dict(router, experts):
    w = {"gate.weight": router}
    for e, (g, u, dn) in enumerate(experts):
        w[f"experts.{e}.w1.weight"] = g
        w[f"experts.{e}.w3.weight"] = u
        w[f"experts.{e}.w2.weight"] = dn
    return w


def stable_moe(x, router, experts, top_k):
    """reference.moe with ties broken towards the lower expert index."""
    flat = x.reshape(-1, x.shape[-1])
    probs = torch.softmax(flat @ router.t(), -1)
    order = torch.sort(probs, dim=-1, descending=True, stable=True).indices
    sel = order[:, :top_k]
    wts = probs.gather(1, sel)
    wts = wts / wts.sum(-1, keepdim=True)
    out = torch.zeros_like(flat)
    for t in range(flat.shape[0]):
        for j in range(top_k):
            g, u, dn = experts[sel[t, j]]
            h = reference.silu(flat[t] @ g.t()) * (flat[t] @ u.t())
            out[t] += wts[t, j] * (h @ dn.t())
    return out.reshape(x.shape)


def margin(x, router, top_k):
    probs = torch.softmax(x.reshape(-1, x.shape[-1]) @ router.t(), -1)
    if top_k == probs.shape[1]:
        return float("inf")
    top = torch.sort(probs, -1, descending=True).values
    return (top[:, top_k - 1] - top[:, top_k]).min().item()


cases = []  # (name, args [(tensor, dtype)], ref, dtype, atol, rtol)


def draw(b, s, d, m, n_experts, top_k, idle=()):
    """Random input, router and experts; experts in `idle` get router rows
    that no token can prefer (x[..., 0] >= 1, their logit is -8 x[..., 0])."""
    while True:
        x = torch.randn(b, s, d)
        router = torch.randn(n_experts, d)
        if idle:
            x[..., 0] = x[..., 0].abs() + 1
            for e in idle:
                router[e] = 0
                router[e, 0] = -8
        if margin(x, router, top_k) > 1e-4:
            break
    experts = [(torch.randn(m, d) / d ** 0.5, torch.randn(m, d) / d ** 0.5,
                torch.randn(d, m) / m ** 0.5) for _ in range(n_experts)]
    return x, router, experts


def add(name, x, router, experts, top_k, ref=None, dt="f32", atol=1e-4,
        rtol=1e-3):
    if ref is None:
        ref = reference.moe(weights_dict(router, experts), "", x,
                            len(experts), top_k)
    args = [x, router] + [w for triple in experts for w in triple]
    cases.append((name, args, top_k, ref, dt, atol, rtol))


# n = 160, E = 3, top-2: about 107 tokens per expert, so full 64-token
# chunks and 16-token remainder chunks with padding.
x, r, ex = draw(2, 80, 16, 24, 3, 2)
counts = torch.bincount(torch.topk(torch.softmax(
    x.reshape(-1, 16) @ r.t(), -1), 2).indices.flatten(), minlength=3)
assert (counts > 64).all() and (counts % 16 != 0).any(), counts
add("moe_chunks", x, r, ex, top_k=2)
# top_k = 1: each token runs one expert, weight 1.
add("moe_top1", *draw(1, 7, 8, 12, 4, 1)[:3], top_k=1)
# top_k = E: every expert sees every token (the dense computation).
add("moe_topE", *draw(2, 5, 8, 6, 3, 3)[:3], top_k=3)
# Experts 1 and 4 of 6 receive no token.
x, r, ex = draw(1, 9, 8, 10, 6, 2, idle=(1, 4))
sel = torch.topk(torch.softmax(x.reshape(-1, 8) @ r.t(), -1), 2).indices
assert not ((sel == 1) | (sel == 4)).any()
add("moe_idle_experts", x, r, ex, top_k=2)
# Exact ties: experts 1 and 2 share a router row (some token has them tied
# across the top-2 boundary), token 1 is all zeros (all four experts tie);
# the lower index wins. Other tokens keep the 1e-4 margin.
def tie_margins(x, router, top_k):
    probs = torch.softmax(x.reshape(-1, x.shape[-1]) @ router.t(), -1)
    top = torch.sort(probs, -1, descending=True).values
    return top[:, top_k - 1] - top[:, top_k]


while True:
    x, r, ex = draw(1, 6, 8, 8, 4, 2)
    r[2] = r[1]
    x[0, 1] = 0
    gaps = tie_margins(x, r, 2)
    if ((gaps == 0) | (gaps > 1e-4)).all() and (gaps == 0).sum() >= 2:
        break
add("moe_ties", x, r, ex, top_k=2, ref=stable_moe(x, r, ex, 2))
# f16 in and out; the lowering accumulates in f32, rounds silu(gate) * up to
# f16 before the down projection (as an f16 MLP holds it) and the sum at the end.
while True:
    x, r, ex = draw(1, 6, 8, 8, 3, 2)
    xh, rh = x.half(), r.half()
    if margin(xh.float(), rh.float(), 2) > 1e-3:
        break
exh = [tuple(w.half() for w in t) for t in ex]
ref = reference.moe(weights_dict(rh.float(), [tuple(w.float() for w in t)
                                              for t in exh]),
                    "", xh.float(), 3, 2).half()
add("moe_f16", xh, rh, exh, top_k=2, ref=ref, dt="f16", atol=2e-3, rtol=2e-3)


def fmt(v):
    """A float literal MLIR accepts ("-8" is an integer: write "-8.0")."""
    s = "%.9g" % v
    return s if any(c in s for c in ".eninf") else s + ".0"


def dense(name, t, dt):
    vals = [fmt(v) for v in t.float().flatten().tolist()]
    flat = "tensor<%dx%s>" % (t.numel(), dt)
    out = "    %%%s_flat = arith.constant dense<[%s]> : %s\n" % (
        name, ", ".join(vals), flat)
    out += "    %%%s = tensor.expand_shape %%%s_flat [[%s]] output_shape [%s] : %s into %s\n" % (
        name, name, ", ".join(str(k) for k in range(t.dim())),
        ", ".join(str(s) for s in t.shape), flat, ty(t.shape, dt))
    return out


print("""// GENERATED by Inputs/gen_moe_numerics.py (PyTorch references); do not edit.
// tfm.moe through --tfm-cpu-pipeline (routed: each expert runs on its own
// tokens only) against python/tfm/reference.py's moe, every element:
// |y - ref| <= atol + rtol * |ref| (1e-4 / 1e-3 for f32, 2e-3 for f16).
// @check prints, per case in order, [mismatches, max abs error].
// REQUIRES: mlir-runner
// RUN: transformer-opt %s --tfm-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%libomp | FileCheck %s
""")
for name, *_ in cases:
    print("// Case %s: no mismatch (the second number is the max error)." % name)
    print("// CHECK: data =")
    print("// CHECK-NEXT: [0,")
print(MODULE_PROLOGUE)

for name, args, top_k, ref, dt, _, _ in cases:
    types = [ty(a.shape, dt) for a in args]
    sig = ", ".join("%%a%d: %s" % (i, t) for i, t in enumerate(types))
    print("  func.func @%s(%s) -> %s {" % (name, sig, ty(ref.shape, dt)))
    print("    %%r = tfm.moe %s {top_k = %d : i64} : (%s) -> %s" % (
        ", ".join("%%a%d" % i for i in range(len(args))), top_k,
        ", ".join(types), ty(ref.shape, dt)))
    print("    return %%r : %s\n  }\n" % ty(ref.shape, dt))
print("  func.func @main() {")
for name, args, top_k, ref, dt, atol, rtol in cases:
    print("    // %s" % name)
    types = [ty(a.shape, dt) for a in args]
    names = []
    for i, a in enumerate(args):
        print(dense("%s_a%d" % (name, i), a, dt), end="")
        names.append("%%%s_a%d" % (name, i))
    out_ty = ty(ref.shape, dt)
    print("    %%%s_y = call @%s(%s) : (%s) -> %s" % (
        name, name, ", ".join(names), ", ".join(types), out_ty))
    numel = ref.numel()
    print("    %%%s_yf = tensor.collapse_shape %%%s_y [[%s]] : %s into tensor<%dx%s>" % (
        name, name, ", ".join(str(k) for k in range(ref.dim())), out_ty, numel, dt))
    y = "%%%s_yf" % name
    if dt != "f32":
        print("    %%%s_e32 = tensor.empty() : tensor<%dxf32>" % (name, numel))
        print("    %%%s_y32 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = [\"parallel\"]} ins(%%%s_yf : tensor<%dx%s>) outs(%%%s_e32 : tensor<%dxf32>) {" % (
            name, name, numel, dt, name, numel))
        print("    ^bb0(%%a: %s, %%o: f32):\n      %%w = arith.extf %%a : %s to f32\n      linalg.yield %%w : f32\n    } -> tensor<%dxf32>" % (dt, dt, numel))
        y = "%%%s_y32" % name
    print("    %%%s_ref = arith.constant dense<[%s]> : tensor<%dxf32>" % (
        name, ", ".join(fmt(v) for v in ref.float().flatten().tolist()), numel))
    print("    %%%s_yd = tensor.cast %s : tensor<%dxf32> to tensor<?xf32>" % (name, y, numel))
    print("    %%%s_rd = tensor.cast %%%s_ref : tensor<%dxf32> to tensor<?xf32>" % (name, name, numel))
    print("    %%%s_at = arith.constant %g : f32\n    %%%s_rt = arith.constant %g : f32" % (name, atol, name, rtol))
    print("    call @check(%%%s_yd, %%%s_rd, %%%s_at, %%%s_rt) : (tensor<?xf32>, tensor<?xf32>, f32, f32) -> ()\n" % ((name,) * 4))
print("    return\n  }\n}")

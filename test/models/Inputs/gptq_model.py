"""Tiny GPTQ checkpoints, written as AutoGPTQ / optimum write them (the
"gptq" checkpoint format), and the float checkpoint of the weights they
stand for (run with %hf_python).

usage:
  gptq_model.py make DIR [--bits 4|8] [--group G] [--sym 0|1]
                         [--method gptq|awq|compressed-tensors]
                         [--act-order 0|1] [--break KIND]
      a random Llama (gguf_model.py's TINY: hidden 256, FFN 512) whose
      decoder linears are quantized by GPTQ's symmetric rule (per group of G
      input rows and output column: scale = 2 max|w| / (2^bits - 1) stored
      in f16, q = clamp(round(w / scale) + 2^(bits-1)), zero point
      2^(bits-1) stored minus one): DIR/gptq (config.json with its
      quantization_config, model.safetensors with each linear's qweight,
      qzeros, scales and g_idx and the other tensors in f16), DIR/ref (the
      same model in f32 with each weight what the GPTQ one stands for:
      scale * (q - zero), the f16 tensors widened) and DIR/ids.npy.
      --sym 0: GPTQ's asymmetric rule instead (per group: scale = (max -
      min) / (2^bits - 1) in f16, zero = round(-min / scale) in [1, 2^bits],
      stored minus one). --method awq: AutoAWQ's GEMM layout (asymmetric,
      zero in [0, 2^bits - 1] stored as it is; qweight [K, N / 8] and qzeros
      packed along N in its order 0 2 4 6 1 3 5 7; no g_idx; 4 bits).
      --method compressed-tensors: llm-compressor's pack-quantized layout
      (weight_packed, bf16 weight_scale, weight_shape, and with --sym 0
      weight_zero_point), 4 or 8 bits, groups or one per channel (-1).
      --act-order 1: GPTQ's desc_act, each linear's rows quantized and
      grouped in a random order (g_idx[perm[i]] = i // G; config.json's
      desc_act true); compressed-tensors' actorder "group" likewise
      (weight_g_idx).
      --from HFDIR: quantize that Hugging Face Llama directory's weights
      (read as f32) instead of a random model's (bench/quant-accuracy.py).
      --calibrate IDS.npy: GPTQ's error-compensating search instead of
      rounding to nearest (gptq only), layer after layer on the
      activations of these token ids; with --act-order 1 the rows in
      desc_act's order (largest Hessian diagonal first).
      --break writes a checkpoint tfm must refuse: asym (one zero point
      moved: wrong for 8 bits), act-order (g_idx permuted), scales-f32, no-scales,
      qweight-i64, float (the float tensors under a GPTQ config), group
      (config.json's group_size 96, which K = 256 or 512 rows cannot
      hold), both (a float weight beside the qweight), columns (a qweight
      of 252 columns, which 8 zero points a word do not divide).
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_model import TINY, randomize  # noqa: E402

LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
           "down_proj")


def pack(q, bits, axis):
    """Packs the integers q (uint32) along `axis`, 32 / bits a word, the
    first in the low bits, into int32."""
    per = 32 // bits
    q = np.moveaxis(q.astype(np.uint32), axis, 0)
    words = np.zeros((q.shape[0] // per,) + q.shape[1:], np.uint32)
    for j in range(per):
        words |= q[j::per] << np.uint32(bits * j)
    return np.moveaxis(words, 0, axis).view(np.int32)


# AutoAWQ packs columns 8w + AWQ_ORDER[i] into nibble i of word w.
AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)


def pack_awq(q):
    """AutoAWQ's packing of q [rows, N] (uint32) along N, 8 a word."""
    words = np.zeros((q.shape[0], q.shape[1] // 8), np.uint32)
    for i, column in enumerate(AWQ_ORDER):
        words |= q[:, column::8].astype(np.uint32) << np.uint32(4 * i)
    return words.view(np.int32)


def quantize_compressed(w, bits, group, sym, perm=None):
    """compressed-tensors' pack-quantized layout for w [N, K]: signed q in
    [-2^(bits-1), 2^(bits-1)), scale [N, K / G] stored bf16 (with few enough
    bits to be an f16 value too), zero points (asymmetric) signed; the
    integers plus 2^(bits-1) packed along K (weight_packed [N, K bits / 32])
    and the zero points likewise along N. Returns the tensors (torch) and
    the f32 weights they stand for. With `perm` (actorder "group"), row
    perm[i] is in group i // G, which weight_g_idx says."""
    import torch
    n, k = w.shape
    g = k if group == -1 else group
    offset = 2 ** (bits - 1)
    order = np.arange(k) if perm is None else np.asarray(perm)
    inverse = np.argsort(order)
    wg = w[:, order].reshape(n, k // g, g)
    if sym:
        scale = np.abs(wg).max(axis=2) / (offset - 1)
        zero = np.zeros((n, k // g), np.int64)
    else:
        lo, hi = wg.min(axis=2), wg.max(axis=2)
        scale = (hi - lo) / (2 ** bits - 1)
    scale = np.where(scale == 0, 1.0, scale).astype(np.float32)
    scale_bf16 = torch.from_numpy(scale).to(torch.bfloat16)
    s32 = scale_bf16.float().numpy()
    if not sym:
        zero = np.clip(np.round(-offset - lo / s32), -offset,
                       offset - 1).astype(np.int64)
    q = np.clip(np.round(wg / s32[:, :, None]) + zero[:, :, None], -offset,
                offset - 1).astype(np.int64)
    deq = (s32[:, :, None] * (q - zero[:, :, None])).reshape(n, k)
    deq = deq[:, inverse]
    q = q.reshape(n, k)[:, inverse]
    tensors = {
        "weight_packed": torch.from_numpy(
            pack((q + offset).astype(np.uint32), bits, 1)),
        "weight_scale": scale_bf16,
        "weight_shape": torch.tensor([n, k], dtype=torch.int64)}
    if not sym:
        tensors["weight_zero_point"] = torch.from_numpy(
            pack((zero + offset).astype(np.uint32), bits, 0))
    if perm is not None:
        tensors["weight_g_idx"] = torch.from_numpy(
            (inverse // g).astype(np.int32))
    return tensors, np.ascontiguousarray(deq.astype(np.float32))


def group_params(wt, maxq, sym, method):
    """Per group and output column of wt [groups, G, N]: the scale (f16)
    and zero point of GPTQ's symmetric rule or its (and AWQ's) asymmetric
    one."""
    if sym and method == "gptq":
        amax = np.abs(wt).max(axis=1)                   # [groups, N]
        scale = (2 * amax / maxq).astype(np.float16)
        zero = np.full(amax.shape, (maxq + 1) // 2, np.int64)
    else:
        lo, hi = wt.min(axis=1), wt.max(axis=1)
        scale = ((hi - lo) / maxq).astype(np.float16)
    scale = np.where(scale == 0, np.float16(1), scale)
    s32 = scale.astype(np.float32)
    if not (sym and method == "gptq"):
        # GPTQ stores zero - 1 in [0, maxq]: zero in [1, maxq + 1]; AWQ
        # stores the zero itself.
        low, high = (0, maxq) if method == "awq" else (1, maxq + 1)
        zero = np.clip(np.round(-lo / s32), low, high).astype(np.int64)
    return scale, zero


def gptq_search(wt, h, bits, g, sym, damp=0.01):
    """GPTQ's search (Frantar et al., 2022) over wt [K, N] (rows in the
    order they are quantized) with the Hessian h [K, K] of the layer's
    inputs (2 X^T X / n, in that order): row by row, each rounded with its
    group's scale and zero point (taken from the rows as updated when the
    group's first is reached), and its rounding error spread over the rows
    after it through the Cholesky factor of h^-1 (damped by `damp` times
    its mean diagonal). Returns q [groups, G, N], scale and zero [groups,
    N]."""
    k, n = wt.shape
    maxq = 2 ** bits - 1
    w = wt.astype(np.float64).copy()
    h = h.astype(np.float64).copy()
    dead = np.diag(h) == 0
    h[dead, dead] = 1
    w[dead] = 0
    h += damp * np.mean(np.diag(h)) * np.eye(k)
    # u: upper, u^T u = h^-1; row i says how row i's error moves the rest.
    u = np.linalg.cholesky(np.linalg.inv(h)).T
    q = np.zeros((k, n), np.int64)
    scales, zeros = [], []
    for i in range(k):
        if i % g == 0:
            scale, zero = group_params(w[i:i + g][None], maxq, sym, "gptq")
            scales.append(scale[0])
            zeros.append(zero[0])
            s64 = scale[0].astype(np.float64)
        q[i] = np.clip(np.round(w[i] / s64) + zeros[-1], 0, maxq)
        error = (w[i] - s64 * (q[i] - zeros[-1])) / u[i, i]
        w[i + 1:] -= np.outer(u[i, i + 1:], error)
    return (q.reshape(k // g, g, n).astype(np.uint32), np.stack(scales),
            np.stack(zeros))


def quantize(w, bits, group, sym=True, method="gptq", perm=None,
             hessian=None):
    """GPTQ's (or AWQ's) rule for w [N, K] (nn.Linear's layout): qweight,
    qzeros, scales (f16), g_idx (None for AWQ), and the f32 weights they
    stand for. With `perm` (act-order: GPTQ quantizes the rows in the
    order perm, a permutation of [0, K), and groups them in that order),
    row perm[i] is in group i // G: g_idx[perm[i]] = i // G. Rounded to
    nearest, or with `hessian` (GPTQ only) by GPTQ's search."""
    n, k = w.shape
    g = k if group == -1 else group
    maxq = 2 ** bits - 1
    order = np.arange(k) if perm is None else np.asarray(perm)
    wt = w.T[order].reshape(k // g, g, n)               # [groups, G, N]
    if hessian is not None:
        q, scale, zero = gptq_search(
            w.T[order], hessian[np.ix_(order, order)], bits, g, sym)
    else:
        scale, zero = group_params(wt, maxq, sym, method)
        s32 = scale.astype(np.float32)
        q = np.clip(np.round(wt / s32[:, None, :]) + zero[:, None, :], 0,
                    maxq).astype(np.uint32)
    s32 = scale.astype(np.float32)
    deq = (s32[:, None, :] * (q.astype(np.float32) - zero[:, None, :]))
    # Back to the rows' own order (a no-op without act-order).
    inverse = np.argsort(order)
    deq = deq.reshape(k, n)[inverse].T
    q = q.reshape(k, n)[inverse]
    if method == "awq":
        return (pack_awq(q), pack_awq(zero.astype(np.uint32)),
                scale, None, np.ascontiguousarray(deq))
    qweight = pack(q, bits, 0)
    qzeros = pack((zero - 1).astype(np.uint32), bits, 1)
    g_idx = (inverse // g).astype(np.int32)
    return qweight, qzeros, scale, g_idx, np.ascontiguousarray(deq)


def calibrate(model, ids, a, rng):
    """GPTQ's search for every decoder linear, layer after layer as GPTQ
    runs it: each layer's linears see the inputs the model gives them on
    the calibration ids with the layers before already quantized. Returns
    each linear's quantize() results by its parameter prefix."""
    import torch
    done = {}
    inputs = torch.from_numpy(ids)
    for index, layer in enumerate(model.model.layers):
        hessians, hooks = {}, []
        for name, module in layer.named_modules():
            if name.rsplit(".", 1)[-1] not in LINEARS:
                continue
            prefix = f"model.layers.{index}.{name}"

            def hook(module, args, output, prefix=prefix):
                x = args[0].detach().double().reshape(-1, args[0].shape[-1])
                hessians[prefix] = 2 * (x.T @ x).numpy() / x.shape[0]
            hooks.append(module.register_forward_hook(hook))
        with torch.no_grad():
            model(inputs)
        for h in hooks:
            h.remove()
        for prefix, hessian in hessians.items():
            module = model.get_submodule(prefix)
            w = module.weight.detach().numpy().copy()
            # desc_act: the rows with the largest Hessian diagonal first.
            perm = np.argsort(-np.diag(hessian), kind="stable") \
                if a.act_order else None
            done[prefix] = quantize(w, a.bits, a.group, bool(a.sym), "gptq",
                                    perm, hessian)
            with torch.no_grad():
                module.weight.copy_(torch.from_numpy(done[prefix][-1]))
    return done


def cmd_make(argv):
    import torch
    import transformers
    from safetensors.numpy import save_file
    p = argparse.ArgumentParser(prog="gptq_model.py make")
    p.add_argument("dir")
    p.add_argument("--bits", type=int, default=4)
    p.add_argument("--group", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sym", type=int, default=1, choices=[0, 1])
    p.add_argument("--method", default="gptq",
                   choices=["gptq", "awq", "compressed-tensors"])
    p.add_argument("--act-order", type=int, default=0, choices=[0, 1],
                   help="GPTQ's desc_act: each linear's rows quantized and "
                   "grouped in a random order, g_idx saying each row's group")
    p.add_argument("--break", dest="broken", default=None,
                   choices=["asym", "act-order", "scales-f32", "no-scales",
                            "qweight-i64", "float", "group", "both",
                            "columns"])
    p.add_argument("--from", dest="source", metavar="HFDIR",
                   help="quantize this Hugging Face directory's weights "
                   "instead of a random model's")
    p.add_argument("--calibrate", metavar="IDS.npy",
                   help="GPTQ's search on these token ids' activations "
                   "(with --act-order 1: its desc_act order) instead of "
                   "rounding to nearest")
    a = p.parse_args(argv)
    if a.calibrate and a.method != "gptq":
        p.error("--calibrate: GPTQ's search, --method gptq only")
    rng = np.random.default_rng(a.seed)
    torch.manual_seed(a.seed)
    if a.source:
        model = transformers.AutoModelForCausalLM.from_pretrained(
            a.source, torch_dtype=torch.float32)
    else:
        config = transformers.LlamaConfig(**TINY)
        model = transformers.AutoModelForCausalLM.from_config(config).float()
        randomize(model, rng)
    calibrated = {}
    if a.calibrate:
        originals = {n: t.detach().clone()
                     for n, t in model.named_parameters()}
        calibrated = calibrate(model, np.load(a.calibrate), a, rng)
        with torch.no_grad():
            for n, t in model.named_parameters():
                t.copy_(originals[n])
    tensors, ref = {}, {}
    for name, t in model.named_parameters():
        x = t.detach().numpy().copy()
        prefix = name[:-len(".weight")]
        if prefix.rsplit(".", 1)[-1] in LINEARS and \
                a.method == "compressed-tensors":
            perm = rng.permutation(x.shape[1]) if a.act_order else None
            parts, deq = quantize_compressed(x, a.bits, a.group, bool(a.sym),
                                             perm)
            for part, value in parts.items():
                tensors[f"{prefix}.{part}"] = value
            ref[name] = deq
        elif prefix.rsplit(".", 1)[-1] in LINEARS:
            if prefix in calibrated:
                qweight, qzeros, scales, g_idx, deq = calibrated[prefix]
            else:
                perm = rng.permutation(x.shape[1]) if a.act_order else None
                qweight, qzeros, scales, g_idx, deq = quantize(
                    x, a.bits, a.group, bool(a.sym), a.method, perm)
            tensors[prefix + ".qweight"] = qweight
            tensors[prefix + ".qzeros"] = qzeros
            tensors[prefix + ".scales"] = scales
            if g_idx is not None:
                tensors[prefix + ".g_idx"] = g_idx
            ref[name] = deq
        else:
            half = x.astype(np.float16)
            tensors[name] = half
            ref[name] = half.astype(np.float32)
    first = "model.layers.0.self_attn.q_proj"
    if a.broken == "asym":
        z = tensors[first + ".qzeros"].view(np.uint32).copy()
        z[0, 0] += 1
        tensors[first + ".qzeros"] = z.view(np.int32)
    elif a.broken == "act-order":
        tensors[first + ".g_idx"] = tensors[first + ".g_idx"][::-1].copy()
    elif a.broken == "scales-f32":
        tensors[first + ".scales"] = tensors[first + ".scales"].astype(
            np.float32)
    elif a.broken == "no-scales":
        del tensors[first + ".scales"]
    elif a.broken == "qweight-i64":
        tensors[first + ".qweight"] = tensors[first + ".qweight"].astype(
            np.int64)
    elif a.broken == "columns":
        for part in (".qweight", ".scales"):
            tensors[first + part] = tensors[first + part][:, :252].copy()
    elif a.broken == "both":
        tensors[first + ".weight"] = ref[first + ".weight"]
    elif a.broken == "float":
        tensors = {n: v.astype(np.float16) for n, v in ref.items()}
    with torch.no_grad():
        for name, t in model.named_parameters():
            t.copy_(torch.from_numpy(ref[name]))
    model.save_pretrained(os.path.join(a.dir, "ref"), safe_serialization=True)
    os.makedirs(os.path.join(a.dir, "gptq"), exist_ok=True)
    with open(os.path.join(a.dir, "ref", "config.json")) as f:
        cfg = json.load(f)
    cfg["torch_dtype"] = "float16"
    if a.method == "compressed-tensors":
        cfg["quantization_config"] = {
            "quant_method": "compressed-tensors", "format": "pack-quantized",
            "quantization_status": "compressed", "kv_cache_scheme": None,
            "ignore": ["lm_head"], "global_compression_ratio": None,
            "config_groups": {"group_0": {
                "targets": ["Linear"], "input_activations": None,
                "output_activations": None,
                "weights": {"num_bits": a.bits, "type": "int",
                            "symmetric": bool(a.sym),
                            "strategy": "channel" if a.group == -1
                            else "group",
                            "group_size": None if a.group == -1
                            else a.group,
                            "actorder": "group" if a.act_order else None,
                            "dynamic": False,
                            "observer": "minmax", "block_structure": None,
                            "observer_kwargs": {}}}}}
    elif a.method == "awq":
        cfg["quantization_config"] = {
            "quant_method": "awq", "bits": a.bits,
            "group_size": 96 if a.broken == "group" else a.group,
            "zero_point": True, "version": "gemm",
            "modules_to_not_convert": None}
    else:
        cfg["quantization_config"] = {
            "quant_method": "gptq", "bits": a.bits,
            "group_size": 96 if a.broken == "group" else a.group,
            "desc_act": bool(a.act_order), "sym": bool(a.sym),
            "damp_percent": 0.01,
            "true_sequential": True, "checkpoint_format": "gptq",
            "model_name_or_path": None, "model_file_base_name": None}
    with open(os.path.join(a.dir, "gptq", "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    if a.method == "compressed-tensors":
        # bf16 scales: torch's writer (numpy has no bfloat16).
        from safetensors.torch import save_file as save_torch
        save_torch({n: v.contiguous() if isinstance(v, torch.Tensor)
                    else torch.from_numpy(np.ascontiguousarray(v))
                    for n, v in tensors.items()},
                   os.path.join(a.dir, "gptq", "model.safetensors"))
    else:
        save_file(tensors, os.path.join(a.dir, "gptq", "model.safetensors"))
    ids = rng.integers(0, model.config.vocab_size, (2, 9))
    np.save(os.path.join(a.dir, "ids.npy"), ids.astype(np.int64))
    kind = {"awq": "AWQ", "compressed-tensors": "compressed-tensors"}.get(
        a.method, "GPTQ")
    if not a.sym:
        kind += " asymmetric"
    if a.act_order:
        kind += " act-order"
    if a.calibrate:
        kind += ", GPTQ's search"
    print(f"{kind} {a.bits}-bit, groups of {a.group}: {len(tensors)} tensors")


if __name__ == "__main__":
    {"make": cmd_make}[sys.argv[1]](sys.argv[2:])

#!/usr/bin/env python3
"""Runs the flash-attention kernels of --tfm-gpu-flash-attention on the CPU.

No GPU here: this interprets the launcher that
`--tfm-gpu-flash-attention --tfm-gpu-flash-attention-kernels` prints (the
subset of arith / vector / scf / memref / gpu / nvgpu ops the generator
emits), every thread of a block in lockstep as numpy arrays over threads,
with the PTX ISA's definitions of the warp-level operations:
  - ldmatrix .x4 (.trans): lanes 8i..8i+7 give the row addresses of matrix
    i; thread t gets row t/4, columns 2(t%4), 2(t%4)+1 of matrix i (.trans:
    rows 2(t%4), 2(t%4)+1 of column t/4), as register i;
  - mma.sync m16n8k16 f16 x f16 + f32: A registers (g, c), (g+8, c),
    (g, c+8), (g+8, c+8); B (k = c, n = g), (k = c+8, n = g); C/D (g, c),
    (g+8, c) with g = lane/4, c = 2(lane%4) (two elements each);
  - shfl.sync.bfly: the value of lane ^ mask.
cp.async copies are deferred until a wait retires their group
(nvgpu.device_async_wait {numGroups = N} completes all but the newest N
groups), so reading a shared-memory slot before its copies are waited for
reads stale data or NaN; barriers are not checked (lockstep), nor races
between threads: those need a GPU. Buffers start as NaN, so a missed write shows. Each case compares the
output with float64 attention on the same f16-rounded q, k, v.

usage: emulate-flash-attention.py [--tool transformer-opt] [CASE...]
"""
import re, sys, subprocess
import numpy as np

TOOL = "transformer-opt"


def parse_type_shape(t):
    m = re.match(r"(memref|vector|tensor)<(.*)>", t.strip())
    body = m.group(2).split(",")[0]
    parts = body.split("x")
    shape = [int(p) for p in parts[:-1] if p != "?"]
    return shape, parts[-1]


class Emu:
    def __init__(self, lines, args):
        self.lines = lines
        self.env = dict(args)

    def get(self, name):
        name = name.strip()
        if "#" in name:
            base, idx = name.split("#")
            return self.env[base][int(idx)]
        return self.env[name]

    def run_block(self, start, end, T, env_ids):
        """Runs lines[start:end] for T threads; returns index after."""
        i = start
        while i < end:
            i = self.step(i, T, None)
        return i

    def find_close(self, i):
        depth = 0
        for j in range(i, len(self.lines)):
            l = self.lines[j]
            depth += l.count("{") - l.count("}")
            if depth == 0 and j > i:
                return j
            if depth == 0 and j == i:
                return j
        raise RuntimeError("unbalanced")

    def step(self, i, T, mask):
        l = self.lines[i].strip()
        if not l or l.startswith("//"):
            return i + 1
        if l.startswith("gpu.launch blocks"):
            return self.launch(i)
        if l.startswith("return") or l == "}":
            return i + 1
        self.op(l, T, mask, i)
        return self.next_i if self.next_i is not None else i + 1

    def launch(self, i):
        l = self.lines[i].strip()
        m = re.match(r"gpu.launch blocks\((%\w+), (%\w+), (%\w+)\) in \(%\w+ = (%\w+), %\w+ = (%\w+), %\w+ = (%\w+)\) threads\((%\w+), (%\w+), (%\w+)\) in \(%\w+ = (%\w+),", l)
        bx, by, bz, gx, gy, gz, tx, ty, tz, nt = m.groups()
        gx, gy, gz, nt = [int(self.get(v)[0]) if isinstance(self.get(v), np.ndarray) else int(self.get(v)) for v in (gx, gy, gz, nt)]
        close = self.find_close(i)
        saved = dict(self.env)
        for z in range(gz):
            for y in range(gy):
                for x in range(gx):
                    self.env = dict(saved)
                    self.env[bx] = np.full(nt, x, np.int64)
                    self.env[by] = np.full(nt, y, np.int64)
                    self.env[bz] = np.full(nt, z, np.int64)
                    self.env[tx] = np.arange(nt, dtype=np.int64)
                    self.env[ty] = np.zeros(nt, np.int64)
                    self.env[tz] = np.zeros(nt, np.int64)
                    self.T = nt
                    self.pending, self.groups = [], []
                    j = i + 1
                    while j < close:
                        j = self.step(j, nt, None)
                    assert not self.pending and not self.groups, \
                        "cp.async still in flight at the end of the kernel"
        self.env = saved
        return close + 1

    def uniform(self, v):
        v = np.asarray(v)
        assert (v == v.flat[0]).all(), "non-uniform"
        return int(v.flat[0])

    def op(self, l, T, mask, i):
        self.next_i = None
        env = self.env
        # results
        m = re.match(r"(%[\w]+(?::\d+)?(?:, %[\w]+)*) = (.*)", l)
        if m:
            res, rhs = m.group(1), m.group(2)
        else:
            res, rhs = None, l
        opname = re.match(r"[\w.]+", rhs).group(0)
        def setr(v):
            name = res.split(":")[0]
            env[name] = v
        if opname == "arith.constant":
            mm = re.match(r"arith.constant (dense<(.*)>|[-\w.+]+) : (.*)", rhs)
            ty = mm.group(3)
            if mm.group(2) is not None:
                shape, et = parse_type_shape(ty)
                val = float(mm.group(2))
                dt = np.float16 if et == "f16" else np.float32
                setr(np.full([T] + shape, val, dt))
            else:
                tok = mm.group(1)
                if ty in ("index", "i32", "i64"):
                    setr(np.full(T, int(tok), np.int64))
                elif ty == "f32":
                    setr(np.full(T, float(tok), np.float32))
                elif ty == "i1":
                    setr(np.full(T, tok == "true"))
                else:
                    raise RuntimeError(l)
            return
        if opname in ("arith.addi", "arith.subi", "arith.muli", "arith.divui", "arith.remui", "arith.minui", "arith.maxui",
                      "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf"):
            mm = re.match(r"[\w.]+ (%[\w#]+), (%[\w#]+) : (.*)", rhs)
            a, b = self.get(mm.group(1)), self.get(mm.group(2))
            f = {"arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
                 "arith.divui": lambda a, b: a // b, "arith.remui": lambda a, b: a % b, "arith.minui": np.minimum,
                 "arith.maxui": np.maximum, "arith.addf": lambda a, b: (a + b).astype(np.float32),
                 "arith.subf": lambda a, b: (a - b).astype(np.float32), "arith.mulf": lambda a, b: (a * b).astype(np.float32),
                 "arith.divf": lambda a, b: (a / b).astype(np.float32), "arith.maximumf": np.maximum}[opname]
            if opname in ("arith.addi", "arith.subi", "arith.muli"):
                assert (np.asarray(a) >= 0).all() or True
            with np.errstate(all="ignore"):
                setr(f(a, b))
            return
        if opname == "arith.index_cast":
            mm = re.match(r"arith.index_cast (%[\w#]+)", rhs)
            setr(self.get(mm.group(1)).copy())
            return
        if opname == "arith.cmpi":
            mm = re.match(r"arith.cmpi (\w+), (%[\w#]+), (%[\w#]+)", rhs)
            a, b = self.get(mm.group(2)), self.get(mm.group(3))
            setr({"ugt": a > b, "ult": a < b}[mm.group(1)])
            return
        if opname == "arith.select":
            mm = re.match(r"arith.select (%[\w#]+), (%[\w#]+), (%[\w#]+)", rhs)
            setr(np.where(self.get(mm.group(1)), self.get(mm.group(2)), self.get(mm.group(3))).astype(np.float32))
            return
        if opname == "arith.truncf":
            mm = re.match(r"arith.truncf (%[\w#]+)", rhs)
            setr(self.get(mm.group(1)).astype(np.float16))
            return
        if opname == "math.exp2":
            mm = re.match(r"math.exp2 (%[\w#]+)", rhs)
            with np.errstate(all="ignore"):
                setr(np.exp2(self.get(mm.group(1))).astype(np.float32))
            return
        if opname == "gpu.dynamic_shared_memory":
            setr(None)
            return
        if opname == "memref.view":
            mm = re.match(r"memref.view .* to (memref<.*>)", rhs)
            shape, et = parse_type_shape(mm.group(1))
            setr(np.full(shape, np.nan, np.float16))
            return
        if opname == "memref.alloc":
            mm = re.match(r"memref.alloc\(\) : (memref<.*>)", rhs)
            shape, et = parse_type_shape(mm.group(1))
            setr(np.full(shape, np.nan, np.float32))
            return
        if opname == "vector.load":
            mm = re.match(r"vector.load (%\w+)\[(.*?)\] : .*, vector<(\d+)x\w+>", rhs)
            mem = self.get(mm.group(1))
            idx = [self.get(x) for x in mm.group(2).split(",")]
            n = int(mm.group(3))
            out = np.stack([mem[tuple(idx[:-1]) + (idx[-1] + k,)] for k in range(n)], axis=1)
            setr(out)
            return
        if opname in ("vector.store", "memref.store"):
            mm = re.match(r"[\w.]+ (%[\w#]+), (%\w+)\[(.*?)\]", rhs)
            v = self.get(mm.group(1))
            mem = self.get(mm.group(2))
            idx = [self.get(x) for x in mm.group(3).split(",")]
            msk = mask if mask is not None else np.ones(T, bool)
            for t in range(T):
                if not msk[t]:
                    continue
                ix = tuple(int(x[t]) for x in idx)
                if opname == "vector.store":
                    vv = v[t]
                    for k in range(len(vv)):
                        mem[ix[:-1] + (ix[-1] + k,)] = vv[k]
                else:
                    mem[ix] = v[t]
            return
        if opname == "memref.load":
            mm = re.match(r"memref.load (%\w+)\[(.*?)\]", rhs)
            mem = self.get(mm.group(1))
            idx = [self.get(x) for x in mm.group(2).split(",")]
            setr(mem[tuple(idx)].astype(np.float32))
            return
        if opname == "vector.insert":
            mm = re.match(r"vector.insert (%[\w#]+), (%[\w#]+) \[(\d+)\]", rhs)
            v = self.get(mm.group(2)).copy()
            v[:, int(mm.group(3))] = self.get(mm.group(1))
            setr(v)
            return
        if opname == "vector.extract":
            mm = re.match(r"vector.extract (%[\w#]+)\[(.*?)\]", rhs)
            v = self.get(mm.group(1))
            ix = tuple(int(x) for x in mm.group(2).split(","))
            setr(v[(slice(None),) + ix].copy())
            return
        if opname == "vector.from_elements":
            mm = re.match(r"vector.from_elements (.*) : vector<(\d+)x(\w+)>", rhs)
            els = [self.get(x) for x in mm.group(1).split(",")]
            dt = np.float16 if mm.group(3) == "f16" else np.float32
            setr(np.stack(els, axis=1).astype(dt))
            return
        if opname == "vector.broadcast":
            mm = re.match(r"vector.broadcast (%[\w#]+) : f32 to vector<(\d+)xf32>", rhs)
            v = self.get(mm.group(1))
            setr(np.repeat(v[:, None], int(mm.group(2)), axis=1))
            return
        if opname == "nvgpu.device_async_copy":
            mm = re.match(r"nvgpu.device_async_copy (%\w+)\[(.*?)\], (%\w+)\[(.*?)\], (\d+)", rhs)
            src, dst = self.get(mm.group(1)), self.get(mm.group(3))
            si = [self.get(x) for x in mm.group(2).split(",")]
            di = [self.get(x) for x in mm.group(4).split(",")]
            n = int(mm.group(5))
            copies = []
            for t in range(T):
                s = tuple(int(x[t]) for x in si)
                d = tuple(int(x[t]) for x in di)
                for k in range(n):
                    copies.append((dst, d[:-1] + (d[-1] + k,), src[s[:-1] + (s[-1] + k,)]))
            self.pending.extend(copies)
            setr(None)
            return
        if opname == "nvgpu.device_async_create_group":
            self.groups.append(self.pending)
            self.pending = []
            setr(None)
            return
        if opname == "nvgpu.device_async_wait":
            mm = re.search(r"numGroups = (\d+)", rhs)
            keep = int(mm.group(1)) if mm else 0
            while len(self.groups) > keep:
                for dst, d, val in self.groups.pop(0):
                    dst[d] = val
            return
        if opname in ("gpu.barrier", "gpu.terminator"):
            return
        if opname == "gpu.shuffle":
            mm = re.match(r"gpu.shuffle\s+xor (%[\w#]+), (%[\w#]+), (%[\w#]+)", rhs)
            v = self.get(mm.group(1))
            off = self.uniform(self.get(mm.group(2)))
            src = np.arange(T) ^ off
            names = [x.strip() for x in res.split(",")]
            env[names[0]] = v[src]
            env[names[1]] = np.ones(T, bool)
            return
        if opname == "nvgpu.ldmatrix":
            mm = re.match(r"nvgpu.ldmatrix (%\w+)\[(.*?)\] \{numTiles = 4 : i32, transpose = (\w+)\}", rhs)
            mem = self.get(mm.group(1))
            idx = [self.get(x) for x in mm.group(2).split(",")]
            trans = mm.group(3) == "true"
            # rows[t] = 8 f16 at the address of lane t
            rows = np.stack([np.stack([mem[tuple(int(x[t]) for x in idx[:-1]) + (int(idx[-1][t]) + k,)] for k in range(8)]) for t in range(T)])
            out = np.zeros((T, 4, 2), np.float16)
            for t in range(T):
                w, lane = t // 32, t % 32
                for mi in range(4):
                    for j in range(2):
                        if not trans:
                            src = w * 32 + 8 * mi + lane // 4
                            out[t, mi, j] = rows[src, 2 * (lane % 4) + j]
                        else:
                            src = w * 32 + 8 * mi + 2 * (lane % 4) + j
                            out[t, mi, j] = rows[src, lane // 4]
            setr(out)
            return
        if opname == "nvgpu.mma.sync":
            mm = re.match(r"nvgpu.mma.sync\s*\((%[\w#]+), (%[\w#]+), (%[\w#]+)\)", rhs)
            a, b, c = self.get(mm.group(1)), self.get(mm.group(2)), self.get(mm.group(3))
            out = np.zeros((T, 2, 2), np.float32)
            for w in range(T // 32):
                A = np.zeros((16, 16), np.float32)
                B = np.zeros((16, 8), np.float32)
                C = np.zeros((16, 8), np.float32)
                for lane in range(32):
                    t = w * 32 + lane
                    g, cc = lane // 4, 2 * (lane % 4)
                    for j in range(2):
                        A[g, cc + j] = a[t, 0, j]
                        A[g + 8, cc + j] = a[t, 1, j]
                        A[g, cc + 8 + j] = a[t, 2, j]
                        A[g + 8, cc + 8 + j] = a[t, 3, j]
                        B[cc + j, g] = b[t, 0, j]
                        B[cc + 8 + j, g] = b[t, 1, j]
                        C[g, cc + j] = c[t, 0, j]
                        C[g + 8, cc + j] = c[t, 1, j]
                D = A @ B + C
                for lane in range(32):
                    t = w * 32 + lane
                    g, cc = lane // 4, 2 * (lane % 4)
                    for j in range(2):
                        out[t, 0, j] = D[g, cc + j]
                        out[t, 1, j] = D[g + 8, cc + j]
            setr(out)
            return
        if opname == "scf.for":
            mm = re.match(r"scf.for (%\w+) = (%[\w#]+) to (%[\w#]+) step (%[\w#]+)(?: iter_args\((.*?)\))?", rhs)
            iv = mm.group(1)
            lo, hi, st = (self.uniform(self.get(mm.group(k))) for k in (2, 3, 4))
            inits = []
            if mm.group(5):
                for part in mm.group(5).split(","):
                    nm, val = part.split("=")
                    inits.append((nm.strip(), self.get(val.strip())))
            close = self.find_close(i)
            vals = [v for _, v in inits]
            for k in range(lo, hi, st):
                env[iv] = np.full(T, k, np.int64)
                for (nm, _), v in zip(inits, vals):
                    env[nm] = v
                j = i + 1
                self.yielded = None
                while j < close:
                    j = self.step(j, T, mask)
                vals = self.yielded
            if res:
                name = res.split(":")[0]
                env[name] = vals if ":" in res else vals[0]
            self.next_i = close + 1
            return
        if opname == "scf.yield":
            mm = re.match(r"scf.yield (.*?) :", rhs)
            self.yielded = [self.get(x) for x in mm.group(1).split(",")]
            return
        if opname == "scf.if":
            mm = re.match(r"scf.if (%[\w#]+)", rhs)
            cond = self.get(mm.group(1))
            close = self.find_close(i)
            j = i + 1
            while j < close:
                j = self.step(j, T, cond if mask is None else (mask & cond))
            self.next_i = close + 1
            return
        raise RuntimeError("unhandled: " + l)


def run_case(B, Hq, Hkv, S, Skv, d, causal, offset, splits_expected=None, seed=0):
    scale = 1.0 / np.sqrt(d)
    rng = np.random.default_rng(seed)
    q = (rng.random((B, Hq, S, d), dtype=np.float32) - 0.5).astype(np.float16)
    k = (rng.random((B, Hkv, Skv, d), dtype=np.float32) - 0.5).astype(np.float16)
    v = (rng.random((B, Hkv, Skv, d), dtype=np.float32) - 0.5).astype(np.float16)
    off = Skv - S if offset is None else offset
    t = lambda s, h, n: f"tensor<{B}x{h}x{n}x{d}xf32>"
    src = (f"func.func @f(%q: {t(0,Hq,S)}, %k: {t(0,Hkv,Skv)}, %v: {t(0,Hkv,Skv)}, %pos: index) -> {t(0,Hq,S)} {{\n"
           f"  %a = tfm.attention %q, %k, %v{', %pos' if offset is not None else ''} {{causal = {'true' if causal else 'false'}}} : "
           f"({t(0,Hq,S)}, {t(0,Hkv,Skv)}, {t(0,Hkv,Skv)}{', index' if offset is not None else ''}) -> {t(0,Hq,S)}\n"
           f"  return %a : {t(0,Hq,S)}\n}}\n")
    out = subprocess.run([TOOL, "--tfm-gpu-flash-attention", "--tfm-gpu-flash-attention-kernels", "-"], input=src,
                         capture_output=True, text=True, check=True).stdout
    lines = out.split("\n")
    start = next(i for i, l in enumerate(lines) if "_launch(" in l and "func.func private" in l)
    header = lines[start]
    params = re.findall(r"(%\w+): (memref<[^>]*>|index)", header)
    m = re.search(r"splits = (\d+)", out)
    args = {}
    o = np.full((B, Hq, S, d), np.nan, np.float32)
    arrays = [q, k, v, None, o]
    names = [p[0] for p in params]
    for idx, (nm, ty) in enumerate(params):
        if idx < 5:
            args[nm] = arrays[idx] if idx != 3 else np.int64(off)
        else:
            shape, _ = parse_type_shape(ty)
            args[nm] = np.full(shape, np.nan, np.float32)
    nsplits = 1 if len(params) == 5 else parse_type_shape(params[5][1])[0][0]
    # body
    end = start + 1
    depth = 1
    while depth:
        depth += lines[end].count("{") - lines[end].count("}")
        end += 1
    emu = Emu(lines, args)
    for nm in args:
        if nm == names[3]:
            args[nm] = np.full(1, off, np.int64)
    emu.env = dict(args)
    j = start + 1
    while j < end - 1:
        j = emu.step(j, 1, None)
    # reference
    qf, kf, vf = q.astype(np.float64), k.astype(np.float64), v.astype(np.float64)
    g = Hq // Hkv
    ref = np.zeros_like(o, dtype=np.float64)
    for b in range(B):
        for h in range(Hq):
            s = qf[b, h] @ kf[b, h // g].T * scale
            if causal:
                pos = off + np.arange(S)[:, None]
                s = np.where(np.arange(Skv)[None, :] <= pos, s, -np.inf)
            p = np.exp(s - s.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            ref[b, h] = p @ vf[b, h // g]
    err = np.nanmax(np.abs(o - ref)) if not np.isnan(o).any() else float("nan")
    print(f"B={B} Hq={Hq} Hkv={Hkv} S={S} Skv={Skv} d={d} causal={causal} off={offset} splits={nsplits}: max|err| = {err:.2e}",
          "OK" if err < 5e-3 else "FAIL")
    return err < 5e-3


if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv[:1] == ["--tool"]:
        TOOL = argv[1]
        argv = argv[2:]
    # B, Hq, Hkv, S, Skv, head_dim, causal, offset (None: Skv - S)
    cases = [
        (1, 2, 1, 77, 77, 64, True, None),
        (1, 2, 2, 128, 128, 128, True, None),
        (1, 4, 2, 77, 77, 64, False, None),
        (2, 2, 1, 40, 100, 128, True, 50),
        (1, 2, 1, 1, 300, 64, True, 250),
        (1, 2, 1, 3, 700, 128, True, 400),
    ]
    sel = [int(a) for a in argv] or range(len(cases))
    ok = all(run_case(*cases[i]) for i in sel)
    sys.exit(0 if ok else 1)

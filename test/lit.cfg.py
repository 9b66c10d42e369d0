# -*- Python -*-
import os
import re

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TFM"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".py"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs", "common"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tfm_obj_root, "test")

# `--param qemu-cpu=MODEL` (scripts/test-emulated.sh): the suite as an
# AVX2-only host runs it, on any x86-64 host. Every tool that plans or
# executes code (this build's tools, mlir-runner, the Python that loads
# libtfm_engine.so) runs under qemu-x86_64 -cpu MODEL, whose CPUID is the
# one LLVM's host detection reads; the features tests require are that
# CPU's, as the emulated transformer-opt plans for it.
_qemu_cpu = lit_config.params.get("qemu-cpu")
_qemu_prefix = ""
if _qemu_cpu:
    import shutil
    import stat
    _qemu = shutil.which("qemu-x86_64")
    if not _qemu:
        lit_config.fatal("qemu-cpu: qemu-x86_64 is not installed (qemu-user)")
    _qemu_prefix = "%s -cpu %s " % (_qemu, _qemu_cpu)
    _wrappers = os.path.join(config.tfm_obj_root, "test", "qemu-bin")
    shutil.rmtree(_wrappers, ignore_errors=True)
    os.makedirs(_wrappers)
    _wrapped = [os.path.join(config.tfm_tools_dir, t)
                for t in sorted(os.listdir(config.tfm_tools_dir))]
    _wrapped.append(os.path.join(config.llvm_tools_dir, "mlir-runner"))
    for _real in _wrapped:
        if not (os.path.isfile(_real) and os.access(_real, os.X_OK)):
            continue
        _wrapper = os.path.join(_wrappers, os.path.basename(_real))
        with open(_wrapper, "w") as f:
            f.write('#!/bin/sh\nexec %s"%s" "$@"\n' % (_qemu_prefix, _real))
        os.chmod(_wrapper, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP)
    config.tfm_tools_dir = _wrappers
    config.available_features.add("qemu")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%tfm_src", config.tfm_src_root))
config.substitutions.append(("%tfm_lib_dir", os.path.join(config.tfm_obj_root, "lib")))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(
    ("%llvm_include", os.path.join(os.path.dirname(config.llvm_tools_dir), "include")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tfm_tools_dir, append_path=True)
llvm_config.with_environment(
    "PYTHONPATH",
    [os.path.join(config.tfm_src_root, "python"),
     os.path.join(config.tfm_src_root, "test", "common")],
    append_path=True)
if _qemu_cpu:  # mlir-runner, found on PATH, runs emulated too.
    config.environment["PATH"] = os.pathsep.join(
        [config.tfm_tools_dir, config.environment["PATH"]])
config.environment["TFM_TOOLS_DIR"] = config.tfm_tools_dir
# The Python API (python/tfm/engine.py) loads this build's libtfm_engine.so.
config.environment["TFM_LIBRARY"] = os.path.join(config.tfm_obj_root, "lib",
                                                 "libtfm_engine.so")
# The runner caches compiled code under $XDG_CACHE_HOME/tfm: tests share a
# cache of their own, emptied at every run, and leave the user's alone.
import shutil
_cache_home = os.path.join(config.tfm_obj_root, "test", "xdg-cache")
shutil.rmtree(_cache_home, ignore_errors=True)
config.environment["XDG_CACHE_HOME"] = _cache_home

tools = ["transformer-opt", "transformer-runner", "transformer-translate",
         "tfm-sample", "tfm-tokenize"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools],
    [config.tfm_tools_dir, config.llvm_tools_dir])

# scripts/sanitize.sh runs the suite on ASan + UBSan tools: --param asan=1.
# Python, not instrumented, loads the instrumented libtfm_engine.so only with
# the shared ASan runtime preloaded: tests that load the engine from Python
# run `%python_engine` (the plain %python otherwise). Registered before
# %python, which is a prefix of it.
_python_engine = _qemu_prefix + config.python_executable
if lit_config.params.get("asan"):
    config.available_features.add("asan")
    import glob
    _runtimes = sorted(glob.glob(
        "/usr/lib/llvm-22/lib/clang/*/lib/linux/libclang_rt.asan-x86_64.so") +
        glob.glob("/usr/lib/llvm-22/lib/clang/*/lib/x86_64-*/libclang_rt.asan.so"))
    if _runtimes:
        config.available_features.add("asan-runtime")
        _python_engine = (
            f"env LD_PRELOAD={_runtimes[-1]} "
            "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:"
            "allow_user_poisoning=0:verify_asan_link_order=0 "
            "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "
            f"{config.python_executable}")
config.substitutions.insert(0, ("%python_engine", _python_engine))

# The host's CPU features, as tests that execute code see them. With
# `--param cpu=NAME` (or TFM_CPU=NAME in the environment) every tool plans
# and emits code for NAME instead of the host (TFM_CPU, resolveCpuName in
# CpuTarget.h): the features are then those of NAME that the host also has,
# so that tests expecting the host's own plan see NAME's (CI runs the
# numerics with cpu=x86-64-v3 on AVX-512 hosts to execute the AVX2 code).
def _planned_flags(cpu):
    """The CPU features of the plan the (maybe emulated) transformer-opt
    makes for `cpu`, as /proc/cpuinfo names them."""
    import subprocess
    _opt = os.path.join(config.tfm_tools_dir, "transformer-opt")
    _plan = subprocess.run(
        [_opt, "--tfm-cpu-configure=cpu=" + cpu, "-"],
        input="module {}", capture_output=True, text=True)
    if _plan.returncode != 0:
        lit_config.fatal("cpu=%s: %s" % (cpu, _plan.stderr.strip()))
    def _fact(name):
        m = re.search(name + r" = (\w+)", _plan.stdout)
        return m.group(1) if m else ""
    _bits = int(_fact("vector_bits") or 128)
    _target = set()
    if _bits >= 256:
        _target |= {"avx", "avx2"}
    if _fact("fma") == "true":
        _target.add("fma")
    if _bits >= 512:
        _target |= {"avx512f", "avx512vl"}
    if _fact("avx512_bf16") == "true":
        _target.add("avx512_bf16")
    if _fact("amx_bf16") == "true":
        _target |= {"amx_bf16", "amx_tile"}
    if _fact("avx512_vnni") == "true":
        _target.add("avx512_vnni")
    if _fact("amx_int8") == "true":
        _target |= {"amx_int8", "amx_tile"}
    return _target

try:
    _flags = set(open("/proc/cpuinfo").read().split())
except OSError:
    _flags = set()
if _qemu_cpu:
    # /proc/cpuinfo is the real host's; the emulated CPU is what the tools
    # see (and must not be overridden by TFM_CPU).
    config.environment.pop("TFM_CPU", None)
    _flags = _planned_flags("host")
    lit_config.note("tools run under qemu-x86_64 -cpu %s: %s" %
                    (_qemu_cpu, " ".join(sorted(_flags))))
# What the machine itself runs, whatever TFM_CPU plans for: the runner
# binds AVX512-BF16 pair-packed weights, or refuses a plan of pair dot
# products, by the machine (bf16-pairs.test).
if {"avx512_bf16", "avx512vl"} <= _flags:
    config.available_features.add("machine-avx512-bf16")
_forced_cpu = lit_config.params.get("cpu") or os.environ.get("TFM_CPU", "")
if _forced_cpu and _forced_cpu != "host":
    config.environment["TFM_CPU"] = _forced_cpu
    _flags &= _planned_flags(_forced_cpu)
    config.available_features.add("forced-cpu")
    lit_config.note("tests plan and run code for cpu=%s (TFM_CPU)" % _forced_cpu)

# Whether the CPU has `features` and Linux lets a process use AMX tile data.
def _tiles_granted(features):
    if not set(features) <= _flags:
        return False
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    # syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)
    return libc.syscall(158, 0x1023, 18) == 0

# AMX tiles (tfm-cpu-amx-contractions' code runs): AMX-BF16 and AVX512-BF16.
if _tiles_granted({"amx_bf16", "amx_tile", "avx512_bf16"}):
    config.available_features.add("amx-bf16")
# AMX-INT8 tiles (the int8 matmuls' tile kernels run), beside AVX-512 VNNI.
if _tiles_granted({"amx_int8", "amx_tile", "avx512_vnni"}):
    config.available_features.add("amx-int8")

# AVX512-BF16 pair dot products (vdpbf16ps) run here: the host plan of a
# bf16 GEMM is then the K-pair form (bf16-pairs.test).
if {"avx512_bf16", "avx512vl"} <= _flags:
    config.available_features.add("avx512-bf16")

# Transparent huge pages the runner can ask for (madvise) or gets anyway.
try:
    with open("/sys/kernel/mm/transparent_hugepage/enabled") as _thp:
        if re.search(r"\[(always|madvise)\]", _thp.read()):
            config.available_features.add("thp")
except OSError:
    pass

# The host's own vector code: AVX2 with FMA, AVX-512 (cpu-code-target.test).
for _flag in ("avx2", "fma", "avx512f"):
    if _flag in _flags:
        config.available_features.add(_flag)

# Tests that compare against PyTorch need Debian's python3-torch.
import subprocess
if subprocess.call([config.python_executable, "-c", "import torch, numpy"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("torch")

# Tests that compare against Hugging Face `transformers` / `tokenizers` run
# them from the pinned venv scripts/reference-venv.sh makes in the build
# directory (scripts/test.sh creates it): `%hf_python`, feature hf-reference.
_hf_python = os.path.join(config.tfm_obj_root, "reference-venv", "bin", "python")
if os.path.exists(_hf_python) and subprocess.call(
        [_hf_python, "-c", "import torch, transformers, tokenizers"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("hf-reference")
config.substitutions.append(("%hf_python", _hf_python))

# Tensor-parallel runs (test/parallel): Open MPI's launcher and the library
# tfm loads at run time (tfm/Runtime/Mpi.h). `%mpirun N` starts N ranks,
# oversubscribing the CI machine's two cores; as root (CI containers) Open MPI
# wants that said.
import ctypes.util, shutil
_mpirun = shutil.which("mpirun")
def _has_libmpi():
    try:
        ctypes.CDLL("libmpi.so.40")
        return True
    except OSError:
        return False
if _mpirun and _has_libmpi():
    config.available_features.add("mpi")
_mpi_root = " --allow-run-as-root" if os.geteuid() == 0 else ""
config.substitutions.append(
    ("%mpirun", "%s%s --oversubscribe --bind-to none -np" % (_mpirun or "mpirun", _mpi_root)))

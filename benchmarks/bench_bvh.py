"""BVH speed against Embree on the Stanford bunny, same rays, same thread count.

    python benchmarks/bench_bvh.py [--size 1024] [--repeats 3] [--isa avx2] [--record] [--out FILE]
    python benchmarks/bench_bvh.py --size 256 --repeats 1 --threads 1 --isa avx2 --out -   # quick check

Ray sets (built once, fed identically to both engines):
- coherent: a size x size pinhole camera framing the bunny, rays in 16x16 tiles;
- incoherent A: size^2 rays from random points of the bunny's bounding sphere to random
  points of its box;
- incoherent B: one cosine-distributed bounce ray from every primary hit point.
Ours: ``trace_closest_batch`` (a prange over chunks, one ``closest_hit`` call per ray, as
the renderer does) with ``numba.set_num_threads(n)``. Embree (embreex): ``scene.run`` on
float32 arrays, one Python thread per share of the batch. The two engines run
interleaved (ours, Embree, ours, ...) so that load from other processes hits both; each
figure is the best of ``--repeats``. Also: build time, hit agreement, first-call compile
time with an empty Numba cache and load time with a warm one (fresh processes).
Writes the table to benchmarks/output/results/bvh.md (with ``--record`` also
benchmarks/results/bvh.md), or to ``--out``. Skips, and says so, without the bunny
(../shared/assets/bunny.obj) or embreex.

Vector instruction sets (``--isa``). Ours is compiled by Numba for the host CPU (Numba's
default, which raytrace never changes: ``raytrace/jit/cache.py``); the kernels shipped
with the package (``raytrace/prebuilt/``) are compiled for the portable level
``x86-64-v3`` (AVX2 and FMA, no AVX-512) and are loaded where no kernel compiled here is
cached (the traversal ``_closest_hit`` is one of them; ``_trace_closest_batch`` is not).
Embree picks at run time the widest of its kernels that the CPU has (AVX-512 where there
is AVX-512). The report names the CPU, its vector extensions and what each engine was
set to; the modes:

- ``default``: as a user runs it, nothing changed: ours from the cache (this process's
  ``NUMBA_CACHE_DIR``) or the shipped kernels, else compiled for the host; Embree's own
  choice;
- ``avx2``: both restricted to AVX2, as on most users' machines. Ours runs in a child
  process with ``NUMBA_CPU_NAME=<--numba-cpu>`` (default ``x86-64-v3``; e.g. ``haswell``)
  and ``NUMBA_CPU_FEATURES=`` (empty: only the named CPU's own features; a CPU name
  alone would add the host's features, AVX-512 included), an empty ``NUMBA_CACHE_DIR``
  and ``RAYTRACE_PREBUILT=0``, so every kernel is compiled in the run for that target.
  Embree gets a device made with the configuration ``max_isa=avx2``: embreex always
  passes no configuration to ``rtcNewDevice``, so the script calls ``rtcNewDevice`` of
  the libembree4 that embreex loaded (ctypes) and puts the device into embreex's
  ``EmbreeDevice`` (checked: the slot must hold a device that answers Embree's version);
- ``native``: both as wide as the CPU allows: ours all compiled for the host CPU (in a
  child process without ``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES``, with an empty cache
  and ``RAYTRACE_PREBUILT=0``, so no shipped ``x86-64-v3`` kernel is loaded), Embree as by
  default.

To run ours at the shipped kernels' level, use ``--isa avx2`` with the default
``--numba-cpu x86-64-v3`` (what ``scripts/prebuild_kernels.py`` sets in its own child
processes).

Checks, in the report: the code-generation target Numba used in the process that runs
our kernels, and the count of ``zmm`` (512-bit) and ``ymm`` registers in the assembly of
``_trace_closest_batch`` and ``_closest_hit`` (``inspect_asm``; Numba cannot inspect
kernels loaded from a cache, so in the default mode the count comes from the
cold-compile process, which compiles for the same target; a kernel the default mode
loaded from the shipped bundle is ``x86-64-v3`` code whatever that count says); for
Embree, the instruction sets its device says it enabled (its ``verbose=1`` print-out; in the default and native
modes from a probe device made without configuration, as embreex makes its own).
"""
import argparse
import ctypes
import datetime
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from reports import (OtherLoad, add_record_flag, cpu_name, skipped, vector_extensions, vector_isa,
                     write_report)

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SHARED = pathlib.Path(os.environ.get("RT_SHARED_DIR", REPO.parent / "shared"))
BUNNY = SHARED / "assets" / "bunny.obj"

COMPILE_SNIPPET = """
import time
t0 = time.perf_counter()
c0 = time.process_time()
import numpy as np
import raytrace
from raytrace.accel import build_accel, closest_hit, any_hit, trace_closest_batch
t1 = time.perf_counter()
c1 = time.process_time()
v = np.random.default_rng(0).random((50, 3, 3))
acc = build_accel(v[:, 0], v[:, 1], v[:, 2], np.zeros((1, 3, 4)), -np.ones((1, 3)),
                  np.ones((1, 3)))
t2 = time.perf_counter()
c2 = time.process_time()
trace_closest_batch(acc, np.zeros((4, 3)), np.ones((4, 3)))
closest_hit(acc, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, np.inf)
any_hit(acc, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, np.inf)
t3 = time.perf_counter()
c3 = time.process_time()
import json
import bench_bvh
print(json.dumps({"times": [t1 - t0, t2 - t1, t3 - t2, c1 - c0, c2 - c1, c3 - c2],
                  "hash": bench_bvh.kernel_keys(),
                  "codegen": bench_bvh.numba_target(), "asm": bench_bvh.kernel_registers()}))
"""


ISA_MODES = ("default", "avx2", "native")
NUMBA_AVX2_CPU = "x86-64-v3"        # raytrace.jit.cache.PORTABLE_CPU: the shipped kernels' level
EMBREE_CONFIG = {"avx2": "max_isa=avx2"}
CHILD_MARK = "BENCH_BVH_ISA"         # set in the child process that runs an --isa mode


def isa_env(isa, numba_cpu, cache_dir):
    """(variables to set, variables to remove) for the process that runs our kernels under
    ``--isa isa``: Numba's code-generation target, an empty cache, no shipped kernels."""
    fresh = {"NUMBA_CACHE_DIR": str(cache_dir), "RAYTRACE_PREBUILT": "0", CHILD_MARK: isa}
    if isa == "avx2":
        return dict(fresh, NUMBA_CPU_NAME=numba_cpu, NUMBA_CPU_FEATURES=""), ()
    if isa == "native":
        return fresh, ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES")
    return {}, ()


def numba_target():
    """(CPU name, feature string) Numba's code generator uses in this process (part of
    raytrace's cache file names: code compiled for another target is loaded only when it
    is the shipped kernels' ``x86-64-v3`` and the CPU has that level)."""
    from numba.core.registry import cpu_target
    _, name, features = cpu_target.target_context.codegen().magic_tuple()
    return [name, features]


def kernel_keys():
    """The dependency keys (``raytrace/jit/keys.py``) of the kernels the compile-time
    process compiles, joined: equal in two processes when neither compiled other code."""
    from raytrace.accel import batch, build, traverse
    from raytrace.jit import keys
    kernels = (batch._trace_closest_batch, traverse._closest_hit, traverse._any_hit,
               build._build_binary, build._plan_wide, build._emit_wide)
    return " ".join(keys.function_key(k.py_func)[:16] for k in kernels)


def kernel_registers():
    """{"zmm": n, "ymm": n} in the assembly of the compiled ``_trace_closest_batch`` and
    ``_closest_hit`` overloads of this process, or None when a kernel was loaded from
    Numba's cache (which cannot be inspected) or is not compiled yet."""
    import warnings

    from raytrace.accel.batch import _trace_closest_batch
    from raytrace.accel.traverse import _closest_hit
    counts = {"zmm": 0, "ymm": 0}
    for kernel in (_trace_closest_batch, _closest_hit):
        if not kernel.signatures:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # "Inspection disabled for cached code"
            listings = kernel.inspect_asm()
        for asm in listings.values():
            if not re.search(r"^\s+[a-z]", asm, re.M):      # directives only: cached code
                return None
            for reg in counts:
                counts[reg] += len(re.findall(rf"%{reg}\d+\b", asm))
    return counts


def _embree_library():
    """The libembree shared library that embreex loaded (ctypes), found in /proc/self/maps
    (else next to the embreex package)."""
    import embreex
    import embreex.rtcore  # noqa: F401  (loads libembree)
    path = None
    try:
        for line in pathlib.Path("/proc/self/maps").read_text().splitlines():
            if "libembree" in line and "/" in line:
                path = line[line.index("/"):].strip()
                break
    except OSError:
        pass
    if path is None:
        found = sorted(pathlib.Path(embreex.__file__).parent.parent.glob("embreex.libs/libembree*"))
        if not found:
            raise RuntimeError("cannot find the libembree that embreex uses")
        path = str(found[0])
    lib = ctypes.CDLL(path)
    lib.rtcNewDevice.restype = ctypes.c_void_p
    lib.rtcNewDevice.argtypes = [ctypes.c_char_p]
    lib.rtcReleaseDevice.argtypes = [ctypes.c_void_p]
    lib.rtcGetDeviceError.argtypes = [ctypes.c_void_p]
    lib.rtcGetDeviceProperty.restype = ctypes.c_ssize_t
    lib.rtcGetDeviceProperty.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def _new_device_printing(lib, config):
    """rtcNewDevice(config), with what Embree prints to stdout meanwhile: (device, text)."""
    import tempfile as _tempfile
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    saved = os.dup(1)
    with _tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            device = lib.rtcNewDevice(config.encode())
            libc.fflush(None)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode(errors="replace")
    if not device:
        raise RuntimeError(f"Embree rejected the device configuration {config!r} "
                           f"(rtcGetDeviceError: {lib.rtcGetDeviceError(None)})")
    return device, text


def embree_isa_lines(text):
    """The lines of Embree's ``verbose=1`` print-out that name the CPU's instruction sets
    and those the device enabled: {"cpu": ..., "enabled": ..., "targets": ...}."""
    out, in_config = {}, False
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "Config":
            in_config = True
        elif key == "ISA":
            out["enabled" if in_config else "cpu"] = " ".join(value.split())
        elif key == "Targets" and in_config and "targets" not in out:
            out["targets"] = " ".join(value.replace("(supported)", "").split())
    return out


def embree_device(config):
    """An embreex ``EmbreeDevice`` holding an Embree device made with ``config`` (embreex
    itself always passes none), and what that device says it enabled
    (``embree_isa_lines``); pass the device to ``rtcore_scene.EmbreeScene``. With
    ``config`` None: (None, what a device made without configuration enables: a probe,
    released at once)."""
    from embreex import rtcore

    lib = _embree_library()
    verbose = "verbose=1" if config is None else f"{config},verbose=1"
    device, text = _new_device_printing(lib, verbose)
    if config is None:
        lib.rtcReleaseDevice(device)
        return None, embree_isa_lines(text)
    holder = rtcore.EmbreeDevice()
    # a Cython object: the header, then its one field, the RTCDevice pointer
    ptr_size = ctypes.sizeof(ctypes.c_void_p)
    slot = ctypes.c_void_p.from_address(id(holder) + object.__basicsize__)
    digits = [int(x) for x in re.findall(r"\d+", repr(holder))[:3]]
    version = digits[0] * 10000 + digits[1] * 100 + digits[2] if len(digits) == 3 else None
    if (type(holder).__basicsize__ != object.__basicsize__ + ptr_size or not slot.value
            or lib.rtcGetDeviceProperty(slot.value, 0) != version):   # RTC_DEVICE_PROPERTY_VERSION
        lib.rtcReleaseDevice(device)
        raise RuntimeError("this embreex's EmbreeDevice is not laid out as expected: cannot "
                           "give Embree a device configuration")
    old, slot.value = slot.value, device
    lib.rtcReleaseDevice(old)
    return holder, embree_isa_lines(text)


def load_obj(path):
    """Triangles of an OBJ file's ``v``/``f`` lines: (T, 3, 3) float64 (fans for polygons)."""
    verts, faces = [], []
    with open(path) as fh:
        for line in fh:
            if line.startswith("v "):
                verts.append(line.split()[1:4])
            elif line.startswith("f "):
                idx = [int(w.split("/")[0]) for w in line.split()[1:]]
                faces += [(idx[0], idx[k], idx[k + 1]) for k in range(1, len(idx) - 1)]
    v = np.array(verts, dtype=np.float64)
    f = np.array(faces, dtype=np.int64)
    f = np.where(f > 0, f - 1, f + len(v))
    return v[f]


def tile_order(n, tile=16):
    """Pixel (row, col) of an n x n image visited tile by tile."""
    ys, xs = np.mgrid[0:n, 0:n]
    nt = n // tile
    ys = ys[: nt * tile, : nt * tile].reshape(nt, tile, nt, tile).transpose(0, 2, 1, 3).ravel()
    xs = xs[: nt * tile, : nt * tile].reshape(nt, tile, nt, tile).transpose(0, 2, 1, 3).ravel()
    return ys, xs


def camera_rays(lo, hi, n):
    """Pinhole camera on +z looking at the box centre; the box's front face fills the view."""
    c = 0.5 * (lo + hi)
    ext = hi - lo
    dist = 1.5 * np.linalg.norm(ext)
    eye = c + np.array([0.0, 0.0, dist])
    half = 0.5 * max(ext[0], ext[1]) / (dist - 0.5 * ext[2])
    ys, xs = tile_order(n)
    d = np.stack([((xs + 0.5) / n * 2 - 1) * half, (1 - (ys + 0.5) / n * 2) * half,
                  -np.ones(len(xs))], axis=-1)
    return np.broadcast_to(eye, d.shape).copy(), d


def sphere_to_box_rays(lo, hi, n, rng):
    c = 0.5 * (lo + hi)
    radius = 0.5 * np.linalg.norm(hi - lo)
    u = rng.normal(size=(n, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    o = c + radius * u
    return o, lo + rng.random((n, 3)) * (hi - lo) - o


def bounce_rays(tris, o, d, t, idx, rng):
    """Cosine-distributed rays leaving the hit points on the side the ray came from."""
    hit = idx >= 0
    p = o[hit] + t[hit, None] * d[hit]
    tri = tris[idx[hit]]
    nrm = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    nrm /= np.linalg.norm(nrm, axis=1)[:, None]
    nrm *= -np.sign(np.einsum("ij,ij->i", nrm, d[hit]))[:, None]
    r = rng.normal(size=nrm.shape)
    r /= np.linalg.norm(r, axis=1)[:, None]
    dirs = nrm + r                     # cosine distributed about nrm
    scale = np.linalg.norm(tris.reshape(-1, 3).max(0) - tris.reshape(-1, 3).min(0))
    return p + 1e-5 * scale * nrm, dirs


def run_embree(scene, o32, d32, nthreads):
    if nthreads == 1:
        t0 = time.perf_counter()
        r = scene.run(o32, d32, output=1)
        return time.perf_counter() - t0, r["primID"], r["tfar"]
    parts = np.array_split(np.arange(len(o32)), nthreads)
    res = [None] * nthreads

    def work(i):
        res[i] = scene.run(o32[parts[i]], d32[parts[i]], output=1)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(nthreads)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    dt = time.perf_counter() - t0
    return dt, np.concatenate([r["primID"] for r in res]), np.concatenate([r["tfar"] for r in res])


def run_ours(acc, o, d, nthreads):
    import numba

    from raytrace.accel import trace_closest_batch
    numba.set_num_threads(nthreads)
    t0 = time.perf_counter()
    t, kind, idx, u, v = trace_closest_batch(acc, o, d)
    return time.perf_counter() - t0, np.where(kind == 1, idx, -1), t


def compile_times():
    """(import, build, traversal) wall then CPU seconds in fresh processes: empty cache,
    then warm. The shipped kernels are off (``RAYTRACE_PREBUILT=0``): the empty-cache run
    measures compiling. The processes inherit this one's code-generation settings
    (``--isa``). Returns (cold, warm, the cold process's {"codegen": numba_target(),
    "asm": kernel_registers()}: its kernels were compiled there, so they can be inspected).

    Each kernel is cached under its dependency key (its code and its callees'), so a warm
    run only counts when these kernels' keys did not change in between (others edit the
    tree); else retry."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, RAYTRACE_PREBUILT="0",
                   PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "benchmarks")]))

        def run():
            r = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, cwd=REPO,
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"compile-time process failed: {r.stderr[-2000:]}")
            return json.loads(r.stdout.splitlines()[-1])

        cold = run()
        h = cold["hash"]
        for _ in range(3):
            warm = run()
            if warm["hash"] == h:
                break
            h = warm["hash"]
    return cold["times"], warm["times"], {"codegen": cold["codegen"], "asm": cold["asm"]}


def isa_report(args, target, registers, cold_info, embree_config, embree_isa):
    """Report lines: the CPU's vector extensions and what each engine was set to, with the
    checks (module docstring)."""
    def regs(counts):
        return f"{counts['zmm']} `zmm` (512-bit), {counts['ymm']} `ymm` (256-bit)"

    features = target[1]
    avx512 = sorted(f for f in features.split(",") if f.startswith("+avx512"))
    if args.isa == "avx2":
        how = (f"compiled in this run (child process, empty `NUMBA_CACHE_DIR`, "
               f"`RAYTRACE_PREBUILT=0`) with `NUMBA_CPU_NAME={args.numba_cpu}` and "
               f"`NUMBA_CPU_FEATURES=` empty (the named CPU's own features only)")
    elif args.isa == "native":
        how = ("compiled in this run (child process, empty `NUMBA_CACHE_DIR`, "
               "`RAYTRACE_PREBUILT=0`) for the host CPU (`NUMBA_CPU_NAME`, "
               "`NUMBA_CPU_FEATURES` unset)")
    elif list(target) == [NUMBA_AVX2_CPU, ""]:
        how = ("the shipped kernels' portable level, as this environment sets Numba up "
               "(`NUMBA_CPU_NAME`); kernels from the cache or the shipped bundle")
    else:
        how = ("as a user runs it: compiled for this target, or loaded from the cache, or "
               "from the shipped bundle (`x86-64-v3` code) where no kernel compiled here "
               "is cached")
    feature_text = ("no features beyond the CPU name's own" if not features else
                    f"features `{features}`" if len(features) < 80 else
                    f"host features ({len(features.split(','))} flags"
                    + (f", AVX-512 on: {' '.join(a[1:] for a in avx512)}" if avx512 else "") + ")")
    if registers is not None:
        check = f"in the assembly of `_trace_closest_batch` and `_closest_hit` here: {regs(registers)}"
    elif cold_info.get("asm"):
        same = "same target" if cold_info["codegen"] == list(target) else \
               f"target {cold_info['codegen'][0]!r}: NOT the same"
        check = (f"in the assembly of `_trace_closest_batch` and `_closest_hit` compiled by "
                 f"the cold-compile process ({same}): {regs(cold_info['asm'])}")
    else:
        check = "registers not inspected (kernels loaded from the cache)"
    ok = registers if registers is not None else cold_info.get("asm")
    verdict = ""
    if args.isa == "avx2":
        restricted_ours = ok is not None and ok["zmm"] == 0 and not avx512
        restricted_embree = "AVX512" not in embree_isa.get("enabled", "AVX512")
        verdict = ("  \nRestriction to AVX2 checked: " + ("took effect for both engines"
                   if restricted_ours and restricted_embree else
                   f"**NOT confirmed** (ours: {'ok' if restricted_ours else 'no'}, Embree: "
                   f"{'ok' if restricted_embree else 'no'})") + ".")
    elif ok is not None and ok["zmm"] == 0 and "AVX512" in embree_isa.get("enabled", ""):
        verdict = ("  \nSo here our kernels use no 512-bit registers and Embree runs AVX-512 code; "
                   "`--isa avx2` restricts both to AVX2, `--isa native` lets both use AVX-512.")
    embree_how = (f"device configuration `{embree_config}` (made through libembree's "
                  f"`rtcNewDevice` and handed to embreex, which passes none)"
                  if embree_config else "embreex's own device (no configuration: Embree "
                  "picks the widest kernels the CPU has)")
    return [
        f"Vector instruction sets (`--isa {args.isa}`): CPU {cpu_name()}, extensions "
        f"{' '.join(vector_extensions()) or 'unknown'}.  ",
        f"Ours: Numba target CPU `{target[0]}`, {feature_text}; {how}; {check}.  ",
        f"Embree: {embree_how}; Embree's own print-out (`verbose=1`"
        f"{'' if embree_config else ', a probe device made the same way'}): enabled ISA "
        f"{embree_isa.get('enabled', '?')}; kernels {embree_isa.get('targets', '?')}.{verdict}",
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=1024, help="camera image size (default 1024)")
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats, best kept")
    ap.add_argument("--threads", default="1,2", help="thread counts (default 1,2)")
    ap.add_argument("--obj", default=str(BUNNY), help="mesh (default: the Stanford bunny)")
    ap.add_argument("--isa", choices=ISA_MODES, default="default",
                    help="vector instruction sets: 'default' (nothing changed: ours "
                         "compiled for the host CPU or loaded from the cache or the shipped "
                         "x86-64-v3 kernels; Embree: the widest the CPU has), 'avx2' (both "
                         "restricted to AVX2; ours compiled for --numba-cpu), 'native' (both "
                         "as wide as the CPU allows, ours all compiled for the host); see "
                         "the module docstring")
    ap.add_argument("--numba-cpu", default=NUMBA_AVX2_CPU,
                    help="with --isa avx2: the CPU Numba compiles our kernels for, with "
                         "NUMBA_CPU_FEATURES empty (default %(default)s; e.g. haswell)")
    add_record_flag(ap)
    ap.add_argument("--out", help="write the Markdown table to this file instead ('-': "
                                  "print only)")
    args = ap.parse_args(argv)
    if not pathlib.Path(args.obj).exists():
        skipped("bench_bvh", f"{args.obj} not found (../shared is optional)")
        return 0
    try:
        from embreex import rtcore_scene as rtcs
        from embreex.mesh_construction import TriangleMesh
    except ImportError:
        skipped("bench_bvh", "embreex is not installed (pip install embreex)")
        return 0
    if args.isa != "default" and os.environ.get(CHILD_MARK) != args.isa:
        # Numba fixes its code-generation target when it is imported: run the benchmark in
        # a child process that has the settings from its start
        with tempfile.TemporaryDirectory(prefix="bench_bvh_numba_") as cache:
            add, remove = isa_env(args.isa, args.numba_cpu, cache)
            env = {k: v for k, v in os.environ.items() if k not in remove}
            env.update(add)
            print(f"--isa {args.isa}: running the benchmark in a child process with "
                  + ", ".join(f"{k}={v!r}" for k, v in add.items() if k != CHILD_MARK)
                  + "".join(f", {k} unset" for k in remove), flush=True)
            argv = list(argv if argv is not None else sys.argv[1:])
            return subprocess.run([sys.executable, str(pathlib.Path(__file__).resolve())] + argv,
                                  env=env).returncode
    from raytrace.accel import build_accel, trace_closest_batch

    target = numba_target()
    if args.isa == "avx2" and (target[0] != args.numba_cpu or "avx512" in target[1]):
        raise RuntimeError(f"--isa avx2: Numba compiles for {target}, not {args.numba_cpu!r} "
                           f"without AVX-512 (was numba imported before the settings?)")
    embree_config = EMBREE_CONFIG.get(args.isa)
    embree_holder, embree_isa = embree_device(embree_config)
    print(f"Numba target (CPU, features): {target[0]!r}, {target[1][:60]!r}{'...' if len(target[1]) > 60 else ''}; "
          f"Embree enabled: {embree_isa.get('enabled', '?')}", flush=True)

    load0 = os.getloadavg()
    other_load = OtherLoad().start()
    cold, warm, cold_info = compile_times()
    tris = load_obj(args.obj)
    empty3, empty34 = np.zeros((0, 3)), np.zeros((0, 3, 4))
    builds = []
    for _ in range(3):
        t0 = time.perf_counter()
        acc = build_accel(tris[:, 0], tris[:, 1], tris[:, 2], empty34, empty3, empty3)
        builds.append(time.perf_counter() - t0)
    soup_rng = np.random.default_rng(0)
    centres = soup_rng.random((1_000_000, 1, 3))
    soup = centres + 0.003 * soup_rng.normal(size=(1_000_000, 3, 3))
    t0, c0 = time.perf_counter(), time.process_time()
    build_accel(soup[:, 0], soup[:, 1], soup[:, 2], empty34, empty3, empty3)
    soup_build = time.perf_counter() - t0
    soup_cpu = time.process_time() - c0
    del soup, centres
    t0 = time.perf_counter()
    scene = rtcs.EmbreeScene() if embree_holder is None else rtcs.EmbreeScene(embree_holder)
    TriangleMesh(scene, tris.astype(np.float32))
    scene.run(np.zeros((1, 3), np.float32), np.ones((1, 3), np.float32))   # builds (commits)
    emb_build = time.perf_counter() - t0

    rng = np.random.default_rng(1)
    lo, hi = tris.reshape(-1, 3).min(0), tris.reshape(-1, 3).max(0)
    o_c, d_c = camera_rays(lo, hi, args.size)
    o_a, d_a = sphere_to_box_rays(lo, hi, args.size * args.size, rng)
    t, kind, idx, _, _ = trace_closest_batch(acc, o_c, d_c)
    o_b, d_b = bounce_rays(tris, o_c, d_c, t, np.where(kind == 1, idx, -1), rng)
    sets = [("coherent camera rays (tiles)", o_c, d_c),
            ("incoherent A: sphere -> box", o_a, d_a),
            ("incoherent B: bounce rays", o_b, d_b)]
    nthreads = [int(x) for x in args.threads.split(",")]
    run_ours(acc, o_c[:1000], d_c[:1000], max(nthreads))     # compile / warm up
    registers = kernel_registers()          # None: loaded from the cache (default mode)
    rows = []
    for name, o, d in sets:
        o32, d32 = o.astype(np.float32), d.astype(np.float32)
        for nt in nthreads:
            best_e = best_o = np.inf
            for _ in range(args.repeats):
                dt, ours_id, ours_t = run_ours(acc, o, d, nt)
                best_o = min(best_o, dt)
                dt, emb_id, emb_t = run_embree(scene, o32, d32, nt)
                best_e = min(best_e, dt)
            same = np.mean(ours_id == emb_id)
            both = (ours_id >= 0) & (ours_id == emb_id)
            rel = np.abs(ours_t[both] - emb_t[both]) / np.maximum(np.abs(emb_t[both]), 1e-30)
            n = len(o)
            rows.append((name, nt, n, n / best_o / 1e6, n / best_e / 1e6, best_e / best_o,
                         same, np.mean(ours_id >= 0), float(np.max(rel)) if rel.size else 0.0))
            print(f"{name:32s} threads {nt}: ours {rows[-1][3]:6.2f} Mrays/s, embree "
                  f"{rows[-1][4]:6.2f} Mrays/s, ratio {rows[-1][5]:.2f}, same primID "
                  f"{same:.5f}", flush=True)
    load1 = os.getloadavg()
    other_load.stop()
    print(other_load.describe())

    cmd = "python benchmarks/bench_bvh.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    cpu = f"{cpu_name()}, {vector_isa()}"
    isa_lines = isa_report(args, target, registers, cold_info, embree_config, embree_isa)
    lines = [
        "## BVH (raytrace/accel) against Embree",
        "",
        f"Command: `{cmd}`  ",
        f"Date: {datetime.date.today().isoformat()}  ",
        f"Machine: {os.cpu_count()} cores ({cpu}), shared with other engineers; "
        f"{other_load.describe()}; load average {load0[0]:.2f} before, {load1[0]:.2f} after "
        f"(this run included). The engines run interleaved, best of {args.repeats}.  ",
        f"Mesh: {pathlib.Path(args.obj).name}, {len(tris)} triangles. Embree: embreex "
        f"`scene.run` (rtcIntersect1 per ray), float32 rays. Ours: `trace_closest_batch` "
        f"(one `closest_hit` call per ray, float64 rays).  ",
    ] + isa_lines + [
        "",
        "| rays | threads | N | ours Mrays/s | Embree Mrays/s | ours / Embree | same primID "
        "| hit fraction | max rel. t diff |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, nt, n, mo, me, ratio, same, hitf, rel in rows:
        lines.append(f"| {name} | {nt} | {n} | {mo:.2f} | {me:.2f} | {ratio:.2f} | "
                     f"{same:.5f} | {hitf:.3f} | {rel:.1e} |")
    lines.append("")
    for nt in nthreads:
        worst = min((r for r in rows if r[1] == nt), key=lambda r: r[5])
        lines.append(
            f"Target, {nt} thread(s): every ray class >= 1.0x Embree: "
            f"{'met' if worst[5] >= 1.0 else 'NOT met'} (worst {worst[5]:.2f}x, {worst[0]}).  ")
    if other_load.busy:
        lines.append(f"**Not a quiet machine**: {other_load.describe()}; run again.  ")
    lines += [
        "",
        f"Build (warm, best of 3): ours {min(builds) * 1e3:.0f} ms "
        f"({acc.nodes.shape[0]} nodes, {acc.tris.shape[0]} 4-triangle blocks); Embree "
        f"{emb_build * 1e3:.0f} ms (including embreex's copies, and the BVH build that embreex "
        f"leaves to the first query). Ours on 1,000,000 random "
        f"small triangles in the unit cube: {soup_build:.2f} s wall, {soup_cpu:.2f} s CPU.  ",
        f"Fresh process, empty Numba cache, shipped kernels off (wall / CPU): import {cold[0]:.2f} / {cold[3]:.2f} s,"
        f" first build (compiles) {cold[1]:.2f} / {cold[4]:.2f} s, first traversal calls "
        f"(compile `closest_hit`, `any_hit`, `trace_closest_batch`) {cold[2]:.2f} / "
        f"{cold[5]:.2f} s.  ",
        f"Fresh process, warm Numba cache (wall / CPU): import {warm[0]:.2f} / {warm[3]:.2f} s, "
        f"first build {warm[1]:.2f} / {warm[4]:.2f} s, first traversal calls {warm[2]:.2f} / "
        f"{warm[5]:.2f} s.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out is None:
        write_report("bvh", text, args.record)
    elif args.out != "-":
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(text)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

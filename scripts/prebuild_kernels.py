"""Compile the kernels the shipped scenes use, and pack them as raytrace's bundle.

    python scripts/prebuild_kernels.py      (or: make prebuilt)

In a fresh, empty cache (shipped kernels off: ``RAYTRACE_PREBUILT=0``), with Numba told
to compile for the portable level ``x86-64-v3`` (``NUMBA_CPU_NAME``/``NUMBA_CPU_FEATURES``
set in the environment of this script's own child processes, nowhere else), this runs
``raytrace render`` on every scene in ``scenes/`` and ``raytrace animate`` on every scene
in ``scenes/animation/``, small (32 x 24 pixels, 1 sample, 2 frames), and compiles both
integrators with and without instances, and their late twins (``raytrace.jit.late``;
background builds are off here). It then writes ``raytrace/prebuilt/`` with
``raytrace.jit.bundle.make`` (and ``plans.pkl``: the argument types of every compile
unit, which let a cold compile elsewhere run in parallel, ``raytrace/jit/parallel.py``).
A bundle with the same files (the same kernels' keys, Numba, Python, CPU level) is kept:
the compiled bytes differ from run to run, and git need not carry them again.

The libraries (``curves``, ``skinning``, ``particles``) ship no kernels: their kernels
are single-file and use Numba's own cache.

Run it after editing a kernel (``tests/test_prebuilt.py`` fails while the bundle is
stale at a release), on an x86-64 machine with AVX2 and FMA, with the Numba and Python
the bundle is for. Takes 2-4 minutes.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]

COMPILE_VARIANTS = """
import raytrace.jit.warmup as w
for integrator in ("whitted", "path"):
    for instanced in (False, True):
        w.compile_here(integrator, instanced)
"""

BUNDLE = """
import json
from raytrace.jit import bundle, cache
from numba.core.registry import cpu_target
magic = cpu_target.target_context.codegen().magic_tuple()
assert magic == cache.portable_magic(cpu_target.target_context.codegen()), f"compiled for {magic}"
store = cache.store()
old = bundle.SHIPPED / bundle.MANIFEST
names = sorted(bundle.files(store))
if not names:
    print(0)
elif (old.exists() and json.loads(old.read_text())["key"] == bundle.current_key()
        and bundle.shipped_names() == names):
    print("unchanged")
else:
    bundle.make(store)
    print(len([n for n in names if n.endswith(".nbk")]))
"""


def run(args, env, what):
    t0 = time.perf_counter()
    out = subprocess.run(args, env=env, cwd=REPO, capture_output=True, text=True)
    ok = out.returncode == 0
    print(f"  {'ok ' if ok else 'ERR'} {time.perf_counter() - t0:6.1f} s  {what}")
    if not ok:
        print(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.stdout)
    return ok


def main():
    cache = pathlib.Path(tempfile.mkdtemp(prefix="prebuild-cache-"))
    out = pathlib.Path(tempfile.mkdtemp(prefix="prebuild-out-"))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), RAYTRACE_PREBUILT="0", RAYTRACE_LATE="0",
               NUMBA_CPU_NAME="x86-64-v3", NUMBA_CPU_FEATURES="")
    for name in ("RAYTRACE_SIMD", "RAYTRACE_BORROW", "NUMBA_BOUNDSCHECK", "RAYTRACE_DISK_CACHE"):
        env.pop(name, None)
    cli = [sys.executable, "-m", "raytrace"]
    small = ["--size", "32", "24", "--spp", "1", "-q"]
    failed = 0
    print(f"compiling into {cache}")
    failed += not run([sys.executable, "-c", COMPILE_VARIANTS], env, "both integrators, with and without instances")
    failed += not run([sys.executable, "-c", COMPILE_VARIANTS], dict(env, RAYTRACE_LATE="twin"),
                      "their late twins (raytrace/jit/late.py: a first edit below a row kernel compiles only that)")
    for scene in sorted((REPO / "scenes").glob("*.json")):
        failed += not run(cli + ["render", str(scene), "-o", str(out / f"{scene.stem}.png")] + small,
                          env, f"render {scene.name}")
    for scene in sorted((REPO / "scenes" / "animation").glob("*.json")):
        failed += not run(cli + ["animate", str(scene), "-o", str(out / scene.stem), "--frames", "0:2",
                                 "--workers", "1"] + small,
                          env, f"animate {scene.name}")
    if failed:
        print(f"{failed} step(s) failed: no bundle written")
        return 1
    plans = list(cache.glob("raytrace-numba/kernels-*/plans-*.pkl"))       # the compile plans (types, not code)
    if plans:
        shutil.copyfile(plans[0], REPO / "raytrace" / "prebuilt" / "plans.pkl")
        print("raytrace/prebuilt/plans.pkl: the compile plan of both integrators (raytrace/jit/parallel.py)")
    result = subprocess.run([sys.executable, "-c", BUNDLE], env=env, cwd=REPO, capture_output=True, text=True)
    if result.returncode != 0:
        print(f"bundle: {result.stderr.strip().splitlines()[-1]}")
        return 1
    count = result.stdout.strip()
    if count == "unchanged":
        print("raytrace/prebuilt: unchanged (the same kernels' keys)")
    elif int(count):
        archive = REPO / "raytrace" / "prebuilt" / "kernels.tar.xz"
        print(f"raytrace/prebuilt: {count} kernels, {archive.stat().st_size / 1e6:.1f} MB")
    else:
        print("no kernels compiled, no bundle")
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

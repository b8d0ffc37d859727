"""Compile the kernels the shipped scenes use, and pack them as each package's bundle.

    python scripts/prebuild_kernels.py      (or: make prebuilt)

In a fresh, empty Numba cache (shipped bundles off: ``RAYTRACE_PREBUILT=0``), this runs
``raytrace render`` on every scene in ``scenes/`` and ``raytrace animate`` on every scene
in ``scenes/animation/``, small (32 x 24 pixels, 1 sample, 2 frames), and compiles both
integrators with and without instances. It then writes ``raytrace/prebuilt/`` (with ``plans.pkl``: the argument types of every
compile unit, which let a cold compile elsewhere run in parallel, ``raytrace/compile/parallel.py``),
``curves/prebuilt/``, ``skinning/prebuilt/`` and ``particles/prebuilt/`` (a package whose
kernels none of this used gets no bundle) with ``userio.prebuilt.make_bundle``. A
package whose bundle already has this key (same source, Numba, Python and CPU level)
keeps it: the compiled bytes differ from run to run, and git need not carry them again.

Run it after editing a kernel (``tests/test_prebuilt.py`` fails while a bundle is stale),
on an x86-64 machine with AVX2 and FMA (the kernels are compiled for ``x86-64-v3``), with
the Numba and Python the bundles are for. Takes 2-4 minutes.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("raytrace", "curves", "skinning", "particles")

COMPILE_VARIANTS = """
import raytrace.warmup as w
for integrator in ("whitted", "path"):
    for instanced in (False, True):
        w.compile_here(integrator, instanced)
"""

BUNDLE = """
import json
import pathlib
import {package} as package
from userio import numba_cache, prebuilt
assert numba_cache.use_portable_cpu(), "kernels must be compiled for the portable CPU level"
package_dir = pathlib.Path(package.__file__).parent
stamp = None
if {package!r} == "raytrace":
    import raytrace._numba_setup as setup
    from raytrace._numba_cache import folder_parts
    from raytrace.compile.cache import STAMP
    assert setup.DEPENDENCY_KEYED, "raytrace's kernels must be cached by dependency key"
    folder = numba_cache.make_folder(*folder_parts(package_dir))
    stamp = STAMP
else:
    folder = numba_cache.make_folder({package!r}, numba_cache.source_hash(package_dir))
old = package_dir / "prebuilt" / prebuilt.MANIFEST
if not any(folder.glob("*/*.nbi")):
    print(0)
elif old.exists() and json.loads(old.read_text())["key"] == prebuilt.current_key(folder) and (
        stamp is None or prebuilt.bundle_keys(package_dir / "prebuilt") == prebuilt.folder_keys(folder, package_dir)):
    print("unchanged")      # same source (same kernels' keys), Numba, Python, CPU: the bundle in git stays
else:
    print(len(prebuilt.make_bundle(folder, package_dir, stamp=stamp)["indexes"]))
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
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), RAYTRACE_PREBUILT="0")
    for name in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "RAYTRACE_SIMD", "RAYTRACE_BORROW",
                 "NUMBA_BOUNDSCHECK", "RAYTRACE_PORTABLE_CPU"):
        env.pop(name, None)
    cli = [sys.executable, "-m", "raytrace"]
    small = ["--size", "32", "24", "--spp", "1", "-q"]
    failed = 0
    print(f"compiling into {cache}")
    failed += not run([sys.executable, "-c", COMPILE_VARIANTS], env, "both integrators, with and without instances")
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
    plans = list(cache.glob("raytrace-*/plans.pkl"))       # the compile plans (types, not code)
    if plans:
        shutil.copyfile(plans[0], REPO / "raytrace" / "prebuilt" / "plans.pkl")
        print("raytrace/prebuilt/plans.pkl: the compile plan of both integrators (raytrace/compile/parallel.py)")
    for package in PACKAGES:
        result = subprocess.run([sys.executable, "-c", BUNDLE.format(package=package)], env=env, cwd=REPO,
                                capture_output=True, text=True)
        if result.returncode != 0:
            print(f"{package}: {result.stderr.strip().splitlines()[-1]}")
            return 1
        count = result.stdout.strip()
        if count == "unchanged":
            print(f"{package}/prebuilt: unchanged (its key is the same)")
        elif int(count):
            archive = REPO / package / "prebuilt" / "kernels.tar.xz"
            print(f"{package}/prebuilt: {count} kernels, {archive.stat().st_size / 1e6:.1f} MB")
        else:
            print(f"{package}: no kernels compiled, no bundle")
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

r"""Path tracer vs Mitsuba 3 on three scenes: time to a given error, paths per second.

    python benchmarks/bench_path.py [--scenes cornell,glass,smoke] [--rounds 5] [--target-rmse 0.024] [--no-adaptive] [--record]
    python benchmarks/bench_path.py --rounds 1 --scenes glass --ref-spp 1024 --no-latency   # quick check

Scenes (``benchmarks/bench_scenes.py``), all 256 x 256 with a box pixel filter on both
sides:

- ``cornell``: scenes/cornell_box.json (Mitsuba's ``mi.cornell_box()``), max_depth 8;
- ``glass``: a glass torus knot (70,000 flat triangles, ior 1.5, generated into
  benchmarks/output/) on a rough metal slab (GGX alpha 0.15, reflectance 1) under the sky
  cube map ``scenes/assets/sky`` (an ``envmap`` emitter for Mitsuba), max_depth 16;
- ``smoke``: the Cornell box without its boxes, a smoke puff on a 64^3 grid (a ``.vol``
  file written into benchmarks/output/) in a ``null`` cube, scale 8, albedo 0.9, g 0.3,
  max_depth 8: ours the volumetric path tracer, Mitsuba ``volpath`` (``heterogeneous``
  medium, ``gridvolume``). Mitsuba 3.9 tracks the grid against one majorant for the whole
  grid, so its reference takes long: ``--ref-spp 2048`` (RMSE of its own noise 0.0039)
  instead of 8192 keeps it to minutes.

Each renderer runs in its own process: ours with each of its samplers (``sobol``, the
default Owen-scrambled Sobol points, and ``independent``; see ``--our-samplers``), ours
adaptive (below; off with ``--no-adaptive``), Mitsuba ``scalar_rgb`` and, when a usable
libLLVM is found, Mitsuba ``llvm_ad_rgb``,
each Mitsuba variant with its default ``independent`` sampler and with ``multijitter``
(stratified like our Sobol points, so the error per sample is comparable; see
``--mitsuba-samplers``). For each it reports

- the smallest spp whose RMSE against a converged reference is at most
  ``--target-rmse`` (root mean square over 3 seeds; the reference's own noise is
  subtracted in quadrature), and the wall time of one render at that spp, best of
  ``--rounds`` rounds, renderers interleaved within a round (the 2 cores are shared);
- paths per second = 256 * 256 * spp / that time;
- for our adaptive renderer (``docs/adaptive-sampling.md``: Sobol points, ``min_spp`` 16,
  ``max_spp`` ``--adaptive-max-spp``) the noise threshold that reaches the target first:
  the ladder ``--adaptive-thresholds`` is walked (from a first guess, the next rung is
  predicted with RMSE ~ threshold) to the largest rung that reaches the target with the
  rung above it missing, then that bracket is bisected (geometric mean) to within 3 %
  of the threshold; the fastest configuration that reaches the target is the one with
  the fewest samples (mean spp over the pixels; a smaller threshold only adds samples),
  measured as above (same reference, the same 3 seeds, the reference's noise
  subtracted) and timed in the same rounds. Its row gives the threshold and the mean
  spp; below the table, every threshold measured, and how many pixels reached
  ``max_spp`` at the chosen one with their share of the samples (pixels next to a small
  bright light can need thousands of samples to meet the threshold: on the Cornell box
  at 0.2, 137 pixels did not by 4096, so ``max_spp`` decides what they cost);
- for ours also the first render of the Cornell box in a fresh process with an empty
  Numba cache (the shipped kernels in ``raytrace/prebuilt/`` load; "cold, compiling"
  with ``RAYTRACE_PREBUILT=0``) and with a filled one (warm): import, scene load and a
  1-spp render.

The headline, per scene, is ours (best of our rows: samplers and adaptive, named) /
Mitsuba ``llvm_ad_rgb`` (best of its samplers), time to the target RMSE, and the same
against ``scalar_rgb``. A best
round under 3/4 of its renderer's median round is named below it, with the ratios of the
medians (``outlier_rounds``). The report
also names the CPU's vector width (``llvm_ad_rgb`` vectorises across paths with it) and
how much CPU time other processes took during the run (``reports.OtherLoad``); above a
quarter of a core it says the ratios are not those of a quiet machine: on a busy machine
(2026-12-01) Mitsuba measured 2.5x slower than on a quiet one and the ratio came out
0.9-1.1 instead of 1.3-1.6.

The references (Mitsuba ``llvm_ad_rgb`` when available, else ``scalar_rgb``; 8192 spp
unless ``--ref-spp``; ``independent`` sampler, 8 passes) are cached in
benchmarks/output/<scene>_256_reference.npz (Cornell box:
cornell_box_256_reference.npz) and re-rendered when the scene changes or more spp are
asked for. Results go to benchmarks/output/results/path.md (with ``--record`` also
benchmarks/results/path.md). Skips, and says so, when Mitsuba 3 is not installed (the
``reference`` extra).

libLLVM for ``llvm_ad_rgb``: Dr.Jit loads libLLVM at run time, found through the
environment variable ``DRJIT_LIBLLVM_PATH`` (this script sets it in the llvm workers
from ``--llvm``). Mitsuba's llvm variant crashes with Debian 12's libLLVM 15; unpack
Debian's LLVM 19 without installing it (no root needed for the last two steps):

    apt-get update                      # if apt-get download cannot find the package
    cd benchmarks/output && apt-get download libllvm19
    dpkg -x libllvm19_*.deb llvm19      # -> llvm19/usr/lib/x86_64-linux-gnu/libLLVM.so.19.1

which is the default ``--llvm`` path. Without it the llvm rows (and the llvm headline)
are skipped and the references are rendered with ``scalar_rgb`` (slower). Check by hand:

    DRJIT_LIBLLVM_PATH=$PWD/benchmarks/output/llvm19/usr/lib/x86_64-linux-gnu/libLLVM.so.19.1 \
        .venv/bin/python -c "import mitsuba as mi; mi.set_variant('llvm_ad_rgb'); print(mi.render(mi.load_dict(mi.cornell_box())).shape)"
"""

import argparse
import datetime
import importlib
import json
import math
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

from reports import OtherLoad, add_record_flag, cpu_name, skipped, vector_isa, write_report

REPO = pathlib.Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "output"
SCENE = REPO / "scenes" / "cornell_box.json"          # the latency runs load this file
DEFAULT_LLVM = OUT / "llvm19" / "usr" / "lib" / "x86_64-linux-gnu" / "libLLVM.so.19.1"
SIZE = 256
SCENES = ("cornell", "glass", "smoke")
REFERENCES = {"cornell": OUT / "cornell_box_256_reference.npz",
              "glass": OUT / "glass_knot_256_reference.npz",
              "smoke": OUT / "smoke_cornell_256_reference.npz"}
TITLES = {"cornell": "Cornell box", "glass": "Glass knot and rough metal under the sky",
          "smoke": "Smoke in the Cornell box"}
DESCRIPTIONS = {
    "cornell": "`scenes/cornell_box.json` = `mi.cornell_box()`, diffuse, one area light, max_depth 8",
    "glass": "a glass torus knot (70,000 flat triangles, ior 1.5) on a rough metal slab "
             "(`rough_conductor` GGX alpha 0.15, reflectance 1) lit only by the sky cube map "
             "(`scenes/assets/sky`; for Mitsuba an `envmap` of its 2048 x 1024 lat-long "
             "resampling), max_depth 16 (`benchmarks/bench_scenes.py`)",
    "smoke": "the Cornell box without its boxes and a smoke puff in the middle: a heterogeneous "
             "medium on a 64^3 grid (`.vol`), scale 8, albedo 0.9, Henyey-Greenstein g 0.3, in a "
             "`null` box, max_depth 8; ours: the volumetric path tracer (delta tracking on a "
             "majorant grid, ratio tracking), Mitsuba: `volpath` (`benchmarks/bench_scenes.py`)",
}
ENGINES = ("ours", "scalar_rgb", "llvm_ad_rgb")
OUR_SAMPLERS = ("sobol", "independent")
ADAPTIVE = "adaptive-sobol"                 # our adaptive renderer: ours/adaptive-sobol
ADAPTIVE_THRESHOLDS = (0.4, 0.3, 0.25, 0.2, 0.16, 0.13, 0.1, 0.08, 0.065, 0.05)
ADAPTIVE_START = 0.2                        # the first rung measured
ADAPTIVE_MIN_SPP = 16                       # raytrace.film.adaptive.DEFAULT_MIN_SPP
ADAPTIVE_MAX_SPP = 1024                     # as benchmarks/bench_adaptive.py
MIN_THRESHOLD = 0.005                       # the adaptive search extends its ladder down to here
SAMPLERS = ("independent", "multijitter")   # Mitsuba's default, and its best one here
SEARCH_SEEDS = 3


# ---------------------------------------------------------------- worker side
def _mitsuba_renderer(scene_name, variant, sampler):
    import bench_scenes
    import mitsuba as mi

    scene = mi.load_dict(bench_scenes.mitsuba_scene_dict(scene_name, variant, SIZE, sampler))

    def render(spp, seed, counts=False):
        """-> (image, the spp Mitsuba actually used: stratified samplers round up, {})."""
        image = np.array(mi.render(scene, spp=spp, seed=seed), np.float64)[..., :3]
        return image, scene.sensors()[0].sampler().sample_count(), {}
    return render


def _our_renderer(scene_name, sampler, max_spp=ADAPTIVE_MAX_SPP):
    """render(x, seed) -> (image, spp, extra). ``sampler`` ``adaptive-<sampler>``: the
    adaptive renderer, ``x`` its noise threshold, spp the mean over the pixels; else ``x``
    is the spp."""
    import bench_scenes
    import raytrace

    d, base = bench_scenes.our_scene(scene_name, SIZE)
    scene = raytrace.load_scene(d, base_dir=base)
    if sampler.startswith("adaptive-"):
        base_sampler = sampler.split("-", 1)[1]

        def render(threshold, seed, counts=False):
            image = raytrace.render(scene, noise_threshold=threshold, min_spp=ADAPTIVE_MIN_SPP,
                                    max_spp=max_spp, seed=seed, sampler=base_sampler,
                                    aovs=("samples",) if counts else ())
            extra = {"threshold": threshold, "stopped_by": image.info.stopped_by}
            if counts:        # the pixels that max_spp stopped, and their share of the samples
                n = image.aovs["samples"].astype(np.int64)
                capped = n >= max_spp
                extra.update(at_max=int(capped.sum()), at_max_share=float(n[capped].sum() / n.sum()))
            return np.asarray(image, np.float64), float(image.info.spp_mean), extra
        return render

    def render(spp, seed, counts=False):
        return np.asarray(raytrace.render(scene, spp=spp, seed=seed, sampler=sampler), np.float64), spp, {}
    return render


def worker(scene_name, renderer, spps, seed, save, max_spp=ADAPTIVE_MAX_SPP):
    """Render scene ``scene_name`` once per spp in ``spps`` (seeds ``seed``, ``seed + 1``,
    ...) after a warm-up; print one JSON line per render (spp, seconds, and the image to
    ``save`` when given). ``renderer``: ``ENGINE/SAMPLER`` (``ours/sobol``,
    ``scalar_rgb/multijitter``, ...); for ``ours/adaptive-sobol`` the entries of ``spps``
    are noise thresholds (``max_spp``: its cap), and a line also has the threshold, the
    mean spp, why the render stopped and, when saving, how many pixels ``max_spp``
    stopped and their share of the samples. ``BENCH_THREADS`` in the environment sets the
    thread count (Numba's, or Dr.Jit's thread pool); by default both use every core."""
    engine, sampler = renderer.split("/")
    threads = int(os.environ.get("BENCH_THREADS", "0"))
    if threads and engine == "ours":
        import numba
        numba.set_num_threads(threads)
    elif threads:
        import drjit
        drjit.set_thread_count(threads)
    adaptive = sampler.startswith("adaptive-")
    if engine == "ours":
        render = _our_renderer(scene_name, sampler, max_spp)
    else:
        render = _mitsuba_renderer(scene_name, engine, sampler)
    render(1.0 if adaptive else 2, seed + 1000)    # compile / JIT / load caches
    for k, spp in enumerate(spps):
        t0 = time.perf_counter()
        image, used, extra = render(spp, seed + k, counts=bool(save))
        seconds = time.perf_counter() - t0
        path = None
        if save:
            path = f"{save}_{k}.npy"
            np.save(path, image.astype(np.float32))
        print(json.dumps({"spp": used, "seconds": seconds, "image": path, **extra}), flush=True)


def first_render(seed):
    """Fresh-process latency: import, load and a 1-spp render -> JSON line."""
    t0 = time.perf_counter()
    import raytrace
    t1 = time.perf_counter()
    scene = raytrace.load_scene(SCENE)
    t2 = time.perf_counter()
    raytrace.render(scene, spp=1, seed=seed, filter="box")
    t3 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "load": t2 - t1, "render": t3 - t2}), flush=True)


# ---------------------------------------------------------------- driver side
def _number(x):
    """An spp (int) or a threshold (float) as the worker's command line takes it."""
    return str(int(x)) if isinstance(x, (int, np.integer)) else repr(float(x))


def run_worker(scene_name, renderer, spps, llvm, seed=0, save=None, extra_env=None,
               max_spp=ADAPTIVE_MAX_SPP):
    """``spps``: spp per render, or noise thresholds for the adaptive renderer."""
    env = dict(os.environ, **(extra_env or {}))
    if renderer.startswith("llvm_ad_rgb"):
        env["DRJIT_LIBLLVM_PATH"] = str(llvm)
    cmd = [sys.executable, __file__, "--worker", renderer, "--scene", scene_name,
           "--seed", str(seed), "--spps", ",".join(map(_number, spps))]
    if renderer == f"ours/{ADAPTIVE}":
        cmd += ["--max-spp", str(max_spp)]
    if save:
        cmd += ["--save", str(save)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{renderer} worker ({scene_name}) failed ({r.returncode}): "
                           f"{r.stderr[-2000:]}")
    # Mitsuba's warnings go to stdout too, and leave colour codes before our lines
    return [json.loads(line[line.index("{"):]) for line in r.stdout.splitlines()
            if line.rstrip().endswith("}") and "{" in line]


def reference(scene_name, ref_spp, llvm, variant):
    """Converged Mitsuba image of ``scene_name`` (mean, mean per-pixel variance of that
    mean), cached; re-rendered when the cache has fewer spp or shows another scene."""
    import bench_scenes

    path = REFERENCES[scene_name]
    key = bench_scenes.scene_key(scene_name, SIZE)
    if path.exists():
        with np.load(path) as f:
            same = "scene" not in f or str(f["scene"]) == key    # older caches: no key
            if same and int(f["spp"]) >= ref_spp:
                return f["mean"].astype(np.float64), float(f["var"])
    passes = 8
    per = math.ceil(ref_spp / passes)
    print(f"rendering the {scene_name} reference: {passes} x {per} spp with Mitsuba "
          f"{variant} ...", flush=True)
    t0 = time.perf_counter()
    rows = run_worker(scene_name, f"{variant}/independent", [per] * passes, llvm, seed=100,
                      save=OUT / f"ref_pass_{scene_name}")
    images = np.stack([np.load(r["image"]) for r in rows]).astype(np.float64)
    for r in rows:
        os.remove(r["image"])
    mean = images.mean(axis=0)
    var = float((images.var(axis=0, ddof=1) / passes).mean())
    np.savez_compressed(path, mean=mean.astype(np.float32), var=var, spp=per * passes,
                        variant=variant, scene=key)
    print(f"  done in {time.perf_counter() - t0:.0f} s", flush=True)
    return mean, var


def rmse(image, ref, ref_var):
    """RMSE over pixels and channels, the reference's own noise removed in quadrature."""
    return math.sqrt(max(np.mean((image - ref) ** 2) - ref_var, 0.0))


def spp_for_target(scene_name, renderer, target, ref, ref_var, llvm, first_spp):
    """The smallest spp at which a render reaches RMSE ``target`` (the root mean square
    over SEARCH_SEEDS seeds: one image's RMSE varies by +-5 % with the seed): from
    ``first_spp``, predict with RMSE ~ 1/sqrt(spp), then narrow down between the largest
    spp seen to miss and the smallest seen to reach it, to within 3 %. The error need not
    fall with every added sample: the first 2^k points of a (0, 2)-sequence are better
    stratified than the next few counts (on the glass scene our 16 spp reached 0.0240, 17
    spp 0.0241), so the power of two below the answer is measured too, when the search
    has not. Counts are the ones the renderer really used (Mitsuba's stratified samplers
    round some up). Returns (spp, rmse)."""
    seen, asked = {}, set()

    def measure(spp):
        asked.add(spp)
        rows = run_worker(scene_name, renderer, [spp] * SEARCH_SEEDS, llvm, seed=1,
                          save=OUT / f"bench_{scene_name}_{renderer.replace('/', '_')}")
        errors = [rmse(np.load(row["image"]), ref, ref_var) for row in rows]
        for row in rows:
            os.remove(row["image"])
        used = rows[0]["spp"]
        asked.update(range(min(spp, used), max(spp, used) + 1))   # all of these give `used`
        seen[used] = math.sqrt(np.mean(np.square(errors)))
        print(f"  {scene_name} {renderer}: {used} spp -> RMSE {seen[used]:.4f} (seeds: "
              f"{', '.join(f'{e:.4f}' for e in errors)}) in "
              f"{min(row['seconds'] for row in rows):.2f} s", flush=True)
        return used, seen[used]

    def or_power_of_two_below(hi):
        p2 = 1 << ((hi - 1).bit_length() - 1) if hi > 1 else 0
        if p2 >= 1 and p2 not in asked and p2 not in seen:
            used, err = measure(p2)
            if err <= target and used < hi:
                return used, err
        return hi, seen[hi]

    spp = first_spp
    for _ in range(16):
        used, err = measure(spp)
        lo = max((n for n, e in seen.items() if e > target), default=0)
        hi = min((n for n, e in seen.items() if e <= target), default=None)
        guess = max(1, math.ceil(used * (err / target) ** 2))
        if hi is None:
            spp = max(guess, lo + 1, max(asked) + 1 if lo >= max(asked) else 0)
            continue
        if hi - lo <= max(1, hi // 32):                     # within 3 %: done
            return or_power_of_two_below(hi)
        candidates = [guess, hi - max(1, hi // 32), (lo + hi) // 2] + list(range(hi - 1, lo, -1))
        fresh = [c for c in candidates if lo < c < hi and c not in asked and c not in seen]
        if not fresh:
            return or_power_of_two_below(hi)
        spp = fresh[0]
    raise RuntimeError(f"{scene_name} {renderer}: no spp found for RMSE {target}")


def threshold_for_target(scene_name, target, ref, ref_var, llvm, ladder, max_spp):
    """Our adaptive renderer's noise threshold that reaches RMSE ``target`` first (module
    docstring): the RMSE is measured as in ``spp_for_target`` (root mean square over
    SEARCH_SEEDS seeds, the same seeds). The ``ladder`` (thresholds) is walked from
    ADAPTIVE_START, the next rung predicted with RMSE ~ threshold, to the largest rung
    that reaches the target whose rung above misses it (or is the top of the ladder;
    below the ladder's end new rungs are added, down to MIN_THRESHOLD);
    then the bracket is bisected (geometric mean) until its ends are within 3 %. Returns
    (threshold, mean spp, rmse, {threshold: {"spp", "rmse", "seconds", "at_max",
    "at_max_share"}} of all the thresholds measured; ``at_max``: pixels that reached
    ``max_spp``, mean over the seeds, ``at_max_share``: their share of the samples); of the thresholds that reach the target, the one with the
    fewest samples (mean spp) counts: a smaller threshold only adds samples, so it is
    the fastest."""
    renderer = f"ours/{ADAPTIVE}"
    ladder = sorted(set(ladder), reverse=True)
    seen = {}

    def measure(threshold):
        if threshold in seen:
            return seen[threshold]["rmse"]
        rows = run_worker(scene_name, renderer, [threshold] * SEARCH_SEEDS, llvm, seed=1,
                          save=OUT / f"bench_{scene_name}_ours_{ADAPTIVE}", max_spp=max_spp)
        errors = [rmse(np.load(row["image"]), ref, ref_var) for row in rows]
        for row in rows:
            os.remove(row["image"])
        err = math.sqrt(np.mean(np.square(errors)))
        info = {"spp": float(np.mean([row["spp"] for row in rows])), "rmse": err,
                "seconds": min(row["seconds"] for row in rows),
                "at_max": float(np.mean([row["at_max"] for row in rows])),
                "at_max_share": float(np.mean([row["at_max_share"] for row in rows]))}
        seen[threshold] = info
        print(f"  {scene_name} {renderer}: threshold {threshold:.4g} -> mean {info['spp']:.1f} spp, "
              f"RMSE {err:.4f} (seeds: {', '.join(f'{e:.4f}' for e in errors)}; "
              f"{info['at_max']:.0f} pixels reached max_spp {max_spp}, "
              f"{info['at_max_share']:.0%} of the samples) in {info['seconds']:.2f} s", flush=True)
        return err

    def rung_near(threshold):
        """The largest rung at most ``threshold`` (the smallest rung when none is)."""
        return next((t for t in ladder if t <= threshold * 1.0001), ladder[-1])

    start = rung_near(ADAPTIVE_START)
    i = ladder.index(start)
    for _ in range(2 * len(ladder) + 8):
        err = measure(ladder[i])
        guess = ladder[i] * target / err                # RMSE ~ threshold: the predicted answer
        if err <= target:
            if i == 0 or ladder[i - 1] in seen and seen[ladder[i - 1]]["rmse"] > target:
                break
            j = ladder.index(rung_near(guess))
            i = j if j < i and ladder[j] not in seen else i - 1
        else:
            if i == len(ladder) - 1:                    # below the ladder: extend it
                lower = round(min(0.8 * ladder[i], guess), 4)
                if lower < MIN_THRESHOLD:
                    raise RuntimeError(f"{scene_name} {renderer}: RMSE {err:.4f} > {target} "
                                       f"at threshold {ladder[i]} (max_spp {max_spp} too small?)")
                ladder.append(lower)
            j = ladder.index(rung_near(guess))
            i = j if j > i and ladder[j] not in seen else i + 1
    else:
        raise RuntimeError(f"{scene_name} {renderer}: no threshold found for RMSE {target}")
    lo = ladder[i]                                      # reaches the target
    hi = ladder[i - 1] if i > 0 else None               # misses it (None: top of the ladder)
    while hi is not None and hi / lo > 1.03:
        mid = round(math.sqrt(hi * lo), 4)
        if not lo < mid < hi:
            break
        if measure(mid) <= target:
            lo = mid
        else:
            hi = mid
    passing = {t: v for t, v in seen.items() if v["rmse"] <= target}
    best = min(passing, key=lambda t: (passing[t]["spp"], -t))
    return best, passing[best]["spp"], passing[best]["rmse"], seen


def fresh_process_latency(cache_dir, shipped=True):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), RAYTRACE_PREBUILT="1" if shipped else "0")
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, __file__, "--first-render"], env=env,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    out = json.loads(r.stdout.splitlines()[-1])
    out["process"] = wall
    return out


def _names(text, allowed, what, parser):
    names = [x for x in text.split(",") if x]
    bad = [x for x in names if x not in allowed]
    if bad or not names:
        parser.exit(2, f"{parser.prog}: error: {what} must be a comma-separated list of "
                       f"{', '.join(allowed)} (got {text!r})\n")
    return names


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python benchmarks/bench_path.py",
        description="Benchmark our path tracer against Mitsuba 3 (scalar_rgb and, with "
                    "libLLVM, llvm_ad_rgb) on the Cornell box and a glass-knot scene "
                    "(256x256, box filter): time to a target RMSE.",
        epilog="libLLVM for llvm_ad_rgb: cd benchmarks/output && apt-get download libllvm19 "
               "&& dpkg -x libllvm19_*.deb llvm19 (run apt-get update first if the package "
               "is not found); --llvm or the default path then points at it and the llvm "
               "workers get DRJIT_LIBLLVM_PATH. See the module docstring.")
    p.add_argument("--scenes", default=",".join(SCENES),
                   help="scenes, comma-separated (default %(default)s)")
    p.add_argument("--rounds", type=int, default=5, help="timed rounds, best of (default 5)")
    p.add_argument("--target-rmse", type=float, default=0.024, help="error to reach (default 0.024)")
    p.add_argument("--ref-spp", type=int, default=8192, help="reference spp (default 8192)")
    p.add_argument("--llvm", type=pathlib.Path, default=DEFAULT_LLVM,
                   help="libLLVM.so for Mitsuba's llvm_ad_rgb, passed as DRJIT_LIBLLVM_PATH "
                        "(default: %(default)s)")
    p.add_argument("--only", choices=ENGINES, action="append",
                   help="renderers to run (repeatable; default all)")
    p.add_argument("--our-samplers", default=",".join(OUR_SAMPLERS),
                   help="our samplers, comma-separated (default %(default)s)")
    p.add_argument("--mitsuba-samplers", default=",".join(SAMPLERS),
                   help="Mitsuba samplers, comma-separated (default %(default)s: the default "
                        "sampler, and one whose stratification is comparable to ours)")
    p.add_argument("--no-latency", action="store_true", help="skip the cold/warm first-render runs")
    p.add_argument("--no-adaptive", action="store_true",
                   help="leave out the row of our adaptive renderer")
    p.add_argument("--adaptive-thresholds", default=",".join(map(str, ADAPTIVE_THRESHOLDS)),
                   help="the ladder of noise thresholds searched for our adaptive row, "
                        "comma-separated (default %(default)s; the bracket found is then "
                        "narrowed to 3 %%)")
    p.add_argument("--adaptive-max-spp", type=int, default=ADAPTIVE_MAX_SPP,
                   help="max_spp of our adaptive renders (default %(default)s; the report "
                        "says how many pixels reached it)")
    add_record_flag(p)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--scene", help=argparse.SUPPRESS)
    p.add_argument("--spps", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--save", help=argparse.SUPPRESS)
    p.add_argument("--max-spp", type=int, default=ADAPTIVE_MAX_SPP, help=argparse.SUPPRESS)
    p.add_argument("--first-render", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.worker:
        number = float if args.worker == f"ours/{ADAPTIVE}" else int
        return worker(args.scene, args.worker, [number(s) for s in args.spps.split(",")],
                      args.seed, args.save, args.max_spp)
    if args.first_render:
        return first_render(args.seed)
    if args.rounds < 1 or args.target_rmse <= 0:
        p.exit(2, f"{p.prog}: error: --rounds must be >= 1 and --target-rmse > 0\n")
    scenes = _names(args.scenes, SCENES, "--scenes", p)
    our_samplers = _names(args.our_samplers, OUR_SAMPLERS, "--our-samplers", p)
    try:
        ladder = [float(x) for x in args.adaptive_thresholds.split(",") if x]
    except ValueError:
        ladder = []
    if not ladder or min(ladder) <= 0 or args.adaptive_max_spp < ADAPTIVE_MIN_SPP:
        p.exit(2, f"{p.prog}: error: --adaptive-thresholds must be positive numbers and "
                  f"--adaptive-max-spp >= {ADAPTIVE_MIN_SPP}\n")
    try:
        importlib.import_module("mitsuba")
    except ImportError:
        skipped("bench_path", "Mitsuba 3 is not installed (pip install -e '.[reference]')")
        return 0

    started = time.perf_counter()
    other_load = OtherLoad().start()
    OUT.mkdir(parents=True, exist_ok=True)
    engines = list(args.only or ENGINES)
    if "llvm_ad_rgb" in engines and not args.llvm.exists():
        print(f"no libLLVM at {args.llvm}: skipping llvm_ad_rgb (see --help)", file=sys.stderr)
        engines.remove("llvm_ad_rgb")
    samplers = [x for x in args.mitsuba_samplers.split(",") if x]
    renderers = [f"{e}/{smp}" for e in engines
                 for smp in (our_samplers + ([] if args.no_adaptive else [ADAPTIVE])
                             if e == "ours" else samplers)]
    ref_variant = "llvm_ad_rgb" if args.llvm.exists() else "scalar_rgb"

    results = {}
    for name in scenes:
        ref, ref_var = reference(name, args.ref_spp, args.llvm, ref_variant)
        with np.load(REFERENCES[name]) as f:
            ref_info = {"spp": int(f["spp"]), "variant": str(f["variant"]) if "variant" in f else "?"}
        print(f"{name} reference ({ref_info['spp']} spp, {ref_info['variant']}): RMSE of its "
              f"own noise {math.sqrt(ref_var):.4f}", flush=True)
        spp, thresholds, ladders = {}, {}, {}
        for r in renderers:
            if r == f"ours/{ADAPTIVE}":
                t, mean_spp, err, ladders[r] = threshold_for_target(
                    name, args.target_rmse, ref, ref_var, args.llvm, ladder, args.adaptive_max_spp)
                spp[r], thresholds[r] = (mean_spp, err), t
            else:
                spp[r] = spp_for_target(name, r, args.target_rmse, ref, ref_var, args.llvm, 64)
        times = {r: [] for r in renderers}
        for k in range(args.rounds):                 # interleaved: load drifts hit all alike
            for r in renderers:
                row, = run_worker(name, r, [thresholds.get(r, spp[r][0])], args.llvm,
                                  seed=10 + k, max_spp=args.adaptive_max_spp)
                times[r].append(row["seconds"])
                what = (f"threshold {thresholds[r]:.4g}, mean {row['spp']:.1f} spp" if r in thresholds
                        else f"{spp[r][0]} spp")
                print(f"round {k + 1}: {name} {r} {what} in {row['seconds']:.2f} s", flush=True)
        results[name] = {"spp": spp, "times": times, "ref_var": ref_var, "ref": ref_info,
                         "thresholds": thresholds, "ladders": ladders}
    latency = {}
    if any(r.startswith("ours/") for r in renderers) and not args.no_latency:
        with tempfile.TemporaryDirectory() as cold_dir:
            latency["cold, shipped kernels"] = fresh_process_latency(cold_dir)
        with tempfile.TemporaryDirectory() as cold_dir:
            latency["cold, compiling"] = fresh_process_latency(cold_dir, shipped=False)
            latency["warm"] = min((fresh_process_latency(cold_dir) for _ in range(args.rounds)),
                                  key=lambda d: d["process"])
    other_load.stop()
    print(other_load.describe())
    write_results(args, scenes, renderers, results, latency, time.perf_counter() - started,
                  other_load)


def _best(times, engine):
    """(renderer, best time) of ``engine``'s fastest sampler, or (None, nan)."""
    mine = {r: min(t) for r, t in times.items() if r.split("/")[0] == engine}
    if not mine:
        return None, float("nan")
    r = min(mine, key=mine.get)
    return r, mine[r]


OUTLIER = 0.75     # a best round below this fraction of its renderer's median is flagged


def outlier_rounds(times):
    """[(renderer, best, median)] of the renderers whose best round is below ``OUTLIER``
    times the median of their rounds (three or more). The headline takes the best round,
    which assumes that other work only ever slows a run down; a round far faster than the
    others does not fit that (2026-12-02: one round ran our glass renders twice as fast as
    the four after it), so the report names it and gives the ratios of the medians too."""
    out = []
    for r, t in times.items():
        if len(t) >= 3:
            best, median = min(t), float(np.median(t))
            if best < OUTLIER * median:
                out.append((r, best, median))
    return out


def _median_ratio(times, engine):
    """ours / ``engine``: the medians of each one's best sampler (by median), or nan."""
    def best_median(e):
        meds = [float(np.median(t)) for r, t in times.items() if r.split("/")[0] == e]
        return min(meds) if meds else float("nan")
    return best_median("ours") / best_median(engine)


def _label(r, threshold=None):
    engine, sampler = r.split("/")
    if engine == "ours":
        if sampler == ADAPTIVE:
            return f"ours (Numba), adaptive, threshold {threshold:.4g}, Owen-scrambled Sobol (mean spp)"
        return {"sobol": "ours (Numba), Owen-scrambled Sobol",
                "independent": "ours (Numba), `independent` sampler"}.get(sampler, f"ours, {sampler}")
    return f"Mitsuba 3 `{engine}`, `{sampler}` sampler"


def _short(r, thresholds):
    """Our row ``r`` in a sentence: ``sobol``, ``independent``, ``adaptive T=0.22 (sobol)``."""
    sampler = r.split("/")[1]
    if sampler == ADAPTIVE:
        return f"adaptive T={thresholds[r]:.4g} ({sampler.split('-', 1)[1]})"
    return sampler


def _spp_text(n):
    return f"{n:.1f}" if isinstance(n, float) else str(n)


def write_results(args, scenes, renderers, results, latency, elapsed, other_load):
    load = os.getloadavg()
    flags = ""
    if args.scenes != ",".join(SCENES):
        flags += f" --scenes {args.scenes}"
    if args.ref_spp != 8192:
        flags += f" --ref-spp {args.ref_spp}"
    if args.target_rmse != 0.024:
        flags += f" --target-rmse {args.target_rmse}"
    if args.our_samplers != ",".join(OUR_SAMPLERS):
        flags += f" --our-samplers {args.our_samplers}"
    if args.mitsuba_samplers != ",".join(SAMPLERS):
        flags += f" --mitsuba-samplers {args.mitsuba_samplers}"
    if args.only:
        flags += "".join(f" --only {e}" for e in args.only)
    if args.no_latency:
        flags += " --no-latency"
    if args.no_adaptive:
        flags += " --no-adaptive"
    if args.adaptive_thresholds != ",".join(map(str, ADAPTIVE_THRESHOLDS)):
        flags += f" --adaptive-thresholds {args.adaptive_thresholds}"
    if args.adaptive_max_spp != ADAPTIVE_MAX_SPP:
        flags += f" --adaptive-max-spp {args.adaptive_max_spp}"
    target = args.target_rmse
    lines = [
        f"## Path tracer vs Mitsuba 3: {', '.join(TITLES[s] for s in scenes)}; 256 x 256",
        "",
        f"Headline: time to RMSE {target}, ours with its best row (sampler, or the adaptive "
        f"renderer at its best threshold; named) / Mitsuba with its best sampler (below 1: "
        f"ours is faster).",
        "",
        "| scene | ours / `llvm_ad_rgb` | ours / `scalar_rgb` |",
        "|---|---|---|",
    ]
    for name in scenes:
        times, thresholds = results[name]["times"], results[name]["thresholds"]
        ours, t_ours = _best(times, "ours")
        cells = []
        for engine in ("llvm_ad_rgb", "scalar_rgb"):
            theirs, t = _best(times, engine)
            if ours is None or theirs is None:
                cells.append("not run")
            else:
                cells.append(f"**{t_ours / t:.2f}** (ours `{_short(ours, thresholds)}` {t_ours:.2f} s, "
                             f"`{theirs.split('/')[1]}` {t:.2f} s)")
        lines.append(f"| {TITLES[name]} | {cells[0]} | {cells[1]} |")
    for name in scenes:
        times = results[name]["times"]
        odd = outlier_rounds(times)
        if odd:
            lines += ["", f"**Outlier round** ({TITLES[name]}): " + "; ".join(
                f"`{r}` best {b:.2f} s against a median of {m:.2f} s" for r, b, m in odd)
                + ". With the medians of the rounds: " + ", ".join(
                f"ours / `{e}` {_median_ratio(times, e):.2f}" for e in ("llvm_ad_rgb", "scalar_rgb")
                if math.isfinite(_median_ratio(times, e))) + "."]
    if other_load.busy:
        lines += ["", f"**Not a quiet machine**: {other_load.describe()}. Other work slows "
                      f"both renderers, by different amounts, so these ratios are not those "
                      f"of a quiet machine; run again."]
    lines += [
        "",
        f"Command: `python benchmarks/bench_path.py --rounds {args.rounds}{flags}`; "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}; "
        f"{cpu_name()} ({vector_isa()}; Mitsuba's `llvm_ad_rgb` vectorises across paths "
        f"as wide as the CPU allows), {os.cpu_count()} cores shared with "
        f"other engineers ({other_load.describe()}; load average {load[0]:.1f} / "
        f"{load[1]:.1f} / {load[2]:.1f} at the end, this run's own processes included); "
        f"Python {platform.python_version()}; the whole run took {elapsed / 60:.1f} min.",
        "",
        f"spp: the smallest at which the RMSE (all pixels and channels, linear; root mean "
        f"square over {SEARCH_SEEDS} seeds) against a converged Mitsuba reference (its own "
        f"noise removed in quadrature) is <= {target}. Wall time: one render at that spp, "
        f"best of {args.rounds} interleaved rounds, each renderer in its own warmed-up "
        f"process (compile and JIT time excluded). Box filter on both sides."
        + ("" if args.no_adaptive or not any(results[n]["thresholds"] for n in scenes) else
           f" Our adaptive row: `min_spp` {ADAPTIVE_MIN_SPP}, `max_spp` "
           f"{args.adaptive_max_spp}, the noise threshold that reaches the target with the "
           f"fewest samples (searched on the ladder {args.adaptive_thresholds}, then narrowed "
           f"to 3 %; the same seeds, reference and RMSE), its spp the mean over the pixels "
           f"(its image leaves out the quarter of the samples that only decide when a pixel "
           f"stops: `docs/adaptive-sampling.md`); the same rounds."),
    ]
    for name in scenes:
        spp, times, ref_var, ref_info = (results[name][k] for k in ("spp", "times", "ref_var", "ref"))
        thresholds, ladders = results[name]["thresholds"], results[name]["ladders"]
        best = {r: min(times[r]) for r in renderers}
        ours, t_ours = _best(times, "ours")
        lines += [
            "", f"### {TITLES[name]}", "",
            f"{DESCRIPTIONS[name]}. Reference: Mitsuba `{ref_info['variant']}`, "
            f"{ref_info['spp']} spp (`independent`), its own noise RMSE {math.sqrt(ref_var):.4f}.",
            "",
            "| renderer | spp | RMSE | wall time (best) | all rounds | M paths/s | time vs ours (best) |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in renderers:
            n, err = spp[r]
            ratio = best[r] / t_ours if ours else float("nan")
            lines.append(f"| {_label(r, thresholds.get(r))} | {_spp_text(n)} | {err:.4f} | "
                         f"{best[r]:.2f} s | {', '.join(f'{t:.2f}' for t in times[r])} | "
                         f"{SIZE * SIZE * n / best[r] / 1e6:.2f} | {ratio:.2f}x |")
        for r, seen in ladders.items():
            chosen = seen[thresholds[r]]
            lines += ["", "Adaptive thresholds measured (threshold: mean spp, RMSE, best of the "
                      "search's renders): " + "; ".join(
                          f"{t:.4g}: {v['spp']:.1f}, {v['rmse']:.4f}, {v['seconds']:.2f} s"
                          for t, v in sorted(seen.items(), reverse=True))
                      + f". Chosen: {thresholds[r]:.4g}; there {chosen['at_max']:.0f} pixels "
                      f"({chosen['at_max'] / SIZE ** 2:.2%}) reached `max_spp` "
                      f"{args.adaptive_max_spp}, with {chosen['at_max_share']:.0%} of the "
                      f"samples (mean over the seeds)."]
        if ours:
            lines.append("")
            sobol = "ours/sobol" if "ours/sobol" in best else None
            if sobol and f"ours/{ADAPTIVE}" in best:
                a = f"ours/{ADAPTIVE}"
                lines.append(f"- ours `{_short(a, thresholds)}` / ours `sobol` (uniform) time to "
                             f"RMSE {target}: {best[a] / best[sobol]:.2f}")
            for r in renderers:
                if not r.startswith("ours/"):
                    lines.append(f"- ours (`{_short(ours, thresholds)}`) / Mitsuba `{r}` time to RMSE "
                                 f"{target}: {t_ours / best[r]:.2f}")
            if "scalar_rgb/independent" in best:
                ok = t_ours <= 0.5 * best["scalar_rgb/independent"]
                lines.append(f"- target (at most half of `scalar_rgb`'s time, Mitsuba's default "
                             f"sampler): {'met' if ok else 'NOT met'}")
    lines += ["", "Notes: our default samples are Owen-scrambled Sobol points (randomised "
              "QMC), Mitsuba's default sampler is `independent`; the `multijitter` rows "
              "compare renderers at a similar error per sample, so they isolate the speed "
              "per path, and our `independent` rows compare with Mitsuba's default at the "
              "same error per sample. Mitsuba's stratified samplers round some counts up "
              "(`multijitter`: 17-19 spp become 20), so their spp can overshoot the target. "
              "The machine is shared: runs are interleaved and the best round counts; the "
              "spread of the rounds shows the load."]
    if latency:
        lines += ["", "First render in a fresh process (`import raytrace`, load "
                  "`scenes/cornell_box.json`, render 256 x 256 at 1 spp):", "",
                  "| Numba cache | import | load | first render | whole process |",
                  "|---|---|---|---|---|"]
        for k, d in latency.items():
            lines.append(f"| {k} | {d['import']:.2f} s | {d['load']:.2f} s | "
                         f"{d['render']:.2f} s | {d['process']:.2f} s |")
    text = "\n".join(lines) + "\n"
    print(text)
    write_report("path", text, args.record)


if __name__ == "__main__":
    main()

"""Path tracer vs Mitsuba 3 on the Cornell box: time to a given error, paths per second.

    python benchmarks/bench_path.py [--rounds 5] [--target-rmse 0.024] [--record]

scenes/cornell_box.json (Mitsuba's ``mi.cornell_box()``) at 256 x 256, max_depth 8, box
pixel filter on both sides. Each renderer runs in its own process: ours, Mitsuba
``scalar_rgb`` and, when a usable libLLVM is found, Mitsuba ``llvm_ad_rgb``, each Mitsuba
variant with its default ``independent`` sampler and with ``multijitter`` (stratified
like our Owen-scrambled Sobol points, so the error per sample is comparable; see
``--mitsuba-samplers``). For each it reports

- the smallest spp whose RMSE against a converged reference is at most
  ``--target-rmse`` (root mean square over 3 seeds; the reference's own noise is
  subtracted in quadrature), and the wall time of one render at that spp, best of
  ``--rounds`` rounds, renderers interleaved within a round (the 2 cores are shared);
- paths per second = 256 * 256 * spp / that time;
- for ours also the first render in a fresh process with an empty (cold) and a filled
  (warm) Numba cache: import, scene load and a 1-spp render.

The reference (Mitsuba, 8192 spp unless ``--ref-spp``) is cached in
benchmarks/output/cornell_box_256_reference.npz. Results go to
benchmarks/output/results/path.md (with ``--record`` also benchmarks/results/path.md).
Skips, and says so, when Mitsuba 3 is not installed (the ``reference`` extra).

Mitsuba's llvm variant crashes with Debian 12's libLLVM 15. Unpack LLVM 19 without
installing it:  apt-get update; apt-get download libllvm19;
dpkg -x libllvm19_*.deb benchmarks/output/llvm19  (the default ``--llvm`` path).
"""
import argparse
import datetime
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

from reports import add_record_flag, cpu_name, skipped, write_report

REPO = pathlib.Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "output"
SCENE = REPO / "scenes" / "cornell_box.json"
REFERENCE = OUT / "cornell_box_256_reference.npz"
DEFAULT_LLVM = OUT / "llvm19" / "usr" / "lib" / "x86_64-linux-gnu" / "libLLVM.so.19.1"
SIZE = 256
ENGINES = ("ours", "scalar_rgb", "llvm_ad_rgb")
SAMPLERS = ("independent", "multijitter")   # Mitsuba's default, and its best one here
SEARCH_SEEDS = 3


# ---------------------------------------------------------------- worker side
def _mitsuba_renderer(variant, sampler):
    sys.path.insert(0, str(REPO / "tests"))
    from mitsuba_path_scenes import cornell_box_scene, mitsuba_path_scene_dict
    import mitsuba as mi

    d = mitsuba_path_scene_dict(cornell_box_scene(SIZE, "box"), SCENE.parent, variant=variant)
    d["sensor"]["sampler"]["type"] = sampler
    scene = mi.load_dict(d)

    def render(spp, seed):
        """-> (image, the spp Mitsuba actually used: stratified samplers round up)."""
        image = np.array(mi.render(scene, spp=spp, seed=seed), np.float64)[..., :3]
        return image, scene.sensors()[0].sampler().sample_count()
    return render


def _our_renderer():
    sys.path.insert(0, str(REPO / "tests"))
    from mitsuba_path_scenes import cornell_box_scene
    import raytrace

    scene = raytrace.load_scene(cornell_box_scene(SIZE, "box"), base_dir=SCENE.parent)

    def render(spp, seed):
        return raytrace.render(scene, spp=spp, seed=seed).astype(np.float64), spp
    return render


def worker(renderer, spps, seed, save):
    """Render once per spp in ``spps`` (seeds ``seed``, ``seed + 1``, ...) after a warm-up;
    print one JSON line per render (spp, seconds, and the image to ``save`` when given).
    ``renderer``: ``ours`` or ``VARIANT/SAMPLER`` (Mitsuba)."""
    if renderer == "ours":
        render = _our_renderer()
    else:
        variant, sampler = renderer.split("/")
        render = _mitsuba_renderer(variant, sampler)
    render(2, seed + 1000)                         # compile / JIT / load caches
    for k, spp in enumerate(spps):
        t0 = time.perf_counter()
        image, used = render(spp, seed + k)
        seconds = time.perf_counter() - t0
        path = None
        if save:
            path = f"{save}_{k}.npy"
            np.save(path, image.astype(np.float32))
        print(json.dumps({"spp": used, "seconds": seconds, "image": path}), flush=True)


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
def run_worker(renderer, spps, llvm, seed=0, save=None, extra_env=None):
    env = dict(os.environ, **(extra_env or {}))
    if renderer.startswith("llvm_ad_rgb"):
        env["DRJIT_LIBLLVM_PATH"] = str(llvm)
    cmd = [sys.executable, __file__, "--worker", renderer, "--seed", str(seed),
           "--spps", ",".join(map(str, spps))]
    if save:
        cmd += ["--save", str(save)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{renderer} worker failed ({r.returncode}): {r.stderr[-2000:]}")
    # Mitsuba's warnings go to stdout too, and leave colour codes before our lines
    return [json.loads(line[line.index("{"):]) for line in r.stdout.splitlines()
            if line.rstrip().endswith("}") and "{" in line]


def reference(ref_spp, llvm, variant):
    """Converged Mitsuba image (mean, mean per-pixel variance of that mean), cached."""
    if REFERENCE.exists():
        with np.load(REFERENCE) as f:
            if int(f["spp"]) >= ref_spp:
                return f["mean"].astype(np.float64), float(f["var"])
    passes = 8
    per = math.ceil(ref_spp / passes)
    print(f"rendering the reference: {passes} x {per} spp with Mitsuba {variant} ...", flush=True)
    rows = run_worker(f"{variant}/independent", [per] * passes, llvm, seed=100,
                      save=OUT / "ref_pass")
    images = np.stack([np.load(r["image"]) for r in rows]).astype(np.float64)
    for r in rows:
        os.remove(r["image"])
    mean = images.mean(axis=0)
    var = float((images.var(axis=0, ddof=1) / passes).mean())
    np.savez_compressed(REFERENCE, mean=mean.astype(np.float32), var=var, spp=per * passes)
    return mean, var


def rmse(image, ref, ref_var):
    """RMSE over pixels and channels, the reference's own noise removed in quadrature."""
    return math.sqrt(max(np.mean((image - ref) ** 2) - ref_var, 0.0))


def spp_for_target(renderer, target, ref, ref_var, llvm, first_spp):
    """The smallest spp at which a render reaches RMSE ``target`` (the root mean square
    over SEARCH_SEEDS seeds: one image's RMSE varies by +-5 % with the seed): from
    ``first_spp``, predict with RMSE ~ 1/sqrt(spp), then narrow down between the largest
    spp seen to miss and the smallest seen to reach it, to within 3 %. Counts are the
    ones the renderer really used (Mitsuba's stratified samplers round some up).
    Returns (spp, rmse)."""
    seen, asked = {}, set()

    def measure(spp):
        asked.add(spp)
        rows = run_worker(renderer, [spp] * SEARCH_SEEDS, llvm, seed=1,
                          save=OUT / f"bench_{renderer.replace('/', '_')}")
        errors = [rmse(np.load(row["image"]), ref, ref_var) for row in rows]
        for row in rows:
            os.remove(row["image"])
        used = rows[0]["spp"]
        asked.update(range(min(spp, used), max(spp, used) + 1))   # all of these give `used`
        seen[used] = math.sqrt(np.mean(np.square(errors)))
        print(f"  {renderer}: {used} spp -> RMSE {seen[used]:.4f} (seeds: "
              f"{', '.join(f'{e:.4f}' for e in errors)}) in "
              f"{min(row['seconds'] for row in rows):.2f} s", flush=True)
        return used, seen[used]

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
            return hi, seen[hi]
        candidates = [guess, hi - max(1, hi // 32), (lo + hi) // 2] + list(range(hi - 1, lo, -1))
        fresh = [c for c in candidates if lo < c < hi and c not in asked and c not in seen]
        if not fresh:
            return hi, seen[hi]
        spp = fresh[0]
    raise RuntimeError(f"{renderer}: no spp found for RMSE {target}")


def fresh_process_latency(cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, __file__, "--first-render"], env=env,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    out = json.loads(r.stdout.splitlines()[-1])
    out["process"] = wall
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python benchmarks/bench_path.py",
                                description="Benchmark our path tracer against Mitsuba 3 "
                                            "on the Cornell box (256x256, box filter).")
    p.add_argument("--rounds", type=int, default=5, help="timed rounds, best of (default 5)")
    p.add_argument("--target-rmse", type=float, default=0.024, help="error to reach (default 0.024)")
    p.add_argument("--ref-spp", type=int, default=8192, help="reference spp (default 8192)")
    p.add_argument("--llvm", type=pathlib.Path, default=DEFAULT_LLVM,
                   help="libLLVM.so for Mitsuba's llvm_ad_rgb (default: %(default)s)")
    p.add_argument("--only", choices=ENGINES, action="append",
                   help="renderers to run (repeatable; default all)")
    p.add_argument("--mitsuba-samplers", default=",".join(SAMPLERS),
                   help="Mitsuba samplers, comma-separated (default %(default)s: the default "
                        "sampler, and one whose stratification is comparable to ours)")
    p.add_argument("--no-latency", action="store_true", help="skip the cold/warm first-render runs")
    add_record_flag(p)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--spps", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--save", help=argparse.SUPPRESS)
    p.add_argument("--first-render", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.worker:
        return worker(args.worker, [int(s) for s in args.spps.split(",")], args.seed, args.save)
    if args.first_render:
        return first_render(args.seed)
    if args.rounds < 1 or args.target_rmse <= 0:
        p.exit(2, f"{p.prog}: error: --rounds must be >= 1 and --target-rmse > 0\n")
    try:
        import mitsuba  # noqa: F401
    except ImportError:
        skipped("bench_path", "Mitsuba 3 is not installed (pip install -e '.[reference]')")
        return 0

    OUT.mkdir(parents=True, exist_ok=True)
    engines = list(args.only or ENGINES)
    if "llvm_ad_rgb" in engines and not args.llvm.exists():
        print(f"no libLLVM at {args.llvm}: skipping llvm_ad_rgb (see --help)", file=sys.stderr)
        engines.remove("llvm_ad_rgb")
    samplers = [x for x in args.mitsuba_samplers.split(",") if x]
    renderers = [e if e == "ours" else f"{e}/{smp}" for e in engines
                 for smp in (["-"] if e == "ours" else samplers)]
    ref_variant = "llvm_ad_rgb" if args.llvm.exists() else "scalar_rgb"
    ref, ref_var = reference(args.ref_spp, args.llvm, ref_variant)
    print(f"reference: RMSE of its own noise {math.sqrt(ref_var):.4f}", flush=True)

    spp = {}
    for r in renderers:
        spp[r] = spp_for_target(r, args.target_rmse, ref, ref_var, args.llvm, 64)
    times = {r: [] for r in renderers}
    for k in range(args.rounds):                 # interleaved: load drifts hit all alike
        for r in renderers:
            row, = run_worker(r, [spp[r][0]], args.llvm, seed=10 + k)
            times[r].append(row["seconds"])
            print(f"round {k + 1}: {r} {spp[r][0]} spp in {row['seconds']:.2f} s", flush=True)
    latency = {}
    if "ours" in renderers and not args.no_latency:
        with tempfile.TemporaryDirectory() as cold_dir:
            latency["cold"] = fresh_process_latency(cold_dir)
            latency["warm"] = min((fresh_process_latency(cold_dir) for _ in range(args.rounds)),
                                  key=lambda d: d["process"])
    write_results(args, renderers, spp, times, latency, ref_var)


def write_results(args, renderers, spp, times, latency, ref_var):
    load = os.getloadavg()
    lines = [
        "## Path tracer vs Mitsuba 3: Cornell box 256 x 256",
        "",
        f"Command: `python benchmarks/bench_path.py --rounds {args.rounds}"
        f"{' --mitsuba-samplers ' + args.mitsuba_samplers if args.mitsuba_samplers != ','.join(SAMPLERS) else ''}`; "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}; "
        f"{cpu_name()}, {os.cpu_count()} cores shared with "
        f"other engineers (load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
        f"at the end); Python {platform.python_version()}.",
        "",
        f"`scenes/cornell_box.json` = `mi.cornell_box()`, max_depth 8, box filter on both "
        f"sides. spp: the smallest at which the RMSE (all pixels and channels, linear; root "
        f"mean square over {SEARCH_SEEDS} seeds) against a converged Mitsuba reference (its "
        f"own noise, RMSE {math.sqrt(ref_var):.4f}, removed in quadrature) is <= "
        f"{args.target_rmse}. Wall time: one render at that spp, best of {args.rounds} interleaved rounds, "
        f"each renderer in its own warmed-up process (compile and JIT time excluded).",
        "",
        "| renderer | spp | RMSE | wall time (best) | all rounds | M paths/s | time vs ours |",
        "|---|---|---|---|---|---|---|",
    ]
    best = {r: min(times[r]) for r in renderers}
    for r in renderers:
        n, err = spp[r]
        ratio = best[r] / best["ours"] if "ours" in best else float("nan")
        if r == "ours":
            name = "ours (Numba, Owen-scrambled Sobol)"
        else:
            variant, sampler = r.split("/")
            name = f"Mitsuba 3 `{variant}`, `{sampler}` sampler"
        lines.append(f"| {name} | {n} | {err:.4f} | {best[r]:.2f} s | "
                     f"{', '.join(f'{t:.2f}' for t in times[r])} | "
                     f"{SIZE * SIZE * n / best[r] / 1e6:.2f} | {ratio:.2f}x |")
    if "ours" in best:
        lines.append("")
        for r in renderers:
            if r != "ours":
                lines.append(f"- ours / Mitsuba `{r}` time to RMSE {args.target_rmse}: "
                             f"{best['ours'] / best[r]:.2f}")
        if "scalar_rgb/independent" in best:
            ok = best["ours"] <= 0.5 * best["scalar_rgb/independent"]
            lines.append(f"- target (at most half of `scalar_rgb`'s time, Mitsuba's default "
                         f"sampler): {'met' if ok else 'NOT met'}")
    lines += ["", "Notes: our samples are Owen-scrambled Sobol points (randomised QMC), "
              "Mitsuba's default sampler is `independent`; the `multijitter` rows compare "
              "renderers at a similar error per sample, so they isolate the speed per path. "
              "Mitsuba's stratified samplers round some counts up (`multijitter`: 17-19 spp "
              "become 20), so their spp can overshoot the target. The machine is shared: "
              "runs are interleaved and the best round counts; the spread of the rounds "
              "shows the load."]
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

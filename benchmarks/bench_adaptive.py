r"""Adaptive sampling against uniform Sobol sampling: samples and time to the same error
(errors against Mitsuba references), and the bias of adaptive images.

    python benchmarks/bench_adaptive.py [--scenes cornell,glass] [--seeds 3] [--ref-spp 32768]
                                        [--part savings|bias|all] [--bias-seeds 16] [--record]

**Savings** (``benchmarks/bench_scenes.py``'s Cornell box and glass knot, 256 x 256, box
filter). Per scene and seed (seeds 1 .. ``--seeds``), interleaved: uniform renders at 16,
32, ..., 1024 spp (the default ``sobol`` sampler) and adaptive renders on a ladder of
noise thresholds (``min_spp`` 16, ``max_spp`` 1024; the first seed walks it from 0.7 down
by a factor 0.72 until its RMSE is below 0.8 times the smallest target, keeping one
threshold of those that stop at the pilot; the other seeds take the same ladder), each timed (wall time of
``raytrace.render``, warm kernels). Errors against a converged Mitsuba render (the
reference's own noise, per pixel, subtracted): RMSE over pixels and channels, and the
relative MSE of ``raytrace compare`` (``mean(d^2 / (|ref| + 0.01)^2)``, pbrt-v4's MRSE);
over the seeds, the root mean square of the RMSE and the mean of the relMSE. For each
target error (RMSE 0.024, 0.01, 0.005, and the relMSE that uniform sampling has where it
reaches those) the uniform spp, the adaptive mean spp and both times that reach it are
interpolated in log-log between the measured points (uniform: powers of two only, which
credits uniform sampling with counts between them at the quality of the line through
its neighbours); saving = uniform / adaptive (above 1: adaptive wins). Time per render:
the best over the seeds (other work only slows a render down), interpolated in spp like
the counts; beside it the CPU time of the process (both threads), which a busy machine
disturbs less (but which does not see threads left idle at the end of a kernel call).

Beside each adaptive threshold, the allocation it made is compared with the
**variance-optimal** one at the same mean spp: ``n_i`` proportional to each pixel's
standard deviation (what minimises the squared error of independent samples), that
deviation taken from the 1024-spp uniform render of another seed (an oracle an adaptive
renderer does not have), rounded to powers of two like ours. Its image needs no render:
a pixel's first ``n`` samples are the same in every power-of-two pattern, so it is
picked per pixel from the uniform renders.

**Bias** (``--part bias``): six scenes of 64 x 64 pixels with Mitsuba references
(:func:`bias_scenes`), ``--bias-seeds`` seeds each, adaptive at two thresholds (those at
which the scene takes about 48 and 160 samples per pixel on average) with both samplers; the channel means of the mean image over the seeds against the reference, in
standard errors (from the spread over the seeds and the reference's own noise), and
the relative MSE of the two half-means against what noise explains
(``tests/test_path_vs_mitsuba.compare``). The negative control renders the same with
``raytrace.film.adaptive.OWN_SAMPLES`` (each pixel judged on its own samples, all of
which the image keeps): it must be caught somewhere.

References (Mitsuba ``llvm_ad_rgb`` when ``benchmarks/output/llvm19`` holds a libLLVM, else
``scalar_rgb``; ``independent`` sampler, 16 passes, the per-pixel variance kept) are cached
in ``benchmarks/output/`` (``<scene>_256_reference_pixels.npz``, ``bias_<scene>_64.npz``):
the first run renders them (about 20 minutes each at 256 x 256 on a busy 2-core
machine). Prints the CPU and the load; the report goes to
``benchmarks/output/results/adaptive.md`` (``--record``: also ``benchmarks/results/``).
Skips, saying so, without Mitsuba.
"""
import argparse
import datetime
import json
import math
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

from reports import OtherLoad, add_record_flag, cpu_name, skipped, write_report

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "output"
LLVM = OUT / "llvm19" / "usr" / "lib" / "x86_64-linux-gnu" / "libLLVM.so.19.1"
SIZE = 256
SCENES = ("cornell", "glass")
TITLES = {"cornell": "Cornell box", "glass": "glass knot under the sky"}
UNIFORM = (16, 32, 64, 128, 256, 512, 1024)
FIRST_THRESHOLD, STEP = 0.7, 0.72   # the ladder: 0.7, 0.5, 0.36, ... (module docstring)
MIN_SPP, MAX_SPP = 16, 1024
RMSE_TARGETS = (0.024, 0.01, 0.005)
RELMSE_EPS = 0.01                      # raytrace.grade.metrics.RELMSE_EPS
BIAS_SIZE = 64
BIAS_SPP = (48, 160)                   # the two thresholds: about these mean spp (seed 99)
BIAS_UNIFORM_SPP = 64                  # the uniform baseline
BIAS_MAX_SPP = 512
Z = 4.0                                # |z| above this: a bias (t with 15 dof: p ~ 0.001)


# ---------------------------------------------------------------- references
def _variant():
    return "llvm_ad_rgb" if LLVM.exists() else "scalar_rgb"


def _mitsuba_env():
    env = dict(os.environ)
    if LLVM.exists():
        env["DRJIT_LIBLLVM_PATH"] = str(LLVM)
    return env


def reference(name, spp, passes=16):
    """(mean (H, W, 3), variance of that mean per pixel (H, W, 3)) of benchmark scene
    ``name`` by Mitsuba, cached; re-rendered when the scene changed or more spp are asked."""
    import bench_path
    import bench_scenes
    path = OUT / f"{name}_{SIZE}_reference_pixels.npz"
    key = bench_scenes.scene_key(name, SIZE)
    if path.exists():
        with np.load(path) as f:
            if str(f["scene"]) == key and int(f["spp"]) >= spp:
                return f["mean"].astype(np.float64), f["pixel_var"].astype(np.float64), int(f["spp"]), str(f["variant"])
    per = math.ceil(spp / passes)
    variant = _variant()
    print(f"rendering the {name} reference: {passes} x {per} spp with Mitsuba {variant} ...", flush=True)
    rows = bench_path.run_worker(name, f"{variant}/independent", [per] * passes, LLVM, seed=100,
                                 save=OUT / f"adaptive_ref_{name}")
    images = np.stack([np.load(r["image"]) for r in rows]).astype(np.float64)
    for r in rows:
        os.remove(r["image"])
    mean, var = images.mean(axis=0), images.var(axis=0, ddof=1) / passes
    np.savez_compressed(path, mean=mean.astype(np.float32), pixel_var=var.astype(np.float32),
                        spp=per * passes, variant=variant, scene=key)
    return mean, var, per * passes, variant


def errors(image, ref, ref_var):
    """(RMSE, relMSE) of ``image`` against ``ref``, the reference's noise subtracted."""
    d2 = (np.asarray(image, np.float64) - ref) ** 2
    w = 1.0 / (np.abs(ref) + RELMSE_EPS) ** 2
    return math.sqrt(max(float(d2.mean() - ref_var.mean()), 0.0)), float((d2 * w).mean() - (ref_var * w).mean())


# ---------------------------------------------------------------- savings
def at_error(xs, es, target):
    """x where the curve (x, error) reaches ``target``, interpolated in log-log between the
    two measured points around the first crossing (errors falling with x); None when the
    curve does not cross it."""
    pts = sorted(zip(xs, es))
    for (x0, e0), (x1, e1) in zip(pts, pts[1:]):
        if e0 >= target >= e1 and e0 > e1 > 0:
            t = math.log(e0 / target) / math.log(e0 / e1)
            return math.exp(math.log(x0) + t * math.log(x1 / x0))
    return None


def curve_at(xs, ys, x):
    """y at x on the log-log line through the measured (x, y) around it."""
    pts = sorted(zip(xs, ys))
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            t = math.log(x / x0) / math.log(x1 / x0) if x1 > x0 else 0.0
            return math.exp(math.log(y0) + t * math.log(y1 / y0))
    return None


def pick_levels(images, counts):
    """The image whose pixel (i, j) is that of ``images[counts[i, j]]`` (uniform renders
    at power-of-two spp: a pixel's first n samples in any power-of-two pattern)."""
    out = np.zeros_like(next(iter(images.values())))
    for n, img in images.items():
        sel = counts == n
        out[sel] = img[sel]
    return out


def variance_optimal_counts(sigma, mean_spp):
    """Powers of two between MIN_SPP and MAX_SPP, proportional to ``sigma``, scaled to the
    mean ``mean_spp`` (bisection on the scale)."""
    lo, hi = 1e-9, 1e12
    for _ in range(100):
        lam = math.sqrt(lo * hi)
        with np.errstate(divide="ignore"):
            n = np.exp2(np.clip(np.round(np.log2(lam * sigma)), math.log2(MIN_SPP), math.log2(MAX_SPP)))
        if n.mean() > mean_spp:
            hi = lam
        else:
            lo = lam
    with np.errstate(divide="ignore"):
        return np.exp2(np.clip(np.round(np.log2(lo * sigma)), math.log2(MIN_SPP), math.log2(MAX_SPP)))


def savings(name, seeds, ref_spp):
    import bench_scenes
    import raytrace
    ref, ref_var, spp_ref, variant = reference(name, ref_spp)
    d, base = bench_scenes.our_scene(name, SIZE)
    scene = raytrace.load_scene(d, base_dir=base)
    raytrace.render(scene, spp=2, seed=999)
    raytrace.render(scene, noise_threshold=0.5, min_spp=MIN_SPP, max_spp=MAX_SPP, seed=999, width=16, height=16)
    uni = {n: {"rmse": [], "rel": [], "s": [], "cpu": []} for n in UNIFORM}
    ada = {}
    ladder = []
    levels, sigmas = {}, {}
    for seed in seeds:
        levels[seed] = {}
        for n in UNIFORM:
            t0, c0 = time.perf_counter(), time.process_time()
            img = raytrace.render(scene, spp=n, seed=seed, variance=n == UNIFORM[-1])
            uni[n]["s"].append(time.perf_counter() - t0)
            uni[n]["cpu"].append(time.process_time() - c0)
            levels[seed][n] = np.asarray(img, np.float64)
            if n == UNIFORM[-1]:     # sample variance / n: the variance of one sample, times 1/n
                sigmas[seed] = np.sqrt(np.asarray(img.variance, np.float64).mean(axis=-1) * n)
            e = errors(img, ref, ref_var)
            uni[n]["rmse"].append(e[0])
            uni[n]["rel"].append(e[1])
        t = FIRST_THRESHOLD
        for k in range(64):
            if seed != seeds[0]:                    # the ladder the first seed walked
                if k == len(ladder):
                    break
                t = ladder[k]
            t0, c0 = time.perf_counter(), time.process_time()
            img = raytrace.render(scene, noise_threshold=t, min_spp=MIN_SPP, max_spp=MAX_SPP, seed=seed,
                                  aovs=("samples",))
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
            if seed == seeds[0]:
                if img.info.spp_mean == MIN_SPP and ladder and ada[ladder[-1]]["spp"][-1] == MIN_SPP:
                    del ada[ladder.pop()]           # pilot only: keep the smallest such threshold
                ladder.append(t)
                ada[t] = {"rmse": [], "rel": [], "s": [], "cpu": [], "spp": [], "capped": [], "opt_rmse": [],
                          "opt_rel": []}
            ada[t]["s"].append(seconds)
            ada[t]["cpu"].append(cpu)
            e = errors(img, ref, ref_var)
            ada[t]["rmse"].append(e[0])
            ada[t]["rel"].append(e[1])
            ada[t]["spp"].append(img.info.spp_mean)
            ada[t]["capped"].append(float((img.aovs["samples"] >= MAX_SPP).mean()))
            if seed == seeds[0]:
                if e[0] < 0.8 * min(RMSE_TARGETS) or img.info.spp_mean > MAX_SPP / 2:
                    break
                t = round(t * STEP, 4)
        print(f"  {name} seed {seed}: uniform " + ", ".join(f"{n}: {uni[n]['rmse'][-1]:.4f}" for n in UNIFORM)
              + "; adaptive " + ", ".join(f"{t}: {ada[t]['spp'][-1]:.0f} spp {ada[t]['rmse'][-1]:.4f}"
                                          for t in ladder), flush=True)
    # the variance-optimal allocation at each threshold's mean spp: n ~ sigma, the
    # per-pixel standard deviation of one sample from the MAX_SPP render of another seed
    for k, seed in enumerate(seeds):
        sigma = sigmas[seeds[(k + 1) % len(seeds)]]
        for t in ladder:
            n = variance_optimal_counts(sigma, ada[t]["spp"][k])
            e = errors(pick_levels(levels[seed], n.astype(np.int64)), ref, ref_var)
            ada[t]["opt_rmse"].append(e[0])
            ada[t]["opt_rel"].append(e[1])
    rms = lambda v: math.sqrt(float(np.mean(np.square(v))))     # noqa: E731
    uni_rmse = [rms(uni[n]["rmse"]) for n in UNIFORM]
    uni_rel = [float(np.mean(uni[n]["rel"])) for n in UNIFORM]
    uni_s = [float(np.min(uni[n]["s"])) for n in UNIFORM]
    uni_cpu = [float(np.min(uni[n]["cpu"])) for n in UNIFORM]
    ada_spp = [float(np.mean(ada[t]["spp"])) for t in ladder]
    ada_rmse = [rms(ada[t]["rmse"]) for t in ladder]
    ada_rel = [float(np.mean(ada[t]["rel"])) for t in ladder]
    ada_s = [float(np.min(ada[t]["s"])) for t in ladder]
    ada_cpu = [float(np.min(ada[t]["cpu"])) for t in ladder]
    rows = []
    for target in RMSE_TARGETS:
        n_u, n_a = at_error(UNIFORM, uni_rmse, target), at_error(ada_spp, ada_rmse, target)
        s_u = curve_at(UNIFORM, uni_s, n_u) if n_u else None
        s_a = curve_at(ada_spp, ada_s, n_a) if n_a else None
        c_u = curve_at(UNIFORM, uni_cpu, n_u) if n_u else None
        c_a = curve_at(ada_spp, ada_cpu, n_a) if n_a else None
        rel_target = curve_at(UNIFORM, uni_rel, n_u) if n_u else None
        rn_u = at_error(UNIFORM, uni_rel, rel_target) if rel_target else None
        rn_a = at_error(ada_spp, ada_rel, rel_target) if rel_target else None
        rows.append({"target": target, "n_u": n_u, "n_a": n_a, "s_u": s_u, "s_a": s_a, "c_u": c_u, "c_a": c_a,
                     "rel_target": rel_target,
                     "rn_u": rn_u, "rn_a": rn_a})
    return {"name": name, "ref_spp": spp_ref, "variant": variant, "ref_noise": math.sqrt(float(ref_var.mean())),
            "uni": (uni_rmse, uni_rel, uni_s, uni_cpu), "ada": (ada_spp, ada_rmse, ada_rel, ada_s, ada_cpu),
            "rows": rows,
            "capped": [float(np.mean(ada[t]["capped"])) for t in ladder], "ladder": ladder,
            "opt": ([rms(ada[t]["opt_rmse"]) for t in ladder], [float(np.mean(ada[t]["opt_rel"]))
                                                                    for t in ladder])}


def _ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def _num(x, fmt):
    return format(x, fmt) if x else "-"


def savings_report(results, seeds):
    lines = ["| scene | RMSE | uniform spp | adaptive mean spp | saving (samples) | uniform s | adaptive s | "
             "saving (time) | saving (CPU time) | matching relMSE | uniform spp | adaptive spp | saving (relMSE) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for row in r["rows"]:
            lines.append(
                f"| {TITLES[r['name']]} | {row['target']} | {_num(row['n_u'], '.1f')} | {_num(row['n_a'], '.1f')} | "
                f"**{_ratio(row['n_u'], row['n_a'])}** | {_num(row['s_u'], '.2f')} | {_num(row['s_a'], '.2f')} | "
                f"**{_ratio(row['s_u'], row['s_a'])}** | {_ratio(row['c_u'], row['c_a'])} | "
                f"{_num(row['rel_target'], '.2e')} | "
                f"{_num(row['rn_u'], '.1f')} | {_num(row['rn_a'], '.1f')} | **{_ratio(row['rn_u'], row['rn_a'])}** |")
    for r in results:
        uni_rmse, uni_rel, uni_s, uni_cpu = r["uni"]
        ada_spp, ada_rmse, ada_rel, ada_s, ada_cpu = r["ada"]
        opt_rmse, opt_rel = r["opt"]
        lines += ["", f"{TITLES[r['name']]}: reference Mitsuba `{r['variant']}` {r['ref_spp']} spp "
                  f"(`independent`), its own noise RMSE {r['ref_noise']:.4f} (subtracted).", "",
                  "| render | mean spp | RMSE | relMSE | time (best) | CPU time (best) | pixels at max_spp | "
                  "variance-optimal allocation, same mean spp: RMSE, relMSE |",
                  "|---|---|---|---|---|---|---|---|"]
        for n, e, q, s, cpu in zip(UNIFORM, uni_rmse, uni_rel, uni_s, uni_cpu):
            lines.append(f"| uniform {n} spp | {n} | {e:.4f} | {q:.2e} | {s:.2f} s | {cpu:.2f} s | | |")
        for t, n, e, q, s, cpu, c, oe, oq in zip(r["ladder"], ada_spp, ada_rmse, ada_rel, ada_s, ada_cpu,
                                                  r["capped"], opt_rmse, opt_rel):
            lines.append(f"| adaptive {t} | {n:.1f} | {e:.4f} | {q:.2e} | {s:.2f} s | {cpu:.2f} s | {c:.2%} | "
                         f"{oe:.4f}, {oq:.2e} |")
    lines += ["", f"Seeds {', '.join(map(str, seeds))}; RMSE: root mean square over the seeds, relMSE: mean. "
              f"Adaptive: `min_spp` {MIN_SPP}, `max_spp` {MAX_SPP}. Savings interpolated in log-log "
              f"between measured points (uniform: powers of two); '-': the target lies outside the "
              f"measured range."]
    return lines


# ---------------------------------------------------------------- bias
def _caustic_scene(size):
    """A glass sphere on a grey floor under a small, bright area light, a dim sky: a
    caustic and fireflies (own)."""
    return {
        "camera": {"center": [0.0, 1.6, 4.2], "look_at": [0.0, 0.5, 0.0], "fov": 38},
        "image": {"width": size, "height": size, "spp": 16, "filter": "box", "seed": 0},
        "integrator": {"type": "path", "max_depth": 12, "rr_depth": 5},
        "background": {"color": [0.03, 0.035, 0.05]},
        "materials": {"floor": {"type": "diffuse", "albedo": [0.6, 0.6, 0.6]},
                      "glass": {"type": "dielectric", "ior": 1.5},
                      "lamp": {"type": "diffuse", "albedo": [0.0, 0.0, 0.0]}},
        "objects": [
            {"type": "rectangle", "material": "floor", "transform": [{"rotate_x": -90}, {"scale": [4, 4, 1]}]},
            {"type": "sphere", "center": [0.0, 0.6, 0.0], "radius": 0.6, "material": "glass"},
            {"type": "rectangle", "material": "lamp", "emission": [120.0, 110.0, 95.0],
             "transform": [{"rotate_x": 90}, {"scale": [0.15, 0.15, 1]}, {"translate": [0.3, 2.6, -0.2]}]},
        ],
    }


def _rough_metal_scene(size):
    """Rough and smooth metal spheres on a diffuse floor, a point light and a constant
    sky (own)."""
    return {
        "camera": {"center": [0.0, 1.2, 4.0], "look_at": [0.0, 0.5, 0.0], "fov": 40},
        "image": {"width": size, "height": size, "spp": 16, "filter": "box", "seed": 0},
        "integrator": {"type": "path", "max_depth": 8, "rr_depth": 5},
        "background": {"color": [0.25, 0.3, 0.4]},
        "lights": [{"type": "point", "position": [1.5, 3.0, 2.0], "color": [3.0, 3.0, 3.0]}],
        "materials": {"floor": {"type": "diffuse", "albedo": [0.5, 0.45, 0.4]},
                      "rough": {"type": "rough_conductor", "reflectance": [1.0, 1.0, 1.0], "alpha": 0.3},
                      "shiny": {"type": "rough_conductor", "reflectance": [1.0, 1.0, 1.0], "alpha": 0.05}},
        "objects": [
            {"type": "rectangle", "material": "floor", "transform": [{"rotate_x": -90}, {"scale": [5, 5, 1]}]},
            {"type": "sphere", "center": [-0.6, 0.5, 0.0], "radius": 0.5, "material": "rough"},
            {"type": "sphere", "center": [0.6, 0.5, 0.2], "radius": 0.5, "material": "shiny"},
        ],
    }


def _small_light_cornell(size):
    """The Cornell box lit by a light a tenth of the area and ten times as bright: more of
    the light comes through rare paths (own)."""
    import mitsuba_path_scenes
    scene = mitsuba_path_scenes.cornell_box_scene(size)
    for obj in scene["objects"]:
        if "emission" in obj:
            obj["emission"] = [10.0 * float(x) for x in obj["emission"]]
            m = [list(map(float, row)) for row in obj["transform"][0]["matrix"]]
            for row in m[:3]:                      # the rectangle's in-plane axes: columns 0, 1
                row[0] *= math.sqrt(0.1)
                row[1] *= math.sqrt(0.1)
            obj["transform"] = [{"matrix": m}]
    return scene


def bias_scenes():
    """name -> (scene dict, base_dir, latlong or None) at BIAS_SIZE."""
    import bench_scenes
    import mitsuba_path_scenes as m
    base = REPO / "scenes"
    glass, glass_base = bench_scenes.glass_scene(BIAS_SIZE)
    return {"cornell_box": (m.cornell_box_scene(BIAS_SIZE), base, False),
            "glass_mirror": (m.glass_mirror_scene(BIAS_SIZE), base, False),
            "glass_knot_sky": (glass, glass_base, True),
            "caustic": (_caustic_scene(BIAS_SIZE), base, False),
            "rough_metal": (_rough_metal_scene(BIAS_SIZE), base, False),
            "small_light": (_small_light_cornell(BIAS_SIZE), base, False)}


def _ref_worker(name, spp, passes, out):
    """Child process: render bias scene ``name`` with Mitsuba, save mean and std."""
    import bench_scenes
    import mitsuba_path_scenes as m
    scene, base, latlong = bias_scenes()[name]
    variant = _variant()
    if latlong:
        d = m.mitsuba_path_scene_dict_latlong(scene, base, bench_scenes.sky_latlong(), spp=spp // passes,
                                              variant=variant)
    else:
        d = m.mitsuba_path_scene_dict(scene, base, spp=spp // passes, variant=variant)
    images = np.stack([m.render_mitsuba(d, spp // passes, seed=k) for k in range(passes)])
    np.savez_compressed(out, mean=images.mean(0).astype(np.float32),
                        std=(images.std(0, ddof=1) / math.sqrt(passes)).astype(np.float32),
                        spp=spp, variant=variant, scene=m.scene_hash(scene))


def bias_reference(name, scene, spp, passes=16):
    import mitsuba_path_scenes as m
    path = OUT / f"bias_{name}_{BIAS_SIZE}.npz"
    if path.exists():
        with np.load(path) as f:
            if str(f["scene"]) == m.scene_hash(scene) and int(f["spp"]) >= spp:
                return f["mean"].astype(np.float64), f["std"].astype(np.float64)
    print(f"rendering the Mitsuba reference of {name} ({spp} spp) ...", flush=True)
    r = subprocess.run([sys.executable, __file__, "--ref-worker", name, "--ref-spp", str(spp), "--out", str(path)],
                       env=_mitsuba_env(), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"reference of {name} failed: {r.stderr[-2000:]}")
    with np.load(path) as f:
        return f["mean"].astype(np.float64), f["std"].astype(np.float64)


def bias_stats(images, ref, ref_std):
    """Against a reference image ``ref`` with per-pixel standard error ``ref_std``: (z of
    the channel means (3,), the relative-MSE excess of the two half-means over what noise
    explains in standard errors, the channel means' relative difference (3,))."""
    sys.path.insert(0, str(REPO / "tests"))
    from test_path_vs_mitsuba import compare
    x = np.stack(images)
    per_seed = x.mean(axis=(1, 2))                                 # (seeds, 3)
    r = ref.mean(axis=(0, 1))
    se = np.sqrt(per_seed.var(axis=0, ddof=1) / len(images) + (ref_std ** 2).sum(axis=(0, 1)) / ref[..., 0].size ** 2)
    z = (per_seed.mean(axis=0) - r) / se
    half = len(images) // 2
    s = compare(x[:half].mean(0), x[half:2 * half].mean(0), ref, ref_std)
    return z, max(t["excess_z"] for t in s["scales"].values()), (per_seed.mean(axis=0) / r - 1)


def threshold_for_spp(scene, mean_spp, seed=99):
    """The noise threshold at which ``scene`` takes about ``mean_spp`` samples per pixel
    (seed ``seed``, sobol): geometric bisection, 10 renders."""
    import raytrace
    lo, hi = 0.002, 5.0                       # thresholds: small -> many samples
    for _ in range(10):
        mid = math.sqrt(lo * hi)
        n = raytrace.render(scene, noise_threshold=mid, max_spp=BIAS_MAX_SPP, seed=seed).info.spp_mean
        lo, hi = (mid, hi) if n > mean_spp else (lo, mid)
    return round(math.sqrt(lo * hi), 4)


def bias(seeds, ref_spp):
    """Rows (scene, sampler, threshold or None for the uniform baseline, own-sample rule?,
    mean spp, stats against Mitsuba, stats against the uniform renders): see
    :func:`bias_stats`."""
    import raytrace
    from raytrace.film import adaptive
    rows = []
    for name, (scene_dict, base, _) in bias_scenes().items():
        ref, ref_std = bias_reference(name, scene_dict, ref_spp)
        scene = raytrace.load_scene(scene_dict, base_dir=base)
        thresholds = [threshold_for_spp(scene, n) for n in BIAS_SPP]
        for sampler in ("sobol", "independent"):
            uniform = [np.asarray(raytrace.render(scene, spp=BIAS_UNIFORM_SPP, seed=seed + 1000, sampler=sampler),
                                  np.float64) for seed in seeds]     # seeds of their own: independent
            u_mean = np.mean(uniform, axis=0)
            u_std = np.std(uniform, axis=0, ddof=1) / math.sqrt(len(seeds))
            rows.append((name, sampler, None, False, float(BIAS_UNIFORM_SPP), bias_stats(uniform, ref, ref_std), None))
            for t in thresholds:
                for own in (False, True):
                    adaptive.OWN_SAMPLES = own
                    try:
                        imgs, spp = [], []
                        for seed in seeds:
                            img = raytrace.render(scene, noise_threshold=t, max_spp=BIAS_MAX_SPP, seed=seed,
                                                  sampler=sampler)
                            imgs.append(np.asarray(img, np.float64))
                            spp.append(img.info.spp_mean)
                    finally:
                        adaptive.OWN_SAMPLES = False
                    rows.append((name, sampler, t, own, float(np.mean(spp)), bias_stats(imgs, ref, ref_std),
                                 bias_stats(imgs, u_mean, u_std)))
            for row in rows[-5:]:
                print("  " + _bias_line(row), flush=True)
    return rows


def _bias_line(row):
    name, sampler, t, own, spp, mitsuba, uniform = row
    what = f"uniform {spp:.0f} spp" if t is None else f"T={t} {'OWN' if own else 'neighbours'} {spp:.0f} spp"
    text = (f"{name} {sampler} {what}: vs Mitsuba {np.round(100 * mitsuba[2], 3)} % (z {np.round(mitsuba[0], 1)}), "
            f"relMSE excess {mitsuba[1]:+.1f}")
    if uniform is not None:
        text += (f"; vs uniform {np.round(100 * uniform[2], 3)} % (z {np.round(uniform[0], 1)}), "
                 f"relMSE excess {uniform[1]:+.1f}")
    return text


def _biased(mitsuba, uniform):
    """The verdict: a channel mean off our uniform renders by more than Z standard errors,
    or a per-pixel relative-MSE excess over the Mitsuba reference above Z."""
    return bool(np.any(np.abs(uniform[0]) > Z) or mitsuba[1] > Z)


def bias_report(rows, seeds, ref_spp):
    def cells(stats, excess=True):
        z, ex, rel = stats
        text = " / ".join(f"{100 * a:+.2f} % ({b:+.1f})" for a, b in zip(rel, z))
        return f"{text} | {ex:+.1f}" if excess else text
    lines = ["| scene | sampler | render | mean spp | channel means vs Mitsuba (z) | relMSE excess vs Mitsuba | "
             "channel means vs uniform (z) | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    caught = ok = total = 0
    for row in rows:
        name, sampler, t, own, spp, mitsuba, uniform = row
        if t is None:
            lines.append(f"| {name} | {sampler} | uniform | {spp:.0f} | {cells(mitsuba)} | | baseline |")
            continue
        biased = _biased(mitsuba, uniform)
        total += not own
        ok += not own and not biased
        caught += own and biased
        verdict = ("**caught**" if biased else "not caught") if own else ("**BIASED**" if biased else "within noise")
        rule = "own samples (control)" if own else "neighbours"
        lines.append(f"| {name} | {sampler} | {rule}, T={t} | {spp:.0f} | {cells(mitsuba)} | "
                     f"{cells(uniform, False)} | {verdict} |")
    lines += ["", f"{BIAS_SIZE} x {BIAS_SIZE} pixels, seeds {seeds[0]}-{seeds[-1]} ({len(seeds)} per row), `max_spp` "
              f"{BIAS_MAX_SPP}, Mitsuba references {ref_spp} spp; the uniform baseline: as many other seeds "
              f"({seeds[0] + 1000}-{seeds[-1] + 1000}) at {BIAS_UNIFORM_SPP} spp. Channel means: z over the "
              f"spread of the seeds' means (and the reference's noise); against Mitsuba they also show where "
              f"our renderer and Mitsuba differ (the uniform rows), so the verdict takes them against our "
              f"uniform renders. Per pixel: the relative-MSE excess of the two half-means over what noise "
              f"explains against the Mitsuba reference (`tests/test_path_vs_mitsuba.compare`, in standard "
              f"errors; the same test against the uniform renders is not calibrated: their per-pixel noise "
              f"comes from 16 heavy-tailed samples). Biased: some |z| > {Z:g} (t with {len(seeds) - 1} "
              f"degrees of freedom) or an excess above {Z:g}. Neighbour rule: {ok} of {total} within the "
              f"noise; own-sample control caught in {caught} of {total}."]
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", default=",".join(SCENES))
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1 .. N of the savings part (default 3)")
    ap.add_argument("--ref-spp", type=int, default=32768, help="Mitsuba reference spp (default 32768)")
    ap.add_argument("--part", choices=("savings", "bias", "all"), default="all")
    ap.add_argument("--bias-seeds", type=int, default=16, help="seeds of the bias part (default 16)")
    ap.add_argument("--bias-ref-spp", type=int, default=65536)
    add_record_flag(ap)
    ap.add_argument("--ref-worker", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO / "tests"))
    if args.ref_worker:
        return _ref_worker(args.ref_worker, args.ref_spp, 16, args.out)
    try:
        import mitsuba  # noqa: F401
    except ImportError:
        skipped("bench_adaptive", "Mitsuba 3 is not installed (pip install -e '.[reference]')")
        return 0
    names = [x for x in args.scenes.split(",") if x]
    if any(n not in SCENES for n in names) or args.seeds < 1 or args.bias_seeds < 4:
        ap.exit(2, f"{ap.prog}: error: --scenes must name {', '.join(SCENES)}; --seeds >= 1, --bias-seeds >= 4\n")
    started = time.perf_counter()
    load = OtherLoad().start()
    lines = ["## Adaptive sampling against uniform Sobol sampling", ""]
    if args.part in ("savings", "all"):
        seeds = list(range(1, args.seeds + 1))
        results = [savings(n, seeds, args.ref_spp) for n in names]
        lines += savings_report(results, seeds)
    if args.part in ("bias", "all"):
        seeds = list(range(100, 100 + args.bias_seeds))
        lines += ["", "### Bias", ""] + bias_report(bias(seeds, args.bias_ref_spp), seeds, args.bias_ref_spp)
    load.stop()
    la = os.getloadavg()
    lines += ["", f"Command: `python benchmarks/bench_adaptive.py {' '.join(argv or sys.argv[1:])}`; "
              f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}; {cpu_name()}, {os.cpu_count()} cores "
              f"({load.describe()}; load average {la[0]:.1f} / {la[1]:.1f} / {la[2]:.1f} at the end); "
              f"the run took {(time.perf_counter() - started) / 60:.1f} min."]
    text = "\n".join(lines) + "\n"
    print(text)
    write_report("adaptive", text, args.record)
    return 0


if __name__ == "__main__":
    sys.exit(main())

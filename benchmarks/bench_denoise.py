"""Denoisers against a converged reference: RMSE before and after denoising.

    python benchmarks/bench_denoise.py [--spps 4,16,64] [--seeds 5] [--ref-spp 8192] [--record]
    python benchmarks/bench_denoise.py --references-only      (only render / finish the references)

Scenes: scenes/cornell_box.json at 128 x 128 and scenes/path_glass.json (glass, water and
a diamond-like block on a checkerboard floor: caustics and fine texture) at 160 x 120,
each with its own filter and integrator settings. For each scene, spp and seed (0, 1,
...) it renders with the albedo, normal and depth AOVs and the variance, denoises with
Intel Open Image Denoise (``oidn``, when pyoidn is installed) and with the à-trous
fallback (``atrous``), and reports the RMSE (linear, all pixels and channels, root mean
square over the seeds) of each against the reference, over the whole image and per
region (from the object-id AOV): where each denoiser helps and where it adds bias.

The reference is our own path tracer at ``--ref-spp`` samples per pixel, rendered in
chunks of 512 spp with seeds 1000, 1001, ... (so it shares no samples with the test
renders) and cached in benchmarks/output/denoise_<scene>_<W>x<H>_<spp>.npz (resumable: a
killed run continues with the next chunk). Its own noise (the standard error of the mean
of the chunks) is reported and subtracted in quadrature.

Writes benchmarks/output/results/denoise.md (``--record``: also benchmarks/results/denoise.md)
and PNG crops benchmarks/output/denoise_<scene>_<spp>spp_<kind>.png to look at.
"""
import argparse
import datetime
import os
import pathlib
import platform
import sys
import time

import numpy as np

from reports import OtherLoad, add_record_flag, captured_stdout, cpu_name, write_report

REPO = pathlib.Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "output"
SCENES = {"cornell_box": ("scenes/cornell_box.json", 128, 128),
          "path_glass": ("scenes/path_glass.json", 160, 120)}
CHUNK = 512
AOVS = ["albedo", "normal", "depth", "object_id"]


def load(name):
    import raytrace
    path, w, h = SCENES[name]
    return raytrace.load_scene(REPO / path), w, h


def reference(name, ref_spp):
    """-> (mean (H, W, 3) float64, variance of that mean (H, W, 3)), rendered or cached."""
    import raytrace
    scene, w, h = load(name)
    path = OUT / f"denoise_{name}_{w}x{h}_{ref_spp}.npz"
    chunks = max(2, ref_spp // CHUNK)
    total = sq = None
    done = 0
    if path.exists():
        with np.load(path) as f:
            total, sq, done = f["sum"], f["sumsq"], int(f["chunks"])
    while done < chunks:
        t0 = time.perf_counter()
        img = raytrace.render(scene, width=w, height=h, spp=ref_spp // chunks, seed=1000 + done).astype(np.float64)
        total = img if total is None else total + img
        sq = img * img if sq is None else sq + img * img
        done += 1
        OUT.mkdir(parents=True, exist_ok=True)
        np.savez(path, sum=total, sumsq=sq, chunks=done)
        print(f"reference {name}: chunk {done}/{chunks} ({time.perf_counter() - t0:.1f} s)", flush=True)
    mean = total / done
    var = np.maximum(sq / done - mean * mean, 0.0) * done / (done - 1) / done
    return mean, var


def dilate(mask, k=2):
    out = mask.copy()
    for dy in range(-k, k + 1):
        for dx in range(-k, k + 1):
            out |= np.roll(np.roll(mask, dy, 0), dx, 1)
    return out


def regions(scene, ids, ref, albedo):
    """name -> boolean mask (H, W). ``lights and highlights``: pixels within 2 of one whose
    reference exceeds 1.5 (the visible lamp, its reflections and refractions); the rest by
    object, and on the glass scene's floor the caustics: floor pixels whose illumination
    (reference / albedo) is over twice the floor's median, however bright (their cores
    are above 1.5 too; they count as caustics, not highlights)."""
    names = scene.object_names
    bright = dilate(ref.max(axis=2) > 1.5)
    out = {"all": np.ones(ids.shape, bool), "lights and highlights": bright}
    if "path_glass" in str(scene.name):
        floor = ids == next(i for i, n in enumerate(names) if "floor" in n)
        glass = np.isin(ids, [i for i, n in enumerate(names) if any(k in n for k in ("glass", "water"))]) & ~bright
        irr = (ref / np.maximum(albedo, 0.02)).mean(axis=2)
        caustic = floor & (irr > 2.0 * np.median(irr[floor]))
        out.update({"lights and highlights": bright & ~caustic,
                    "floor: checker texture": floor & ~caustic & ~bright, "floor: caustics": caustic,
                    "seen through glass": glass, "walls, background": ~floor & ~glass & ~bright})
    else:
        out["the rest"] = ~bright
    return {k: v for k, v in out.items() if v.any()}


def save_png(name, spp, kind, image):
    import raytrace
    OUT.mkdir(parents=True, exist_ok=True)
    raytrace.save_image(OUT / f"denoise_{name}_{spp}spp_{kind}.png", image)


def measure(name, spps, seeds, ref, ref_var, methods):
    """-> (rows: (spp, region, {kind: (rmse, bias rmse)}, pixels), times: {method: s/Mpixel}).

    The bias part: the RMS over the region of (mean over seeds - reference), its noise
    (variance across seeds / seeds) and the reference's removed in quadrature."""
    import raytrace
    from raytrace.film.denoise import denoise_arrays
    scene, w, h = load(name)
    outs = {}                        # (spp, kind) -> list of images over seeds
    times = {m: [] for m in methods}
    masks = None
    for spp in spps:
        for seed in range(seeds):
            img = raytrace.render(scene, width=w, height=h, spp=spp, seed=seed, aovs=AOVS, variance=True)
            a = img.aovs
            if masks is None:
                masks = regions(scene, a["object_id"], ref, a["albedo"])
            got = {"noisy": np.asarray(img)}
            for m in methods:
                t0 = time.perf_counter()
                got[m] = denoise_arrays(img, a["albedo"], a["normal"], a["depth"], img.variance, m)
                times[m].append((time.perf_counter() - t0) / (w * h / 1e6))
            for kind, out in got.items():
                outs.setdefault((spp, kind), []).append(out.astype(np.float64))
                if seed == 0:
                    save_png(name, spp, kind, out)
    save_png(name, "ref", "reference", ref)
    rows = []
    for spp in spps:
        for region, mask in masks.items():
            vals = {}
            for kind in ["noisy"] + list(methods):
                stack = np.stack(outs[(spp, kind)])[:, mask]
                mse = np.mean((stack - ref[mask]) ** 2)
                spread = stack.var(axis=0, ddof=1).mean() / seeds
                bias2 = np.mean((stack.mean(axis=0) - ref[mask]) ** 2) - spread - ref_var[mask].mean()
                vals[kind] = (np.sqrt(max(mse - ref_var[mask].mean(), 0.0)), np.sqrt(max(bias2, 0.0)))
            rows.append((spp, region, vals, int(mask.sum())))
        vals = {}
        for kind in ["noisy"] + list(methods):
            clamp = np.clip(np.stack(outs[(spp, kind)]), 0.0, 1.0)
            vals[kind] = (np.sqrt(np.mean((clamp - np.clip(ref, 0.0, 1.0)) ** 2)), float("nan"))
        rows.append((spp, "all, clamped to [0, 1]", vals, ref.shape[0] * ref.shape[1]))
    return rows, {m: float(np.median(t)) for m, t in times.items()}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spps", default="4,16,64", help="test spp, comma-separated (default %(default)s)")
    p.add_argument("--seeds", type=int, default=5, help="renders per spp (default %(default)s)")
    p.add_argument("--ref-spp", type=int, default=8192, help="reference spp (default %(default)s)")
    p.add_argument("--scenes", default=",".join(SCENES), help="default %(default)s")
    p.add_argument("--references-only", action="store_true", help="only render the references")
    add_record_flag(p)
    args = p.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from raytrace.film.denoise import oidn_available
    names = args.scenes.split(",")
    spps = [int(s) for s in args.spps.split(",")]
    refs = {name: reference(name, args.ref_spp) for name in names}
    if args.references_only:
        return 0
    methods = (["oidn"] if oidn_available() else []) + ["atrous"]
    other_load = OtherLoad().start()
    with captured_stdout() as text:
        load_avg = os.getloadavg()
        print(f"## Denoising: RMSE against a {args.ref_spp}-spp reference\n")
        print(f"Command: `python benchmarks/bench_denoise.py --spps {args.spps} --seeds {args.seeds} "
              f"--ref-spp {args.ref_spp}`; {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}; "
              f"{cpu_name()}, {os.cpu_count()} cores shared with other engineers (load average "
              f"{load_avg[0]:.1f}); Python {platform.python_version()}"
              + (f"; pyoidn {__import__('importlib.metadata').metadata.version('pyoidn')}" if "oidn" in methods else "; pyoidn not installed")
              + ".\n")
        print("RMSE: linear radiance, over the pixels and channels of the region, root mean square over "
              f"{args.seeds} seeds, the reference's own noise removed in quadrature. `oidn`: Intel Open "
              "Image Denoise (RT filter, HDR, quality high, colour + albedo + normal); `atrous`: the "
              "fallback (edge-avoiding à-trous, 5 passes, guided by normal, albedo, depth and the "
              "per-pixel variance). `x / noisy`: RMSE ratio, in bold where denoising helps. `bias`: the "
              "systematic part of the error, the RMS of (mean over the seeds - reference) with the noise of "
              "that mean removed (about 0 for the unbiased noisy renders; a check of the method). Regions "
              "come from the object-id AOV and the reference (see `regions()`); `all, clamped to [0, 1]` "
              "compares display values, where the lamp no longer dominates. Denoiser time: median seconds "
              "per megapixel.\n")
        for name in names:
            ref, ref_var = refs[name]
            rows, times = measure(name, spps, args.seeds, ref, ref_var, methods)
            path, w, h = SCENES[name]
            print(f"### `{path}` at {w} x {h} (reference noise: RMSE {np.sqrt(ref_var.mean()):.4f})\n")
            kinds = ["noisy"] + methods
            print("| spp | region | pixels | " + " | ".join(f"RMSE {k}" for k in kinds) + " | "
                  + " | ".join(f"{m} / noisy" for m in methods) + " | "
                  + " | ".join(f"bias {k}" for k in kinds) + " |")
            print("|---|---|---|" + "---|" * (3 * len(kinds) - 1))
            for spp, region, vals, n in rows:
                ratio = [f"**{vals[m][0] / vals['noisy'][0]:.2f}**" if vals[m][0] < vals["noisy"][0]
                         else f"{vals[m][0] / vals['noisy'][0]:.2f}" for m in methods]
                bias = ["-" if np.isnan(vals[k][1]) else f"{vals[k][1]:.4f}" for k in kinds]
                print(f"| {spp} | {region} | {n} | " + " | ".join(f"{vals[k][0]:.4f}" for k in kinds)
                      + " | " + " | ".join(ratio) + " | " + " | ".join(bias) + " |")
            print("\nDenoiser time: " + ", ".join(f"{m} {t:.2f} s/Mpixel" for m, t in times.items()) + "\n")
        print(f"While it ran, {other_load.stop().describe()}.")
    write_report("denoise", text.getvalue(), args.record)
    return 0


if __name__ == "__main__":
    sys.exit(main())

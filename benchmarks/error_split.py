r"""Where a render's error lives: near the emitters in view, or everywhere else.

    python benchmarks/error_split.py [--scene cornell] [--spps 16,18,20] [--seeds 6]
        [--renderers ours/sobol,llvm_ad_rgb/multijitter]

A companion of ``bench_path.py`` (same scenes, same workers, same cached references; run
``bench_path.py`` once first, or this script renders the reference itself). For each
renderer and spp it renders ``--seeds`` images and splits their squared error against
the reference (linear radiance, all channels) into two regions:

- **near emitters**: pixels within one pixel (a 3 x 3 neighbourhood) of a reference pixel
  whose channel mean exceeds ``--bright`` (default 2.0; the Cornell box's light is 13, its
  walls below 1). Their error is mostly the pixel filter's integral over an emitter's
  edge, so it depends on how the pixel positions are stratified. With N positions
  stratified along an axis, an edge parallel to it leaves one stratum straddling it: its
  variance falls as 1/N^2, so ``MSE x spp^2`` stays level;
- **the rest**: light transport noise, which falls as 1/N: ``MSE x spp`` stays level.

The table gives both regions' mean squared error per pixel (the reference's own noise
not removed; its RMSE is printed), each region's share of the image's squared error, and
the RMSE over the image with the reference's noise removed in quadrature, as
``bench_path.py`` computes it (the root mean square over the seeds). Results go to
benchmarks/output/results/error_split.md (not recorded: a diagnosis, not a benchmark).
Skips, and says so, without Mitsuba 3 (the references are Mitsuba's; ``reference``
extra).
"""
import argparse
import math
import os
import pathlib
import sys
import time

import numpy as np

import bench_path
from reports import OtherLoad, skipped, write_report

DEFAULT_RENDERERS = "ours/sobol,llvm_ad_rgb/multijitter"


def near_emitter_mask(ref, bright):
    """(H, W) bool: pixels with a pixel of channel mean > ``bright`` in their 3 x 3
    neighbourhood (itself included)."""
    hot = ref.mean(axis=2) > bright
    padded = np.pad(hot, 1)
    h, w = hot.shape
    near = np.zeros_like(hot)
    for di in range(3):
        for dj in range(3):
            near |= padded[di:di + h, dj:dj + w]
    return near


def split_errors(images, ref, ref_var, near):
    """Squared error of ``images`` (a list of (H, W, 3)) against ``ref``, averaged over
    the images and the channels, split by the mask ``near`` -> dict with ``rmse`` (the
    root mean square over the images of each image's RMSE with ``ref_var`` removed, as
    ``bench_path.rmse``), ``mse_near`` and ``mse_rest`` (mean per pixel in each region),
    ``share_near`` (the near region's share of the summed squared error), ``n_near``."""
    per_pixel = np.mean([((img - ref) ** 2).mean(axis=2) for img in images], axis=0)
    rmses = [bench_path.rmse(img, ref, ref_var) for img in images]
    total = per_pixel.sum()
    rest = ~near
    return {
        "rmse": math.sqrt(np.mean(np.square(rmses))),
        "mse_near": float(per_pixel[near].mean()) if near.any() else 0.0,
        "mse_rest": float(per_pixel[rest].mean()) if rest.any() else 0.0,
        "share_near": float(per_pixel[near].sum() / total) if total > 0 else 0.0,
        "n_near": int(near.sum()),
    }


def measure(scene, renderer, spp, seeds, ref, ref_var, near, llvm):
    """Render ``seeds`` images of ``scene`` with ``renderer`` at ``spp`` in a worker
    process -> (the spp the renderer used, :func:`split_errors`'s dict, best seconds)."""
    stem = bench_path.OUT / f"split_{scene}_{renderer.replace('/', '_')}"
    rows = bench_path.run_worker(scene, renderer, [spp] * seeds, llvm, seed=1, save=stem)
    images = []
    for row in rows:
        images.append(np.load(row["image"]).astype(np.float64))
        os.remove(row["image"])
    return rows[0]["spp"], split_errors(images, ref, ref_var, near), min(r["seconds"] for r in rows)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python benchmarks/error_split.py",
                                description="Split a render's error against bench_path's "
                                            "reference into the pixels near emitters in view "
                                            "and the rest.")
    p.add_argument("--scene", choices=bench_path.SCENES, default="cornell")
    p.add_argument("--spps", default="16,18,20", help="comma-separated (default %(default)s)")
    p.add_argument("--seeds", type=int, default=6, help="images per renderer and spp (default 6)")
    p.add_argument("--renderers", default=DEFAULT_RENDERERS,
                   help="ENGINE/SAMPLER, comma-separated (default %(default)s)")
    p.add_argument("--bright", type=float, default=2.0,
                   help="channel mean above which a reference pixel counts as an emitter")
    p.add_argument("--ref-spp", type=int, default=8192,
                   help="the reference's spp, as bench_path.py (default %(default)s)")
    p.add_argument("--llvm", type=pathlib.Path, default=bench_path.DEFAULT_LLVM,
                   help="libLLVM.so for llvm_ad_rgb, as bench_path.py (default: %(default)s)")
    args = p.parse_args(argv)
    try:
        spps = [int(s) for s in args.spps.split(",") if s]
    except ValueError:
        p.exit(2, f"{p.prog}: error: --spps must be integers, comma-separated\n")
    renderers = [r for r in args.renderers.split(",") if r]
    bad = [r for r in renderers if r.split("/")[0] not in bench_path.ENGINES or r.count("/") != 1]
    if not spps or min(spps) < 1 or args.seeds < 1 or bad:
        p.exit(2, f"{p.prog}: error: need spps >= 1, --seeds >= 1 and renderers ENGINE/SAMPLER "
                  f"with ENGINE one of {', '.join(bench_path.ENGINES)}\n")
    try:
        import mitsuba  # noqa: F401
    except ImportError:
        skipped("error_split", "Mitsuba 3 is not installed (pip install -e '.[reference]')")
        return 0
    if not args.llvm.exists():
        dropped = [r for r in renderers if r.startswith("llvm_ad_rgb")]
        renderers = [r for r in renderers if r not in dropped]
        if dropped:
            print(f"no libLLVM at {args.llvm}: skipping {', '.join(dropped)}", file=sys.stderr)
    variant = "llvm_ad_rgb" if args.llvm.exists() else "scalar_rgb"

    started = time.perf_counter()
    other_load = OtherLoad().start()
    bench_path.OUT.mkdir(parents=True, exist_ok=True)
    ref, ref_var = bench_path.reference(args.scene, args.ref_spp, args.llvm, variant)
    near = near_emitter_mask(ref, args.bright)
    rows = []
    for renderer in renderers:
        for spp in spps:
            used, e, seconds = measure(args.scene, renderer, spp, args.seeds, ref, ref_var, near,
                                       args.llvm)
            print(f"{renderer} {used} spp: RMSE {e['rmse']:.4f}, near emitters {e['mse_near']:.3g} "
                  f"({e['share_near']:.0%}), rest {e['mse_rest']:.3g}", flush=True)
            rows.append((renderer, spp, used, e, seconds))
    other_load.stop()

    lines = [
        f"## Error near emitters in view and elsewhere ({bench_path.TITLES[args.scene]})", "",
        f"Command: `python benchmarks/error_split.py --scene {args.scene} --spps {args.spps} "
        f"--seeds {args.seeds} --renderers {','.join(renderers)}`  ",
        f"Reference: `{bench_path.REFERENCES[args.scene].name}`, its own noise RMSE "
        f"{math.sqrt(ref_var):.4f}. Near emitters: {int(near.sum())} of {near.size} pixels "
        f"(3 x 3 neighbourhood of a reference pixel brighter than {args.bright}). Mean squared "
        f"error per pixel over {args.seeds} seeds, linear radiance; {other_load.describe()}  ",
        f"Run time {time.perf_counter() - started:.0f} s.", "",
        "| renderer | spp asked | spp used | RMSE | MSE near emitters | x spp^2 | share | "
        "MSE elsewhere | x spp | best seconds |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for renderer, spp, used, e, seconds in rows:
        lines.append(f"| {renderer} | {spp} | {used} | {e['rmse']:.4f} | {e['mse_near']:.4g} | "
                     f"{e['mse_near'] * used * used:.3g} | {e['share_near']:.0%} | "
                     f"{e['mse_rest']:.4g} | {e['mse_rest'] * used:.3g} | {seconds:.2f} |")
    write_report("error_split", "\n".join(lines), record=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

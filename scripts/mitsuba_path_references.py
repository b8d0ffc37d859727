"""Render the Mitsuba 3 references that tests/test_path_vs_mitsuba.py compares against.

    python scripts/mitsuba_path_references.py [--spp 65536] [--passes 16] [NAME ...]
    DRJIT_LIBLLVM_PATH=.../libLLVM.so.19.1 python scripts/mitsuba_path_references.py \\
        --variant llvm_ad_rgb

For every scene of ``tests/mitsuba_path_scenes.REFERENCE_SCENES`` (and its negative
controls: deliberately wrong versions that our renders must *not* match) it renders
``--passes`` independent Mitsuba images (seeds 0, 1, ...) of ``--spp / --passes`` samples
each with the ``path`` integrator and a box filter, and writes to tests/reference/path/:

- ``NAME.npz``: ``mean`` (H, W, 3) float16, the average of the passes, and ``std``
  (H, W, 3) float16, the standard error of that mean per pixel (sample standard
  deviation of the passes / sqrt(passes)), which the test adds to its noise bound.
  float16 keeps the files small (about 48 KB each); its rounding (relative 2^-11) adds
  a variance of about 1e-7 relative, 1e-4 of the noise the test allows;
- ``references.json``: per NAME the spp, passes, variant, Mitsuba version, date, render
  time and a hash of our scene dict (the test refuses stale references).

The scenes are translated by ``tests/mitsuba_path_scenes.py``. Needs ``mitsuba``. The
llvm variant needs a working libLLVM (see benchmarks/bench_path.py --help).
"""
import argparse
import datetime
import json
import pathlib
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from mitsuba_path_scenes import (  # noqa: E402
    REFERENCE_DIR, REFERENCE_SCENES, mitsuba_path_scene_dict, render_mitsuba, scene_dir, scene_hash,
)


def all_scenes():
    """NAME -> (scene dict, is_negative_control) for every reference to render."""
    out = {}
    for name, (build, negatives) in REFERENCE_SCENES.items():
        out[name] = (build(), False)
        for neg_name, neg_build in negatives.items():
            out[neg_name] = (neg_build(), True)
    return out


def render_reference(scene, spp, passes, variant):
    """``passes`` independent Mitsuba renders -> (mean (H, W, 3), std error of the mean
    (H, W, 3)), both float64, and the wall time in seconds."""
    per_pass = spp // passes
    mi_dict = mitsuba_path_scene_dict(scene, scene_dir(scene), spp=per_pass, variant=variant)
    t0 = time.perf_counter()
    images = np.stack([render_mitsuba(mi_dict, per_pass, seed=k) for k in range(passes)])
    seconds = time.perf_counter() - t0
    mean = images.mean(axis=0)
    std = images.std(axis=0, ddof=1) / np.sqrt(passes)
    return mean, std, seconds


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python scripts/mitsuba_path_references.py",
        description="Render converged Mitsuba 3 references for tests/test_path_vs_mitsuba.py.")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="references to render (default: all): " + ", ".join(all_scenes()))
    p.add_argument("--spp", type=int, default=65536, help="samples per pixel in total (default 65536)")
    p.add_argument("--negative-spp", type=int, default=16384,
                   help="samples per pixel for the negative controls (default 16384)")
    p.add_argument("--passes", type=int, default=16,
                   help="independent passes, for the per-pixel error estimate (default 16)")
    p.add_argument("--variant", default="scalar_rgb",
                   help="Mitsuba variant: scalar_rgb (default) or llvm_ad_rgb")
    p.add_argument("--out", type=pathlib.Path, default=REFERENCE_DIR, help="output folder")
    args = p.parse_args(argv)

    scenes = all_scenes()
    unknown = [n for n in args.names if n not in scenes]
    if unknown:
        p.exit(2, f"{p.prog}: error: unknown reference {unknown[0]!r} (choose from "
                  f"{', '.join(scenes)})\n")
    if args.passes < 2 or args.spp < args.passes or args.negative_spp < args.passes:
        p.exit(2, f"{p.prog}: error: need --passes >= 2 and at least one sample per pass\n")
    try:
        import mitsuba as mi
    except ImportError:
        p.exit(2, f"{p.prog}: error: mitsuba is not installed (pip install mitsuba)\n")
    try:
        mi.set_variant(args.variant)
    except Exception as exc:                       # noqa: BLE001 - Mitsuba raises plain errors
        p.exit(2, f"{p.prog}: error: variant {args.variant!r}: {exc}\n")

    args.out.mkdir(parents=True, exist_ok=True)
    meta_path = args.out / "references.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    for name, (scene, negative) in scenes.items():
        if args.names and name not in args.names:
            continue
        spp = args.negative_spp if negative else args.spp
        mean, std, seconds = render_reference(scene, spp, args.passes, args.variant)
        np.savez_compressed(args.out / f"{name}.npz",
                            mean=mean.astype(np.float16),
                            std=std.astype(np.float16))
        meta[name] = {
            "spp": spp - spp % args.passes, "passes": args.passes, "variant": args.variant,
            "mitsuba": mi.__version__, "size": list(mean.shape[:2]),
            "negative_control": negative, "scene_hash": scene_hash(scene),
            "seconds": round(seconds, 1),
            "date": datetime.date.today().isoformat(),
        }
        meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        print(f"{name}: {spp} spp in {seconds:.0f} s, mean {mean.mean(axis=(0, 1)).round(5)}, "
              f"relative std error of the image mean "
              f"{(np.sqrt((std ** 2).sum(axis=(0, 1))) / mean.sum(axis=(0, 1))).round(6)}",
              flush=True)


if __name__ == "__main__":
    main()

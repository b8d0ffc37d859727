"""Convergence of our path tracer next to Mitsuba 3's on the Cornell box.

    python scripts/convergence_mitsuba.py -o convergence.png [--size 32] [--spp 2,8,32,128,512]
                                          [--seeds 2] [--json numbers.json] [--variant scalar_rgb]

RMSE and relative MSE against the stored converged Mitsuba render
(tests/reference/path/cornell_box.npz, 64 x 64, box filter; averaged over 2 x 2 blocks for
--size 32, which is exact for a box filter), against samples per pixel and wall time, for
our ``sobol`` and ``independent`` samplers and Mitsuba's ``path`` integrator with its
``independent`` sampler (the scene mapped by tests/mitsuba_path_scenes.py, see
docs/mitsuba-mapping.md). Needs ``mitsuba``; uses raytrace.grade.convergence for the
numbers and the plot (the same code as ``raytrace convergence``).
"""
import argparse
import json
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

import raytrace  # noqa: E402
from mitsuba_path_scenes import cornell_box_scene, mitsuba_path_scene_dict  # noqa: E402
from raytrace.grade import convergence as cv  # noqa: E402
from raytrace.grade.images import from_array  # noqa: E402

REFERENCE = REPO / "tests" / "reference" / "path" / "cornell_box.npz"


def reference(size):
    with np.load(REFERENCE) as f:
        mean = f["mean"].astype(np.float64)
    k = mean.shape[0] // size
    if k * size != mean.shape[0]:
        sys.exit(f"--size must divide {mean.shape[0]}")
    return from_array(mean.reshape(size, k, size, k, 3).mean(axis=(1, 3)), "mitsuba reference")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--size", type=int, default=32)
    p.add_argument("--spp", default="2,8,32,128,512")
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--json")
    p.add_argument("--variant", default="scalar_rgb")
    args = p.parse_args()
    spp = [int(s) for s in args.spp.split(",")]
    ref = reference(args.size)
    scene_dict = cornell_box_scene(args.size)
    ours = raytrace.load_scene(scene_dict, base_dir=REPO / "scenes")
    series = []
    for sampler in ("sobol", "independent"):
        raytrace.render(ours, spp=1, sampler=sampler)                       # compile first
        series.append(cv.measure(lambda n, seed, s=sampler: raytrace.render(ours, spp=n, seed=seed, sampler=s),
                                 ref, spp, seeds=args.seeds, label=f"raytrace path/{sampler}",
                                 integrator="path", sampler=sampler, log=print))
    import mitsuba as mi
    mi_scene = mi.load_dict(mitsuba_path_scene_dict(scene_dict, REPO / "scenes", variant=args.variant))
    mi.render(mi_scene, spp=1)
    series.append(cv.measure(lambda n, seed: np.array(mi.render(mi_scene, spp=n, seed=seed), np.float64)[..., :3],
                             ref, spp, seeds=args.seeds, label=f"Mitsuba {args.variant} path/independent",
                             integrator="mitsuba-path", sampler="independent", log=print))
    print("\n".join(cv.table_lines(series)))
    title = f"Cornell box {args.size} x {args.size}, box filter, vs converged Mitsuba render"
    pathlib.Path(args.output).write_bytes(cv.plot_png(series, title, time_axis=True))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"size": args.size, "seeds": args.seeds,
                                                       "series": [s.to_json() for s in series]}, indent=2))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

"""The z-test against RMSE on tests/grade_scenes.py's ZTEST_SCENE (the numbers in
docs/grading.md).

    python scripts/ztest_study.py [--seeds 10]

For each spp (15, 40, 1000; 24 x 24, independent sampler) and each seed: an honest
render, the same render 2 % brighter, and a render with the sphere's index of
refraction 1.33 instead of 1.5, each z-tested against the stored 8000-spp reference
(tests/reference/grade/ztest_glass.npz) with the actual's own variance ('measured') and
with the reference's scaled by 8000 / spp ('reference'), and their RMSE. Prints, per
case, how many of the seeds pass, the pooled fraction of decisions with p < 0.05 and
p < 0.01 among the decisions that have noise (relative sd > 1e-6: about half of them
have none, the sky seen directly or through the glass), and the
RMSE range.
"""
import argparse
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

import raytrace  # noqa: E402
from grade_scenes import ZTEST_REFERENCE_SPP, ZTEST_SCENE, ZTEST_SIZE, with_ior  # noqa: E402
from raytrace.grade.ztest import ztest  # noqa: E402

REFERENCE = REPO / "tests" / "reference" / "grade" / "ztest_glass.npz"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--spp", default="15,40,1000")
    args = p.parse_args()
    with np.load(REFERENCE) as f:
        ref, ref_var = f["mean"].astype(np.float64), f["variance"].astype(np.float64)
    noisy = np.sqrt(ref_var) > 1e-6 * np.abs(ref)      # the rest: no noise, only float rounding
    scenes = {"honest": ZTEST_SCENE, "ior 1.33": with_ior(1.33)}
    loaded = {k: raytrace.load_scene(v) for k, v in scenes.items()}
    print("| spp | image | variance | passed | p<0.05 | p<0.01 | rejected pixels | RMSE |")
    print("|---|---|---|---|---|---|---|---|")
    for spp in (int(s) for s in args.spp.split(",")):
        rows = {}
        for seed in range(args.seeds):
            for name, scene in loaded.items():
                img = raytrace.render(scene, width=ZTEST_SIZE, height=ZTEST_SIZE, spp=spp, seed=100 + seed,
                                      sampler="independent", variance=True)
                a, va = np.asarray(img, np.float64), img.variance.astype(np.float64)
                cases = [(name, a, va)] + ([("2 % brighter", 1.02 * a, 1.02 ** 2 * va)] if name == "honest" else [])
                for label, x, vx in cases:
                    for source, v in (("measured", vx), ("reference", ref_var * ZTEST_REFERENCE_SPP / spp)):
                        r = ztest(x, v, ref, ref_var)
                        row = rows.setdefault((label, source), {"pass": 0, "p": [], "rej": [], "rmse": []})
                        row["pass"] += r.passed
                        row["p"].append(r.p[noisy])
                        row["rej"].append(r.rejected_pixels)
                        row["rmse"].append(float(np.sqrt(np.mean((x - ref) ** 2))))
        for (label, source), row in rows.items():
            pv = np.concatenate(row["p"])
            print(f"| {spp} | {label} | {source} | {row['pass']}/{args.seeds} | {np.mean(pv < 0.05):.3f} | "
                  f"{np.mean(pv < 0.01):.4f} | {min(row['rej'])}-{max(row['rej'])} of {ZTEST_SIZE ** 2} | "
                  f"{min(row['rmse']):.4f}-{max(row['rmse']):.4f} |", flush=True)


if __name__ == "__main__":
    main()

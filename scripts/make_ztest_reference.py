"""Render the stored reference of the z-test tests: tests/reference/grade/ztest_glass.npz.

    python scripts/make_ztest_reference.py

``tests/grade_scenes.py``'s ZTEST_SCENE at 24 x 24 pixels, 8000 samples per pixel with the
independent sampler (seed 1000), with each pixel's mean and the variance of that mean
(``raytrace.render(..., variance=True)``), stored as float32 with the scene, spp and
seed. About a minute on two cores. ``tests/test_grade_ztest.py`` fails, naming this
script, when the scene in the file differs from ZTEST_SCENE.
"""
import json
import pathlib
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

import raytrace  # noqa: E402
from grade_scenes import ZTEST_REFERENCE_SEED, ZTEST_REFERENCE_SPP, ZTEST_SCENE, ZTEST_SIZE  # noqa: E402

OUT = REPO / "tests" / "reference" / "grade" / "ztest_glass.npz"


def main():
    t0 = time.perf_counter()
    image = raytrace.render(raytrace.load_scene(ZTEST_SCENE), width=ZTEST_SIZE, height=ZTEST_SIZE,
                            spp=ZTEST_REFERENCE_SPP, seed=ZTEST_REFERENCE_SEED, sampler="independent",
                            variance=True, progress=sys.stderr.isatty())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, mean=np.asarray(image, np.float32), variance=image.variance.astype(np.float32),
                        spp=np.int64(image.info.spp), seed=np.int64(ZTEST_REFERENCE_SEED),
                        scene=np.array(json.dumps(ZTEST_SCENE, sort_keys=True)))
    print(f"wrote {OUT} ({ZTEST_SIZE} x {ZTEST_SIZE}, {image.info.spp} spp, {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()

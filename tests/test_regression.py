"""Regression images: small renders of every scene in scenes/ against committed references.

Tolerance (8-bit sRGB values): mean absolute difference <= 1.0 and at most 0.5% of the
pixels off by more than 8. That absorbs last-bit differences of floating point between
machines (a silhouette pixel flipping) but not a changed shading term, camera or object.
On failure the test writes actual, expected and a 4x amplified diff to tests/output/.
To accept an intended change: ``python scripts/update_reference_images.py NAME``.
"""
import pathlib

import imageio.v3 as iio
import numpy as np
import pytest

import raytrace
from raytrace.image import to_8bit

REPO = pathlib.Path(__file__).resolve().parents[1]
REFERENCE_DIR = REPO / "tests" / "reference"
WIDTH = 96
MAX_SPP = 4


def regression_scenes():
    return sorted((REPO / "scenes").glob("*.json"))


def load_or_skip(path):
    """Load a scene; skip when it needs course data from ../shared that is absent."""
    try:
        return raytrace.load_scene(path)
    except raytrace.SceneError as exc:
        if "shared/" in str(exc) and ("not found" in str(exc) or "No such file" in str(exc)):
            pytest.skip(f"{path.name} needs ../shared: {exc}")
        raise


def small_render(path):
    scene = load_or_skip(path)
    w = scene.setting("image", "width", 400)
    h = scene.setting("image", "height", 400)
    spp = min(scene.setting("image", "spp", 1), MAX_SPP)
    return raytrace.render(scene, width=WIDTH, height=max(1, round(WIDTH * h / w)), spp=spp)


@pytest.mark.parametrize("path", regression_scenes(), ids=lambda p: p.stem)
def test_scene_matches_reference(path, output_dir):
    ref_path = REFERENCE_DIR / f"{path.stem}.png"
    image = small_render(path)          # skips first when the scene needs absent ../shared data
    if not ref_path.exists():
        pytest.fail(f"no reference image {ref_path}; run scripts/update_reference_images.py {path.stem}")
    actual = to_8bit(image).astype(int)
    expected = iio.imread(ref_path)[..., :3].astype(int)
    assert actual.shape == expected.shape
    diff = np.abs(actual - expected)
    mean, frac_off = diff.mean(), (diff.max(axis=2) > 8).mean()
    if mean > 1.0 or frac_off > 0.005:
        iio.imwrite(output_dir / "actual.png", actual.astype(np.uint8))
        iio.imwrite(output_dir / "expected.png", expected.astype(np.uint8))
        iio.imwrite(output_dir / "diff.png", np.clip(diff * 4, 0, 255).astype(np.uint8))
        pytest.fail(f"{path.name}: mean |diff| {mean:.2f}, {100 * frac_off:.2f}% of pixels off by > 8; "
                    f"images in {output_dir}")

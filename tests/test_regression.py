"""Regression images: small renders of every scene in scenes/ against committed references.

Tolerance (8-bit sRGB values): mean absolute difference <= 1.0 and at most 0.5% of the
pixels off by more than 8. That absorbs last-bit differences of floating point between
machines (a silhouette pixel flipping) but not a changed shading term, camera or object.
The check is the ``render_regression`` fixture of the project's pytest plugin
(``raytrace.grade.pytest_plugin``: the same comparison as ``raytrace compare``): the
float render is rounded to the 8-bit sRGB PNG our writer would make and compared with
the reference PNG. On failure it writes actual, expected and a difference heat map and
names the folder. To accept an intended change:
``python -m pytest tests/test_regression.py --update-references -k NAME`` (or
``python scripts/update_reference_images.py NAME``).
"""
import pathlib

import pytest

import raytrace

REPO = pathlib.Path(__file__).resolve().parents[1]
REFERENCE_DIR = REPO / "tests" / "reference"
WIDTH = 96
MAX_SPP = 4
TOLERANCE = "mae<=1/255,over<=0.02,block<=4/255"   # the default ('over': a channel off by more than 8/255)


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


def small_settings(scene):
    w = scene.setting("image", "width", 400)
    h = scene.setting("image", "height", 400)
    spp = min(scene.setting("image", "spp", 1), MAX_SPP)
    return {"width": WIDTH, "height": max(1, round(WIDTH * h / w)), "spp": spp}


def small_render(path):
    scene = load_or_skip(path)
    return raytrace.render(scene, **small_settings(scene))


@pytest.mark.parametrize("path", regression_scenes(), ids=lambda p: p.stem)
def test_scene_matches_reference(path, render_regression):
    scene = load_or_skip(path)          # skips first when the scene needs absent ../shared data
    result = render_regression(scene, name=path.stem, reference_dir=REFERENCE_DIR, tolerance=TOLERANCE,
                               **small_settings(scene))
    if result is not None:              # None: --update-references wrote the reference
        assert result.domain == "ldr" and result.code_scale == 255
        assert result.metrics["mae"] <= 1 / 255 and result.metrics["over"] <= 0.005

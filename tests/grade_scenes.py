"""Scenes for the grading tests (``tests/test_grade_*.py``) and the stored z-test
reference (``tests/reference/grade/``, made by ``scripts/make_ztest_reference.py``).

``ZTEST_SCENE``: a glass sphere (ior 1.5, radius 0.3) on a checkerboard floor under a
uniform sky (constant environment), path traced with a box filter. Sky light reaches
every point along many paths, so the per-pixel noise is moderate and close to Gaussian
at a few hundred samples (a small bright light would make rare, bright paths that no
per-pixel Gaussian test handles at low spp); pixels that see the sky directly have no
noise at all. ``with_ior(1.33)`` is the negative control of a wrong index of refraction.
"""
import copy

ZTEST_SCENE = {
    "camera": {"center": [0, 0.9, 3.0], "look_at": [0, 0.45, 0], "fov": 30},
    "image": {"filter": "box"},
    "integrator": {"type": "path", "max_depth": 8},
    "background": {"color": [0.9, 0.9, 1.0]},
    "materials": {
        "floor": {"type": "diffuse", "albedo": {"type": "checkerboard", "color0": [0.8, 0.75, 0.6],
                                                "color1": [0.25, 0.3, 0.35], "scale": [4, 4]}},
        "glass": {"type": "dielectric", "ior": 1.5}},
    "objects": [
        {"type": "rectangle", "material": "floor", "transform": [{"rotate_x": -90}, {"scale": 3}]},
        {"type": "sphere", "center": [0, 0.3, 0], "radius": 0.3, "material": "glass"}],
}
ZTEST_SIZE = 24                 # pixels, square
ZTEST_REFERENCE_SPP = 8000      # not a perfect square: no jittered grid, so passes are independent
ZTEST_REFERENCE_SEED = 1000


def with_ior(ior):
    """``ZTEST_SCENE`` with another index of refraction for the sphere."""
    scene = copy.deepcopy(ZTEST_SCENE)
    scene["materials"]["glass"]["ior"] = ior
    return scene

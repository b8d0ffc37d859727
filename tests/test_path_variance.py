"""The path tracer's per-pixel variance estimate (``render(..., variance=True)``,
``--variance``): calibrated against the spread of independent renders, with negative
controls."""
import numpy as np
import pytest

import raytrace
from raytrace.film.exr import read_exr

SCENE = {
    "camera": {"center": [0, 1, 3.5], "look_at": [0, 0.3, 0], "fov": 40},
    "integrator": {"type": "path", "max_depth": 4},
    "materials": {"white": {"type": "diffuse", "albedo": [0.7, 0.7, 0.7]},
                  "red": {"type": "diffuse", "albedo": [0.8, 0.2, 0.1]}},
    "background": {"color": [0.3, 0.35, 0.4]},
    "lights": [{"type": "point", "position": [1, 3, 2], "color": [2, 2, 2]}],
    "objects": [{"type": "sphere", "center": [0, 0.5, 0], "radius": 0.5, "material": "red"},
                {"type": "rectangle", "material": "white", "emission": [3, 3, 3],
                 "transform": [{"scale": [0.3, 0.3, 1]}, {"rotate_x": 90}, {"translate": [-0.8, 1.5, 0]}]},
                {"type": "plane", "normal": [0, 1, 0], "material": "white"}],
}
N_RENDERS, SPP, SIZE = 24, 8, 12


def _renders(sampler):
    scene = raytrace.load_scene(SCENE)
    imgs, vars_ = [], []
    for seed in range(N_RENDERS):
        img = raytrace.render(scene, width=SIZE, height=SIZE, spp=SPP, seed=seed, sampler=sampler,
                              filter="box", variance=True)
        imgs.append(np.asarray(img, np.float64))
        vars_.append(img.variance.astype(np.float64))
    return np.array(imgs), np.array(vars_)


@pytest.fixture(scope="module")
def independent():
    return _renders("independent")


def test_estimate_matches_the_spread_of_independent_renders(independent):
    imgs, vars_ = independent
    empirical = imgs.var(axis=0, ddof=1)          # variance of a pixel's mean across seeds
    predicted = vars_.mean(axis=0)
    keep = empirical > 0
    ratio = predicted[keep].sum() / empirical[keep].sum()
    # each pixel's empirical variance has 23 degrees of freedom; pooled over ~400 pixel
    # channels the ratio's standard error is about 3%: 0.85..1.15 is more than 4 sigma
    assert 0.85 < ratio < 1.15, ratio
    # negative control: the variance of one sample (not of the mean) is SPP times larger
    assert not 0.85 < ratio * SPP < 1.15


def test_sobol_estimate_is_conservative():
    imgs, vars_ = _renders("sobol")
    empirical = imgs.var(axis=0, ddof=1)
    ratio = vars_.mean(axis=0).sum() / empirical.sum()
    assert ratio > 1.2          # stratified passes: the spread over-states the error


def test_variance_needs_the_path_tracer():
    scene = raytrace.load_scene(dict(SCENE, integrator={"type": "whitted"}))
    with pytest.raises(raytrace.SceneError, match="variance: a variance estimate needs the path tracer"):
        raytrace.render(scene, width=4, height=4, variance=True)


def test_cli_writes_variance_as_exr_and_pfm(tmp_path):
    import json

    from raytrace import cli
    from raytrace.image import read_pfm
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCENE))
    assert cli.main(["render", str(path), "-o", str(tmp_path / "c.exr"), "--size", "6", "5", "--spp", "4",
                     "--sampler", "independent", "--variance", str(tmp_path / "v.exr"), "--quiet"]) == 0
    layers, meta = read_exr(tmp_path / "c.exr")
    var, _ = read_exr(tmp_path / "v.exr")
    assert layers["color"].shape == var["color"].shape == (5, 6, 3)
    assert meta["spp"] == 4 and meta["integrator"] == "path"
    scene = raytrace.load_scene(path)
    ref = raytrace.render(scene, width=6, height=5, spp=4, sampler="independent", variance=True)
    assert np.array_equal(layers["color"], ref) and np.array_equal(var["color"], ref.variance)
    assert cli.main(["render", str(path), "-o", str(tmp_path / "c.png"), "--size", "6", "5", "--spp", "4",
                     "--variance", str(tmp_path / "v.pfm"), "--quiet"]) == 0
    assert read_pfm(tmp_path / "v.pfm").shape == (5, 6, 3)

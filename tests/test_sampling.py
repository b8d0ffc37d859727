"""Pixel filters, the counter-based RNG, and thread-count independence."""
import math

import numba
import numpy as np
import pytest

import raytrace
from raytrace.kernels.sampling import BOX, GAUSSIAN, GAUSS_RADIUS, GAUSS_SIGMA, TENT, gaussian_inverse_cdf_table, warp

TABLE = gaussian_inverse_cdf_table()
U = (np.arange(200000) + 0.5) / 200000


def moments(kind):
    x = np.array([warp(u, kind, TABLE) for u in U])
    return x.mean(), x.var(), np.abs(x).max()


def test_box_and_tent_match_their_variances():
    m, v, r = moments(BOX)
    assert (m, v) == pytest.approx((0.0, 1 / 12), abs=1e-6) and r <= 0.5
    m, v, r = moments(TENT)
    assert (m, v) == pytest.approx((0.0, 1 / 6), abs=1e-6) and r <= 1.0


def test_gaussian_matches_truncated_normal_variance():
    b = GAUSS_RADIUS / GAUSS_SIGMA
    phi = math.exp(-b * b / 2) / math.sqrt(2 * math.pi)
    mass = math.erf(b / math.sqrt(2))
    # the filter is exp(-x^2/2s^2) minus its value at the radius; variance of that shape:
    g = lambda x: np.exp(-0.5 * (x / GAUSS_SIGMA) ** 2) - math.exp(-0.5 * b * b)   # noqa: E731
    xs = np.linspace(-GAUSS_RADIUS, GAUSS_RADIUS, 400001)
    expected_var = (xs ** 2 * g(xs)).sum() / g(xs).sum()
    m, v, r = moments(GAUSSIAN)
    assert m == pytest.approx(0.0, abs=1e-6)
    assert v == pytest.approx(expected_var, rel=1e-3)
    assert r <= GAUSS_RADIUS
    # the subtracted pedestal makes it a little narrower than the plain truncated normal
    assert v < GAUSS_SIGMA ** 2 * (1 - 2 * b * phi / mass)


def small_scene():
    return {
        "camera": {"center": [0, 1, 6], "look_at": [0, 0.5, 0], "fov": 40},
        "image": {"width": 40, "height": 30, "spp": 5, "filter": "tent", "seed": 9},
        "background": {"color": [0.2, 0.3, 0.5], "ambient": [0.1, 0.1, 0.1]},
        "materials": {"a": {"diffuse": [0.8, 0.3, 0.2], "specular": [0.5, 0.5, 0.5], "shininess": 20},
                      "g": {"transmit": [1, 1, 1], "ior": 1.4}},
        "lights": [{"type": "directional", "direction": [-1, -1, -1], "color": [1, 1, 1]}],
        "objects": [{"type": "plane", "normal": [0, 1, 0], "material": "a"},
                    {"type": "sphere", "center": [-0.6, 0.6, 0], "radius": 0.6, "material": "a"},
                    {"type": "sphere", "center": [0.7, 0.5, 0.5], "radius": 0.5, "material": "g"}],
    }


def test_image_is_the_same_whatever_the_thread_count():
    scene = raytrace.load_scene(small_scene())
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = raytrace.render(scene)
        numba.set_num_threads(max(2, before))
        many = raytrace.render(scene)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one, many)


def test_seed_changes_the_noise_but_not_the_mean():
    scene = raytrace.load_scene(small_scene())
    a = raytrace.render(scene, seed=1, spp=16)
    b = raytrace.render(scene, seed=2, spp=16)
    assert not np.array_equal(a, b)
    assert np.array_equal(a, raytrace.render(scene, seed=1, spp=16))
    assert abs(a.mean() - b.mean()) < 2e-3

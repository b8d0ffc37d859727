"""``raytrace.kernels.trig.cos_sin_2pi`` against NumPy's cos and sin."""
import numpy as np
from numba import njit

from raytrace.kernels.trig import cos_sin_2pi


@njit(cache=True)
def _many(u):
    out = np.empty((u.shape[0], 2))
    for k in range(u.shape[0]):
        out[k, 0], out[k, 1] = cos_sin_2pi(u[k])
    return out


def test_matches_numpy_to_a_few_ulps():
    rng = np.random.default_rng(3)
    u = np.concatenate([rng.random(200_000), np.linspace(0, 1, 4097),
                        np.nextafter(np.arange(9) / 8, 2), np.nextafter(np.arange(9) / 8, -1)])
    u = u[(u >= 0) & (u <= 1)]
    got = _many(u)
    phi = 2 * np.pi * u
    # NumPy evaluates cos(2 pi u) with 2 pi u rounded to a double: its own error is up to
    # |d cos / d phi| * ulp(phi) ~ 9e-16; ours is measured against the same rounded phi
    assert np.abs(got[:, 0] - np.cos(phi)).max() < 1e-15
    assert np.abs(got[:, 1] - np.sin(phi)).max() < 1e-15
    assert np.abs(got[:, 0] ** 2 + got[:, 1] ** 2 - 1).max() < 1e-15
    # negative control: a series cut one term short (sin to degree 13) is visibly worse
    r = np.linspace(-np.pi / 4, np.pi / 4, 1001)
    short = sum((-1) ** k * r ** (2 * k + 1) / np.prod(np.arange(1, 2 * k + 2, dtype=float)) for k in range(7))
    assert np.abs(short - np.sin(r)).max() > 1e-15


def test_quarter_turns_are_exact():
    u = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(_many(u), [[1, 0], [0, 1], [-1, 0], [0, -1], [1, 0]])

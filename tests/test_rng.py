"""The path tracer's sample points (``raytrace.kernels.rng``): what each generator
stratifies, checked point by point, and that the points are uniform.

- ``sobol2``: the samples 0 .. 2^k - 1 of a pixel form a (0, k, 2)-net (every elementary
  interval of area 2^-k holds exactly one point), and it equals, bit for bit, the plain
  composition of reversals and scrambles written out in NumPy below.
- ``cmj2``: ``count`` points one per cell of the m x n grid and one per 1/count
  stratum along each axis, for any count.
- ``sampler.camera_2d``: with the Sobol sampler, an edge parallel to an axis is integrated
  over a pixel with an error below 1/spp of its step for every spp; the first 20 Sobol
  points (the negative control) are not that good.
"""
import numpy as np
import pytest
from numba import njit

from raytrace.kernels.records import PathSampler
from raytrace.kernels.rng import cmj2, grid_columns, rand01, sobol2
from raytrace.kernels.sampler import (STREAM_CAP, STREAM_DIMS, camera_2d, capped, group_2d, next_1d, next_2d,
                                      stream_1d)
from raytrace.layout import INDEPENDENT, SOBOL

M32 = np.uint64(0xFFFFFFFF)


@njit(cache=True)
def _sobol_points(seed, pixel, group, n):
    out = np.empty((n, 2))
    for s in range(n):
        out[s, 0], out[s, 1] = sobol2(seed, pixel, s, group)
    return out


@njit(cache=True)
def _cmj_points(seed, pixel, group, n):
    out = np.empty((n, 2))
    for s in range(n):
        out[s, 0], out[s, 1] = cmj2(seed, pixel, s, group, n)
    return out


@njit(cache=True)
def _camera_points(sampler, seed, pixel, n):
    out = np.empty((n, 2))
    for s in range(n):
        out[s, 0], out[s, 1], _ = camera_2d(PathSampler(sampler, seed, pixel, s, 0, 0), n)
    return out


@njit(cache=True)
def _sobol_first(seed, pixel, n):
    out = np.empty((n, 2))
    for s in range(n):
        out[s, 0], out[s, 1] = group_2d(SOBOL, seed, pixel, s, np.int64(0))
    return out


@njit(cache=True)
def _first_points(seed, pixels, count):
    """Sample 0 of ``count`` of each pixel (cmj2, group 5)."""
    out = np.empty((pixels, 2))
    for k in range(pixels):
        out[k, 0], out[k, 1] = cmj2(seed, k, 0, 5, count)
    return out


# ------------------------------------------------------------------ NumPy baseline of sobol2
def _mix64(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _reverse(x):
    bits = np.arange(32, dtype=np.uint64)
    out = np.zeros_like(x)
    for b in bits:
        out |= ((x >> b) & np.uint64(1)) << (np.uint64(31) - b)
    return out


def _lk(x, key):
    x = x ^ ((x * np.uint64(0x3D20ADEA)) & M32)
    x = (x + key) & M32
    x = (x * ((key >> np.uint64(16)) | np.uint64(1))) & M32
    x = x ^ ((x * np.uint64(0x05526C56)) & M32)
    return x ^ ((x * np.uint64(0x53A22864)) & M32)


def _owen(x, key):
    return _reverse(_lk(_reverse(x), key))


def _sobol_dim1(index):
    """Sobol's second dimension of ``index`` as a 32-bit fraction: the bits of index times
    the upper-triangular Pascal matrix mod 2 (column j holds binomial(j, i) mod 2)."""
    out = np.zeros_like(index)
    for j in range(32):                       # index bit j ...
        for i in range(j + 1):                # ... flips fraction bit i (from the top) when C(j, i) is odd
            if (j & i) == i:                  # Lucas: C(j, i) odd <=> i is a submask of j
                out ^= ((index >> np.uint64(j)) & np.uint64(1)) << np.uint64(31 - i)
    return out


def _sobol2_numpy(seed, pixel, sample, group):
    with np.errstate(over="ignore"):
        key = _mix64(np.uint64(seed) * np.uint64(0x94D049BB133111EB) + pixel.astype(np.uint64)
                     * np.uint64(0x9E3779B97F4A7C15) + np.uint64(group) * np.uint64(0xD6E8FEB86659FD93))
        index = _owen(sample.astype(np.uint64), key & M32)
        key2 = _mix64(key)
        x0 = _owen(_reverse(index), key2 & M32)
        x1 = _owen(_sobol_dim1(index), key2 >> np.uint64(32))
    return x0.astype(np.float64) / 2.0 ** 32, x1.astype(np.float64) / 2.0 ** 32


def test_sobol2_equals_the_plain_composition():
    rng = np.random.default_rng(4)
    pixel = rng.integers(0, 1 << 40, 3000)
    sample = rng.integers(0, 1 << 20, 3000)
    for seed, group in ((0, 0), (7, 1), (123456789, 37)):
        x0, x1 = _sobol2_numpy(seed, pixel, sample, group)
        got = np.array([sobol2(seed, int(p), int(s), group) for p, s in zip(pixel, sample)])
        np.testing.assert_array_equal(got[:, 0], x0)
        np.testing.assert_array_equal(got[:, 1], x1)


def _cells(points, nx, ny):
    return np.floor(points[:, 0] * nx).astype(int) * ny + np.floor(points[:, 1] * ny).astype(int)


@pytest.mark.parametrize("k", range(7))
def test_sobol_prefixes_of_two_to_the_k_are_nets(k):
    n = 1 << k
    for seed, pixel, group in ((0, 0, 0), (3, 1234, 2), (99, 77, 40)):
        pts = _sobol_points(seed, pixel, group, n)
        for a in range(k + 1):
            assert len(set(_cells(pts, 1 << a, 1 << (k - a)))) == n, (seed, pixel, group, a)


def test_grid_columns():
    assert [grid_columns(c) for c in (1, 2, 4, 16, 17, 18, 20, 24, 36, 1000)] == [1, 1, 2, 4, 1, 3, 4, 4, 6, 1]


@pytest.mark.parametrize("count", [1, 2, 3, 5, 12, 17, 18, 20, 24, 35, 64, 100])
def test_cmj_points_fill_the_grid_and_both_axes(count):
    m = grid_columns(count)
    n = count // m
    for seed, pixel, group in ((0, 0, 0), (5, 999, 3), (42, 12345, 17)):
        pts = _cmj_points(seed, pixel, group, count)
        assert pts.min() >= 0.0 and pts.max() < 1.0
        assert sorted(np.floor(pts[:, 0] * count).astype(int)) == list(range(count))
        assert sorted(np.floor(pts[:, 1] * count).astype(int)) == list(range(count))
        assert len(set(_cells(pts, m, n))) == count


def test_cmj_points_are_uniform_across_pixels():
    """Sample 0 of 20 over 64 000 pixels: chi-square on 8 x 8 cells below the 99.9 %
    quantile of chi2(63) (103.4); the same points squared in x (a negative control) far
    above it."""
    pts = _first_points(11, 64000, 20)

    def chi2(p):
        counts = np.bincount(_cells(p, 8, 8), minlength=64)
        expected = p.shape[0] / 64
        return float(((counts - expected) ** 2 / expected).sum())
    assert chi2(pts) < 103.4
    assert chi2(np.column_stack([pts[:, 0] ** 2, pts[:, 1]])) > 1000


@pytest.mark.parametrize("spp", [5, 16, 17, 20, 24, 100])
def test_camera_points_integrate_axis_edges_within_one_over_spp(spp):
    edges = np.linspace(0.013, 0.987, 37)
    for pixel in range(40):
        pts = _camera_points(SOBOL, 3, pixel, spp)
        for axis in (0, 1):
            covered = (pts[:, axis][:, None] < edges[None, :]).mean(axis=0)
            assert np.abs(covered - edges).max() < 1.0 / spp + 1e-12, (spp, pixel, axis)


def test_first_twenty_sobol_points_miss_that_bound():
    """The negative control: the first 20 Sobol points (a 16-net and a 4-net) err by more
    than 1/20 on some edge in some pixel, and so do 20 independent points."""
    edges = np.linspace(0.013, 0.987, 37)

    def worst(pts):
        return max(np.abs((pts[:, a][:, None] < edges[None, :]).mean(axis=0) - edges).max() for a in (0, 1))
    assert max(worst(_sobol_first(3, p, 20)) for p in range(40)) > 1.0 / 20
    assert max(worst(_camera_points(INDEPENDENT, 3, p, 20)) for p in range(40)) > 1.0 / 20


# ------------------------------------------------------------------ the path sampler's order
@njit(cache=True)
def _drawn_in_order(kind, seed, pixel, sample):
    """What a path draws: next_2d, next_1d, next_2d, then three stream numbers -> (the
    numbers (7 + 3), the dims after, the stream count after)."""
    s = PathSampler(kind, seed, pixel, sample, 0, 0)
    out = np.empty(8)
    out[0], out[1], s = next_2d(s)
    out[2], s = next_1d(s)
    out[3], out[4], s = next_2d(s)
    out[5], s = stream_1d(s)
    out[6], s = stream_1d(s)
    out[7], s = stream_1d(s)
    return out, s.dim, s.stream


@njit(cache=True)
def _by_group(kind, seed, pixel, sample):
    out = np.empty(8)
    out[0], out[1] = group_2d(kind, seed, pixel, sample, 0)
    out[2] = group_2d(kind, seed, pixel, sample, 1)[0]
    out[3], out[4] = group_2d(kind, seed, pixel, sample, 2)
    for k in range(3):
        out[5 + k] = rand01(seed, pixel, sample, STREAM_DIMS + k)
    return out


@pytest.mark.parametrize("kind", [SOBOL, INDEPENDENT])
def test_the_sampler_hands_out_dimensions_in_order(kind):
    """next_2d / next_1d take the 2-D groups 0, 1, 2 in the order asked (a 1-D number is
    its group's first coordinate); the stream is rand01 far above them. Control: the
    groups in another order differ."""
    drawn, dim, stream = _drawn_in_order(kind, 7, 123, 5)
    np.testing.assert_array_equal(drawn, _by_group(kind, 7, 123, 5))
    assert (dim, stream) == (3, 3)
    swapped = _by_group(kind, 7, 123, 5)[[3, 4, 2, 0, 1, 5, 6, 7]]
    assert not np.array_equal(drawn, swapped)


@njit(cache=True)
def _stream_until_capped(limit):
    s = PathSampler(SOBOL, 1, 2, 3, 0, 0)
    n = 0
    while not capped(s) and n < limit:
        _, s = stream_1d(s)
        n += 1
    return n, capped(s)


def test_the_stream_caps_at_its_bound():
    """The stream says ``capped`` after exactly STREAM_CAP numbers (the media step cap);
    control: one number fewer is not capped."""
    assert _stream_until_capped(10 ** 9) == (STREAM_CAP, True)
    assert _stream_until_capped(STREAM_CAP - 1) == (STREAM_CAP - 1, False)
